/**
 * The OpenAPI 3.1 document of the API, generated from `schemas/`: every record schema becomes a
 * component (cross-file `$ref`s rewritten to `#/components/schemas/…`), the query parameters of
 * every endpoint a query parser reads are the properties of the query schema that parser uses
 * (`*-query.schema.json`, parsed by `parseQuery` in api/query/parse-query.ts), and every error
 * response is the RFC 9457 problem schema.
 * Nothing is written by hand twice: change a schema and the document follows.
 *
 * `endpoints()` lists the operations: the declarations of api/routes/ (path, method, query schema,
 * responses, documentation and handler in one object), the same objects the app mounts.
 */
import { readFileSync, readdirSync } from 'node:fs';
import type { ApiConfig } from '../config.ts';
import { webhookEventsDoc, webhookSchemas } from './webhooks.ts';
import { ACCESS_HEADERS, ACCESS_PROBLEMS, accessSchemas, keyedOperation } from './access.ts';
import { derefProp } from '../query/parse-query.ts';
import { exportResponseSchemas } from './exports.ts';
import { METRICS_SECURITY_SCHEME, OPERATIONS_TAG, operationalSchemas, originOperation } from './observability.ts';
import { problemTypeSchemas } from '../http/problems.ts';
import { LEADS_OPERATIONS } from '../routes/leads.ts';
import { EVENTS_OPERATIONS } from '../routes/events.ts';
import { INFRASTRUCTURE_OPERATIONS } from '../routes/infrastructure.ts';
import { INTEL_OPERATIONS } from '../routes/intel.ts';
import { META_OPERATIONS } from '../routes/meta.ts';
import { ACCOUNT_OPERATIONS } from '../routes/account.ts';
import { CLAIM_OPERATIONS } from '../routes/claim.ts';
import { DOCS_OPERATIONS } from '../routes/docs.ts';
import { API_ROOT_OPERATIONS, apiRootSchema } from '../routes/api-root.ts';
import { PROBLEMS_OPERATIONS } from '../routes/problems.ts';
import { WEBHOOKS_OPERATIONS } from '../routes/webhooks.ts';
import { EXPORTS_OPERATIONS } from '../routes/exports.ts';
import { FEEDS_OPERATIONS } from '../routes/feeds.ts';
import { OGC_OPERATIONS } from '../routes/ogc.ts';
import { HEALTH_OPERATIONS } from '../routes/health.ts';
import { TILES_OPERATIONS } from '../routes/tiles.ts';
import { AUTHORITIES_OPERATIONS } from '../routes/authorities.ts';
import {
  DEPRECATIONS,
  applyDeprecations,
  serviceTermsExtension,
  serviceTermsText,
  type DeprecationTable,
} from '../access/service-terms.ts';
import type { Endpoint } from './endpoint.ts';

type Json = Record<string, any>;

const SCHEMA_DIR = new URL('../../schemas/', import.meta.url);
const readSchema = (file: string): Json => JSON.parse(readFileSync(new URL(file, SCHEMA_DIR), 'utf8')) as Json;

/** `lead-detail.schema.json` → `LeadDetail`. */
export function componentName(file: string): string {
  return file
    .replace(/\.schema\.json$/, '')
    .split('-')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

/** Rewrite the `$ref`s of a schema read from `file` to point into `#/components/schemas/`. */
export function rewriteRefs(node: unknown, file: string): unknown {
  if (Array.isArray(node)) return node.map((x) => rewriteRefs(x, file));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$ref' && typeof v === 'string') {
      const [target, pointer = ''] = v.split('#');
      out[k] = `#/components/schemas/${componentName(target || file)}${pointer}`;
    } else if (k === 'examples' || k === 'enum' || k === 'const' || k === 'default') {
      out[k] = v;
    } else {
      out[k] = rewriteRefs(v, file);
    }
  }
  return out;
}

/** Record schema files (every `*.schema.json` except the query-parameter schemas). */
function recordSchemaFiles(): string[] {
  return readdirSync(SCHEMA_DIR)
    .filter((f) => f.endsWith('.schema.json') && !f.endsWith('-query.schema.json'))
    .sort();
}

/** A record schema as an OpenAPI component: no `$schema` / `$id`, refs rewritten. */
function component(file: string): Json {
  const { $schema: _s, $id: _i, ...rest } = readSchema(file);
  return rewriteRefs(rest, file) as Json;
}

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/**
 * Every operation of the API, in the document's order: each resource's operations, declared
 * with their handlers in its file of api/routes/ (api/routes/operation.ts). The app mounts the
 * same objects and refuses a route that is not one of them (`checkDeclared`).
 */
export function endpoints(): readonly Endpoint[] {
  return OPERATIONS;
}

const OPERATIONS: readonly Endpoint[] = [
  ...LEADS_OPERATIONS,
  ...EVENTS_OPERATIONS,
  ...INFRASTRUCTURE_OPERATIONS,
  ...INTEL_OPERATIONS,
  ...META_OPERATIONS,
  ...ACCOUNT_OPERATIONS,
  ...CLAIM_OPERATIONS,
  ...DOCS_OPERATIONS,
  ...API_ROOT_OPERATIONS,
  ...PROBLEMS_OPERATIONS,
  ...WEBHOOKS_OPERATIONS,
  ...EXPORTS_OPERATIONS,
  ...FEEDS_OPERATIONS,
  ...OGC_OPERATIONS,
  ...HEALTH_OPERATIONS,
  ...TILES_OPERATIONS,
  ...AUTHORITIES_OPERATIONS,
];

/** Problem statuses, with when each happens. */
const PROBLEMS: Record<number, string> = {
  400: 'Invalid or unknown parameters (`invalid_parameter`, `unknown_parameter`); `errors` names each one and lists allowed values of enumerations.',
  401: "Missing, malformed, unknown, revoked or expired key (`missing_key`, `malformed_key`, `unknown_key`, `revoked_key`, `expired_key` — a licensed key past its licence's end), with `WWW-Authenticate`. The rate-limit headers report the client address's allowance of failed-key attempts (policy `failed-key-attempts`); a 401 has no row budget.",
  403: "The key's scope is too low (`insufficient_scope`), or its account's plan no longer allows it (`insufficient_plan`); `detail` says which scopes or plan may.",
  404: 'No such record or path (`not_found`).',
  405: 'A method this path does not accept (`method_not_allowed`), with `Allow`.',
  500: 'Internal error (`internal_error`); nothing is leaked; quote `request_id` when reporting it.',
  ...ACCESS_PROBLEMS,
  409:
    ACCESS_PROBLEMS[409] +
    ' On `POST /webhooks`: a request with the same `Idempotency-Key` is still being processed (`idempotency_key_in_use`, with `Retry-After`): retry to get its answer.',
  422: 'On `POST /webhooks`: the `Idempotency-Key` was used in the last 24 hours with another request (another body or scope) (`idempotency_key_reused`): use a new key.',
  507: 'A Parquet export expected to take more temp space on its own than the server allows one export (EXPORT_TEMP_MAX_MB) (`export_too_large`; nothing is charged): narrow the filters, or use CSV or JSON Lines (written from memory, no temp space).',
  503: 'No release is loaded yet (`no_release`), the release lacks the table asked for (`analytics_unavailable`) or was built before per-authority freshness was recorded (`authorities_unavailable`) or before the event log existed (`events_unavailable`, /events and lead history), or the state store cannot be written (`service_degraded`: disk full, read-only, locked or unreachable; the request was not served). With `Retry-After`; no rate-limit headers.',
};

/** The 503 of the file exports: their temp space is taken (api/exports/temp-space.ts). */
const EXPORT_BUSY =
  ' On the file exports written through a temp file (`.parquet`): the exports running on this server hold their temp space (EXPORT_TEMP_MAX_MB) and none freed within EXPORT_TEMP_WAIT_MS ' +
  '(`export_busy`, with `Retry-After`; nothing is charged).';

/**
 * Response schemas not (yet) in `schemas/`: the lead detail with `_meta` (the detail record is
 * closed, so `_meta` is added to a copy of its properties) and the /meta body.
 */
function responseSchemas(): Json {
  return {
    InfrastructureProjectResponse: withMeta(
      component('infrastructure-project.schema.json'),
      'Infrastructure project response',
      'An infrastructure project record (see InfrastructureProject) with `_meta`.',
    ),
    LeadDetailResponse: withMeta(
      component('lead-detail.schema.json'),
      'Lead detail response',
      'A lead detail record (see LeadDetail) with `_meta`.',
    ),
    IntelAnalyticsSummary: intelSummarySchema(),
    MetaResponse: metaResponseSchema(),
  };
}

/** A closed record's schema with `_meta` added to a copy of its properties, titled anew. */
function withMeta(record: Json, title: string, description: string): Json {
  return {
    ...record,
    title,
    description,
    properties: { ...record.properties, _meta: ref('ResponseMeta') },
    required: [...record.required, '_meta'],
  };
}

/** `IntelAnalyticsSummary`: `/intel/analytics` without parameters. */
function intelSummarySchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    description:
      'The answer of `/intel/analytics` without parameters: every section, its row count and the link that pages it.',
    properties: {
      sections: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            section: {
              type: 'string',
              enum: ['price_index', 'yields', 'emerging_zones', 'material_costs'],
              description: 'The section (the `section` parameter).',
            },
            available: {
              type: 'boolean',
              description:
                'False when the release was built before the section existed (paging it answers 503 `analytics_unavailable`).',
            },
            total: {
              type: ['integer', 'null'],
              minimum: 0,
              description: 'Rows of the section in this release (null when unavailable).',
            },
            href: { type: 'string', format: 'uri', description: 'The first page of the section.' },
          },
          required: ['section', 'available', 'total', 'href'],
        },
      },
      _meta: ref('ResponseMeta'),
    },
    required: ['sections', '_meta'],
  };
}

/** `MetaResponse`: the body of `/meta`. */
function metaResponseSchema(): Json {
  return {
    type: 'object',
    description: 'The release being served and the allowed values of the enumerated filters.',
    properties: {
      release: {
        type: 'object',
        description: 'The release.',
        properties: {
          id: { type: 'string', description: 'Release id (UTC build time).' },
          built_at: { type: 'string', format: 'date-time', description: 'Build time.' },
          as_of: { type: 'string', format: 'date', description: 'Date of the data.' },
          schema_version: { type: 'string', description: 'Version of the record schemas.' },
        },
        required: ['id', 'built_at', 'as_of', 'schema_version'],
      },
      counts: { type: 'object', description: 'Row counts per table and the total of records.' },
      freshness: {
        type: 'array',
        description: 'Per planning authority: leads and the latest received date.',
        items: {
          type: 'object',
          properties: {
            authority: { type: 'string', description: 'Planning authority.' },
            county: { type: ['string', 'null'], description: 'County of the authority.' },
            leads: { type: 'integer', minimum: 0, description: 'Leads of the authority.' },
            latest_received: { type: ['string', 'null'], format: 'date', description: 'Latest received date.' },
          },
          required: ['authority', 'leads', 'latest_received'],
        },
      },
      sources_freshness: {
        $ref: '#/components/schemas/ReleaseManifest/$defs/sources_freshness',
        description:
          "Where the release's raw files came from: per publisher file, the URL, when it was last checked and fetched, its ETag / Last-Modified, size, SHA-256 and " +
          'the outcome of the last attempt (`origin: generated` for generated data). Absent for releases built without a fetch log. See docs/fetch.md.',
      },
      freshness_by_source: {
        type: 'object',
        description:
          'Per source (planning, commencements): `origin`, when the copy read was downloaded (`fetched_at`) and the publisher last asked (`checked_at`), its rows and newest application date — ' +
          'GET /v1/authorities gives the same per authority. Absent for releases built before it was recorded.',
        additionalProperties: { $ref: '#/components/schemas/ReleaseManifest/$defs/source_read' },
      },
      enums: {
        type: 'object',
        description: 'Allowed values of every enumerated filter.',
        additionalProperties: { type: 'array', items: { type: 'string' } },
      },
      release_status: releaseStatusSchema(),
      _meta: ref('ResponseMeta'),
    },
    required: ['release', 'counts', 'freshness', 'enums', 'release_status', '_meta'],
  };
}

/** `release_status` of `/meta`: the release served and the one refused, with why. */
function releaseStatusSchema(): Json {
  return {
    type: 'object',
    description:
      'The release served and, when the release `current` points at was refused, why. A release is checked file by file against the SHA-256 checksums of its manifest ' +
      'before the server switches to it; one that does not match, or fails to load, is refused and the previous release keeps serving. ' +
      'It is tried again after 30 s, then after twice as long each time (at most hourly); a newly published release is tried at once. See docs/releases.md.',
    properties: {
      serving: { type: ['string', 'null'], description: 'Id of the release answering requests.' },
      refused: {
        type: ['object', 'null'],
        description: 'The refused release, or null when the published release is the one served.',
        properties: {
          release: { type: 'string', description: 'Id of the refused release.' },
          reason: {
            type: 'string',
            description:
              'Why, e.g. `files do not match manifest.json: geojson/leads.ndjson has 8812 bytes, the manifest says 17453`.',
          },
          failed_at: { type: 'string', format: 'date-time', description: 'When the last attempt failed.' },
          attempts: { type: 'integer', minimum: 1, description: 'Failed attempts at this release so far.' },
          next_attempt_at: {
            type: 'string',
            format: 'date-time',
            description: 'The earliest time it is tried again.',
          },
        },
        required: ['release', 'reason', 'failed_at', 'attempts', 'next_attempt_at'],
      },
    },
    required: ['serving', 'refused'],
  };
}

const HEADERS: Json = {
  'X-Request-Id': {
    description:
      "Id of the request (the client's own when it sent a valid one, `^[A-Za-z0-9._-]{1,64}$`); quote it when reporting a problem.",
    schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$' },
  },
  ETag: {
    description:
      'Weak entity tag of the response (release, request and scope); send it back in `If-None-Match` for a 304.',
    schema: { type: 'string' },
  },
  'Cache-Control': { description: '`private, max-age=60` on cacheable answers.', schema: { type: 'string' } },
  'WWW-Authenticate': {
    description:
      'Bearer challenge (RFC 6750), e.g. `Bearer realm="leads", error="invalid_token", error_description="…"`.',
    schema: { type: 'string' },
  },
  Allow: { description: 'Methods allowed on the path.', schema: { type: 'string' } },
  Location: { description: 'URL of the created resource.', schema: { type: 'string' } },
  'X-Attribution': {
    description:
      'Commonwealth keys only: the attribution text that must accompany any use of the data (the same as `_meta.attribution` of JSON bodies), on every response whatever its format.',
    schema: { type: 'string' },
  },
  ...ACCESS_HEADERS,
};

/** Annotations of the query schemas that only the parser reads (`x-pattern-reason`: the wording of a pattern mistake). */
const PARSER_ANNOTATIONS = ['x-pattern-reason'];

/** A schema without the parser's annotations, at every depth. */
function withoutParserAnnotations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutParserAnnotations);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node as Json)
      .filter(([k]) => !PARSER_ANNOTATIONS.includes(k))
      .map(([k, v]) => [k, k === 'examples' || k === 'enum' ? v : withoutParserAnnotations(v)]),
  );
}

/**
 * The parameters of an endpoint, from the properties of its query schema (the one its parser
 * uses): a property that refers to another query schema's (the export filters) is inlined, refs
 * to record schemas point into the components, comma lists are `style: form, explode: false`.
 */
export function queryParameters(schema: Json, file: string): Json[] {
  return Object.entries(schema.properties as Record<string, Json>).map(([name, declared]) => {
    const prop =
      typeof declared.$ref === 'string' && /-query\.schema\.json#/.test(declared.$ref) ? derefProp(declared) : declared;
    const s = rewriteRefs(withoutParserAnnotations(prop), file) as Json;
    const { description, ...rest } = s;
    return {
      name,
      in: 'query',
      required: false,
      description: description ?? name,
      schema: rest,
      ...(prop.type === 'array' ? { style: 'form', explode: false } : {}),
    };
  });
}

/**
 * The OpenAPI operation of a declaration. The declarations are module constants shared by every
 * document built in a process: their JSON parts are copied, so no document shares (and no caller
 * can change) a declaration's objects.
 */
function operation(declared: Endpoint): Json {
  const e = structuredClone({ ...declared, handler: undefined }) as Endpoint;
  const problem = (status: number): Json => {
    const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
    if (status === 401) headers['WWW-Authenticate'] = { $ref: '#/components/headers/WWW-Authenticate' };
    if (status === 405) headers['Allow'] = { $ref: '#/components/headers/Allow' };
    if (status === 503) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    const busy = status === 503 && /^\/export\/applications\.parquet$/.test(e.path) ? EXPORT_BUSY : '';
    return {
      description: PROBLEMS[status] + busy,
      headers,
      content: { 'application/problem+json': { schema: ref('Problem') } },
    };
  };
  const statuses = new Set<number>([...e.errors, 405, 500, 503]);
  if (!e.public) (statuses.add(401), statuses.add(403), statuses.add(429));
  const okHeaders: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
  if (e.cached) {
    okHeaders['ETag'] = { $ref: '#/components/headers/ETag' };
    okHeaders['Cache-Control'] = { $ref: '#/components/headers/Cache-Control' };
  }
  if (e.ok.location) okHeaders['Location'] = { $ref: '#/components/headers/Location' };
  if (!e.public) {
    // rel="license" (commonwealth attribution) on every keyed answer, rel="next" on paged ones
    okHeaders['Link'] = { $ref: '#/components/headers/Link' };
    okHeaders['X-Attribution'] = { $ref: '#/components/headers/X-Attribution' };
  }
  const responses: Json = {
    [String(e.ok.status ?? 200)]: {
      description: e.ok.description,
      headers: okHeaders,
      ...(e.ok.schema === null
        ? {}
        : {
            content: {
              [e.ok.type ?? 'application/json']: { schema: e.ok.schema },
              ...(e.ok.alternate ? { [e.ok.alternate.type]: { schema: e.ok.alternate.schema } } : {}),
            },
          }),
    },
  };
  if (e.ok.empty)
    responses['204'] = {
      description: e.ok.empty,
      headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    };
  if (e.cached) {
    responses['304'] = {
      description: 'Not modified: `If-None-Match` matched the ETag. No body.',
      headers: {
        'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
        ETag: { $ref: '#/components/headers/ETag' },
      },
    };
  }
  for (const s of [...statuses].sort()) responses[String(s)] = problem(s);
  const file = e.path.startsWith('/leads') ? 'leads-query.schema.json' : 'infrastructure-query.schema.json';
  const parameters = [
    ...(e.pathParams ?? []),
    ...(e.query ? queryParameters(e.query, file) : []),
    ...(e.headerParams ?? []),
  ];
  if (e.cached) {
    parameters.push({
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: 'ETag of a response you hold; answered 304 when it is still current.',
      schema: { type: 'string' },
    });
  }
  const op: Json = {
    operationId: operationId(e),
    tags: [e.tag],
    summary: e.summary,
    description: e.description,
    ...(e.public ? { security: e.security ?? [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(e.body
      ? {
          requestBody: {
            required: e.bodyRequired ?? false,
            ...(e.bodyDescription ? { description: e.bodyDescription } : {}),
            content: { 'application/json': { schema: e.body } },
          },
        }
      : {}),
    responses,
  };
  // keyed operations: rate-limit and budget headers on every response, dry_run, 429
  return e.public ? op : keyedOperation(op);
}

function operationId(e: Endpoint): string {
  // `{id}` → by-id; `{layer}.json` / `{y}.mvt` (tiles) → by-layer-json / by-y-mvt
  if (e.path === '/') return `${e.method}ApiRoot`;
  const words = e.path
    .split('/')
    .filter(Boolean)
    .map((p) =>
      p.startsWith('{') ? 'by-' + p.replace(/^\{([^}]+)\}/, '$1').replace(/\./g, '-') : p.replace(/\.json$/, '-json'),
    );
  return (e.method + '-' + words.join('-')).replace(/[-_](\w)/g, (_m, c: string) => c.toUpperCase());
}

/**
 * Build the OpenAPI 3.1 document. `publicBaseUrl` (ending in /v1) is the server URL; paths are
 * relative to it. `opts.deprecations` (default: the project's `DEPRECATIONS`) marks operations
 * deprecated (api/access/service-terms.ts); the service terms go into `info`.
 *
 * @example const doc = buildOpenApi(config); doc.paths['/infrastructure'].get.parameters
 */
export function buildOpenApi(
  config: Pick<ApiConfig, 'publicBaseUrl'>,
  opts: { deprecations?: DeprecationTable } = {},
): Json {
  const schemas: Json = {};
  for (const f of recordSchemaFiles()) schemas[componentName(f)] = component(f);
  Object.assign(
    schemas,
    responseSchemas(),
    accessSchemas(),
    webhookSchemas(),
    exportResponseSchemas(),
    operationalSchemas(),
    problemTypeSchemas(),
    apiRootSchema(),
  );
  const paths: Json = {};
  for (const e of endpoints())
    (paths[e.path] ??= {})[e.method] = e.origin
      ? originOperation(operation(e), e.path, config.publicBaseUrl)
      : operation(e);
  applyDeprecations(paths, opts.deprecations ?? DEPRECATIONS);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Irish Construction Leads API',
      version: '1.0.0',
      description:
        'Keyed queries over the weekly release of Irish construction leads and infrastructure projects. ' +
        'Every request carries `Authorization: Bearer <key>` (except this reference). Every response carries `X-Request-Id`; ' +
        "every error is RFC 9457 `application/problem+json` with a stable `code`. The key's scope decides which fields are served: " +
        'enriched fields (marked `x-enriched` in the schemas) are null for the commonwealth scope, and `_meta.masked` says so. ' +
        "Record schemas are generated from the project's `schemas/` folder. " +
        'Requests the HTTP parser refuses are problems too, before any operation: `414 uri_too_long` / `431 headers_too_large` (request line and headers at most 16 KiB together), ' +
        '`400 malformed_request` (raw spaces or control characters in the URL, malformed headers), `501 method_not_implemented`, `408 request_timeout`. ' +
        'Paged answers carry an RFC 8288 `Link` header with `rel="next"`. ' +
        'Browser pages on other origins may call the API (CORS, no credentials): preflights need no key, and every answer — problems included — carries `Access-Control-Allow-Origin` ' +
        '(`*` unless the operator lists origins) and `Access-Control-Expose-Headers` naming the headers above; not on the licence claim calls. ' +
        'Answers of 1 KiB and more are sent brotli- or gzip-encoded when `Accept-Encoding` allows (brotli when both are equally welcome; `Vary: Accept-Encoding`); ' +
        'the weak `ETag` is the same for every encoding.\n\n' +
        serviceTermsText(),
      termsOfService: `${config.publicBaseUrl}/reference#service-terms`,
      'x-service-terms': serviceTermsExtension(),
    },
    servers: [{ url: config.publicBaseUrl, description: 'This API (paths are relative to /v1).' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'Leads', description: 'Planning applications and commencement notices.' },
      { name: 'Infrastructure', description: 'Strategic-infrastructure and energy projects.' },
      {
        name: 'Intelligence',
        description:
          'Market intelligence from the Property Price Register, RTB rents, CSO material prices and the leads (enriched scopes).',
      },
      { name: 'Meta', description: 'The release being served.' },
      { name: 'Account', description: "The usage ledger of the calling key's account." },
      {
        name: 'Licences',
        description: 'Claiming a key under an organisation licence (the page and its two calls; no key needed).',
      },
      {
        name: 'Sync',
        description: "What changed since a release: the event feed and each lead's history (docs/sync.md).",
      },
      { name: 'Exports', description: 'Bulk exports: cursor-paginated JSON, streamed CSV and JSON Lines, Parquet.' },
      { name: 'GIS', description: 'GeoJSON feeds and OGC API Features (scopes ent_feed and custom).' },
      {
        name: 'Reference',
        description: 'This document and its renderings: interactive (/v1/docs) and read-only (/v1/reference).',
      },
      {
        name: 'Webhooks',
        description: 'Signed hourly pushes of new leads matching saved filters (ent_api and above).',
      },
      OPERATIONS_TAG,
    ],
    paths,
    webhooks: webhookEventsDoc(),
    components: {
      schemas,
      headers: HEADERS,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'API key, e.g. `lk_ea_…` (the prefix names the scope: lk_cw_ commonwealth, lk_ea_ ent_api, lk_ef_ ent_feed, lk_cu_ custom).',
        },
        metricsToken: METRICS_SECURITY_SCHEME,
      },
    },
  };
}
