/**
 * `GET /v1`: the API's index of links, as GitHub's API root — one absolute URL (under
 * PUBLIC_BASE_URL) per resource, URI templates (RFC 6570, `{id}`) where an id goes. Public: no
 * key, no release needed. The links are declared once (`API_ROOT_LINKS`): the body and its
 * OpenAPI schema (`ApiRoot`) are derived from that table.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppState } from '../http/context.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';

/** The links of the index: member name, path under /v1, what it is. */
export const API_ROOT_LINKS: readonly { readonly name: string; readonly path: string; readonly doc: string }[] = [
  { name: 'openapi_url', path: '/openapi.json', doc: "This API's OpenAPI 3.1 document." },
  { name: 'docs_url', path: '/docs', doc: 'The interactive reference (Swagger UI).' },
  { name: 'reference_url', path: '/reference', doc: 'The read-only reference (plain HTML).' },
  { name: 'problems_url', path: '/problems', doc: 'Every problem type (error code) and what to do.' },
  { name: 'problem_url', path: '/problems/{code}', doc: "One problem type: a problem's `type`." },
  { name: 'meta_url', path: '/meta', doc: 'The release served, counts, freshness and allowed filter values.' },
  { name: 'authorities_url', path: '/authorities', doc: 'Planning authorities with their freshness.' },
  { name: 'leads_url', path: '/leads', doc: 'Search and filter leads.' },
  { name: 'lead_url', path: '/leads/{id}', doc: 'One lead.' },
  { name: 'lead_history_url', path: '/leads/{id}/history', doc: "One lead's stages and events." },
  { name: 'leads_search_url', path: '/leads/search', doc: 'Search leads with a JSON body (POST).' },
  { name: 'events_url', path: '/events', doc: 'What changed, release by release (the sync feed).' },
  { name: 'infrastructure_url', path: '/infrastructure', doc: 'Infrastructure projects.' },
  { name: 'infrastructure_project_url', path: '/infrastructure/{id}', doc: 'One infrastructure project.' },
  { name: 'renewables_url', path: '/infrastructure/renewables', doc: 'Renewable energy projects.' },
  {
    name: 'intel_analytics_url',
    path: '/intel/analytics',
    doc: 'Market intelligence (price index, yields, emerging zones, material costs).',
  },
  { name: 'export_url', path: '/export/applications', doc: 'The bulk export in cursor pages (JSON).' },
  { name: 'export_csv_url', path: '/export/applications.csv', doc: 'The bulk export as one CSV file.' },
  { name: 'export_jsonl_url', path: '/export/applications.jsonl', doc: 'The bulk export as one JSON Lines file.' },
  { name: 'export_parquet_url', path: '/export/applications.parquet', doc: 'The bulk export as one Parquet file.' },
  { name: 'feeds_leads_url', path: '/feeds/leads.geojson', doc: 'Leads as a GeoJSON feed.' },
  { name: 'feeds_infrastructure_url', path: '/feeds/infrastructure.geojson', doc: 'Infrastructure as a GeoJSON feed.' },
  { name: 'feeds_token_url', path: '/feeds/token', doc: 'An `access_token` for GIS clients that cannot send headers.' },
  { name: 'ogc_url', path: '/ogc', doc: 'The OGC API Features landing page.' },
  { name: 'tiles_leads_url', path: '/tiles/leads.json', doc: 'TileJSON of the leads vector tiles.' },
  {
    name: 'tiles_infrastructure_url',
    path: '/tiles/infrastructure.json',
    doc: 'TileJSON of the infrastructure vector tiles.',
  },
  { name: 'webhooks_url', path: '/webhooks', doc: "The account's webhooks." },
  { name: 'account_usage_url', path: '/account/usage', doc: "The key's account usage." },
];

/** The body of `GET /v1`: every link of `API_ROOT_LINKS` under the public base URL. */
function apiRoot(publicBaseUrl: string): Record<string, string> {
  const base = publicBaseUrl.replace(/\/+$/, '');
  return Object.fromEntries(API_ROOT_LINKS.map((l) => [l.name, base + l.path]));
}

/** The OpenAPI component of the index (`ApiRoot`). */
export function apiRootSchema(): Record<string, unknown> {
  return {
    ApiRoot: {
      type: 'object',
      additionalProperties: false,
      description: "The API's index of links (absolute URLs; `{…}` marks a URI template variable).",
      required: API_ROOT_LINKS.map((l) => l.name),
      properties: Object.fromEntries(
        API_ROOT_LINKS.map((l) => [l.name, { type: 'string', description: `${l.doc} (\`${l.path}\`)` }]),
      ),
    },
  };
}

/** What the index operation shares: its body, made once. */
interface ApiRootEnv {
  body: Record<string, string>;
}

/** The index operation (path relative to the /v1 mount). */
export const API_ROOT_OPERATIONS: readonly Operation<ApiRootEnv>[] = [
  {
    method: 'get',
    path: '/',
    tag: 'Reference',
    public: true,
    summary: 'The index of links',
    description:
      "Where everything is, as GitHub's API root: one absolute URL per resource (the OpenAPI document, the references, leads, events, infrastructure, exports in each format, the GeoJSON feeds, OGC API Features, vector tiles, meta, problem types, webhooks, usage); `{…}` marks a URI template variable. No key needed.",
    ok: { schema: schemaRef('ApiRoot'), description: 'The links.' },
    errors: [],
    handler: (ctx, { body }) => {
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = body;
    },
  },
];

/** The index router (path relative to the /v1 mount). */
export function apiRootRouter(config: Pick<ApiConfig, 'publicBaseUrl'>): Router<AppState> {
  return mount(API_ROOT_OPERATIONS, { body: apiRoot(config.publicBaseUrl) });
}
