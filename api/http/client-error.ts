/**
 * Requests Node's HTTP parser refuses before the app sees them — a request line and headers over
 * `MAX_HEADER_BYTES` (a URL over 16 KiB), raw spaces or control characters in the URL, a method
 * HTTP/1.1 does not know, a malformed header, a request that took too long to arrive — answered
 * as RFC 9457 problems like every other error (server `clientError` event), instead of Node's
 * bare `400` / `431`. The connection is closed after the answer (the parser cannot resync).
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { problemType } from './errors.ts';
import { PROBLEM_TYPES, type ProblemCode } from './problems.ts';
import { HSTS } from '../middleware/security-headers.ts';

/** Most bytes of request line plus headers the server reads (Node's default, set explicitly). */
export const MAX_HEADER_BYTES = 16 * 1024;

/** How long a connection refused by the parser is read (and discarded) after the answer before it is cut. */
const LINGER_MS = 2000;

interface ParserProblem {
  status: number;
  code: ProblemCode;
  /** The status line's reason phrase (the body's `title` is the code's, api/http/problems.ts). */
  title: string;
  detail: string;
}

/** What a parser error code means for the client. */
export function parserProblem(code: string | undefined, rawPacket: Buffer | undefined): ParserProblem {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW': {
      // the request line itself did not fit: the URL is too long
      const firstLine = rawPacket ? rawPacket.indexOf('\r\n') : -1;
      if (firstLine < 0 || firstLine > MAX_HEADER_BYTES / 2) {
        return {
          status: 414,
          code: 'uri_too_long',
          title: 'URI Too Long',
          detail: `the request line and headers may be at most ${MAX_HEADER_BYTES} bytes together and this URL alone is longer; send fewer or shorter parameters`,
        };
      }
      return {
        status: 431,
        code: 'headers_too_large',
        title: 'Request Header Fields Too Large',
        detail: `the request line and headers may be at most ${MAX_HEADER_BYTES} bytes together; send smaller headers`,
      };
    }
    case 'HPE_INVALID_METHOD':
      return {
        status: 501,
        code: 'method_not_implemented',
        title: 'Not Implemented',
        detail:
          'the request method is not one HTTP/1.1 knows (methods are upper case: GET, not get); OPTIONS on a path lists the methods it allows',
      };
    case 'HPE_INVALID_URL':
      return {
        status: 400,
        code: 'malformed_request',
        title: 'Bad Request',
        detail: 'the request URL is malformed: spaces and control characters must be percent-encoded (a space is %20)',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADER_TIMEOUT':
      return {
        status: 408,
        code: 'request_timeout',
        title: 'Request Timeout',
        detail: 'the request did not arrive completely in time',
      };
    default:
      return {
        status: 400,
        code: 'malformed_request',
        title: 'Bad Request',
        detail: `the request is not valid HTTP/1.1 (${(code ?? 'parse error').replace(/^HPE_/, '').toLowerCase().replace(/_/g, ' ')}): check the request line, the header names and values (no control characters) and the body framing`,
      };
  }
}

/**
 * The server's `clientError` listener: writes the problem (with `X-Request-Id`, the security
 * headers and `Connection: close`) when the socket can still take it, then closes the socket.
 */
export function clientErrorHandler(opts: {
  tls: boolean;
  publicBaseUrl?: string;
}): (err: Error & { code?: string; rawPacket?: Buffer }, socket: Socket) => void {
  // Sockets already answered and lingering: the parser goes on reading what follows a bad request
  // and reports a second error on the same socket; destroying it then, with bytes unread, resets
  // the connection before the client has read the answer (always on Node 26, by chance on 20).
  const answered = new WeakSet<Socket>();
  return (err, socket) => {
    if (answered.has(socket)) return;
    const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (err.code === 'ECONNRESET' || !socket.writable || busy) {
      socket.destroy();
      return;
    }
    const p = parserProblem(err.code, err.rawPacket);
    const requestId = randomUUID();
    const body = JSON.stringify({
      type: problemType(p.code, opts.publicBaseUrl),
      title: PROBLEM_TYPES[p.code].title,
      status: p.status,
      detail: p.detail,
      code: p.code,
      request_id: requestId,
    });
    const headers = [
      `HTTP/1.1 ${p.status} ${p.title}`,
      'Content-Type: application/problem+json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'X-Content-Type-Options: nosniff',
      'Referrer-Policy: no-referrer',
      ...(opts.tls ? [`Strict-Transport-Security: ${HSTS}`] : []),
      'Connection: close',
    ];
    // Lingering close: answer, half-close, and read (discard) what the client still sends until it
    // closes (at most LINGER_MS). Closing a socket with unread bytes makes the kernel send a reset,
    // which can reach the client before it has read the answer (issue 31).
    answered.add(socket);
    socket.on('error', () => {});
    socket.resume();
    socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
