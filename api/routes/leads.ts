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
import { maskedFor, maskRecord, responseMeta } from '../masking.ts';
import { parseLeadId, parseLeadsQuery } from '../params.ts';
import { releaseSourcesCache } from '../release-sources.ts';
import { CAPABILITIES } from '../scopes.ts';
import { assembleLeadDetail } from '../query/lead-detail-query.ts';
import { encodeCursor } from '../query/paging.ts';

/** The leads router (paths relative to the /v1 mount). */
export function leadsRouter(config: ApiConfig, deps: Pick<AppDeps, 'db'>): Router<AppState> {
  const router = new Router<AppState>();
  const sourcesFor = releaseSourcesCache(deps.db, 2);

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
    const more = rows.length > pageSize;
    const served = more ? rows.slice(0, pageSize) : rows;
    const leads = release.rows.getMany(served.map((r) => r.id));
    const results = leads.map((lead, i) => {
      if (!lead) throw new Error(`lead ${served[i]!.id} is not in the row store of release ${release.id}`);
      return maskRecord('lead', lead, key.scope).record;
    });
    await ctx.state.budget.charge(results.length);
    const last = served.at(-1);
    ctx.body = {
      total,
      page: req.paging.mode === 'page' ? req.paging.page : null,
      page_size: pageSize,
      next_cursor: more && last ? encodeCursor([last.sortValue, last.id], release.id, req.hash) : null,
      results,
      _meta: responseMeta(release.id, key.scope, maskedFor('lead', key.scope)),
    };
  });

  router.get('/leads/:id', async (ctx: AppContext) => {
    const { release, key } = ctx.state;
    const id = parseLeadId(ctx.params['id'] ?? '', ctx.query);
    const lead = release.rows.get(id);
    if (!lead) throw notFound(`lead ${id}`);
    const area = lead as { county: string; eircode_routing_key: string | null; received_date: string };
    const dx = release.detail;
    const enriched = CAPABILITIES[key.scope].enriched;
    const companyNo = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
    const applicantNo = companyNo(lead['applicant_company_number']);
    const contractorNo = companyNo(lead['main_contractor_company_number']);
    const near = dx.nearby(id);
    const nearRows = release.rows.getMany(near.map((n) => n.neighbour_id));
    const nearby = near.flatMap((n, i) => {
      const l = nearRows[i];
      return l ? [{ id: l['id'], description: l['description'], distance_m: n.distance_m, use_class: l['use_class'], lead_readiness: l['lead_readiness'], est_value: l['est_value'] }] : [];
    });
    // Enriched sections are only read for scopes that may see them.
    const detail = assembleLeadDetail({
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
    const { record, masked } = maskRecord('lead-detail', detail, key.scope);
    await ctx.state.budget.charge(1);
    ctx.body = { ...record, _meta: responseMeta(release.id, key.scope, masked) };
  });

  return router;
}
