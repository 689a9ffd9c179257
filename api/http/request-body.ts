/**
 * The one reader of request bodies (JSON APIs, the licence claim, the account area's forms): the
 * body as text, refused with the caller's own 413 as soon as it passes its limit, so a large
 * body is never held whole; `readJsonObject` adds the JSON APIs' checks (415 / 400 problems).
 */
import { Readable } from 'node:stream';
import { ApiError } from './errors.ts';

/** The body of `req` as UTF-8 text; throws `tooLarge()` once more than `maxBytes` have arrived. */
export async function readBodyText(
  req: AsyncIterable<Buffer>,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early (the body is too large) must not destroy the request: that destroys its
  // socket, and the client could get a connection reset instead of the 413 (issue 31).
  const source = req instanceof Readable ? req.iterator({ destroyOnReturn: false }) : req;
  for await (const c of source as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > maxBytes) {
      if (req instanceof Readable) req.resume(); // the rest is read and discarded while the answer goes out
      const e = tooLarge();
      // Node does not reuse a connection whose request was not read to its end: say so, so the
      // client opens a new one instead of sending its next request into a closed socket
      if (e instanceof ApiError) e.headers['Connection'] = 'close';
      throw e;
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A JSON object body (`{}` when there is none) of at most `maxBytes`: 413 `body_too_large` past
 * the limit, 415 `unsupported_media_type` unless `Content-Type` is JSON, 400 `invalid_body` when
 * it is not JSON or not an object. The webhooks API reads its bodies here; `POST /v1/leads/search`
 * takes the two steps apart (`readJsonText`, then `parseJsonObject` unless it knows the text).
 */
export async function readJsonObject(
  req: AsyncIterable<Buffer>,
  contentType: string,
  maxBytes: number,
): Promise<Record<string, unknown>> {
  return parseJsonObject(await readJsonText(req, contentType, maxBytes));
}

/** The text of a JSON body (empty when there is none), with `readJsonObject`'s 413 and 415. */
export async function readJsonText(req: AsyncIterable<Buffer>, contentType: string, maxBytes: number): Promise<string> {
  const text = await readBodyText(
    req,
    maxBytes,
    () =>
      new ApiError(413, 'body_too_large', `the request body must be at most ${maxBytes} bytes`, {
        title: 'Content Too Large',
      }),
  );
  if (text.trim() === '') return '';
  if (!/^application\/(.+\+)?json\b/i.test(contentType)) {
    throw new ApiError(415, 'unsupported_media_type', 'send the body as Content-Type: application/json', {
      title: 'Unsupported Media Type',
    });
  }
  return text;
}

/** A JSON body's text as an object (`{}` when empty), with `readJsonObject`'s 400s. */
export function parseJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_body', 'the request body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new ApiError(400, 'invalid_body', 'the request body must be a JSON object');
  return v as Record<string, unknown>;
}
