/**
 * `Idempotency-Key` on creating requests (`POST /v1/webhooks`), as Stripe takes it: a client
 * that retries a request after a timeout or a dropped connection sends the same key, and gets
 * the first request's answer instead of a second resource.
 *
 * - The key is any 1–255 printable ASCII characters, scoped to the key's account, remembered
 *   24 h from its first use (api/state/idempotency.ts, on both databases).
 * - The first request with a key runs; its answer, when it succeeds (2xx), is stored with the
 *   request's fingerprint (method, path, the API key's scope and the JSON body with its members
 *   in any order). A failed request (4xx, 5xx) is not remembered: a retry with the same key runs again.
 * - A later request with the key and the same fingerprint gets the stored answer, with
 *   `Idempotent-Replayed: true`; with another fingerprint, a 422 `idempotency_key_reused`; while
 *   the first is still running, a 409 `idempotency_key_in_use` (retry later).
 */
import { createHash } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { ApiError, invalidParams } from '../http/errors.ts';
import type { IdempotencyStore, StoredResponse } from '../state/idempotency.ts';

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** A request still unanswered this long after it claimed its key is taken to have died with its process. */
const IDEMPOTENCY_STALE_MS = 60_000;

/** An answer the handler produced (the body is sent as JSON). */
export interface IdempotentAnswer {
  status: number;
  body: unknown;
  location: string | null;
}

/** The request's `Idempotency-Key` (null when absent); 400 naming the header when it is malformed. */
export function idempotencyKeyOf(ctx: ParameterizedContext): string | null {
  const v = ctx.get('Idempotency-Key');
  if (v === '') return ctx.req.headers['idempotency-key'] === undefined ? null : badKey();
  if (v.length > 255 || !/^[\x20-\x7e]+$/.test(v) || v.trim() === '') return badKey();
  return v;
}

const badKey = (): never => {
  throw invalidParams([
    { name: 'Idempotency-Key', reason: 'must be 1 to 255 printable ASCII characters, e.g. a UUID' },
  ]);
};

/** A JSON value with every object's members sorted, so `{a,b}` and `{b,a}` fingerprint the same. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** The fingerprint of a request: SHA-256 of its method, path, the API key's scope and canonical JSON body. */
export function requestFingerprint(method: string, path: string, scope: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([method, path, scope, canonical(body)]))
    .digest('hex');
}

/**
 * Run `handler` once per idempotency key: the first time, store its answer (2xx only); after
 * that, answer what was stored. Sets the response (status, body, `Location`) either way.
 */
export async function answerIdempotently(
  ctx: ParameterizedContext,
  o: { store: IdempotencyStore; now: () => Date; accountId: number; key: string; fingerprint: string },
  handler: () => Promise<IdempotentAnswer>,
): Promise<void> {
  const claim = await o.store.claim({
    accountId: o.accountId,
    key: o.key,
    fingerprint: o.fingerprint,
    now: o.now(),
    ttlMs: IDEMPOTENCY_TTL_MS,
    staleMs: IDEMPOTENCY_STALE_MS,
  });
  if (claim.state === 'mismatch') {
    throw new ApiError(
      422,
      'idempotency_key_reused',
      'this Idempotency-Key was used with another request in the last 24 hours; use a new key for a new request',
      { title: 'Unprocessable Content' },
    );
  }
  if (claim.state === 'in_progress') {
    throw new ApiError(
      409,
      'idempotency_key_in_use',
      'a request with this Idempotency-Key is still being processed; retry in a moment to get its answer',
      { headers: { 'Retry-After': '1' } },
    );
  }
  if (claim.state === 'done') return send(ctx, claim.response, true);
  let answer: IdempotentAnswer;
  try {
    answer = await handler();
  } catch (e) {
    await o.store.release(o.accountId, o.key).catch(() => {}); // the error is what the client needs to see
    throw e;
  }
  const stored: StoredResponse = {
    status: answer.status,
    body: JSON.stringify(answer.body),
    location: answer.location,
  };
  if (answer.status >= 200 && answer.status < 300) await o.store.complete(o.accountId, o.key, stored);
  else await o.store.release(o.accountId, o.key);
  send(ctx, stored, false);
}

function send(ctx: ParameterizedContext, r: StoredResponse, replayed: boolean): void {
  ctx.status = r.status;
  if (r.location !== null) ctx.set('Location', r.location);
  if (replayed) ctx.set('Idempotent-Replayed', 'true');
  ctx.type = 'application/json';
  ctx.body = r.body;
}
