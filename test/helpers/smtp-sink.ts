/**
 * A local SMTP sink for tests (smtp-server on 127.0.0.1, port 0): every message received, with
 * its envelope, its headers and its text parts decoded (quoted-printable or base64) — enough to
 * read a nodemailer `multipart/alternative` message (a plain-text and an HTML part).
 *
 * @example
 *   const sink = await startSmtpSink();
 *   // … send through `sink.url` …
 *   sink.messages[0].text // the text/plain part, decoded
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SunkMessage {
  from: string;
  to: string[];
  /** Header names in lower case; folded lines joined. */
  headers: Record<string, string>;
  /** The text/plain part (or the whole body of a one-part text message), decoded. */
  text: string | null;
  /** The text/html part, decoded. */
  html: string | null;
  raw: string;
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>` */
  url: string;
  messages: SunkMessage[];
  close(): Promise<void>;
}

function splitHead(s: string): { headers: Record<string, string>; body: string } {
  const at = s.indexOf('\r\n\r\n');
  const head = at < 0 ? s : s.slice(0, at);
  const body = at < 0 ? '' : s.slice(at + 4);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { headers, body };
}

function decode(body: string, encoding: string | undefined): string {
  const e = (encoding ?? '7bit').toLowerCase();
  if (e === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (e === 'quoted-printable') {
    const soft = body.replace(/=\r?\n/g, '');
    const bytes: number[] = [];
    for (let i = 0; i < soft.length; i++) {
      if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
        bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
        i += 2;
      } else bytes.push(...Buffer.from(soft[i]!, 'utf8'));
    }
    return Buffer.from(bytes).toString('utf8');
  }
  return body;
}

/** Read a raw message: headers, and its text/plain and text/html parts. */
export function readMessage(raw: string): Pick<SunkMessage, 'headers' | 'text' | 'html'> {
  const { headers, body } = splitHead(raw);
  const type = headers['content-type'] ?? 'text/plain';
  const out: Pick<SunkMessage, 'headers' | 'text' | 'html'> = { headers, text: null, html: null };
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  const parts = boundary
    ? body
        .split(`--${boundary}`)
        .slice(1)
        .filter((p) => !p.startsWith('--'))
        .map((p) => splitHead(p.replace(/^\r\n/, '')))
    : [{ headers, body }];
  for (const p of parts) {
    const t = (p.headers['content-type'] ?? 'text/plain').toLowerCase();
    const text = decode(p.body.replace(/\r\n$/, ''), p.headers['content-transfer-encoding']);
    if (t.startsWith('text/plain')) out.text = text;
    else if (t.startsWith('text/html')) out.html = text;
  }
  return out;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: SunkMessage[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          ...readMessage(raw),
        });
        done();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
