/**
 * The access model's part of the OpenAPI document (api/openapi/document.ts calls these): the headers
 * every keyed response carries, the 429 and claim problems, `dry_run` and its `BudgetQuote`
 * answer, and the schemas of `/account/usage` and of the licence claim (whose operations are declared
 * in api/routes/account.ts and api/routes/claim.ts).
 */
import { PLANS, SCOPES } from '../access/scopes.ts';
import { DRY_RUN_SCHEMA, QUOTE_MEDIA_TYPE } from '../access/enforce.ts';

type Json = Record<string, any>;
const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const hdr = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

const intOrUnlimited = {
  oneOf: [
    { type: 'string', pattern: '^[0-9]+$' },
    { type: 'string', const: 'unlimited' },
  ],
};

export const ACCESS_HEADERS: Json = {
  'X-RateLimit-Limit': {
    description:
      "Requests allowed per hour for the key's scope (commonwealth 600, ent_api 5,000, ent_feed 20,000, custom 120,000). On 401 / `too_many_failed_attempts`: the failed-key attempts allowed per client address and window.",
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window, after this one.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'X-RateLimit-Reset': {
    description:
      "When the current window ends, in epoch seconds (hourly windows start on the UTC hour). After a 429, when the refused request could next succeed: the window end for `rate_limited`, the next 00:00 UTC for `budget_exhausted`. On a 401: when the address's failed-key window ends.",
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'RateLimit-Policy': {
    description: 'IETF RateLimit-Policy field (draft-ietf-httpapi-ratelimit-headers), e.g. `"hourly";q=600;w=3600`.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'IETF RateLimit field: remaining requests `r` and seconds to reset `t`, e.g. `"hourly";r=599;t=1800`.',
    schema: { type: 'string' },
  },
  'X-Budget-Limit': {
    description:
      "Rows per UTC day for the key's scope (commonwealth 1,000, ent_api 5,000), or `unlimited` (ent_feed, custom).",
    schema: intOrUnlimited,
  },
  'X-Budget-Remaining': { description: 'Rows left today after this response, or `unlimited`.', schema: intOrUnlimited },
  'X-Budget-Reset': {
    description: 'When the daily row budget resets: the next 00:00 UTC, in epoch seconds.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'X-Budget-Cost': {
    description:
      "On `HEAD` (the GET's headers, no rows charged) and `dry_run=1`: the rows the GET would return and be charged for.",
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  Link: {
    description:
      'RFC 8288 links. Paged answers: links to other pages of this answer, GitHub\'s convention: `<absolute URL>; rel="next"` (the body\'s `next_cursor` as `cursor`, or the GIS `next` link) while more follow; on `/account/usage` also `rel="prev"` (the period before `from`). Commonwealth keys (spec 1.5: use requires attribution): `<https://creativecommons.org/licenses/by/4.0/>; rel="license"`, the licence of the data, on every response whatever its format. Several relations are listed comma-separated in one header.',
    schema: { type: 'string' },
  },
};

const LIMIT_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'X-Budget-Limit',
  'X-Budget-Remaining',
  'X-Budget-Reset',
];

export const ACCESS_PROBLEMS: Record<number, string> = {
  400: 'Invalid or unknown parameters (`invalid_parameter`, `unknown_parameter`); `errors` names each one and lists allowed values of enumerations. A body that is not a JSON object: `invalid_body`.',
  403:
    "The key's scope is too low (`insufficient_scope`); `detail` names the scopes that may. A key whose scope its account's plan no longer allows, e.g. an ent_api key " +
    'after a downgrade from premium (`insufficient_plan`: the key grants nothing until the plan allows its scope again). On the claim calls: a cross-site request (`cross_origin_request`). ' +
    "A request for more rows than the key's whole daily budget (`budget_too_small`: it could never succeed, so no `Retry-After`; `rows_requested`, `budget_limit` and `narrow` say how to ask for what fits: filters, `changed_since`, `/v1/events`, or a feed licence).",
  404: 'No such record or path (`not_found`); on the claim calls, a link that was never issued (`claim_link_unknown`).',
  409: 'Every seat of the licence holds an active key (`seats_exhausted`), or the key hash exists (`duplicate_key`).',
  410: 'The claim link was used already (`claim_link_used`), has expired (`claim_link_expired`), or its licence has ended (`licence_expired`); an export cursor belongs to a release that is no longer kept (`cursor_expired`: start the export again).',
  413: 'The body is larger than 4 KB (`body_too_large`).',
  415: 'The body is not `application/json` (`unsupported_media_type`).',
  429:
    "Too many requests: the key's hourly limit is used up (`rate_limited`; see `X-RateLimit-Reset`), today's row budget cannot cover the rows this request would return " +
    '(`budget_exhausted`: nothing is returned or charged; `rows_requested`, `rows_remaining` and `resets_at` say how far off it is; only for requests that fit the whole budget, so they succeed after the reset), or too many invalid keys came from this address ' +
    '(`too_many_failed_attempts`: answered instead of the 401 of a key that is not valid; a valid key is never throttled. Behind a reverse proxy the address is the right-most ' +
    "`X-Forwarded-For` entry outside the operator's TRUSTED_PROXIES; an IPv6 client counts by its /64). Always with `Retry-After`.",
};

const counts: Json = {
  type: 'object',
  additionalProperties: false,
  description: 'Requests, errors (answers 400 and above) and rows (records returned).',
  properties: {
    requests: { type: 'integer', minimum: 0, description: 'Requests counted.' },
    errors: { type: 'integer', minimum: 0, description: 'Of those, answers with status 400 or above.' },
    rows: { type: 'integer', minimum: 0, description: 'Records returned (what the daily row budget counts).' },
  },
  required: ['requests', 'errors', 'rows'],
};

/** Component schemas of the access model: the budget quote, the usage ledger and licence claims. */
export function accessSchemas(): Json {
  return {
    BudgetQuote: budgetQuoteSchema(),
    UsageCounts: counts,
    AccountUsage: accountUsageSchema(),
    ClaimLookup: claimLookupSchema(),
    ClaimedKey: claimedKeySchema(),
  };
}

/** `BudgetQuote`: the answer to `dry_run=1`. */
function budgetQuoteSchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    description:
      'The answer to `dry_run=1`, as `application/vnd.leads.quote+json`: what the request would cost against the daily row budget. Nothing is charged.',
    properties: {
      dry_run: { type: 'boolean', const: true, description: 'Always true: this is a quote, not the data.' },
      rows: { type: 'integer', minimum: 0, description: 'Rows the request would return and be charged for.' },
      budget_limit: {
        type: ['integer', 'null'],
        minimum: 0,
        description: 'Rows per day for the key (null: uncapped).',
      },
      budget_remaining: { type: ['integer', 'null'], minimum: 0, description: 'Rows left today (null: uncapped).' },
      would_succeed: { type: 'boolean', description: 'Whether the real request would fit in what remains.' },
      resets_at: { type: 'string', format: 'date-time', description: 'When the budget resets (00:00 UTC).' },
    },
    required: ['dry_run', 'rows', 'budget_limit', 'budget_remaining', 'would_succeed', 'resets_at'],
  };
}

/** `AccountUsage`: `GET /v1/account/usage`, the account's keys with their days. */
function accountUsageSchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    description: "The usage ledger of the calling key's account over [from, to] (UTC days).",
    properties: {
      account: {
        type: 'object',
        additionalProperties: false,
        description: 'The account.',
        properties: {
          id: { type: 'integer', description: 'Account id.' },
          name: { type: 'string', description: 'Account name.' },
          plan: { type: 'string', enum: [...PLANS], description: 'Self-serve plan.' },
        },
        required: ['id', 'name', 'plan'],
      },
      from: { type: 'string', format: 'date', description: 'First day (inclusive).' },
      to: { type: 'string', format: 'date', description: 'Last day (inclusive).' },
      detail_days: {
        type: 'integer',
        minimum: 1,
        description: 'Days of per-route detail kept; older days have `routes: null` (their totals are kept forever).',
      },
      totals: ref('UsageCounts'),
      keys: {
        type: 'array',
        description: 'Every key of the account, revoked and expired ones included, oldest first.',
        items: usageKeySchema(),
      },
    },
    required: ['account', 'from', 'to', 'detail_days', 'totals', 'keys'],
  };
}

/** One key of `AccountUsage`, with its days. */
function usageKeySchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      id: { type: 'string', description: 'Key id.' },
      name: { type: ['string', 'null'], description: 'Label.' },
      scope: { type: 'string', enum: [...SCOPES], description: 'Scope.' },
      display_prefix: { type: 'string', description: 'First characters of the key.' },
      status: { type: 'string', enum: ['active', 'revoked', 'expired'], description: 'Status now.' },
      created_at: { type: 'string', format: 'date-time', description: 'Creation time.' },
      revoked_at: { type: ['string', 'null'], format: 'date-time', description: 'Revocation time.' },
      licence_id: { type: ['string', 'null'], description: 'Organisation licence of a licensed key.' },
      expires_at: {
        type: ['string', 'null'],
        format: 'date-time',
        description: "End of a licensed key (its licence's end).",
      },
      totals: ref('UsageCounts'),
      days: {
        type: 'array',
        description: 'Days with usage, oldest first.',
        items: usageDaySchema(),
      },
    },
    required: [
      'id',
      'name',
      'scope',
      'display_prefix',
      'status',
      'created_at',
      'revoked_at',
      'licence_id',
      'expires_at',
      'totals',
      'days',
    ],
  };
}

/** One day of a key's usage, with its routes. */
function usageDaySchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      date: { type: 'string', format: 'date', description: 'UTC day.' },
      requests: { type: 'integer', minimum: 0, description: 'Requests.' },
      errors: { type: 'integer', minimum: 0, description: 'Answers 400 and above.' },
      rows: { type: 'integer', minimum: 0, description: 'Records returned.' },
      routes: {
        type: ['array', 'null'],
        description: 'Per route (method and path template); null for days older than the detail window.',
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            route: { type: 'string', description: 'e.g. `GET /v1/leads/{id}`.' },
            requests: { type: 'integer' },
            errors: { type: 'integer' },
            rows: { type: 'integer' },
          },
          required: ['route', 'requests', 'errors', 'rows'],
        },
      },
    },
    required: ['date', 'requests', 'errors', 'rows', 'routes'],
  };
}

/** `ClaimLookup`: the licence a claim link is for. */
function claimLookupSchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    description: 'The licence a claim link is for.',
    properties: {
      organisation: { type: 'string', description: 'Organisation (account) name.' },
      licence_id: { type: 'string', description: 'Licence id.' },
      scope: { type: 'string', enum: ['ent_feed', 'custom'], description: 'Scope of the key the link creates.' },
      key_prefix: {
        type: 'string',
        enum: ['lk_ef_', 'lk_cu_'],
        description: 'Prefix the generated key must start with.',
      },
      seats: { type: 'integer', minimum: 1, description: 'Seats of the licence.' },
      seats_used: { type: 'integer', minimum: 0, description: 'Seats holding an active key.' },
      licence_expires_at: {
        type: 'string',
        format: 'date-time',
        description: 'When the licence (and its keys) ends.',
      },
      link_expires_at: { type: 'string', format: 'date-time', description: 'When this link stops working.' },
    },
    required: [
      'organisation',
      'licence_id',
      'scope',
      'key_prefix',
      'seats',
      'seats_used',
      'licence_expires_at',
      'link_expires_at',
    ],
  };
}

/** `ClaimedKey`: the key a claim made. */
function claimedKeySchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    description: 'The key created by a claim (never the key itself: the service does not have it).',
    properties: {
      id: { type: 'string', description: 'Key id.' },
      scope: { type: 'string', enum: ['ent_feed', 'custom'], description: 'Scope.' },
      display_prefix: { type: 'string', description: 'First characters of the key.' },
      organisation: { type: 'string', description: 'Organisation (account) name.' },
      licence_id: { type: 'string', description: 'Licence id.' },
      expires_at: { type: 'string', format: 'date-time', description: 'The key stops working with its licence.' },
      created_at: { type: 'string', format: 'date-time', description: 'Creation time.' },
    },
    required: ['id', 'scope', 'display_prefix', 'organisation', 'licence_id', 'expires_at', 'created_at'],
  };
}

/**
 * The `dry_run` parameter, from its schema (`schemas/dry-run-query.schema.json`, the one the access
 * middleware parses), shaped as api/openapi/document.ts `queryParameters` shapes every other parameter
 * (test/api/openapi/document.test.ts checks they agree).
 */
function dryRunParameter(): Json {
  const { description, ...schema } = structuredClone(DRY_RUN_SCHEMA.properties.dry_run) as Json;
  return { name: 'dry_run', in: 'query', required: false, description, schema };
}

/**
 * Add the access model to a keyed operation: the limit headers on every response, `X-Budget-Cost`
 * on 200, `Retry-After` on 429, the `dry_run` parameter and the `BudgetQuote` answer as its own media type
 * (`application/vnd.leads.quote+json`).
 */
export function keyedOperation(op: Json): Json {
  // an operation whose success is not a 200 (201 created, 204 deleted) still answers its quote with one
  if (!op.responses['200']) {
    op.responses = {
      '200': {
        description: 'The `dry_run=1` quote (a `HEAD` gets its headers): nothing is done.',
        headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
        content: {},
      },
      ...op.responses,
    };
  }
  for (const [status, res] of Object.entries<Json>(op.responses)) {
    res.headers ??= {};
    // a 503 is answered before the counters are read; a 401 has no key, so no budget: it reports
    // the failed-key allowance of the client address in the rate-limit headers
    if (status === '503') continue;
    for (const h of LIMIT_HEADERS) if (status !== '401' || !h.startsWith('X-Budget-')) res.headers[h] = hdr(h);
    if (status === '200') {
      res.headers['X-Budget-Cost'] = hdr('X-Budget-Cost');
      // the quote is a media type of its own: the data's media type stays the data alone
      res.content = { ...res.content, [QUOTE_MEDIA_TYPE]: { schema: ref('BudgetQuote') } };
    }
    if (status === '429') res.headers['Retry-After'] = hdr('Retry-After');
  }
  op.parameters = [...(op.parameters ?? []), dryRunParameter()];
  return op;
}
