/**
 * Every problem type the API can answer, declared once: its stable `code`, the HTTP status it comes
 * with, a title, what it means and what to do. `ApiError` (api/http/errors.ts) takes its code from this
 * table (so an undeclared code does not compile) and its `title`; the problem's `type` is the URI
 * of the code's page, `<PUBLIC_BASE_URL>/problems/<code>` (`problemTypeUri`), which
 * `GET /v1/problems/{code}` serves from the same entry (api/routes/problems.ts), as RFC 9457 asks
 * of a `type` that is a locator: dereferenced, it documents the problem.
 */

/** One problem type. */
export interface ProblemType {
  /** The HTTP status the problem comes with. */
  readonly status: number;
  /** Short summary; the same for every occurrence (RFC 9457 `title`). */
  readonly title: string;
  /** What happened. */
  readonly description: string;
  /** What the client should do. */
  readonly action: string;
}

const RETRY_LATER = 'Retry after the seconds `Retry-After` names; nothing was charged.';

/** The problem types, by code. */
export const PROBLEM_TYPES = {
  invalid_parameter: {
    status: 400,
    title: 'Invalid parameter',
    description:
      'One or more query parameters (or members of a JSON body) have a value the endpoint does not accept. `errors` names each one with the reason and, for an enumeration, the `allowed` values.',
    action: 'Correct each parameter `errors` names; values of enumerations are matched ignoring case.',
  },
  unknown_parameter: {
    status: 400,
    title: 'Unknown parameter',
    description:
      'The request has a query parameter the endpoint does not take (a misspelling is never ignored silently).',
    action: "Remove or correct the parameters `errors` names; the endpoint's parameters are in /v1/openapi.json.",
  },
  invalid_body: {
    status: 400,
    title: 'Invalid request body',
    description: 'The request body is not valid JSON, or not the JSON object the operation expects.',
    action: "Send a JSON object as the operation's request body schema describes.",
  },
  bad_request: {
    status: 400,
    title: 'Bad request',
    description: 'The request could not be read (for example a malformed percent-encoding in the path).',
    action: 'Check how the request is built and encoded.',
  },
  malformed_request: {
    status: 400,
    title: 'Malformed request',
    description:
      'The HTTP parser refused the request: a raw space or control character in the URL, a malformed header or bad body framing. The connection is closed after the answer.',
    action: 'Percent-encode the URL (a space is `%20`) and send well-formed HTTP/1.1.',
  },
  usage: {
    status: 400,
    title: 'Command-line usage',
    description: 'A command of the `leads` command line was given wrong arguments (not an HTTP answer).',
    action: 'Run the command with `--help`.',
  },
  passkey_not_verified: {
    status: 400,
    title: 'Passkey not verified',
    description: 'The account area could not verify a new passkey for this site.',
    action: 'Try again from the same site; ask for a new invitation if it keeps failing.',
  },
  missing_key: {
    status: 401,
    title: 'API key missing',
    description: 'The request carries no API key.',
    action: 'Send the key as `Authorization: Bearer <key>`.',
  },
  malformed_key: {
    status: 401,
    title: 'API key malformed',
    description:
      'The `Authorization` header is not `Bearer` followed by a key of the form `lk_<scope>_<43 characters>`.',
    action: 'Send the whole key as it was issued, after `Bearer `.',
  },
  unknown_key: {
    status: 401,
    title: 'API key unknown',
    description: 'The key is well-formed but not known to this service.',
    action: 'Check that you copied the whole key; failed attempts from one address are throttled.',
  },
  revoked_key: {
    status: 401,
    title: 'API key revoked',
    description: 'The key was revoked (or suspended) by its account.',
    action: 'Use another key of the account, or create one in the account area.',
  },
  expired_key: {
    status: 401,
    title: 'API key expired',
    description: 'The key was issued under an organisation licence that has ended.',
    action: 'Ask your account manager to renew the licence.',
  },
  invalid_token: {
    status: 401,
    title: 'Access token invalid',
    description: 'A GIS `access_token` does not open: altered, truncated, or sealed by another server.',
    action: 'Get a fresh token from `GET /v1/feeds/token`.',
  },
  expired_token: {
    status: 401,
    title: 'Access token expired',
    description: 'A GIS `access_token` has passed its expiry.',
    action: 'Get a fresh token from `GET /v1/feeds/token`.',
  },
  invalid_metrics_token: {
    status: 401,
    title: 'Metrics token invalid',
    description: '`GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>`.',
    action: "Send the operator's metrics token.",
  },
  app_session_required: {
    status: 401,
    title: 'Sign-in required',
    description: 'The account area needs a session: you are not signed in, or your session ended.',
    action: 'Sign in again at /app/sign-in.',
  },
  sign_in_failed: {
    status: 401,
    title: 'Sign-in failed',
    description: 'The account name and password, or the passkey, could not be verified.',
    action: 'Try again; after repeated failures sign-in is throttled for a while.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    description: "The key's scope may not use this endpoint, format or field; `detail` says which scopes may.",
    action: 'Use a key of a scope that may, or ask for one.',
  },
  insufficient_plan: {
    status: 403,
    title: 'Insufficient plan',
    description: "The key's scope needs a plan its account is no longer on (after a downgrade).",
    action: "Upgrade the account's plan, or use a commonwealth key.",
  },
  budget_too_small: {
    status: 403,
    title: 'Budget too small',
    description:
      "The request asks for more rows than the key's whole daily row budget: no reset would let it through. `rows_requested`, `budget_limit` and `narrow` say by how much and how to ask for less.",
    action:
      'Narrow the request (filters, `changed_since`, the event feed) or use a feed licence; do not retry it as it is.',
  },
  cross_origin_request: {
    status: 403,
    title: 'Cross-origin request refused',
    description: 'The licence claim endpoint takes requests from its own page only.',
    action: 'Claim the key from the claim page the link opens.',
  },
  csrf_refused: {
    status: 403,
    title: 'Request refused (CSRF)',
    description: "An account-area form was sent without the page's anti-forgery token, or from another site.",
    action: 'Reload the page and send the form again.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    description: 'No endpoint at this path, or no record with this id.',
    action: 'Check the path and id; the endpoints are listed at /v1 and in /v1/openapi.json.',
  },
  claim_link_unknown: {
    status: 404,
    title: 'Claim link unknown',
    description: 'This licence claim link is not known.',
    action: 'Check that you copied all of the link.',
  },
  invitation_unknown: {
    status: 404,
    title: 'Invitation unknown',
    description: 'This account invitation link is not known.',
    action: 'Check that you opened all of the link.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    description: 'The path exists but not with this method; `Allow` lists the methods it takes.',
    action: 'Use one of the methods in `Allow`.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    description: 'The request did not arrive completely in time.',
    action: 'Send the whole request promptly; retry on a slow link.',
  },
  seats_exhausted: {
    status: 409,
    title: 'Seats exhausted',
    description: 'Every seat of the organisation licence holds an active key.',
    action: 'Revoke a key of the licence, or ask for more seats.',
  },
  duplicate_key: {
    status: 409,
    title: 'Duplicate key',
    description: 'A key with this hash already exists.',
    action: 'Generate a new key and claim again.',
  },
  key_limit: {
    status: 409,
    title: 'Key limit reached',
    description: 'The account already holds the most active self-serve keys it may.',
    action: 'Revoke a key you no longer use, then create the new one.',
  },
  search_limit: {
    status: 409,
    title: 'Saved-search limit reached',
    description: 'The account already keeps the most saved searches it may (100).',
    action: 'Delete a saved search you no longer use at /app/searches, then save the new one.',
  },
  cursor_expired: {
    status: 410,
    title: 'Cursor expired',
    description: 'The cursor names a release (or event) that is no longer kept.',
    action: 'Start the walk again without a cursor (for the event feed: re-sync from an export).',
  },
  claim_link_used: {
    status: 410,
    title: 'Claim link used',
    description: 'This licence claim link has already created its key.',
    action: 'Ask your account manager for a new link.',
  },
  claim_link_expired: {
    status: 410,
    title: 'Claim link expired',
    description: 'This licence claim link has expired.',
    action: 'Ask your account manager for a new link.',
  },
  licence_expired: {
    status: 410,
    title: 'Licence expired',
    description: 'The organisation licence of this claim link has ended.',
    action: 'Ask your account manager to renew the licence.',
  },
  invitation_used: {
    status: 410,
    title: 'Invitation used',
    description: 'This account invitation has already been used.',
    action: 'Sign in, or ask for a new invitation.',
  },
  invitation_replaced: {
    status: 410,
    title: 'Invitation replaced',
    description: 'A newer invitation was issued for this account.',
    action: 'Open the newest invitation link you were sent.',
  },
  invitation_expired: {
    status: 410,
    title: 'Invitation expired',
    description: 'This account invitation has expired.',
    action: 'Ask your account manager for a new invitation.',
  },
  body_too_large: {
    status: 413,
    title: 'Body too large',
    description: 'The request body is larger than the operation accepts.',
    action: 'Send a smaller body (for a drawn area: fewer positions).',
  },
  uri_too_long: {
    status: 414,
    title: 'URI too long',
    description: 'The URL alone exceeds the 16 KiB request-head limit.',
    action: 'Send fewer or shorter parameters; for a large polygon use `POST /v1/leads/search`.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description: 'The request body is not of the media type the operation takes.',
    action: 'Send `Content-Type: application/json` (forms of the account area: `application/x-www-form-urlencoded`).',
  },
  headers_too_large: {
    status: 431,
    title: 'Request headers too large',
    description: 'The request line and headers together exceed 16 KiB.',
    action: 'Send smaller headers.',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limited',
    description: 'The key has used the requests its scope may make this hour.',
    action: 'Wait until `X-RateLimit-Reset` (`Retry-After` seconds).',
  },
  budget_exhausted: {
    status: 429,
    title: 'Row budget exhausted',
    description:
      "The request would return more rows than remain of the key's daily row budget; nothing was sent or charged.",
    action: 'Ask for fewer rows, or retry after the reset at 00:00 UTC (`Retry-After`).',
  },
  too_many_failed_attempts: {
    status: 429,
    title: 'Too many failed attempts',
    description: 'This client address sent too many unknown or malformed keys in a short window.',
    action: 'Fix the key, then wait `Retry-After` seconds.',
  },
  sign_in_throttled: {
    status: 429,
    title: 'Sign-in throttled',
    description: 'Too many failed sign-ins for this account or address.',
    action: 'Wait `Retry-After` seconds, then try again.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    description:
      'Something unexpected failed; the body says nothing more, the server logged the cause under the request id.',
    action: 'Retry; if it persists, report the `request_id`.',
  },
  method_not_implemented: {
    status: 501,
    title: 'Method not implemented',
    description: 'A method HTTP/1.1 does not know (methods are upper case).',
    action: 'Use GET, HEAD, POST or OPTIONS.',
  },
  no_release: {
    status: 503,
    title: 'No release loaded',
    description: 'No data release is loaded yet (the server has just started, or none is published).',
    action: RETRY_LATER,
  },
  not_ready: {
    status: 503,
    title: 'Not ready',
    description: '`/readyz`: this replica cannot serve (no release, or its state store cannot be written).',
    action: 'A load balancer sends traffic elsewhere until it answers 200.',
  },
  service_degraded: {
    status: 503,
    title: 'Service degraded',
    description:
      'The state store cannot be written (disk full, read-only, locked or unreachable): the request was not served, nothing was charged.',
    action: RETRY_LATER,
  },
  analytics_unavailable: {
    status: 503,
    title: 'Analytics unavailable',
    description: 'The release being served lacks the market table asked for.',
    action: 'Retry after the next release; `GET /v1/meta` lists what the release holds.',
  },
  authorities_unavailable: {
    status: 503,
    title: 'Authorities unavailable',
    description: 'The release was built before per-authority freshness was recorded.',
    action: 'Retry after the next release.',
  },
  events_unavailable: {
    status: 503,
    title: 'Events unavailable',
    description: 'The release was built before the event log existed (`/v1/events`, lead history).',
    action: 'Retry after the next release.',
  },
  export_busy: {
    status: 503,
    title: 'Export space busy',
    description:
      "The server's export temp space (`EXPORT_TEMP_MAX_MB`) stayed taken for `EXPORT_TEMP_WAIT_MS`; nothing was charged.",
    action: RETRY_LATER,
  },
  export_too_large: {
    status: 507,
    title: 'Export too large',
    description:
      'One Parquet export would take more temp space than `EXPORT_TEMP_MAX_MB` on its own; nothing was charged.',
    action: 'Narrow the filters, or use CSV or JSON Lines (written from memory, no temp space).',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused',
    description:
      'This `Idempotency-Key` was used in the last 24 hours with a different request (method, path, scope or body); the earlier request stands and this one was not carried out.',
    action: 'Send a new key for a new request; retry a request only with its own key and the same body.',
  },
  idempotency_key_in_use: {
    status: 409,
    title: 'Idempotency key in use',
    description: 'A request with this `Idempotency-Key` is still being answered.',
    action: "Retry after the `Retry-After` seconds: you get that request's answer.",
  },
} as const satisfies Record<string, ProblemType>;

/** A code of the problem table. */
export type ProblemCode = keyof typeof PROBLEM_TYPES;

/** The codes, in the table's order. */
export const PROBLEM_CODES = Object.keys(PROBLEM_TYPES) as ProblemCode[];

/** Whether a text is a code of the table. */
export function isProblemCode(code: string): code is ProblemCode {
  return Object.hasOwn(PROBLEM_TYPES, code);
}

/**
 * The problem `type` of a code: the URI of its page under the public base URL (which ends in `/v1`).
 *
 * @example problemTypeUri('https://api.example.ie/v1', 'not_found') // 'https://api.example.ie/v1/problems/not_found'
 */
export function problemTypeUri(publicBaseUrl: string, code: ProblemCode): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/problems/${code}`;
}

/** The OpenAPI components of the problem pages' JSON (`ProblemTypeDoc`, `ProblemTypes`). */
export function problemTypeSchemas(): Record<string, unknown> {
  return {
    ProblemTypeDoc: {
      type: 'object',
      additionalProperties: false,
      description: 'One problem type: the JSON of its page.',
      required: ['code', 'type', 'status', 'title', 'description', 'action'],
      properties: {
        code: { type: 'string', enum: PROBLEM_CODES, description: "The stable machine code (a problem's `code`)." },
        type: {
          type: 'string',
          format: 'uri-reference',
          description: 'The URI a problem of this code carries as `type`: this page.',
        },
        status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status it comes with.' },
        title: { type: 'string', description: "Short summary (a problem's `title`)." },
        description: { type: 'string', description: 'What happened.' },
        action: { type: 'string', description: 'What to do.' },
      },
    },
    ProblemTypes: {
      type: 'object',
      additionalProperties: false,
      description: 'Every problem type of the API.',
      required: ['problems'],
      properties: { problems: { type: 'array', items: { $ref: '#/components/schemas/ProblemTypeDoc' } } },
    },
  };
}
