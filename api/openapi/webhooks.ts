/**
 * The webhook part of the OpenAPI document (api/openapi/document.ts includes it): the request and
 * response schemas of the `/webhooks` operations (declared in api/routes/webhooks.ts), and the `lead.new` event under the document's
 * top-level `webhooks` (OpenAPI 3.1), so receivers see the body they will get.
 */
import { DELIVERY_STATUSES } from '../state/webhook-interface.ts';
import { SCOPES } from '../access/scopes.ts';
import { CHANGE_TYPES, EVENT_TYPES, WEBHOOK_EVENT_TYPES } from '../webhooks/events.ts';

type Json = Record<string, any>;
const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const ts = (description: string): Json => ({ type: ['string', 'null'], format: 'date-time', description });

const webhookProps: Json = {
  id: { type: 'string', pattern: '^wh_[0-9a-f]{16}$', description: 'Webhook id.' },
  account: { type: 'string', description: 'Owning account.' },
  scope: {
    type: 'string',
    enum: [...SCOPES],
    description:
      'Scope of the key that created it: the most a delivery is ever sent with (see `access.scope` for the scope used now).',
  },
  url: { type: 'string', description: 'Destination (https, public address).' },
  filter: { type: 'string', description: 'Saved filter: a `/v1/leads` query string, canonical (empty = every lead).' },
  types: {
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
    minItems: 1,
    uniqueItems: true,
    description:
      'Event types it receives: `lead.new` (the default) and the change types of the event log (`lead.updated`, `lead.stage_changed`, `lead.removed`: the events `GET /v1/events` serves).',
  },
  description: { type: ['string', 'null'], description: 'Free text.' },
  status: {
    type: 'string',
    enum: ['active', 'disabled'],
    description: 'Disabled webhooks get no deliveries (queued ones wait).',
  },
  disabled_reason: {
    type: ['string', 'null'],
    description: 'Why it was disabled (e.g. the destination answered 410 Gone).',
  },
  access: {
    type: 'object',
    additionalProperties: false,
    description:
      "Whether the webhook may send now, decided from the account's keys at the time of asking, as the dispatcher decides before every attempt: it sends with the lower of `scope` and the best " +
      "scope among the account's keys that are active, unexpired (a licensed key ends with its licence) and allowed by the account's plan (ent_api needs premium). With none of " +
      'ent_api, ent_feed or custom it is `suspended`: nothing is sent, new leads are still queued, and sending resumes once the account holds such a key again.',
    properties: {
      state: {
        type: 'string',
        enum: ['ok', 'suspended'],
        description: '`ok`: deliveries are sent; `suspended`: held, nothing is sent.',
      },
      scope: {
        type: ['string', 'null'],
        enum: [...SCOPES, null],
        description: 'Scope deliveries are masked for now (`_meta.scope` of the next delivery); null when suspended.',
      },
      reason: { type: ['string', 'null'], enum: ['no_active_key', null], description: 'Why it is suspended.' },
      detail: {
        type: ['string', 'null'],
        description:
          "What happened to the account's webhook keys (revoked, expired with their licence, not allowed by the plan) and what resumes sending.",
      },
      suspended_at: ts('When the dispatcher first held a delivery for this (null until it has, and when `ok`).'),
    },
    required: ['state', 'scope', 'reason', 'detail', 'suspended_at'],
  },
  watermark: {
    type: 'object',
    additionalProperties: false,
    description:
      'Leads with an id above `lead_id`, and event-log events with an id above `event_id`, are new to this webhook.',
    properties: {
      lead_id: { type: 'integer', minimum: 0, description: 'Highest lead id already batched.' },
      event_id: {
        type: 'integer',
        minimum: 0,
        description:
          "Highest event id of the release's event log already batched (advanced for every webhook, whatever its types).",
      },
      release: { type: ['string', 'null'], description: 'Release it was batched from.' },
    },
    required: ['lead_id', 'event_id', 'release'],
  },
  secret_rotated_at: ts('Last secret rotation.'),
  previous_secret_expires_at: ts('Until when the previous secret also signs deliveries.'),
  created_at: { type: 'string', format: 'date-time', description: 'Creation time.' },
  updated_at: { type: 'string', format: 'date-time', description: 'Last change.' },
};
const webhookRequired = Object.keys(webhookProps);

/** The members of a delivery in the delivery log (`WebhookDelivery`), all required. */
const deliveryProps: Json = {
  id: {
    type: 'string',
    pattern: '^evt_[0-9a-f]{24}$',
    description: "Event id: the body's `id` and the `webhook-id` header, the same on every redelivery.",
  },
  webhook_id: { type: 'string', description: 'Webhook id.' },
  type: { type: 'string', enum: [...EVENT_TYPES], description: 'Event type.' },
  created_at: { type: 'string', format: 'date-time', description: 'When the event was queued.' },
  lead_count: {
    type: 'integer',
    minimum: 0,
    description: 'Leads (`lead.new`) or events (the change types) in the body.',
  },
  status: {
    type: 'string',
    enum: [...DELIVERY_STATUSES],
    description:
      "`dead` deliveries form the dead-letter list; `suspended`: pending but held because the webhook is suspended (see `suspended_reason` and the webhook's `access`).",
  },
  attempts: { type: 'integer', minimum: 0, description: 'Attempts since queued or last replayed.' },
  next_attempt_at: ts('When the next attempt is due (pending only).'),
  last_attempt_at: ts('Start of the last attempt.'),
  last_status_code: {
    type: ['integer', 'null'],
    description: 'HTTP status of the last answer (null: no answer).',
  },
  last_error: {
    type: ['string', 'null'],
    description: 'Timeout, connection error or refused destination of the last attempt.',
  },
  last_latency_ms: { type: ['integer', 'null'], minimum: 0, description: 'Duration of the last attempt.' },
  delivered_at: ts('When a 2xx answer was recorded.'),
  dead_reason: { type: ['string', 'null'], description: 'Why the delivery was given up.' },
  suspended_reason: {
    type: ['string', 'null'],
    description:
      'Why a `suspended` delivery is held (the account holds no key that may receive the webhook); null otherwise.',
  },
};

/** Component schemas of the webhook operations and event. */
export function webhookSchemas(): Json {
  return {
    ...webhookResourceSchemas(),
    ...deliveryLogSchemas(),
    WebhookCreate: webhookCreateSchema(),
    WebhookUpdate: webhookUpdateSchema(),
    WebhookEvent: deliveryBodySchema({
      description:
        'Body of a `lead.new` (or `webhook.test`) delivery, masked when it is sent for the scope the webhook has then (`_meta.scope`; retries and replays included). ' +
        'Verify the signature headers over the raw bytes before parsing (docs/webhooks.md).',
      id: 'Event id (= `webhook-id`); de-duplicate on it.',
      types: EVENT_TYPES,
      type: 'Event type.',
      createdAt: 'When the event was queued.',
      release: 'Release the leads come from.',
      batch: 'Position of this event among the events of one batch run.',
      batchCount: 'Events in the run.',
      payload: 'leads',
      payloadSchema: {
        type: 'array',
        items: ref('Lead'),
        description:
          "New leads matching the saved filter (at most WEBHOOK_BATCH_MAX), masked for the webhook's scope at send time.",
      },
    }),
    WebhookChangeEvent: deliveryBodySchema({
      description:
        "Body of a `lead.updated`, `lead.stage_changed` or `lead.removed` delivery: events of the release's event log, as `GET /v1/events?types=<type>&<saved filter>` serves them, " +
        "each event's `changes` masked when it is sent for the scope the webhook has then (an enriched field's before / after null below its scope).",
      id: 'Event id (= `webhook-id`); de-duplicate on it. Not the event-log ids of `events[]`.',
      types: CHANGE_TYPES,
      type: 'Delivery type: every event in `events` has it.',
      createdAt: 'When the delivery was queued.',
      release: 'Release the events were planned from.',
      batch: 'Position of this delivery among the deliveries of its type in one batch run.',
      batchCount: 'Deliveries of the type in the run.',
      payload: 'events',
      payloadSchema: {
        type: 'array',
        items: ref('Event'),
        description: 'Event-log events in id order (at most WEBHOOK_BATCH_MAX).',
      },
    }),
  };
}

/** `Webhook`, `WebhookWithSecret` (creation and rotation) and `WebhookList`. */
function webhookResourceSchemas(): Json {
  const secret = {
    type: 'string',
    pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
    description: 'Signing secret, shown only in this answer. The HMAC key is its base64-decoded part after `whsec_`.',
  };
  return {
    Webhook: {
      type: 'object',
      description: 'A webhook (never its secret).',
      additionalProperties: false,
      properties: webhookProps,
      required: webhookRequired,
    },
    WebhookWithSecret: {
      type: 'object',
      description: 'A webhook with its new signing secret (creation and rotation only).',
      additionalProperties: false,
      properties: { ...webhookProps, secret },
      required: [...webhookRequired, 'secret'],
    },
    WebhookList: {
      type: 'object',
      additionalProperties: false,
      description: "The account's webhooks, oldest first (all of them: one page, so `next_cursor` is null).",
      properties: {
        results: { type: 'array', items: ref('Webhook') },
        next_cursor: { type: 'null', description: 'Always null: the list is one page.' },
      },
      required: ['results', 'next_cursor'],
    },
  };
}

/** The delivery log: `WebhookDelivery`, its pages (`WebhookDeliveryList`) and `WebhookReplay`. */
function deliveryLogSchemas(): Json {
  return {
    WebhookDelivery: {
      type: 'object',
      additionalProperties: false,
      description: 'One event queued for a webhook and what became of it (the delivery log).',
      properties: deliveryProps,
      required: Object.keys(deliveryProps),
    },
    WebhookDeliveryList: {
      type: 'object',
      additionalProperties: false,
      description: 'Deliveries, newest first, a page of `limit`.',
      properties: {
        results: { type: 'array', items: ref('WebhookDelivery') },
        next_cursor: {
          type: ['string', 'null'],
          description:
            'Pass as `cursor` for the next page; null on the last page (the same in `Link: <…>; rel="next"`).',
        },
      },
      required: ['results', 'next_cursor'],
    },
    WebhookReplay: {
      type: 'object',
      additionalProperties: false,
      description: 'Dead letters queued again.',
      properties: { replayed: { type: 'array', items: { type: 'string' }, description: 'Delivery ids.' } },
      required: ['replayed'],
    },
  };
}

/** `WebhookCreate`: the body of `POST /webhooks`. */
function webhookCreateSchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    description: 'A new webhook.',
    properties: {
      url: {
        type: 'string',
        maxLength: 2048,
        description:
          "https URL on a public address (the operator's WEBHOOK_ALLOW_HOSTS may allow others). Every spelling of an address is judged as the address it is (decimal, octal, hex and short IPv4, IPv4-mapped, -compatible and -translated IPv6, NAT64, 6to4, trailing dots), a host name by what it resolves to now (a name with a private or loopback address is a 400) and again at every delivery, at connect time.",
        examples: ['https://hooks.example.ie/leads'],
      },
      filter: {
        type: 'string',
        description: 'Saved filter in the `/v1/leads` grammar, without paging or sort.',
        examples: ['vertical=solar&county=Cork'],
      },
      types: {
        type: 'array',
        items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
        minItems: 1,
        description:
          'Event types to receive (default `["lead.new"]`, what every webhook made before types existed receives). A comma-separated string is accepted too.',
        examples: [['lead.new', 'lead.stage_changed']],
      },
      description: { type: 'string', maxLength: 200, description: 'Free text.' },
    },
    required: ['url'],
  };
}

/** `WebhookUpdate`: the body of `PATCH /webhooks/{id}`. */
function webhookUpdateSchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    description: 'The members to change (at least one); the others stay.',
    properties: {
      url: { type: 'string', maxLength: 2048, description: 'New destination, checked as on creation.' },
      filter: { type: 'string', description: 'New saved filter in the `/v1/leads` grammar (empty: every lead).' },
      types: {
        type: 'array',
        items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
        minItems: 1,
        description: 'New event types (a comma-separated string is accepted too).',
      },
      description: { type: ['string', 'null'], maxLength: 200, description: 'New free text (null clears it).' },
      status: {
        type: 'string',
        enum: ['active', 'disabled'],
        description: '`disabled` stops deliveries (as `POST …/disable`), `active` resumes them.',
      },
    },
    minProperties: 1,
  };
}

/** What tells one delivery body from the other: its words, its types and its payload member. */
interface DeliveryBody {
  description: string;
  /** Descriptions of `id`, `type`, `created_at`, `release`, `batch` and `batch.count`. */
  id: string;
  type: string;
  createdAt: string;
  release: string;
  batch: string;
  batchCount: string;
  /** The values of `type`. */
  types: readonly string[];
  /** The payload member (`leads` of `lead.new`, `events` of the change types) and its schema. */
  payload: 'leads' | 'events';
  payloadSchema: Json;
}

/**
 * The body of a delivery (`WebhookEvent`, `WebhookChangeEvent`): the envelope every delivery
 * shares — id, type, created_at, webhook_id, release, batch, `_meta` — around its payload member.
 */
function deliveryBodySchema(b: DeliveryBody): Json {
  return {
    type: 'object',
    additionalProperties: false,
    description: b.description,
    properties: {
      id: { type: 'string', description: b.id },
      type: { type: 'string', enum: [...b.types], description: b.type },
      created_at: { type: 'string', format: 'date-time', description: b.createdAt },
      webhook_id: { type: 'string', description: 'Webhook id.' },
      release: { type: ['string', 'null'], description: b.release },
      batch: {
        type: 'object',
        additionalProperties: false,
        description: b.batch,
        properties: {
          index: { type: 'integer', minimum: 1, description: '1-based.' },
          count: { type: 'integer', minimum: 1, description: b.batchCount },
        },
        required: ['index', 'count'],
      },
      [b.payload]: b.payloadSchema,
      _meta: ref('ResponseMeta'),
    },
    required: ['id', 'type', 'created_at', 'webhook_id', 'release', 'batch', b.payload, '_meta'],
  };
}

const signatureHeaders: Json = {
  'X-Service-Signature': {
    required: true,
    description:
      '`sha256=<hex HMAC-SHA256 of the raw body>` (one per valid secret, comma-separated, during a rotation overlap).',
    schema: { type: 'string' },
  },
  'X-Service-Timestamp': { required: true, description: 'Unix seconds of the attempt.', schema: { type: 'string' } },
  'webhook-id': { required: true, description: 'Event id (Standard Webhooks).', schema: { type: 'string' } },
  'webhook-timestamp': {
    required: true,
    description: 'Unix seconds of the attempt (Standard Webhooks).',
    schema: { type: 'string' },
  },
  'webhook-signature': {
    required: true,
    description:
      '`v1,<base64 HMAC-SHA256 of id.timestamp.body>`, space-separated per valid secret (Standard Webhooks).',
    schema: { type: 'string' },
  },
};

/** The top-level `webhooks` member: the events the service POSTs to registered URLs. */
export function webhookEventsDoc(): Json {
  const changeSummary: Record<string, string> = {
    'lead.updated': 'Leads matching a saved filter whose fields changed',
    'lead.stage_changed': 'Leads matching a saved filter that moved stage (e.g. granted → commencing)',
    'lead.removed': 'Leads gone from their source',
  };
  const change = Object.fromEntries(
    CHANGE_TYPES.map((t) => [
      t,
      {
        post: {
          // leadUpdated, leadStageChanged, leadRemoved (as lead.new's leadNew)
          operationId: t.replace(/[._](\w)/g, (_m, c: string) => c.toUpperCase()),
          summary: changeSummary[t],
          description:
            `Sent to webhooks whose \`types\` include \`${t}\`, after each weekly refresh: the release's \`${t}\` events for the leads the saved filter selects, ` +
            'with the same access, signing, retries and replay as `lead.new`. See docs/webhooks.md.',
          parameters: Object.entries(signatureHeaders).map(([name, h]) => ({ name, in: 'header', ...h })),
          requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookChangeEvent') } } },
          responses: {
            '200': { description: 'Any 2xx acknowledges the delivery.' },
            '410': { description: 'Gone: the webhook is disabled.' },
          },
        },
      },
    ]),
  );
  return {
    ...change,
    'lead.new': {
      post: {
        operationId: 'leadNew',
        summary: 'New leads matching a saved filter',
        description:
          'Sent hourly per webhook while its account holds an active ent_api, ent_feed or custom key its plan allows (otherwise held until it does); retried with exponential backoff on ' +
          'anything but 2xx (410 disables the webhook). See docs/webhooks.md.',
        parameters: Object.entries(signatureHeaders).map(([name, h]) => ({ name, in: 'header', ...h })),
        requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookEvent') } } },
        responses: {
          '200': { description: 'Any 2xx acknowledges the delivery.' },
          '410': { description: 'Gone: the webhook is disabled.' },
        },
      },
    },
  };
}
