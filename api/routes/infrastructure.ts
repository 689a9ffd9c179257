/**
 * `GET /v1/infrastructure` (every strategic-infrastructure and energy project) and
 * `GET /v1/infrastructure/renewables` (wind, solar and battery storage only), with filters,
 * page or cursor paging and masking by scope; `GET /v1/infrastructure/{id}` one project with its
 * consenting case (the target of the infrastructure GeoJSON layer's `link`). The SQL comes from the pure builders in
 * `api/query/infrastructure-query.ts`; masking from `api/access/masking.ts`.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { invalidParams, notFound } from '../http/errors.ts';
import { maskRecord, maskedFor, responseMeta, unionMasked } from '../access/masking.ts';
import { parseLeadId } from '../query/leads-params.ts';
import { served, type Served } from '../access/budget.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import {
  infraByIdQuery,
  infraCountQuery,
  infraPageQuery,
  infraSortKey,
  infraSortKeyValid,
  normalisedInfraFilters,
  infrastructureQuerySchema,
  parseInfrastructureQuery,
} from '../query/infrastructure-query.ts';
import { decodeCursor, encodeCursor, filtersHash } from '../query/paging.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';

/** What the infrastructure operations share. */
interface InfrastructureEnv {
  config: ApiConfig;
  deps: Pick<AppDeps, 'db'>;
}

/** `GET /v1/infrastructure/{id}`: one project with its consenting case. */
async function oneProject(ctx: AppContext, { deps }: InfrastructureEnv): Promise<Served> {
  const { release, key } = ctx.state;
  const id = parseLeadId(ctx.params['id'] ?? '', ctx.query); // the same rule: a positive integer, no parameters
  const q = infraByIdQuery(release.tables.infrastructure, id);
  const [row] = await deps.db.all<Record<string, unknown>>(q.sql, q.params);
  if (!row) throw notFound(`infrastructure project ${id}`);
  const { record, masked } = maskRecord('infrastructure-project', row, key.scope);
  return served(1, () => {
    ctx.body = { ...record, _meta: responseMeta(release.id, key.scope, masked) };
  });
}

/** The infrastructure operations (paths relative to the /v1 mount); `/renewables` before `/{id}`, which would otherwise swallow it. */
export const INFRASTRUCTURE_OPERATIONS: readonly Operation<InfrastructureEnv>[] = [
  {
    method: 'get',
    path: '/infrastructure',
    tag: 'Infrastructure',
    summary: 'Strategic-infrastructure and energy projects',
    description:
      'Data centres, wind, solar, battery storage and grid projects, by id ascending unless `sort` says otherwise. Filters combine with AND; comma-separated values mean OR. ' +
      'Page with `page` + `page_size` or with the keyset `cursor`. `applicant` and `applicant_company_number` are enriched.',
    query: infrastructureQuerySchema(false),
    ok: { schema: schemaRef('InfrastructurePage'), description: 'A page of projects.' },
    errors: [400],
    cached: true,
    handler: (ctx, { config, deps }) => listProjects(ctx, config, deps, false),
  },
  {
    method: 'get',
    path: '/infrastructure/renewables',
    tag: 'Infrastructure',
    summary: 'Renewable energy projects',
    description:
      'The projects of /infrastructure restricted to the verticals wind, solar and battery_storage (technology, consenting route, fast-lane flag, auction round). ' +
      'Same filters and paging; a `vertical` outside those three is a 400.',
    query: infrastructureQuerySchema(true),
    ok: { schema: schemaRef('InfrastructurePage'), description: 'A page of renewable projects.' },
    errors: [400],
    cached: true,
    handler: (ctx, { config, deps }) => listProjects(ctx, config, deps, true),
  },
  {
    method: 'get',
    path: '/infrastructure/{id}',
    tag: 'Infrastructure',
    summary: 'One infrastructure project with its consenting case',
    description:
      'One strategic-infrastructure or energy project: the record of /infrastructure (capacity, technology, status, auction round, grid connection) with its consenting case ' +
      "(`case_id`, `consenting_route`, `lodged_date`, `decision`, `decision_date`, `public_url` — the consenting body's case page where the source gives one). " +
      'The `link` of the infrastructure GeoJSON layer points here when the project has no `public_url`. `applicant` and `applicant_company_number` are enriched: null for commonwealth, listed in `_meta.masked`.',
    pathParams: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'Project id (`id` in /infrastructure).',
        schema: { type: 'integer', minimum: 1 },
      },
    ],
    ok: { schema: schemaRef('InfrastructureProjectResponse'), description: 'The project.' },
    errors: [400, 404],
    cached: true,
    handler: oneProject,
  },
];

/** The infrastructure router (paths relative to the /v1 mount). */
export function infrastructureRouter(config: ApiConfig, deps: Pick<AppDeps, 'db'>): Router<AppState> {
  return mount(INFRASTRUCTURE_OPERATIONS, { config, deps });
}

async function listProjects(
  ctx: AppContext,
  config: ApiConfig,
  deps: Pick<AppDeps, 'db'>,
  renewables: boolean,
): Promise<Served> {
  const req = parseInfrastructureQuery(ctx.query, {
    renewables,
    pageSizeDefault: config.pageSizeDefault,
    pageSizeMax: config.pageSizeMax,
    pageMax: config.pageMax,
  });
  const { release, key } = ctx.state;
  const table = release.tables.infrastructure;
  const hash = filtersHash(
    renewables ? 'infrastructure/renewables' : 'infrastructure',
    normalisedInfraFilters(req.filters),
    req.sort,
  );
  let after: unknown[] | null = null;
  if (req.cursor) {
    after = decodeCursor(req.cursor, hash, config).key;
    if (!infraSortKeyValid(req.sort, after))
      throw invalidParams([{ name: 'cursor', reason: 'not a valid cursor; pass next_cursor unchanged' }]);
  }
  const offset = req.page ? (req.page - 1) * req.pageSize : 0;
  const count = infraCountQuery(table, req.filters);
  const pageQuery = infraPageQuery(table, {
    filters: req.filters,
    sort: req.sort,
    pageSize: req.pageSize,
    offset,
    after,
  });
  const [totals, rows] = await Promise.all([
    deps.db.all<{ total: number }>(count.sql, count.params),
    deps.db.all(pageQuery.sql, pageQuery.params),
  ]);
  const more = rows.length > req.pageSize;
  const page = more ? rows.slice(0, req.pageSize) : rows;
  const masked = page.map((r) => maskRecord('infrastructure-project', r, key.scope));
  return served(page.length, () => {
    const last = page.at(-1);
    const nextCursor = more && last ? encodeCursor(infraSortKey(req.sort, last), release.id, hash, config) : null;
    setPageLinks(ctx, { next: nextCursor && pageHref(ctx, { cursor: nextCursor, page: null }) });
    ctx.body = {
      total: Number(totals[0]?.total ?? 0),
      page: req.page,
      page_size: req.pageSize,
      next_cursor: nextCursor,
      results: masked.map((m) => m.record),
      _meta: responseMeta(
        release.id,
        key.scope,
        masked.length ? unionMasked(masked.map((m) => m.masked)) : maskedFor('infrastructure-project', key.scope),
      ),
    };
  });
}
