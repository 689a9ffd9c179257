/**
 * `GET /v1/leads` (search and filter, page or keyset-cursor paging) and `GET /v1/leads/{id}`
 * (the lead with its company-360 sections). Parameters are validated by `api/params.ts`, SQL
 * comes from the pure builders in `api/query/`, and every record goes through `maskRecord`.
 *
 * Per release, the route keeps (and drops when the release changes): the authority / county
 * name maps, the search index's avgdl, and a small LRU of query results — a release never
 * changes, so a repeated query is answered from memory.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../app.ts';
import type { AppContext, AppState } from '../context.ts';
import type { Row } from '../db.ts';
import { notFound } from '../errors.ts';
import { maskedFor, maskRecord, responseMeta } from '../masking.ts';
import { parseLeadId, parseLeadsQuery, placeNames, type PlaceNames } from '../params.ts';
import type { Release } from '../release.ts';
import { CAPABILITIES } from '../scopes.ts';
import {
  assembleLeadDetail,
  companyQuery,
  filingsQuery,
  leadByIdQuery,
  nearbyLeadsQuery,
  recentSalesQuery,
  salesSummaryQuery,
  suppliersQuery,
} from '../query/lead-detail-query.ts';
import {
  leadsCountQuery,
  leadsPageQuery,
  leadsPlacesQuery,
  leadsSource,
  searchAvgdlQuery,
  SORT_VALUE_COLUMN,
  type LeadsSource,
  type SqlQuery,
} from '../query/leads-query.ts';
import { encodeCursor } from '../query/paging.ts';

/** Query results kept per release (list pages, counts, detail rows). */
const RESULT_CACHE_ENTRIES = 2_000;

interface ReleaseState {
  id: string;
  places: PlaceNames;
  source: LeadsSource;
  results: Map<string, Promise<Row[]>>;
}

/** The leads router (paths relative to the /v1 mount). */
export function leadsRouter(config: ApiConfig, deps: Pick<AppDeps, 'db'>): Router<AppState> {
  const router = new Router<AppState>();
  const states = new Map<string, Promise<ReleaseState>>();

  /** Per-release state, built once; older releases' state is dropped. */
  const stateFor = (release: Release): Promise<ReleaseState> => {
    let p = states.get(release.id);
    if (!p) {
      p = (async () => {
        const pq = leadsPlacesQuery(release.tables.leads);
        const aq = searchAvgdlQuery(release.path('search_terms.parquet'));
        const [places, avg] = await Promise.all([
          deps.db.all<{ planning_authority: string; county: string }>(pq.sql, pq.params),
          deps.db.all<{ avgdl: number | null }>(aq.sql, aq.params).catch(() => [{ avgdl: null }]),
        ]);
        return { id: release.id, places: placeNames(places), source: leadsSource(release, avg[0]?.avgdl ?? null), results: new Map() };
      })();
      p.catch(() => states.delete(release.id));
      states.set(release.id, p);
      // Keep the newest few (a request may still be answered from the previous release).
      while (states.size > 2) states.delete(states.keys().next().value!);
    }
    return p;
  };

  /** Run a query through the release's LRU (rows are shared: treat them as read-only). */
  const cached = <T extends Row = Row>(st: ReleaseState, q: SqlQuery): Promise<T[]> => {
    const key = q.sql + '\u0000' + JSON.stringify(q.params);
    let p = st.results.get(key);
    if (p) {
      st.results.delete(key); // refresh recency
      st.results.set(key, p);
      return p as Promise<T[]>;
    }
    p = deps.db.all(q.sql, q.params);
    p.catch(() => st.results.delete(key));
    st.results.set(key, p);
    if (st.results.size > RESULT_CACHE_ENTRIES) st.results.delete(st.results.keys().next().value!);
    return p as Promise<T[]>;
  };

  router.get('/leads', async (ctx: AppContext) => {
    const { release, key } = ctx.state;
    const st = await stateFor(release);
    const req = parseLeadsQuery(ctx.query, config, st.places, release.id);
    const { pageSize } = req.paging;
    const page = leadsPageQuery(st.source, {
      filters: req.filters,
      sort: req.sort,
      limit: pageSize + 1,
      offset: req.paging.mode === 'page' ? req.paging.offset : 0,
      after: req.paging.mode === 'cursor' ? req.paging.after : null,
    });
    const count = leadsCountQuery(st.source, req.filters);
    const [rows, totals] = await Promise.all([cached(st, page), cached<{ total: number }>(st, count)]);
    const more = rows.length > pageSize;
    const served = more ? rows.slice(0, pageSize) : rows;
    const results = served.map((r) => {
      const { [SORT_VALUE_COLUMN]: _sortValue, ...lead } = r;
      return maskRecord('lead', lead, key.scope).record;
    });
    const last = served.at(-1);
    ctx.body = {
      total: Number(totals[0]?.total ?? 0),
      page: req.paging.mode === 'page' ? req.paging.page : null,
      page_size: pageSize,
      next_cursor: more && last ? encodeCursor([last[SORT_VALUE_COLUMN], last['id']], release.id, req.hash) : null,
      results,
      _meta: responseMeta(release.id, key.scope, maskedFor('lead', key.scope)),
    };
  });

  router.get('/leads/:id', async (ctx: AppContext) => {
    const { release, key } = ctx.state;
    const id = parseLeadId(ctx.params['id'] ?? '', ctx.query);
    const st = await stateFor(release);
    const t = release.tables;
    const [lead] = await cached(st, leadByIdQuery(t, id));
    if (!lead) throw notFound(`lead ${id}`);
    const area = lead as { county: string; eircode_routing_key: string | null; received_date: string };
    const enriched = CAPABILITIES[key.scope].enriched;
    const companyNo = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
    const applicantNo = companyNo(lead['applicant_company_number']);
    const contractorNo = companyNo(lead['main_contractor_company_number']);
    const none = Promise.resolve([] as Row[]);
    // Enriched sections are only read for scopes that may see them.
    const [summary, recentSales, nearby, suppliers, contractor, applicant, filings] = await Promise.all([
      cached(st, salesSummaryQuery(t, area)),
      cached(st, recentSalesQuery(t, area)),
      cached(st, nearbyLeadsQuery(t, id)),
      enriched ? cached(st, suppliersQuery(t, area.county, (lead['verticals'] as string[] | null) ?? [])) : none,
      enriched && contractorNo ? cached(st, companyQuery(t, contractorNo)) : none,
      enriched && applicantNo ? cached(st, companyQuery(t, applicantNo)) : none,
      enriched && applicantNo ? cached(st, filingsQuery(t, applicantNo)) : none,
    ]);
    const detail = assembleLeadDetail({
      lead,
      salesSummary: summary[0],
      recentSales,
      nearby,
      ...(enriched ? { suppliers, contractorCompany: contractor[0] ?? null, applicantCompany: applicant[0] ?? null, filings: applicantNo ? filings : [] } : {}),
    });
    const { record, masked } = maskRecord('lead-detail', detail, key.scope);
    ctx.body = { ...record, _meta: responseMeta(release.id, key.scope, masked) };
  });

  return router;
}
