/**
 * `GET /v1/leads` (search and filter, page or keyset-cursor paging) and `GET /v1/leads/{id}`
 * (the lead with its company-360 sections). Parameters are validated by `api/params.ts`; the
 * release's leads engine (`Release.leads`, api/index/leads-engine.ts) answers both from its
 * in-memory indexes — no DuckDB query per request — masked for the key's scope inside
 * (api/masking.ts). The route parses, charges the budget, makes the cursor and links, and sends.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppContext, AppState } from '../context.ts';
import { notFound } from '../errors.ts';
import type { JsonBody } from '../index/leads-engine.ts';
import { maskingFor } from '../masking.ts';
import { parseLeadId, parseLeadsQuery } from '../params.ts';
import { encodeCursor } from '../query/paging.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';

/** Answer with a JSON body; its buffer goes back to the engine's pool once sent. */
function send(ctx: AppContext, body: JsonBody): void {
  ctx.type = 'json';
  ctx.body = body.bytes;
  ctx.res.once('finish', body.done);
}

/** The leads router (paths relative to the /v1 mount). */
export function leadsRouter(config: ApiConfig): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/leads', async (ctx: AppContext) => {
    const { release, key } = ctx.state;
    const req = parseLeadsQuery(ctx.query, config, release.leads.places(), release.id);
    const { paging } = req;
    const page = release.leads.page(
      {
        filters: req.filters,
        sort: req.sort,
        pageSize: paging.pageSize,
        offset: paging.mode === 'page' ? paging.offset : 0,
        after: paging.mode === 'cursor' ? paging.after : null,
      },
      maskingFor(key.scope),
    );
    await ctx.state.budget.charge(page.count);
    const nextCursor = page.next ? encodeCursor(page.next, release.id, req.hash, config) : null;
    setPageLinks(ctx, { next: nextCursor && pageHref(ctx, { cursor: nextCursor, page: null }) });
    send(ctx, page.json({ page: paging.mode === 'page' ? paging.page : null, next_cursor: nextCursor }));
  });

  router.get('/leads/:id', async (ctx: AppContext) => {
    const { release, key } = ctx.state;
    const id = parseLeadId(ctx.params['id'] ?? '', ctx.query);
    const detail = release.leads.detail(id, maskingFor(key.scope));
    if (!detail) throw notFound(`lead ${id}`);
    await ctx.state.budget.charge(1);
    send(ctx, detail.json());
  });

  return router;
}
