/** `X-Request-Id` on every response: the client's own when well-formed, else a fresh one. */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

/** Accepted client request ids (anything else is replaced, never echoed). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** Sets `ctx.state.requestId` and the `X-Request-Id` header before anything else can fail. */
export function requestIdMiddleware(): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    const id = REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    ctx.state['requestId'] = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
