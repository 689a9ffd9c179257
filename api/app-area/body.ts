/**
 * Request bodies of the account area: forms (`application/x-www-form-urlencoded`) and JSON, at
 * most 64 KiB, read once per request (the CSRF check reads a form's `_csrf`; the page handler
 * then gets the same parsed form). Pages read bodies only through these two functions.
 */
import { ApiError } from '../http/errors.ts';
import { readBodyText } from '../http/request-body.ts';
import type { AppAreaContext } from './contract.ts';

export const BODY_LIMIT_BYTES = 64 * 1024;

const raw = new WeakMap<object, Promise<string>>();

function readText(ctx: AppAreaContext): Promise<string> {
  let p = raw.get(ctx.req);
  if (!p) {
    p = readBodyText(
      ctx.req,
      BODY_LIMIT_BYTES,
      () => new ApiError(413, 'body_too_large', `the body may be at most ${BODY_LIMIT_BYTES} bytes`),
    );
    raw.set(ctx.req, p);
  }
  return p;
}

/** Whether the request body is a form post. */
export const isForm = (ctx: AppAreaContext): boolean => Boolean(ctx.is('application/x-www-form-urlencoded'));

/** The posted form (`_csrf` included). 415 for anything but a urlencoded form. */
export async function readForm(ctx: AppAreaContext): Promise<URLSearchParams> {
  if (!isForm(ctx))
    throw new ApiError(415, 'unsupported_media_type', 'send the form as application/x-www-form-urlencoded');
  return new URLSearchParams(await readText(ctx));
}

/** The posted JSON object. 415 for anything but application/json, 400 when it is not an object. */
export async function readJson(ctx: AppAreaContext): Promise<Record<string, unknown>> {
  if (!ctx.is('application/json'))
    throw new ApiError(415, 'unsupported_media_type', 'send the request body as application/json');
  let v: unknown;
  try {
    v = JSON.parse(await readText(ctx));
  } catch {
    throw new ApiError(400, 'invalid_body', 'the body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new ApiError(400, 'invalid_body', 'the body must be a JSON object');
  return v as Record<string, unknown>;
}
