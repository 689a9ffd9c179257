/**
 * The OpenAPI description of the operational endpoints (api/routes/health.ts): `/healthz`,
 * `/readyz` and `/metrics`, served at the origin — outside the /v1 server of the document, so
 * each operation names its own server (`operationServers`).
 */
import type { Endpoint } from './endpoint.ts';

type Json = Record<string, any>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** The tag of the operational endpoints. */
export const OPERATIONS_TAG = {
  name: 'Operations',
  description:
    'Health checks for load balancers and Prometheus metrics, at the origin (outside /v1), without an API key.',
};

/** The security scheme of `GET /metrics` on the main port. */
export const METRICS_SECURITY_SCHEME: Json = {
  type: 'http',
  scheme: 'bearer',
  description:
    'The `METRICS_TOKEN` of the server (docs/operations.md); without it configured, `/metrics` is not served on the main port (404).',
};

/** The three operational endpoints (`origin`: their paths are at the origin, not under /v1). */
export function operationalEndpoints(): Endpoint[] {
  return [
    {
      method: 'get',
      path: '/healthz',
      origin: true,
      tag: OPERATIONS_TAG.name,
      public: true,
      summary: 'Liveness: the process answers',
      description:
        'Answers 200 while the process is alive and serving HTTP, whether or not a release is loaded. No key needed; `Cache-Control: no-store`.',
      ok: { schema: ref('HealthResponse'), description: 'Alive.' },
      errors: [],
    },
    {
      method: 'get',
      path: '/readyz',
      origin: true,
      tag: OPERATIONS_TAG.name,
      public: true,
      summary: 'Readiness: a release is loaded and the state store answers',
      description:
        'Answers 200 when a release is loaded and the state store answers a query within 2 s; otherwise `503 not_ready`, whose `checks` name what is not ready. ' +
        "For a load balancer's readiness check. No key needed; `Cache-Control: no-store`.",
      ok: { schema: ref('ReadyResponse'), description: 'Ready to serve.' },
      errors: [],
    },
    {
      method: 'get',
      path: '/metrics',
      origin: true,
      tag: OPERATIONS_TAG.name,
      public: true,
      security: [{ metricsToken: [] }],
      summary: 'Prometheus metrics',
      description:
        "The server's metrics in the Prometheus text format (requests and latency by route template and status class, rows served, 429s by reason, release age, index build time, " +
        'usage-ledger flush lag, webhook queue, exports running, state-store latency, process metrics; the list is in docs/operations.md). ' +
        'Needs `Authorization: Bearer <METRICS_TOKEN>` (401 `invalid_metrics_token` otherwise); 404 when the server has no METRICS_TOKEN. ' +
        'A server with METRICS_PORT also serves it, without a token, on a listener of its own bound to METRICS_HOST (default 127.0.0.1).',
      ok: {
        schema: { type: 'string', description: 'Prometheus text exposition format 0.0.4.' },
        type: 'text/plain',
        description: 'The metrics.',
      },
      errors: [401, 404],
    },
  ];
}

/** Response schemas of the operational endpoints. */
export function operationalSchemas(): Json {
  return {
    HealthResponse: {
      type: 'object',
      additionalProperties: false,
      properties: { status: { type: 'string', const: 'ok' } },
      required: ['status'],
    },
    ReadyResponse: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: { type: 'string', const: 'ready' },
        release: { type: 'string', description: 'Id of the release served.' },
        checks: {
          type: 'object',
          additionalProperties: false,
          properties: { release: { type: 'string', const: 'ok' }, state_store: { type: 'string', const: 'ok' } },
          required: ['release', 'state_store'],
        },
      },
      required: ['status', 'release', 'checks'],
    },
  };
}

/** What the problems of the operational endpoints mean (in place of the keyed endpoints' wording). */
const PROBLEM_TEXT: Record<string, string> = {
  '/readyz 503':
    'Not ready (`not_ready`): `detail` names what is not — no release loaded, or the state store not answering. With `Retry-After`.',
  '/metrics 401':
    'No or another bearer token than METRICS_TOKEN (`invalid_metrics_token`), with `WWW-Authenticate: Bearer realm="metrics"`.',
  '/metrics 404': 'The server has no METRICS_TOKEN: /metrics is not served on this port (`not_found`).',
};

/**
 * An operation at the origin as the document shows it: its own server (`publicBaseUrl` without
 * its `/v1`) and the wording of its problems.
 */
export function originOperation(op: Json, path: string, publicBaseUrl: string): Json {
  const responses: Json = { ...op.responses };
  for (const [status, r] of Object.entries<Json>(responses)) {
    const text = PROBLEM_TEXT[`${path} ${status}`];
    if (text) responses[status] = { ...r, description: text };
  }
  return {
    ...op,
    responses,
    servers: [
      {
        url: publicBaseUrl.replace(/\/v1\/?$/, '') || '/',
        description: 'The origin of this API (these paths are not under /v1).',
      },
    ],
  };
}
