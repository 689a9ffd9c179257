/**
 * `/v1/webhooks`: manage the key's account's webhooks over HTTP (the same operations as
 * `leads webhooks …`, through `api/webhooks/service.ts`). Creating and changing them needs a
 * scope with the webhooks capability (ent_api and above; commonwealth gets a 403 naming the
 * scopes needed). Reading them — the list, one webhook, its delivery log — is open to every key
 * of the account, so an account whose webhook keys were revoked, expired or lost to a plan
 * downgrade can still see that its webhooks are suspended and why (no lead data is in them). Answers are
 * never cached (`Cache-Control: no-store`: they may carry a secret, and they change without a
 * new release). Request bodies are JSON objects of at most 16 KB. `POST /webhooks` takes an
 * `Idempotency-Key` (api/middleware/idempotency-key.ts); `PATCH` and `DELETE /webhooks/{id}`
 * change and delete one webhook of the account (another account's is a 404).
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { AppDeps } from '../http/app-deps.ts';
import type { ApiConfig } from '../config.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { ApiError, invalidParams } from '../http/errors.ts';
import {
  answerIdempotently,
  idempotencyKeyOf,
  requestFingerprint,
  type IdempotentAnswer,
} from '../middleware/idempotency-key.ts';
import { publicUrl } from '../render/public-url.ts';
import { noQuerySchema, parseQuery } from '../query/parse-query.ts';
import { CAPABILITIES } from '../access/scopes.ts';
import { createDispatcher } from '../webhooks/dispatcher.ts';
import { serverLeadReader } from '../webhooks/lead-reader.ts';
import { DELIVERIES_QUERY_SCHEMA, webhookService, webhooksForbidden, type Owner } from '../webhooks/service.ts';
import { readJsonObject } from '../http/request-body.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';

const BODY_BYTES_MAX = 16 * 1024;
/** The members `PATCH /v1/webhooks/{id}` may change. */
const PATCHABLE = ['url', 'filter', 'types', 'description', 'status'] as const;

/** Read a JSON object body ({} when there is none); 413 / 415 / 400 problems otherwise (api/http/request-body.ts). */
async function jsonBody(ctx: AppContext): Promise<Record<string, unknown>> {
  return readJsonObject(ctx.req, ctx.get('Content-Type'), BODY_BYTES_MAX);
}

/** Refuse body members the operation does not know (like unknown query parameters). */
function onlyMembers(body: Record<string, unknown>, allowed: string[]): void {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length) throw invalidParams(unknown.map((name) => ({ name, reason: 'unknown parameter' })));
}

/** Refuse query parameters on operations that take none (the one query parser, `no-query.schema.json`). */
function noQuery(ctx: AppContext): void {
  const { errors } = parseQuery(noQuerySchema(), ctx.query);
  if (errors.length) throw invalidParams(errors);
}

/** What the webhooks operations share: the service, made on first use. */
interface WebhooksEnv {
  config: ApiConfig;
  deps: Pick<AppDeps, 'db' | 'releases' | 'store' | 'clock' | 'log' | 'resolveHost'>;
  svc: () => ReturnType<typeof webhookService>;
}

/** The path parameter `id` (a webhook). */
const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'Webhook id (`wh_…`).',
  schema: { type: 'string', pattern: '^wh_[0-9a-f]{16}$' },
};

/** `Idempotency-Key` of `POST /webhooks` (api/middleware/idempotency-key.ts). */
const idempotencyKeyParam = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    "Makes a retried creation safe, as Stripe's API does: send a unique value (a UUID) with a creation and the same value with its retries. Remembered for 24 hours per account: a retry with " +
    'the same body gets the first answer (status, body, `Location`) again with `Idempotent-Replayed: true`, and no second webhook is made; the key with another body is a 422 ' +
    '`idempotency_key_reused`; while the first request is still running, a 409 `idempotency_key_in_use`. A request that failed is not remembered: retrying it runs it again.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  example: 'c2a3f7e4-6b1d-4f0e-9d2a-5e8b7c6a1f30',
};

const who = (ctx: AppContext): Owner => ({ accountId: ctx.state.key.account_id });
const id = (ctx: AppContext): string => ctx.params['id'] ?? '';

/** `GET /v1/webhooks`: one page, every webhook of the account. */
async function listWebhooks(ctx: AppContext, { config, deps, svc }: WebhooksEnv): Promise<void> {
  noQuery(ctx);
  ctx.body = { results: await svc().list(who(ctx)), next_cursor: null }; // one page: every webhook of the account
}

/** `POST /v1/webhooks`, idempotent with an `Idempotency-Key`. */
async function createWebhook(ctx: AppContext, { config, deps, svc }: WebhooksEnv): Promise<void> {
  noQuery(ctx);
  const idempotencyKey = idempotencyKeyOf(ctx);
  const body = await jsonBody(ctx);
  const { account_id: accountId, scope } = ctx.state.key;
  const create = async (): Promise<IdempotentAnswer> => {
    onlyMembers(body, ['url', 'filter', 'types', 'description']);
    const { webhook, secret } = await svc().create({
      accountId,
      scope,
      url: body['url'],
      filter: body['filter'] ?? '',
      types: body['types'],
      description: body['description'],
    });
    return { status: 201, body: { ...webhook, secret }, location: publicUrl(ctx, config, `/webhooks/${webhook.id}`) };
  };
  if (idempotencyKey === null) {
    const a = await create();
    ctx.status = a.status;
    ctx.set('Location', a.location!);
    ctx.body = a.body;
    return;
  }
  const fingerprint = requestFingerprint('POST', '/v1/webhooks', scope, body);
  await answerIdempotently(
    ctx,
    { store: deps.store.idempotency, now: deps.clock, accountId, key: idempotencyKey, fingerprint },
    create,
  );
}

/** `GET /v1/webhooks/{id}`. */
async function getWebhook(ctx: AppContext, { config, deps, svc }: WebhooksEnv): Promise<void> {
  noQuery(ctx);
  ctx.body = await svc().get(id(ctx), who(ctx));
}

/** `PATCH /v1/webhooks/{id}`: change the members given. */
async function updateWebhook(ctx: AppContext, { config, deps, svc }: WebhooksEnv): Promise<void> {
  noQuery(ctx);
  const body = await jsonBody(ctx);
  onlyMembers(body, [...PATCHABLE]);
  if (Object.keys(body).length === 0)
    throw new ApiError(400, 'invalid_body', `the body must name at least one of ${PATCHABLE.join(', ')}`);
  ctx.body = await svc().update(id(ctx), who(ctx), body);
}

/** `DELETE /v1/webhooks/{id}`. */
async function deleteWebhook(ctx: AppContext, { config, deps, svc }: WebhooksEnv): Promise<void> {
  noQuery(ctx);
  await svc().remove(id(ctx), who(ctx));
  ctx.status = 204;
}

/** `POST /v1/webhooks/{id}/disable` and `…/enable`. */
function setStatus(status: 'disabled' | 'active') {
  return async (ctx: AppContext, { svc }: WebhooksEnv): Promise<void> => {
    noQuery(ctx);
    onlyMembers(await jsonBody(ctx), []);
    ctx.body = await svc().setStatus(id(ctx), who(ctx), status);
  };
}

/** `POST /v1/webhooks/{id}/rotate-secret`. */
async function rotateSecret(ctx: AppContext, { config, deps, svc }: WebhooksEnv): Promise<void> {
  noQuery(ctx);
  const body = await jsonBody(ctx);
  onlyMembers(body, ['overlap_seconds']);
  const overlap = body['overlap_seconds'];
  if (
    overlap !== undefined &&
    (!Number.isInteger(overlap) || (overlap as number) < 0 || (overlap as number) > 30 * 86_400)
  ) {
    throw invalidParams([{ name: 'overlap_seconds', reason: 'must be an integer between 0 and 2592000 (30 days)' }]);
  }
  const { webhook, secret } = await svc().rotateSecret(
    id(ctx),
    who(ctx),
    overlap === undefined ? undefined : (overlap as number) * 1000,
  );
  ctx.body = { ...webhook, secret };
}

/** `POST /v1/webhooks/{id}/test`: one delivery now. */
async function testWebhook(ctx: AppContext, { config, deps, svc }: WebhooksEnv): Promise<void> {
  noQuery(ctx);
  onlyMembers(await jsonBody(ctx), []);
  ctx.body = await svc().test(id(ctx), who(ctx));
}

/** `GET /v1/webhooks/{id}/deliveries`: the delivery log, paged. */
async function listDeliveries(ctx: AppContext, { config, deps, svc }: WebhooksEnv): Promise<void> {
  const page = await svc().deliveriesPage(id(ctx), who(ctx), ctx.query, config); // parsed by the service (its values after the ownership check)
  setPageLinks(ctx, { next: page.next_cursor && pageHref(ctx, { cursor: page.next_cursor }) });
  ctx.body = page;
}

/** `POST /v1/webhooks/{id}/replay`: queue deliveries again. */
async function replayDeliveries(ctx: AppContext, { config, deps, svc }: WebhooksEnv): Promise<void> {
  noQuery(ctx);
  const body = await jsonBody(ctx);
  onlyMembers(body, ['delivery_ids']);
  const ids = body['delivery_ids'];
  if (
    ids !== undefined &&
    (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000 || !ids.every((x) => typeof x === 'string'))
  ) {
    throw invalidParams([{ name: 'delivery_ids', reason: 'must be a non-empty array of at most 1000 delivery ids' }]);
  }
  ctx.body = { replayed: await svc().replay(id(ctx), who(ctx), ids as string[] | undefined) };
}

const tag = 'Webhooks';
const scopeNote = ' Needs scope ent_api or above (commonwealth: 403). Answers are `Cache-Control: no-store`.';
const readNote =
  ' Any key of the account may read it (commonwealth too: an account that lost its webhook keys still sees why its webhooks are suspended). Answers are `Cache-Control: no-store`.';

/** The webhooks operations (paths relative to the /v1 mount). */
export const WEBHOOKS_OPERATIONS: readonly Operation<WebhooksEnv>[] = [
  {
    method: 'get',
    path: '/webhooks',
    tag,
    summary: "List the account's webhooks",
    description:
      "Webhooks of the key's account, oldest first, without secrets; `access` says whether each sends now, with which scope, or why it is suspended." +
      readNote,
    ok: { schema: schemaRef('WebhookList'), description: 'The webhooks.' },
    errors: [400],
    handler: listWebhooks,
  },
  {
    method: 'post',
    path: '/webhooks',
    tag,
    summary: 'Create a webhook',
    description:
      'A destination URL, a saved filter in the `/v1/leads` grammar (a bad filter gives the same problem as `/v1/leads`) and the event `types` to receive (default `lead.new`). The answer carries the signing secret, once.' +
      scopeNote,
    headerParams: [idempotencyKeyParam],
    body: schemaRef('WebhookCreate'),
    bodyRequired: true,
    ok: {
      status: 201,
      schema: schemaRef('WebhookWithSecret'),
      description:
        'Created; `Location` names it (under PUBLIC_BASE_URL, or the origin the request came to when the operator has not set it). A retry with the same `Idempotency-Key` gets this answer again, with `Idempotent-Replayed: true`.',
      location: true,
    },
    errors: [400, 409, 413, 415, 422],
    handler: createWebhook,
  },
  {
    method: 'get',
    path: '/webhooks/{id}',
    tag,
    summary: 'One webhook',
    description: "A webhook of the key's account, with its `access`." + readNote,
    pathParams: [idParam],
    ok: { schema: schemaRef('Webhook'), description: 'The webhook.' },
    errors: [400, 404],
    handler: getWebhook,
  },
  {
    method: 'patch',
    path: '/webhooks/{id}',
    tag,
    summary: 'Change a webhook',
    description:
      "Change any of `url`, `filter`, `types`, `description` and `status` of a webhook of the key's account; members left out stay as they are. Each is checked as on creation (the destination, " +
      'the saved filter against the current release: the same problems as `/v1/leads`), every bad one named in one 400. The watermarks, secret and queued deliveries stay, so a new filter ' +
      "or type applies to leads and events that arrive from now on. Another account's webhook is a 404." +
      scopeNote,
    pathParams: [idParam],
    body: schemaRef('WebhookUpdate'),
    bodyRequired: true,
    ok: { schema: schemaRef('Webhook'), description: 'The webhook as changed.' },
    errors: [400, 404, 413, 415],
    handler: updateWebhook,
  },
  {
    method: 'delete',
    path: '/webhooks/{id}',
    tag,
    summary: 'Delete a webhook',
    description:
      "Delete a webhook of the key's account with its queued deliveries and delivery log (what the account area's delete does); a `GET` of it is then a 404. Another account's webhook is a 404." +
      scopeNote,
    pathParams: [idParam],
    ok: { status: 204, schema: null, description: 'Deleted. No body.' },
    errors: [400, 404],
    handler: deleteWebhook,
  },
  {
    method: 'post',
    path: '/webhooks/{id}/disable',
    tag,
    summary: 'Disable a webhook',
    description: 'Stop deliveries; queued ones wait until it is enabled.' + scopeNote,
    pathParams: [idParam],
    ok: { schema: schemaRef('Webhook'), description: 'The webhook.' },
    errors: [400, 404, 413, 415],
    handler: setStatus('disabled'),
  },
  {
    method: 'post',
    path: '/webhooks/{id}/enable',
    tag,
    summary: 'Enable a webhook',
    description: 'Resume deliveries.' + scopeNote,
    pathParams: [idParam],
    ok: { schema: schemaRef('Webhook'), description: 'The webhook.' },
    errors: [400, 404, 413, 415],
    handler: setStatus('active'),
  },
  {
    method: 'post',
    path: '/webhooks/{id}/rotate-secret',
    tag,
    summary: 'Rotate the signing secret',
    description:
      'A new secret (returned once); the previous one keeps signing for `overlap_seconds` (default 24 h), both signatures being sent meanwhile.' +
      scopeNote,
    pathParams: [idParam],
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        overlap_seconds: {
          type: 'integer',
          minimum: 0,
          maximum: 2_592_000,
          description: 'How long the previous secret still signs.',
        },
      },
    },
    ok: { schema: schemaRef('WebhookWithSecret'), description: 'The webhook and its new secret.' },
    errors: [400, 404, 413, 415],
    handler: rotateSecret,
  },
  {
    method: 'post',
    path: '/webhooks/{id}/test',
    tag,
    summary: 'Send a test event',
    description:
      'Sends a `webhook.test` event (no leads) now and answers with its delivery record (also in the log; retried like any delivery if it fails; `suspended`, not sent, while the webhook is).' +
      scopeNote,
    pathParams: [idParam],
    ok: { schema: schemaRef('WebhookDelivery'), description: 'The delivery after its first attempt.' },
    errors: [400, 404, 413, 415],
    handler: testWebhook,
  },
  {
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    tag,
    summary: 'Delivery log and dead letters',
    description:
      'Deliveries of the webhook, newest first: status, attempts, last response code, latency and error. `status=dead` lists the dead letters; `status=suspended` the deliveries held while the webhook is suspended, with `suspended_reason`. Pages of `limit`: the next with `cursor` = `next_cursor` (or the `Link` rel="next").' +
      readNote,
    pathParams: [idParam],
    query: DELIVERIES_QUERY_SCHEMA,
    ok: { schema: schemaRef('WebhookDeliveryList'), description: 'The deliveries.' },
    errors: [400, 404],
    handler: listDeliveries,
  },
  {
    method: 'post',
    path: '/webhooks/{id}/replay',
    tag,
    summary: 'Replay dead letters',
    description:
      'Queue dead deliveries again (all, or `delivery_ids`) with a fresh set of attempts; same event ids and bodies.' +
      scopeNote,
    pathParams: [idParam],
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        delivery_ids: {
          type: 'array',
          minItems: 1,
          maxItems: 1000,
          items: { type: 'string' },
          description: 'Dead deliveries to replay (default: all).',
        },
      },
    },
    ok: { schema: schemaRef('WebhookReplay'), description: 'The deliveries queued again.' },
    errors: [400, 404, 413, 415],
    handler: replayDeliveries,
  },
];

/**
 * Every webhooks operation: reading is open to every key of the account, a change needs the
 * webhooks capability; never cached.
 */
const guard: Middleware<AppState> = async (ctx, next) => {
  const scope = ctx.state.key.scope;
  const reading = ctx.method === 'GET' || ctx.method === 'HEAD';
  if (!reading && !CAPABILITIES[scope].webhooks) throw webhooksForbidden(scope);
  ctx.set('Cache-Control', 'no-store');
  // dry_run=1 on a change is a quote (nothing is charged) and must not change anything: `mount`
  // answers it (quoteChange) after this guard, before the operation acts
  await next();
};

/** The webhooks router (paths relative to the /v1 mount). */
export function webhooksRouter(
  config: ApiConfig,
  deps: Pick<AppDeps, 'db' | 'releases' | 'store' | 'clock' | 'log' | 'resolveHost'>,
): Router<AppState> {
  let service: ReturnType<typeof webhookService> | null = null;
  const svc = (): ReturnType<typeof webhookService> => {
    if (!service) {
      const leads = serverLeadReader(deps.db, deps.releases);
      const resolveHost = deps.resolveHost ? { resolveHost: deps.resolveHost } : {};
      const dispatcher = createDispatcher({
        store: deps.store.webhooks,
        accounts: deps.store,
        leads,
        config,
        clock: deps.clock,
        log: deps.log,
        owner: `api-${process.pid}`,
        ...resolveHost,
      });
      service = webhookService({ store: deps.store, leads, dispatcher, config, clock: deps.clock, ...resolveHost });
    }
    return service;
  };
  return mount(WEBHOOKS_OPERATIONS, { config, deps, svc }, { use: guard }); // every route of this router is under /webhooks
}
