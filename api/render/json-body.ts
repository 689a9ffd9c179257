/** Sending a JSON body the leads engine wrote into a pooled buffer (api/engine/leads-engine.ts `JsonBody`). */
import type { Context } from 'koa';
import type { JsonBody } from '../engine/leads-engine.ts';

/** Answer with a JSON body; its buffer goes back to the engine's pool once sent. */
export function sendJsonBody(ctx: Context, body: JsonBody): void {
  ctx.type = 'json';
  ctx.body = body.bytes;
  ctx.res.once('finish', body.done);
}
