/**
 * `GET /v1/leads` (search and filter, page or keyset-cursor paging) and `GET /v1/leads/{id}`
 * (the lead with its company-360 sections). Parameters are validated by `api/params.ts` and
 * every record goes through `maskRecord`.
 *
 * Both are answered from the release's in-memory structures, built when the release is loaded
 * (api/release.ts): a list page from the lead index (`Release.index`: filters, sort, total,
 * `q`) and the row store (`Release.rows`: the full rows, in page order); a detail from the row
 * store and the detail index (`Release.detail`: area comparables, nearby leads, suppliers,
 * companies, filings). Neither runs a DuckDB query per request; the SQL builders in `api/query/`
 * define the same semantics and are checked against the indexes in the tests.
 *
 * Per release, the route keeps the authority / county name maps (api/release-sources.ts).
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../app.ts';
import type { AppContext, AppState } from '../context.ts';
import { notFound } from '../errors.ts';
import { maskedColumns, maskedFor, maskRecord, responseMeta } from '../masking.ts';
import { BufferPool, ByteWriter } from '../render/bytes.ts';
import { parseLeadId, parseLeadsQuery } from '../params.ts';
import { releaseSourcesCache } from '../release-sources.ts';
import { CAPABILITIES, type Scope } from '../scopes.ts';
import { leadDetailSections } from '../query/lead-detail-query.ts';
import { encodeCursor } from '../query/paging.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';

/** The leads router (paths relative to the /v1 mount). */
export function leadsRouter(config: ApiConfig, deps: Pick<AppDeps, 'db'>): Router<AppState> {
  const router = new Router<AppState>();
  const sourcesFor = releaseSourcesCache(deps.db, 2);
  const buffers = new BufferPool();
  /** Answer with the JSON written to `out`; its buffer goes back to the pool once sent. */
  const send = (ctx: AppContext, out: ByteWriter): void => {
    ctx.type = 'json';
    ctx.body = out.view();
    const used = out.buf; // (a new one if the answer outgrew the pooled buffer)
    ctx.res.once('finish', () => buffers.give(used));
  };
  // The `_meta` of a list page depends only on the release and the scope.
  const metaJson = new Map<string, string>();
  const listMeta = (releaseId: string, scope: Scope): string => {
    const k = `${releaseId}\u0000${scope}`;
    let json = metaJson.get(k);
    if (json === undefined) {
      if (metaJson.size >= 32) metaJson.clear();
      metaJson.set(k, (json = JSON.stringify(responseMeta(releaseId, scope, maskedFor('lead', scope)))));
    }
    return json;
  };

  router.get('/leads', async (ctx: AppContext) => {
    const { release, key } = ctx.state;
    const req = parseLeadsQuery(ctx.query, config, (await sourcesFor(release)).places, release.id);
    const { pageSize } = req.paging;
    const { rows, total } = release.index.page({
      filters: req.filters,
      sort: req.sort,
      limit: pageSize + 1,
      offset: req.paging.mode === 'page' ? req.paging.offset : 0,
      after: req.paging.mode === 'cursor' ? req.paging.after : null,
    });
    const served = Math.min(rows.length, pageSize);
    const slots = rows.slice(0, served).map((r) => {
      const slot = release.rows.slotOf(r.id);
      if (slot < 0) throw new Error(`lead ${r.id} is not in the row store of release ${release.id}`);
      return slot;
    });
    await ctx.state.budget.charge(served);
    const last = rows[served - 1];
    const nextCursor = rows.length > pageSize && last ? encodeCursor([last.sortValue, last.id], release.id, req.hash, config) : null;
    setPageLinks(ctx, { next: nextCursor && pageHref(ctx, { cursor: nextCursor, page: null }) });
    // The page is written as bytes: each lead's JSON text straight from the row store, masked
    // by the columns api/masking.ts names for the scope.
    const out = new ByteWriter(buffers.take(1024 + served * 2048));
    out.ascii(`{"total":${total},"page":${req.paging.mode === 'page' ? req.paging.page : 'null'},"page_size":${pageSize},"next_cursor":`);
    out.ascii(nextCursor === null ? 'null' : `"${nextCursor}"`);
    out.ascii(',"results":[');
    const nulled = maskedColumns('lead', key.scope, release.rows.columns);
    slots.forEach((slot, i) => {
      if (i > 0) out.byte(0x2c); // ,
      release.rows.writeJson(out, slot, nulled);
    });
    out.ascii('],"_meta":');
    out.utf8(listMeta(release.id, key.scope));
    out.byte(0x7d); // }
    send(ctx, out);
  });

  router.get('/leads/:id', async (ctx: AppContext) => {
    const { release, key } = ctx.state;
    const id = parseLeadId(ctx.params['id'] ?? '', ctx.query);
    const rows = release.rows;
    const slot = rows.slotOf(id);
    if (slot < 0) throw notFound(`lead ${id}`);
    const lead = rows.get(id)!;
    const area = lead as { county: string; eircode_routing_key: string | null; received_date: string };
    const dx = release.detail;
    const enriched = CAPABILITIES[key.scope].enriched;
    const companyNo = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
    const applicantNo = companyNo(lead['applicant_company_number']);
    const contractorNo = companyNo(lead['main_contractor_company_number']);
    const nearby = dx.nearby(id).flatMap((n) => {
      const at = rows.slotOf(n.neighbour_id);
      if (at < 0) return [];
      const v = (column: string): unknown => rows.value(at, column);
      return [{ id: v('id'), description: v('description'), distance_m: n.distance_m, use_class: v('use_class'), lead_readiness: v('lead_readiness'), est_value: v('est_value') }];
    });
    // Enriched sections are only read for scopes that may see them.
    const sections = leadDetailSections({
      lead,
      salesSummary: dx.salesSummary(area),
      recentSales: dx.recentSales(area),
      nearby,
      ...(enriched
        ? {
            suppliers: dx.suppliers(area.county, (lead['verticals'] as string[] | null) ?? []),
            contractorCompany: contractorNo ? dx.company(contractorNo) : null,
            applicantCompany: applicantNo ? dx.company(applicantNo) : null,
            filings: applicantNo ? dx.filings(applicantNo) : [],
          }
        : {}),
    });
    // Masked as `maskRecord('lead-detail', assembleLeadDetail(…))`: the lead's columns by the
    // columns masking names, the sections by maskRecord itself.
    const { record: shown, masked } = maskRecord('lead-detail', sections, key.scope);
    await ctx.state.budget.charge(1);
    // Written as bytes: the lead's fields from the row store (main_contractor replaced by its
    // section), then the sections, then _meta — the JSON of assembleLeadDetail, key for key.
    const out = new ByteWriter(buffers.take(16 * 1024));
    rows.writeJson(out, slot, maskedColumns('lead-detail', key.scope, rows.columns), {
      replace: { column: 'main_contractor', json: JSON.stringify(shown['main_contractor']) },
      open: true,
    });
    for (const name of Object.keys(sections)) {
      if (name === 'main_contractor') continue;
      out.ascii(`,"${name}":`);
      out.utf8(JSON.stringify(shown[name]));
    }
    out.ascii(',"_meta":');
    out.utf8(JSON.stringify(responseMeta(release.id, key.scope, masked)));
    out.byte(0x7d); // }
    send(ctx, out);
  });

  return router;
}
