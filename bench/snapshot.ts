/**
 * Response snapshot of a release: a FIXED list of 200 requests over every operation of
 * `/v1/openapi.json` (filters, sorts, `q`, paging, cursors and ids followed from earlier answers,
 * exports, feeds, OGC, infrastructure, intel, meta, and the 400/401/403/404 errors), sent for
 * several scopes to the API started in process on the release. `record` writes, per request, the
 * status, every header that must not change and a SHA-256 of the body (plus the body itself for
 * JSON under 64 KB, to show diffs); `compare` runs the list again and reports every difference
 * (exit 1). It proves that a refactoring leaves the responses of the default release byte-identical.
 *
 *   node --import tsx bench/snapshot.ts record  [--data-dir data] [--out bench/results/snapshot.json]
 *   node --import tsx bench/snapshot.ts compare [--data-dir data] [--out bench/results/snapshot.json]
 *
 * What is held still so that two runs agree: a fresh temporary state file with one key per scope
 * (created in a fixed order, one account each), fixed cursor and GIS-token secrets, the server's
 * clock held at the release's build time plus one day (feed time stamps, key dates, budget days), `X-Request-Id` sent (`snapshot-<n>`, so problem bodies agree),
 * and the server's origin and the key ids written as fixed stand-ins before hashing. Headers left
 * out: `date`, `x-request-id`, the rate-limit and budget counters, `retry-after`, connection and
 * timing headers. ETags are kept: they embed the release id, stable for one release.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { loadApiConfig } from '../api/config.ts';
import { generateKey } from '../api/access/keys.ts';
import { SCOPES, type Scope } from '../api/access/scopes.ts';
import type { LoadEngine } from '../api/releases/release.ts';
import { startServer } from '../api/server.ts';

/** Who sends a request: a key of a scope, no key at all, or a key the server does not know. */
export type Caller = Scope | 'none' | 'unknown_key';

/** One request of the list. `path` (under the origin) may hold `{name}` values taken from earlier answers. */
export interface SnapshotRequest {
  readonly name: string;
  readonly as: Caller;
  readonly path: string;
  readonly method?: 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE';
  readonly body?: unknown;
  /** Request headers (values may hold `{name}` too), e.g. `If-None-Match`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Values to take from this answer for later requests: name → `body.<dotted path>` or `link:<rel>`. */
  readonly take?: Readonly<Record<string, string>>;
  /** The body differs on every run by design (a random nonce or sealed token): only status, headers and the body's JSON keys are recorded. */
  readonly volatile?: true;
}

const L = '/v1/leads';
const X = '/v1/export/applications';
const I = '/v1/infrastructure';

/** THE list: one declaration, read by `record` and `compare` alike. Order matters (values are taken from earlier answers). */
export const REQUESTS: readonly SnapshotRequest[] = [
  // meta, documents
  { name: 'meta', as: 'commonwealth', path: '/v1/meta' },
  { name: 'meta ent_api', as: 'ent_api', path: '/v1/meta' },
  { name: 'meta head', as: 'custom', path: '/v1/meta', method: 'HEAD' },
  { name: 'authorities', as: 'ent_api', path: '/v1/authorities' },
  { name: 'openapi', as: 'none', path: '/v1/openapi.json' },
  { name: 'docs page', as: 'none', path: '/v1/docs' },
  { name: 'reference page', as: 'none', path: '/v1/reference' },
  { name: 'docs asset init', as: 'none', path: '/v1/docs/assets/init.js' },
  { name: 'docs asset 404', as: 'none', path: '/v1/docs/assets/nope.js' },
  // leads: lists by scope, ids and cursors taken for later
  {
    name: 'leads default commonwealth',
    as: 'commonwealth',
    path: `${L}?page_size=5`,
    take: { lead_cw: 'body.results.0.id' },
  },
  {
    name: 'leads default ent_api',
    as: 'ent_api',
    path: `${L}?page_size=5`,
    take: { lead_id: 'body.results.0.id', lead_id2: 'body.results.4.id' },
  },
  { name: 'leads default ent_feed', as: 'ent_feed', path: L, take: { lead_cursor: 'body.next_cursor' } },
  {
    name: 'leads next page by cursor',
    as: 'ent_feed',
    path: `${L}?cursor={lead_cursor}`,
    take: { lead_cursor2: 'body.next_cursor' },
  },
  { name: 'leads third page by cursor', as: 'ent_feed', path: `${L}?cursor={lead_cursor2}` },
  {
    name: 'leads link next',
    as: 'custom',
    path: `${L}?sort=value_desc&page_size=7`,
    take: { leads_next: 'link:next' },
  },
  { name: 'leads followed link next', as: 'custom', path: '{leads_next}' },
  ...(['newest', 'oldest', 'value_desc', 'value_asc'] as const).flatMap((sort) => [
    { name: `leads sort ${sort}`, as: 'ent_api' as const, path: `${L}?sort=${sort}&page_size=20` },
  ]),
  { name: 'leads sort relevance', as: 'ent_api', path: `${L}?q=extension&sort=relevance&page_size=10` },
  ...['extension', 'solar panels', 'demolition of shed', 'zzzqqq'].map((q) => ({
    name: `leads q ${q}`,
    as: 'ent_api' as const,
    path: `${L}?q=${encodeURIComponent(q)}&page_size=10`,
  })),
  {
    name: 'leads q + county + cursor',
    as: 'custom',
    path: `${L}?q=extension&county=Cork&page_size=5`,
    take: { q_cursor: 'body.next_cursor' },
  },
  { name: 'leads q cursor followed', as: 'custom', path: `${L}?q=extension&county=Cork&page_size=5&cursor={q_cursor}` },
  ...['solar', 'heat_pumps', 'solar,roofing', 'windows_doors,glazing_facades,insulation'].map((v) => ({
    name: `leads vertical ${v}`,
    as: 'ent_api' as const,
    path: `${L}?vertical=${v}&page_size=10`,
  })),
  ...['Galway', 'Cork,Kerry', 'dublin'].map((c) => ({
    name: `leads county ${c}`,
    as: 'custom' as const,
    path: `${L}?county=${c}&page_size=10`,
  })),
  {
    name: 'leads authority',
    as: 'custom',
    path: `${L}?authority=${encodeURIComponent('Dun Laoghaire-Rathdown')}&page_size=10`,
  },
  {
    name: 'leads authority folded',
    as: 'custom',
    path: `${L}?authority=${encodeURIComponent('dun laoghaire-rathdown,cork county')}&page_size=10`,
  },
  ...['commencing', 'refused', 'application,further_information,appealed'].map((r) => ({
    name: `leads readiness ${r}`,
    as: 'ent_api' as const,
    path: `${L}?readiness=${r}&page_size=10`,
  })),
  ...['planning', 'active', 'granted'].map((s) => ({
    name: `leads status ${s}`,
    as: 'ent_feed' as const,
    path: `${L}?status=${s}&page_size=10`,
  })),
  ...['house', 'energy', 'warehouse_logistics,industrial'].map((u) => ({
    name: `leads use_class ${u}`,
    as: 'custom' as const,
    path: `${L}?use_class=${u}&page_size=10`,
  })),
  ...['minor', 'medium,large'].map((s) => ({
    name: `leads scale ${s}`,
    as: 'ent_api' as const,
    path: `${L}?scale=${s}&page_size=10`,
  })),
  { name: 'leads min_value', as: 'ent_api', path: `${L}?min_value=1000000&page_size=10` },
  { name: 'leads min_value decimal', as: 'ent_api', path: `${L}?min_value=250000.50&sort=value_asc&page_size=10` },
  { name: 'leads min_units', as: 'ent_api', path: `${L}?min_units=10&page_size=10` },
  { name: 'leads has_contact true', as: 'ent_api', path: `${L}?has_contact=true&page_size=10` },
  { name: 'leads demolition 1', as: 'ent_feed', path: `${L}?demolition=1&page_size=10` },
  {
    name: 'leads combined',
    as: 'custom',
    path: `${L}?county=Dublin&vertical=solar,roofing&status=approved&scale=minor,medium&sort=value_desc&page_size=15`,
  },
  {
    name: 'leads combined 2',
    as: 'custom',
    path: `${L}?county=Cork&use_class=house&readiness=granted&has_contact=1&min_value=100000&page_size=15`,
  },
  {
    name: 'leads combined q',
    as: 'ent_api',
    path: `${L}?q=extension&county=Dublin&vertical=roofing&demolition=0&page_size=15`,
  },
  { name: 'leads page 2 commonwealth', as: 'commonwealth', path: `${L}?page=2&page_size=5` },
  {
    name: 'leads search post near',
    as: 'custom',
    path: `${L}/search`,
    method: 'POST',
    body: { county: 'Cork', near: '51.9,-8.47', radius_m: 20000, sort: 'distance', page_size: 5 },
  },
  { name: 'leads page_size 100', as: 'custom', path: `${L}?page_size=100&sort=oldest` },
  { name: 'leads etag', as: 'custom', path: `${L}?page_size=2`, take: { leads_etag: 'header:etag' } },
  { name: 'leads dry run', as: 'ent_api', path: `${L}?county=Cork&dry_run=1` },
  { name: 'leads head', as: 'custom', path: `${L}?page_size=2`, method: 'HEAD' },
  // lead details
  { name: 'lead detail commonwealth', as: 'commonwealth', path: `${L}/{lead_cw}` },
  { name: 'lead detail ent_api', as: 'ent_api', path: `${L}/{lead_id}` },
  { name: 'lead detail ent_feed', as: 'ent_feed', path: `${L}/{lead_id}` },
  { name: 'lead detail custom', as: 'custom', path: `${L}/{lead_id2}` },
  { name: 'lead detail dry run', as: 'ent_api', path: `${L}/{lead_id}?dry_run=1` },
  { name: 'lead detail head', as: 'custom', path: `${L}/{lead_id}`, method: 'HEAD' },
  { name: 'lead detail 404', as: 'ent_api', path: `${L}/999999999` },
  { name: 'lead history', as: 'ent_api', path: `${L}/{lead_id}/history` },
  { name: 'events', as: 'ent_api', path: '/v1/events?page_size=5' },
  // leads errors
  { name: 'leads 400 unknown parameter', as: 'ent_api', path: `${L}?bogus=1` },
  { name: 'leads 400 bad vertical', as: 'ent_api', path: `${L}?vertical=spaceships` },
  { name: 'leads 400 bad page_size', as: 'ent_api', path: `${L}?page_size=1000` },
  { name: 'leads 400 page and cursor', as: 'ent_api', path: `${L}?page=2&cursor={lead_cursor}` },
  { name: 'leads 400 altered cursor', as: 'ent_api', path: `${L}?cursor=AAAAtampered` },
  { name: 'leads 400 relevance without q', as: 'ent_api', path: `${L}?sort=relevance` },
  { name: 'leads 400 bad min_value', as: 'ent_api', path: `${L}?min_value=-1` },
  { name: 'leads 400 bad boolean', as: 'ent_api', path: `${L}?has_contact=maybe` },
  { name: 'leads 400 page beyond max', as: 'ent_api', path: `${L}?page=101` },
  { name: 'lead detail 400 bad id', as: 'ent_api', path: `${L}/abc` },
  { name: 'lead detail 400 expand', as: 'ent_api', path: `${L}/{lead_id}?expand=all` },
  { name: 'leads 401 no key', as: 'none', path: L },
  { name: 'leads 401 unknown key', as: 'unknown_key', path: L },
  { name: 'lead detail 401 no key', as: 'none', path: `${L}/{lead_id}` },
  // infrastructure
  {
    name: 'infra default',
    as: 'ent_api',
    path: `${I}?page_size=3`,
    take: { infra_id: 'body.results.0.id', infra_cursor: 'body.next_cursor' },
  },
  { name: 'infra commonwealth', as: 'commonwealth', path: `${I}?page_size=5` },
  { name: 'infra cursor followed', as: 'ent_api', path: `${I}?page_size=3&cursor={infra_cursor}` },
  { name: 'infra renewables', as: 'ent_api', path: `${I}/renewables` },
  {
    name: 'infra renewables wind',
    as: 'custom',
    path: `${I}/renewables?technology=onshore_wind,offshore_wind&sort=capacity_desc`,
  },
  ...['data_centre', 'wind', 'battery_storage'].map((v) => ({
    name: `infra vertical ${v}`,
    as: 'custom' as const,
    path: `${I}?vertical=${v}&page_size=10`,
  })),
  ...['solar_pv', 'substation'].map((t) => ({
    name: `infra technology ${t}`,
    as: 'ent_feed' as const,
    path: `${I}?technology=${t}&page_size=10`,
  })),
  ...['id', 'capacity_desc', 'newest'].map((s) => ({
    name: `infra sort ${s}`,
    as: 'ent_api' as const,
    path: `${I}?sort=${s}&page_size=10`,
  })),
  { name: 'infra county', as: 'ent_api', path: `${I}?county=Cork,Kerry&page_size=10` },
  { name: 'infra authority', as: 'ent_api', path: `${I}?authority=${encodeURIComponent('Cork County')}` },
  { name: 'infra mw range', as: 'ent_api', path: `${I}?min_mw=10&max_mw=200&sort=capacity_desc` },
  { name: 'infra consenting route', as: 'custom', path: `${I}?consenting_route=strategic_infrastructure,appeal` },
  { name: 'infra fast lane', as: 'custom', path: `${I}?fast_lane=true` },
  { name: 'infra status', as: 'ent_feed', path: `${I}?status=consented,operational&page_size=10` },
  { name: 'infra since', as: 'ent_feed', path: `${I}?since=2026-01-01&page_size=10` },
  { name: 'infra updated_since', as: 'ent_feed', path: `${I}?updated_since=2026-06-01&page_size=10` },
  { name: 'infra detail', as: 'ent_api', path: `${I}/{infra_id}` },
  { name: 'infra detail 404', as: 'ent_api', path: `${I}/no-such-project` },
  { name: 'infra 400 bad technology', as: 'ent_api', path: `${I}?technology=steam` },
  { name: 'infra 400 bad date', as: 'ent_api', path: `${I}?since=2026-13-01` },
  { name: 'infra 400 unknown', as: 'ent_api', path: `${I}?q=wind` },
  { name: 'infra 401', as: 'none', path: I },
  // intel
  ...(['price_index', 'yields', 'emerging_zones', 'material_costs'] as const).map((s) => ({
    name: `intel ${s}`,
    as: 'ent_api' as const,
    path: `/v1/intel/analytics?section=${s}`,
  })),
  { name: 'intel 403 commonwealth', as: 'commonwealth', path: '/v1/intel/analytics?section=price_index&page_size=5' },
  {
    name: 'intel price index county range',
    as: 'custom',
    path: '/v1/intel/analytics?section=price_index&county=Dublin,Cork&from=2024&to=2025-Q2',
  },
  {
    name: 'intel yields county',
    as: 'custom',
    path: `/v1/intel/analytics?section=yields&county=${encodeURIComponent('Co. Cork')}`,
  },
  {
    name: 'intel emerging page 2',
    as: 'custom',
    path: '/v1/intel/analytics?section=emerging_zones&page=2&page_size=5',
  },
  {
    name: 'intel material from month',
    as: 'custom',
    path: '/v1/intel/analytics?section=material_costs&from=2025-01&to=2025-06',
  },
  { name: 'intel svg', as: 'ent_api', path: '/v1/intel/analytics/price-index.svg' },
  { name: 'intel summary without section', as: 'ent_api', path: '/v1/intel/analytics' },
  { name: 'intel 400 bad section', as: 'ent_api', path: '/v1/intel/analytics?section=weather' },
  { name: 'intel 400 bad period', as: 'ent_api', path: '/v1/intel/analytics?section=yields&from=2025-13' },
  // exports
  {
    name: 'export json',
    as: 'custom',
    path: `${X}?county=Leitrim&limit=5`,
    take: { export_cursor: 'body.next_cursor' },
  },
  { name: 'export json cursor', as: 'custom', path: `${X}?county=Leitrim&limit=5&cursor={export_cursor}` },
  { name: 'export json ent_feed', as: 'ent_feed', path: `${X}?vertical=solar&status=approved&limit=10` },
  { name: 'export json q', as: 'custom', path: `${X}?q=extension&county=Cork&limit=10` },
  { name: 'export json commonwealth', as: 'commonwealth', path: `${X}?limit=5` },
  { name: 'export csv', as: 'custom', path: `${X}.csv?county=Leitrim&min_value=2000000` },
  {
    name: 'export csv ent_feed',
    as: 'ent_feed',
    path: `${X}.csv?q=${encodeURIComponent('solar panels')}&county=Cork&vertical=solar`,
  },
  { name: 'export jsonl', as: 'custom', path: `${X}.jsonl?county=Leitrim&min_value=2000000` },
  {
    name: 'export jsonl use class',
    as: 'ent_feed',
    path: `${X}.jsonl?use_class=data_centre&county=Dublin&min_value=5000000`,
  },
  { name: 'export parquet', as: 'custom', path: `${X}.parquet?county=Leitrim&min_value=2000000` },
  { name: 'export csv dry run', as: 'custom', path: `${X}.csv?county=Dublin&dry_run=1` },
  { name: 'export csv head', as: 'custom', path: `${X}.csv?county=Leitrim`, method: 'HEAD' },
  { name: 'export 400 unknown', as: 'custom', path: `${X}.csv?sort=newest` },
  { name: 'export 400 bad limit', as: 'custom', path: `${X}?limit=0` },
  { name: 'export csv commonwealth', as: 'commonwealth', path: `${X}.csv?county=Leitrim` },
  { name: 'export 401', as: 'none', path: `${X}.jsonl` },
  // feeds and OGC
  {
    name: 'feed token',
    as: 'custom',
    path: '/v1/feeds/token?ttl=3600',
    take: { token: 'body.access_token' },
    volatile: true,
  },
  { name: 'feed token 403 commonwealth', as: 'commonwealth', path: '/v1/feeds/token' },
  {
    name: 'feed leads',
    as: 'ent_feed',
    path: '/v1/feeds/leads.geojson?page_size=20',
    take: { feed_next: 'link:next' },
  },
  { name: 'feed leads next', as: 'ent_feed', path: '{feed_next}' },
  { name: 'feed leads bbox', as: 'custom', path: '/v1/feeds/leads.geojson?bbox=-6.5,53.2,-6.0,53.5&page_size=50' },
  {
    name: 'feed leads authority since',
    as: 'custom',
    path: `/v1/feeds/leads.geojson?authority=${encodeURIComponent('cork county')}&since=2026-01-01&page_size=20`,
  },
  {
    name: 'feed leads token',
    as: 'none',
    path: '/v1/feeds/leads.geojson?page_size=5&access_token={token}',
    volatile: true,
  },
  { name: 'feed infrastructure', as: 'ent_feed', path: '/v1/feeds/infrastructure.geojson?page_size=20' },
  {
    name: 'feed infrastructure filters',
    as: 'custom',
    path: '/v1/feeds/infrastructure.geojson?vertical=wind,solar&min_mw=5&page_size=20',
  },
  { name: 'feed 403 commonwealth', as: 'commonwealth', path: '/v1/feeds/leads.geojson' },
  { name: 'feed 400 bad bbox', as: 'custom', path: '/v1/feeds/leads.geojson?bbox=1,2,3' },
  { name: 'feed 401 bad token', as: 'none', path: '/v1/feeds/leads.geojson?access_token=not-a-token' },
  { name: 'ogc landing', as: 'custom', path: '/v1/ogc' },
  { name: 'ogc 400 f=html', as: 'custom', path: '/v1/ogc?f=html' },
  { name: 'ogc conformance', as: 'custom', path: '/v1/ogc/conformance' },
  { name: 'ogc collections', as: 'ent_feed', path: '/v1/ogc/collections' },
  { name: 'ogc collection leads', as: 'ent_feed', path: '/v1/ogc/collections/leads' },
  {
    name: 'ogc leads items',
    as: 'custom',
    path: '/v1/ogc/collections/leads/items?limit=10',
    take: { ogc_next: 'link:next', feature_id: 'body.features.0.id' },
  },
  { name: 'ogc leads items next', as: 'custom', path: '{ogc_next}' },
  {
    name: 'ogc leads items bbox',
    as: 'custom',
    path: '/v1/ogc/collections/leads/items?bbox=-8.7,51.8,-8.3,52.0&limit=25',
  },
  {
    name: 'ogc leads items datetime and lead filters',
    as: 'custom',
    path: '/v1/ogc/collections/leads/items?datetime=2026-01-01T00:00:00Z/..&vertical=roofing&min_value=100000&limit=10',
  },
  { name: 'ogc leads queryables', as: 'ent_feed', path: '/v1/ogc/collections/leads/queryables' },
  {
    name: 'ogc infrastructure items',
    as: 'ent_feed',
    path: '/v1/ogc/collections/infrastructure/items?limit=10',
    take: { infra_feature: 'body.features.0.id' },
  },
  { name: 'ogc leads item', as: 'custom', path: '/v1/ogc/collections/leads/items/{feature_id}' },
  { name: 'ogc infrastructure item', as: 'ent_feed', path: '/v1/ogc/collections/infrastructure/items/{infra_feature}' },
  { name: 'ogc item 404', as: 'custom', path: '/v1/ogc/collections/leads/items/999999999' },
  { name: 'ogc collection 404', as: 'custom', path: '/v1/ogc/collections/roads' },
  { name: 'ogc 400 bad limit', as: 'custom', path: '/v1/ogc/collections/leads/items?limit=abc' },
  { name: 'ogc 403 commonwealth', as: 'commonwealth', path: '/v1/ogc/collections' },
  { name: 'ogc 401', as: 'none', path: '/v1/ogc' },
  { name: 'tilejson leads', as: 'ent_feed', path: '/v1/tiles/leads.json' },
  { name: 'tile leads z5', as: 'custom', path: '/v1/tiles/leads/5/15/10.mvt' },
  // account, webhooks, claim (only what leaves no trace that differs between runs)
  { name: 'usage past month', as: 'ent_api', path: '/v1/account/usage?from=2020-01-01&to=2020-01-31' },
  { name: 'usage 400 bad date', as: 'ent_api', path: '/v1/account/usage?from=2020-02-30' },
  { name: 'webhooks list empty', as: 'ent_api', path: '/v1/webhooks' },
  {
    name: 'webhooks create 403 commonwealth',
    as: 'commonwealth',
    path: '/v1/webhooks',
    method: 'POST',
    body: { url: 'https://example.com/hook' },
  },
  {
    name: 'webhooks create 400 no url',
    as: 'ent_api',
    path: '/v1/webhooks',
    method: 'POST',
    body: { filter: { county: ['Cork'] } },
  },
  {
    name: 'webhooks create 400 bad filter',
    as: 'custom',
    path: '/v1/webhooks',
    method: 'POST',
    body: { url: 'https://example.com/hook', filter: { vertical: ['spaceships'] } },
  },
  { name: 'webhook 404', as: 'ent_api', path: '/v1/webhooks/wh_doesnotexist' },
  {
    name: 'webhook patch 404',
    as: 'ent_api',
    path: '/v1/webhooks/wh_doesnotexist',
    method: 'PATCH',
    body: { status: 'disabled' },
  },
  { name: 'webhook delete 404', as: 'custom', path: '/v1/webhooks/wh_doesnotexist', method: 'DELETE' },
  { name: 'webhook disable 404', as: 'ent_api', path: '/v1/webhooks/wh_doesnotexist/disable', method: 'POST' },
  { name: 'webhook enable 404', as: 'ent_api', path: '/v1/webhooks/wh_doesnotexist/enable', method: 'POST' },
  { name: 'webhook rotate 404', as: 'ent_feed', path: '/v1/webhooks/wh_doesnotexist/rotate-secret', method: 'POST' },
  { name: 'webhook test 404', as: 'ent_feed', path: '/v1/webhooks/wh_doesnotexist/test', method: 'POST' },
  {
    name: 'webhook deliveries 404',
    as: 'custom',
    path: '/v1/webhooks/wh_doesnotexist/deliveries?status=failed&limit=5',
  },
  { name: 'webhook replay 404', as: 'custom', path: '/v1/webhooks/wh_doesnotexist/replay', method: 'POST' },
  { name: 'webhooks 401', as: 'none', path: '/v1/webhooks' },
  { name: 'claim page', as: 'none', path: '/v1/claim', volatile: true },
  { name: 'claim lookup 400', as: 'none', path: '/v1/claim/lookup', method: 'POST', body: {} },
  {
    name: 'claim lookup 404 unknown',
    as: 'none',
    path: '/v1/claim/lookup',
    method: 'POST',
    body: { token: 'A'.repeat(43) },
  },
  { name: 'claim 400', as: 'none', path: '/v1/claim', method: 'POST', body: { nothing: true } },
  {
    name: 'claim 404 unknown link',
    as: 'none',
    path: '/v1/claim',
    method: 'POST',
    body: { token: 'A'.repeat(43), key_hash: '0'.repeat(64), display_prefix: 'lk_cu_Ab3d' },
  },
  // conditional requests and misc
  {
    name: 'leads if-none-match 304',
    as: 'custom',
    path: `${L}?page_size=2`,
    headers: { 'if-none-match': '{leads_etag}' },
  },
  { name: 'unknown route 404', as: 'custom', path: '/v1/nothing-here' },
  // the index of links and the problem types (no key)
  { name: 'api root', as: 'none', path: '/v1' },
  { name: 'problem types', as: 'none', path: '/v1/problems', headers: { accept: 'application/json' } },
  { name: 'problem type page', as: 'none', path: '/v1/problems/budget_exhausted' },
  { name: 'unversioned 404', as: 'none', path: '/leads' },
  { name: 'meta 401 unknown key', as: 'unknown_key', path: '/v1/meta' },
];

/** Headers that change between two runs of the same release (or only count usage), left out of the snapshot. */
const VOLATILE_HEADERS =
  /^(date|x-request-id|x-ratelimit-.*|ratelimit(-policy)?|x-budget-.*|retry-after|connection|keep-alive|transfer-encoding|server-timing|x-response-time|age)$/;
const BODY_KEPT_MAX = 64 * 1024;

/** What one answer looked like. */
export interface SnapshotEntry {
  name: string;
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  bytes: number;
  sha256: string;
  /** Values the request needed from earlier answers that they did not hold (sent as `missing`). */
  unfilled?: string[];
  /** The body (JSON under 64 KB), or for a volatile answer its JSON keys only. */
  body?: unknown;
}

export interface Snapshot {
  release: string;
  requests: number;
  entries: SnapshotEntry[];
}

const CURSOR_SECRET = 'snapshot-cursor-secret-0123456789abcdef';
const GIS_TOKEN_SECRET = 'snapshot-gis-token-secret-0123456789abcdef';

/** The release `dataDir/current` points to, or a clear error when there is none. */
export function currentRelease(dataDir: string): string {
  const current = join(dataDir, 'current');
  if (!existsSync(current))
    throw new Error(
      `no release in ${dataDir} (no ${current}): build the default release with \`make refresh\` first, or give --data-dir`,
    );
  return basename(readlinkSync(current));
}

/** `20261109T060000Z` → that instant plus one day: the server's clock, still for the whole run. */
function clockOf(release: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(release);
  const t = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : Date.UTC(2026, 0, 1);
  return new Date(t + 86_400_000);
}

/** Take `body.a.0.b`, `header:<name>` or `link:<rel>` (as a path under the origin) out of an answer. */
function takeValue(spec: string, headers: Headers, json: unknown): string | null {
  if (spec.startsWith('header:')) return headers.get(spec.slice(7));
  if (spec.startsWith('link:')) {
    const rel = spec.slice(5);
    for (const part of (headers.get('link') ?? '').split(/,(?=\s*<)/)) {
      const m = /<([^>]+)>(.*)/.exec(part.trim());
      if (m && new RegExp(`rel="?([^";]*\\s)?${rel}(\\s[^";]*)?"?`).test(m[2]!)) {
        const u = new URL(m[1]!, 'http://localhost');
        return u.pathname + u.search;
      }
    }
    return null;
  }
  let v: unknown = json;
  for (const k of spec.replace(/^body\./, '').split('.'))
    v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v === undefined || v === null ? null : String(v);
}

/** Keys of a JSON value, recursively (for volatile answers: the shape without the values). */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : [];
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    );
  return typeof v;
}

/**
 * Start the API in process on `dataDir`'s current release (fresh temporary state file, one key per
 * scope, fixed clock and secrets), send `requests` in order and return what each answer was.
 * `deps.loadEngine`: how the release's leads engine is built (the server's default: a child
 * process; tests pass one that reuses an engine built for the same files).
 */
export async function takeSnapshot(
  dataDir: string,
  requests: readonly SnapshotRequest[] = REQUESTS,
  deps: { loadEngine?: LoadEngine } = {},
): Promise<Snapshot> {
  const release = currentRelease(dataDir);
  const tmp = mkdtempSync(join(tmpdir(), 'leads-snapshot-'));
  const now = clockOf(release);
  const config = loadApiConfig(
    {},
    {
      dataDir: resolve(dataDir),
      port: 0,
      host: '127.0.0.1',
      databaseUrl: `file:${join(tmp, 'state.sqlite')}`,
      exportTempDir: join(tmp, 'export-tmp'),
      publicBaseUrl: 'http://localhost/v1',
      cursorSecret: CURSOR_SECRET,
      gisTokenSecret: GIS_TOKEN_SECRET,
      releasePollMs: 3_600_000,
      webhookIntervalMs: 0,
      duckdbConnections: 2,
    },
  );
  const server = await startServer(config, {
    log: () => {},
    clock: () => now,
    ...(deps.loadEngine ? { loadEngine: deps.loadEngine } : {}),
  });
  try {
    const keys = new Map<Caller, string>();
    // what differs between two runs by construction, written the same way in every run
    const stand: [string, string][] = [[server.url, 'http://api.snapshot']];
    for (const scope of SCOPES) {
      const account = await server.store.createAccount(`snapshot ${scope}`, 'premium'); // one each: a usage answer lists one key
      const k = generateKey(scope);
      await server.store.insertKey({
        id: k.id,
        account_id: account.id,
        scope,
        name: `snapshot ${scope}`,
        display_prefix: k.displayPrefix,
        hash: k.hash,
      });
      keys.set(scope, k.raw);
      stand.push([k.id, `key_snapshot_${scope}`], [k.displayPrefix, `prefix_snapshot_${scope}`]);
    }
    const steady = (text: string): string => stand.reduce((t, [from, to]) => t.split(from).join(to), text);
    keys.set('unknown_key', generateKey('custom').raw);
    const taken = new Map<string, string>();
    const entries: SnapshotEntry[] = [];
    for (const [i, r] of requests.entries()) {
      const unfilled: string[] = [];
      const fill = (t: string): string =>
        t.replace(/\{(\w+)\}/g, (_, k: string) => {
          const v = taken.get(k);
          if (v === undefined) unfilled.push(k);
          return k === 'token' ? encodeURIComponent(v ?? 'missing') : (v ?? 'missing');
        });
      const path = fill(r.path);
      // identity unless a request asks otherwise: the snapshot compares what is served, and a
      // compressed length moves with the volatile values (a timestamp's digits) the snapshot steadies
      const headers: Record<string, string> = {
        'x-request-id': `snapshot-${i}`,
        'accept-encoding': 'identity',
        ...Object.fromEntries(Object.entries(r.headers ?? {}).map(([h, v]) => [h, fill(v)])),
      };
      const key = keys.get(r.as);
      if (key) headers['authorization'] = `Bearer ${key}`;
      if (r.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(server.url + path, {
        method: r.method ?? 'GET',
        headers,
        redirect: 'manual',
        ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
      });
      const type = res.headers.get('content-type') ?? '';
      const raw = Buffer.from(await res.arrayBuffer());
      const isText = /json|text|csv|svg|javascript|html/.test(type);
      const bytes = isText ? Buffer.from(steady(raw.toString('utf8')), 'utf8') : raw;
      const kept: Record<string, string> = {};
      for (const [h, v] of [...res.headers.entries()].sort(([a], [b]) => a.localeCompare(b)))
        if (!VOLATILE_HEADERS.test(h)) kept[h] = steady(v);
      const isJson = /^[\w.+-]+\/([\w.-]+\+)?json\s*(;|$)/.test(type); // one JSON document (not JSON Lines)
      let json: unknown;
      if (isJson && bytes.length > 0) json = JSON.parse(bytes.toString('utf8'));
      for (const [name, spec] of Object.entries(r.take ?? {})) {
        const v = takeValue(spec, res.headers, json);
        if (v !== null) taken.set(name, v);
      }
      const entry: SnapshotEntry = {
        name: r.name,
        method: r.method ?? 'GET',
        path: r.path,
        status: res.status,
        headers: kept,
        bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      };
      if (unfilled.length) entry.unfilled = unfilled;
      if (r.volatile) {
        for (const h of Object.keys(kept)) if (h !== 'content-type') delete kept[h];
        entry.bytes = -1;
        entry.sha256 = '(volatile)';
        if (json !== undefined) entry.body = shape(json);
      } else if (json !== undefined && bytes.length <= BODY_KEPT_MAX) entry.body = json;
      entries.push(entry);
    }
    return { release, requests: requests.length, entries };
  } finally {
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Every difference between a recorded snapshot and a new one, one line each (empty when identical). */
export function compareSnapshots(recorded: Snapshot, now: Snapshot): string[] {
  const out: string[] = [];
  if (recorded.release !== now.release) out.push(`release: recorded ${recorded.release}, now ${now.release}`);
  const n = Math.max(recorded.entries.length, now.entries.length);
  for (let i = 0; i < n; i++) {
    const a = recorded.entries[i];
    const b = now.entries[i];
    if (!a || !b) {
      out.push(`#${i} ${(a ?? b)!.name}: only in the ${a ? 'recorded' : 'new'} snapshot`);
      continue;
    }
    const at = `#${i} ${a.name} (${a.method} ${a.path})`;
    if (a.name !== b.name || a.path !== b.path)
      out.push(`${at}: the request differs (now ${b.name}: ${b.method} ${b.path}) — the list changed; record again`);
    if (a.status !== b.status) out.push(`${at}: status ${a.status} → ${b.status}`);
    for (const h of [...new Set([...Object.keys(a.headers), ...Object.keys(b.headers)])].sort()) {
      if (a.headers[h] !== b.headers[h])
        out.push(
          `${at}: header ${h}: ${JSON.stringify(a.headers[h] ?? null)} → ${JSON.stringify(b.headers[h] ?? null)}`,
        );
    }
    if (a.sha256 !== b.sha256 || a.bytes !== b.bytes)
      out.push(
        `${at}: body ${a.bytes} bytes sha256 ${a.sha256.slice(0, 12)} → ${b.bytes} bytes sha256 ${b.sha256.slice(0, 12)}${bodyDiff(a.body, b.body)}`,
      );
    else if (JSON.stringify(a.body) !== JSON.stringify(b.body))
      out.push(`${at}: body shape${bodyDiff(a.body, b.body)}`);
  }
  return out;
}

/** Where two kept bodies first differ (a JSON path and both values), or nothing when not kept. */
function bodyDiff(a: unknown, b: unknown, path = ''): string {
  if (a === undefined || b === undefined) return '';
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])]) {
      const d = bodyDiff(
        (a as Record<string, unknown>)[k] ?? null,
        (b as Record<string, unknown>)[k] ?? null,
        `${path}/${k}`,
      );
      if (d) return d;
    }
    return Object.keys(a).join() !== Object.keys(b).join() ? `; at ${path || '/'} the keys differ in order` : '';
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return '';
  const show = (v: unknown): string => JSON.stringify(v)?.slice(0, 120) ?? 'undefined';
  return `; first at ${path || '/'}: ${show(a)} → ${show(b)}`;
}

function arg(argv: string[], name: string, fallback: string): string {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
}

/** CLI: `record` writes the snapshot, `compare` runs again and reports every difference (exit 1). */
async function main(argv: string[]): Promise<number> {
  const cmd = argv[0];
  const dataDir = arg(argv, '--data-dir', 'data');
  const out = arg(argv, '--out', join('bench', 'results', 'snapshot.json'));
  if (cmd !== 'record' && cmd !== 'compare') {
    console.error('usage: node --import tsx bench/snapshot.ts record|compare [--data-dir DIR] [--out FILE]');
    return 2;
  }
  try {
    currentRelease(dataDir);
  } catch (e) {
    console.error(`snapshot: ${(e as Error).message}`);
    return 2;
  }
  if (cmd === 'compare' && !existsSync(out)) {
    console.error(`snapshot: no recorded snapshot at ${out}: run \`record\` first (before the change)`);
    return 2;
  }
  const snap = await takeSnapshot(dataDir);
  if (cmd === 'record') {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(snap, null, 1) + '\n');
    console.log(`snapshot: ${snap.entries.length} answers of release ${snap.release} recorded in ${out}`);
    return 0;
  }
  const diffs = compareSnapshots(JSON.parse(readFileSync(out, 'utf8')) as Snapshot, snap);
  for (const d of diffs) console.log(d);
  console.log(
    diffs.length
      ? `snapshot: ${diffs.length} differences from ${out}`
      : `snapshot: all ${snap.entries.length} answers identical to ${out}`,
  );
  return diffs.length ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
