/**
 * The OpenAPI description of the operational endpoints (declared in api/routes/health.ts): their
 * tag, schemas and security scheme. `/healthz`, `/readyz` and `/metrics` are served at the origin
 * — outside the /v1 server of the document, so each operation names its own server (`originOperation`).
 */

type Json = Record<string, any>;

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
