/**
 * The access log and the request metrics, first in the chain (outside the problem middleware),
 * so they see the status and problem body the client gets. One JSON line per request, written
 * when its response has been sent (or the connection closed), e.g.
 *
 *   {"level":"info","time":"…","pid":1,"hostname":"api-1","msg":"request","request_id":"…",
 *    "method":"GET","route":"GET /v1/leads/{id}","status":200,"duration_ms":3.2,
 *    "key_id":"key_3f9a…","account_id":7,"rows":1,"bytes":2817}
 *
 * What is logged is chosen field by field: the route TEMPLATE (never the path or query string,
 * which may carry a GIS `access_token`, a cursor or anything a client typed), the key's public
 * id and its account's number (never the key, the account's name or the Authorization header),
 * the problem `code` of an error. Nothing of the request or response body is logged.
 */
import type { Middleware } from 'koa';
import type { AppState } from '../http/context.ts';
import type { Logger } from '../observability/log.ts';
import type { ApiMetrics } from '../observability/metrics.ts';

export interface AccessLogOptions {
  logger: Logger;
  metrics: ApiMetrics;
  /** The route template of a request (`GET /v1/leads/{id}`; `other` when no route has the path). */
  routeOf: (method: string, path: string) => string;
}

/** The problem `code` of an error response, or null. */
function problemCode(body: unknown): string | null {
  const code = (body as { code?: unknown } | null)?.code;
  return typeof body === 'object' && body !== null && typeof code === 'string' ? code : null;
}

/** Log and count every request once its response is done. */
export function accessLogMiddleware(opts: AccessLogOptions): Middleware<AppState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const res = ctx.res;
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = res.statusCode;
      const route = ctx.state.route ?? opts.routeOf(ctx.method, ctx.path); // the access middleware's, when it ran
      const rows = ctx.state.rowsCharged ?? 0;
      const code = status >= 400 ? problemCode(ctx.body) : null;
      opts.metrics.request(route, status, seconds, rows, code);
      const key = ctx.state.key as AppState['key'] | undefined;
      const length = res.getHeader('content-length');
      const entry = {
        request_id: ctx.state.requestId ?? null,
        method: ctx.method,
        route,
        status,
        duration_ms: Math.round(seconds * 1e4) / 10,
        key_id: key?.id ?? null,
        account_id: key?.account_id ?? null,
        rows,
        bytes: length === undefined ? null : Number(length),
        ...(code ? { problem: code } : {}),
        ...(res.writableFinished ? {} : { aborted: true }),
      };
      if (status >= 500) opts.logger.error(entry, 'request');
      else opts.logger.info(entry, 'request');
    });
    await next();
  };
}
