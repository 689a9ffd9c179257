/**
 * `GET /v1/leads` (search and filter, page or keyset-cursor paging) and `GET /v1/leads/{id}`
 * (the lead with its company-360 sections). Parameters are validated by `api/params.ts`, SQL
 * comes from the pure builders in `api/query/`, and every record goes through `maskRecord`.
 *
 * A list page asks DuckDB only for the page's ids (`leadsPageIdsQuery`) and takes the full rows
 * from the release's in-process row store (`Release.rows`), in page order.
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
  leadsPageIdsQuery,
  leadsPlacesQuery,
  leadsSource,
  pageCarriesTotal,
  searchAvgdlQuery,
  SORT_VALUE_COLUMN,
  TOTAL_COLUMN,
  type LeadsSource,
  type SqlQuery,
} from '../query/leads-query.ts';
import { encodeCursor } from '../query/paging.ts';

/**
 * Query results kept per release (list pages, counts, detail rows), capped by an estimate of
 * their bytes (rows × ~2 KB, a full lead row as JS objects) so the cache cannot push RSS up.
 */
const RESULT_CACHE_BYTES = 32 * 1024 * 1024;
const ROW_BYTES_ESTIMATE = 2_048;

interface ReleaseState {
  id: string;
  places: PlaceNames;
  source: LeadsSource;
  results: Map<string, Promise<Row[]>>;
  /** Estimated bytes per cached key, and their sum. */
  weights: Map<string, number>;
  bytes: number;
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
        return { id: release.id, places: placeNames(places), source: leadsSource(release, avg[0]?.avgdl ?? null), results: new Map(), weights: new Map(), bytes: 0 };
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
      const w = st.weights.get(key);
      if (w !== undefined) {
        st.weights.delete(key);
        st.weights.set(key, w);
      }
      return p as Promise<T[]>;
    }
    const forget = (k: string): void => {
      st.results.delete(k);
      st.bytes -= st.weights.get(k) ?? 0;
      st.weights.delete(k);
    };
    p = deps.db.all(q.sql, q.params);
    st.results.set(key, p);
    p.then(
      (rows) => {
        if (st.results.get(key) !== p) return;
        const w = key.length + 64 + rows.length * ROW_BYTES_ESTIMATE;
        st.weights.set(key, w);
        st.bytes += w;
        while (st.bytes > RESULT_CACHE_BYTES && st.results.size > 1) forget(st.weights.keys().next().value!);
      },
      () => forget(key),
    );
    return p as Promise<T[]>;
  };

  router.get('/leads', async (ctx: AppContext) => {
    const { release, key } = ctx.state;
    const st = await stateFor(release);
    const req = parseLeadsQuery(ctx.query, config, st.places, release.id);
    const { pageSize } = req.paging;
    const pageReq = {
      filters: req.filters,
      sort: req.sort,
      limit: pageSize + 1,
      offset: req.paging.mode === 'page' ? req.paging.offset : 0,
      after: req.paging.mode === 'cursor' ? req.paging.after : null,
    };
    // DuckDB finds the page's ids (narrow top-N); the rows come from the release's row store.
    const page = leadsPageIdsQuery(st.source, pageReq);
    const count = (): Promise<{ total: number }[]> => cached<{ total: number }>(st, leadsCountQuery(st.source, req.filters));
    let rows: Row[];
    let totals: { total: number }[];
    if (pageCarriesTotal(pageReq)) {
      // q: the page carries the total (scores computed once); count only past the last row.
      rows = await cached(st, page);
      totals = rows.length > 0 ? [{ total: Number(rows[0]![TOTAL_COLUMN]) }] : await count();
    } else {
      [rows, totals] = await Promise.all([cached(st, page), count()]);
    }
    const more = rows.length > pageSize;
    const served = more ? rows.slice(0, pageSize) : rows;
    const leads = release.rows.getMany(served.map((r) => r['id'] as number));
    const results = leads.map((lead, i) => {
      if (!lead) throw new Error(`lead ${String(served[i]!['id'])} is not in the row store of release ${release.id}`);
      return maskRecord('lead', lead, key.scope).record;
    });
    await ctx.state.budget.charge(results.length);
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
    await ctx.state.budget.charge(1);
    ctx.body = { ...record, _meta: responseMeta(release.id, key.scope, masked) };
  });

  return router;
}
