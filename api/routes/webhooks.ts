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
import { quoteChange } from '../access/budget.ts';
import { createDispatcher } from '../webhooks/dispatcher.ts';
import { serverLeadReader } from '../webhooks/lead-reader.ts';
import { webhookService, webhooksForbidden, type Owner } from '../webhooks/service.ts';
import { readJsonObject } from '../http/request-body.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';

const BODY_BYTES_MAX = 16 * 1024;
/** The members `PATCH /v1/webhooks/{id}` may change. */
const PATCHABLE = ['url', 'filter', 'types', 'description', 'status'] as const;

/** Read a JSON object body ({} when there is none); 413 / 415 / 400 problems otherwise (api/http/request-body.ts). */
export async function jsonBody(ctx: AppContext): Promise<Record<string, unknown>> {
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

/** The webhooks router (paths relative to the /v1 mount). */
export function webhooksRouter(
  config: ApiConfig,
  deps: Pick<AppDeps, 'db' | 'releases' | 'store' | 'clock' | 'log' | 'resolveHost'>,
): Router<AppState> {
  const router = new Router<AppState>();
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
  const who = (ctx: AppContext): Owner => ({ accountId: ctx.state.key.account_id });
  const guard: Middleware<AppState> = async (ctx, next) => {
    const scope = ctx.state.key.scope;
    const reading = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (!reading && !CAPABILITIES[scope].webhooks) throw webhooksForbidden(scope);
    ctx.set('Cache-Control', 'no-store');
    // dry_run=1 on a change is a quote (nothing is charged) and must not change anything: it is
    // answered here, before the route acts
    if (!reading) await quoteChange(ctx.state.budget);
    await next();
  };
  const id = (ctx: AppContext): string => ctx.params['id'] ?? '';

  router.use(guard); // every route of this router is under /webhooks

  router.get('/webhooks', async (ctx: AppContext) => {
    noQuery(ctx);
    ctx.body = { results: await svc().list(who(ctx)), next_cursor: null }; // one page: every webhook of the account
  });

  router.post('/webhooks', async (ctx: AppContext) => {
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
  });

  router.get('/webhooks/:id', async (ctx: AppContext) => {
    noQuery(ctx);
    ctx.body = await svc().get(id(ctx), who(ctx));
  });

  router.patch('/webhooks/:id', async (ctx: AppContext) => {
    noQuery(ctx);
    const body = await jsonBody(ctx);
    onlyMembers(body, [...PATCHABLE]);
    if (Object.keys(body).length === 0)
      throw new ApiError(400, 'invalid_body', `the body must name at least one of ${PATCHABLE.join(', ')}`);
    ctx.body = await svc().update(id(ctx), who(ctx), body);
  });

  router.delete('/webhooks/:id', async (ctx: AppContext) => {
    noQuery(ctx);
    await svc().remove(id(ctx), who(ctx));
    ctx.status = 204;
  });

  for (const [action, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    router.post(`/webhooks/:id/${action}`, async (ctx: AppContext) => {
      noQuery(ctx);
      onlyMembers(await jsonBody(ctx), []);
      ctx.body = await svc().setStatus(id(ctx), who(ctx), status);
    });
  }

  router.post('/webhooks/:id/rotate-secret', async (ctx: AppContext) => {
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
  });

  router.post('/webhooks/:id/test', async (ctx: AppContext) => {
    noQuery(ctx);
    onlyMembers(await jsonBody(ctx), []);
    ctx.body = await svc().test(id(ctx), who(ctx));
  });

  router.get('/webhooks/:id/deliveries', async (ctx: AppContext) => {
    const page = await svc().deliveriesPage(id(ctx), who(ctx), ctx.query, config); // parsed by the service (its values after the ownership check)
    setPageLinks(ctx, { next: page.next_cursor && pageHref(ctx, { cursor: page.next_cursor }) });
    ctx.body = page;
  });

  router.post('/webhooks/:id/replay', async (ctx: AppContext) => {
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
  });

  return router;
}
