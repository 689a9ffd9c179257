/**
 * Managing webhooks: the one implementation behind both `leads webhooks …` (api/cli/webhook-commands.ts)
 * and `/v1/webhooks` (api/routes/webhooks.ts). Every failure is an `ApiError` (400 with the
 * parameter named, 403 for scopes without webhooks, 404 for unknown or other accounts' webhooks).
 * Secrets are returned only by `create` and `rotateSecret`, once.
 */
import { randomBytes } from 'node:crypto';
import { ApiError, invalidParams, notFound, type ParamError } from '../http/errors.ts';
import { parseQuery, querySchema, type RawQuery } from '../query/parse-query.ts';
import { REASONS } from '../query/query-common.ts';
import { CAPABILITIES, scopesWith, SCOPES, type Scope } from '../access/scopes.ts';
import type { StateStore } from '../state/store-interface.ts';
import {
  type Delivery,
  type DeliveryPosition,
  type DeliveryStatus,
  type Webhook,
  type WebhookPatch,
} from '../state/webhook-interface.ts';
import { decodeCursor, encodeCursor, filtersHash, type CursorSecrets } from '../query/paging.ts';
import { accessReader, NO_ACTIVE_KEY, type WebhookAccess } from './send-access.ts';
import { checkDestination, systemResolver, type HostResolver } from './destination.ts';
import type { Dispatcher, WebhookConfig } from './dispatcher.ts';
import { DEFAULT_WEBHOOK_TYPES, testEvent, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events.ts';
import type { LeadReader } from './lead-reader.ts';
import { parseSavedFilter } from './saved-filter.ts';
import { generateSecret } from './signing.ts';

/** The query schema of the delivery log (`schemas/webhook-deliveries-query.schema.json`). */
export const DELIVERIES_QUERY_SCHEMA = querySchema('webhook-deliveries-query.schema.json');

/**
 * `limit` of the delivery log: any text `Number` reads as a whole number within the schema's
 * bounds (as this endpoint has always taken it: ` 12` and `1e2` too), in its own wording.
 */
function deliveriesLimit(text: string): number | ParamError {
  const { minimum, maximum } = DELIVERIES_QUERY_SCHEMA.properties.limit as { minimum: number; maximum: number };
  const n = Number(text);
  return Number.isInteger(n) && n >= minimum && n <= maximum
    ? n
    : { name: 'limit', reason: `must be an integer between ${minimum} and ${maximum}` };
}

/** A webhook as shown to its owner (never its secret). */
export interface PublicWebhook {
  id: string;
  account: string;
  scope: Scope;
  url: string;
  filter: string;
  /** The event types it receives (`lead.new` unless chosen at creation). */
  types: string[];
  description: string | null;
  status: Webhook['status'];
  disabled_reason: string | null;
  watermark: { lead_id: number; event_id: number; release: string | null };
  /** Whether the webhook may send now and with which scope (api/webhooks/send-access.ts), decided from the account's keys at the time of asking. */
  access: PublicAccess;
  secret_rotated_at: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The `access` member of a webhook. */
export interface PublicAccess {
  /** `ok`: deliveries are sent; `suspended`: held, nothing is sent (see `detail`). */
  state: 'ok' | 'suspended';
  /** The scope deliveries are masked for now; null when suspended. */
  scope: Scope | null;
  reason: typeof NO_ACTIVE_KEY | null;
  detail: string | null;
  /** When the dispatcher first held a delivery for it (null until then, and when ok). */
  suspended_at: string | null;
}

export function publicAccess(w: Pick<Webhook, 'suspended_at'>, a: WebhookAccess): PublicAccess {
  return a.scope !== null
    ? { state: 'ok', scope: a.scope, reason: null, detail: null, suspended_at: null }
    : { state: 'suspended', scope: null, reason: a.reason, detail: a.detail, suspended_at: w.suspended_at };
}

export function publicWebhook(w: Webhook, a: WebhookAccess): PublicWebhook {
  return {
    id: w.id,
    account: w.account_name,
    scope: w.scope,
    url: w.url,
    filter: w.filter,
    types: w.types,
    description: w.description,
    status: w.status,
    disabled_reason: w.disabled_reason,
    watermark: { lead_id: w.watermark_lead_id, event_id: w.watermark_event_id, release: w.watermark_release },
    access: publicAccess(w, a),
    secret_rotated_at: w.secret_rotated_at,
    previous_secret_expires_at: w.previous_secret_expires_at,
    created_at: w.created_at,
    updated_at: w.updated_at,
  };
}

/**
 * A webhook's `types` as given (undefined or null: the default, `lead.new`): an array of
 * `WEBHOOK_EVENT_TYPES` or a comma-separated string of them, kept in that order without repeats.
 */
export function parseWebhookTypes(v: unknown): { types: WebhookEventType[] } | ParamError {
  if (v === undefined || v === null) return { types: [...DEFAULT_WEBHOOK_TYPES] };
  const list =
    typeof v === 'string'
      ? v.split(',').map((t) => t.trim())
      : Array.isArray(v) && v.every((t) => typeof t === 'string')
        ? (v as string[])
        : null;
  const bad =
    list === null || list.length === 0 || list.some((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
  if (bad) return { name: 'types', reason: `must be a non-empty list of ${WEBHOOK_EVENT_TYPES.join(', ')}` };
  return { types: WEBHOOK_EVENT_TYPES.filter((t) => list.includes(t)) };
}

/** The 403 for a scope without the webhooks capability, naming the scopes that have it. */
export function webhooksForbidden(scope: Scope): ApiError {
  const may = scopesWith('webhooks');
  return new ApiError(
    403,
    'insufficient_scope',
    `webhooks need scope ${may.slice(0, -1).join(', ')} or ${may.at(-1)}; this key's scope is ${scope}`,
  );
}

export interface WebhookServiceDeps {
  store: StateStore;
  leads: LeadReader;
  dispatcher: Dispatcher;
  config: WebhookConfig;
  clock: () => Date;
  /** How a destination's host name is resolved at creation (default: the system resolver). */
  resolveHost?: HostResolver;
}

/** Who is asking: an account (HTTP: the key's account; CLI: any, when `accountId` is undefined). */
export interface Owner {
  accountId?: number;
}

/**
 * Webhooks managed for their owners: create, change, delete, rotate, test, the delivery log and
 * replay. One per app or CLI run (`webhookService`); every method checks the owner first.
 */
export class WebhookService {
  private readonly deps: WebhookServiceDeps;
  private readonly wh: StateStore['webhooks'];
  private readonly accessOf: ReturnType<typeof accessReader>;

  constructor(deps: WebhookServiceDeps) {
    this.deps = deps;
    this.wh = deps.store.webhooks;
    this.accessOf = accessReader(deps.store);
  }

  /**
   * Create a webhook for an account. `scope` must have the webhooks capability; `filter` is a
   * `/v1/leads` query string; `types` the event types it receives (`WEBHOOK_EVENT_TYPES`, an
   * array or a comma-separated string; default `lead.new` only). The watermarks start at the
   * current release's highest lead id and event id, so only leads first seen, and changes
   * observed, after creation are sent.
   */
  async create(o: {
    accountId: number;
    scope: Scope;
    url: unknown;
    filter: unknown;
    description?: unknown;
    types?: unknown;
  }): Promise<{ webhook: PublicWebhook; secret: string }> {
    if (!CAPABILITIES[o.scope].webhooks) throw webhooksForbidden(o.scope);
    const types = await this.checkMembers({ url: o.url, filter: o.filter, types: o.types, description: o.description });
    const snap = await this.currentSnapshot();
    const parsed = parseSavedFilter((o.filter as string | undefined) ?? '', snap.places);
    const secret = generateSecret();
    const w = await this.wh.createWebhook({
      id: 'wh_' + randomBytes(8).toString('hex'),
      account_id: o.accountId,
      scope: o.scope,
      url: o.url as string,
      filter: parsed.filter,
      filters: parsed.filters as Record<string, unknown>,
      description: (o.description as string | undefined) ?? null,
      secret,
      watermark_lead_id: snap.maxLeadId,
      watermark_release: snap.releaseId,
      types,
      watermark_event_id: snap.maxEventId,
    });
    return { webhook: await this.one(w), secret };
  }

  /** The webhooks `who` may see (every one for the CLI without an account), oldest first. */
  async list(who: Owner): Promise<PublicWebhook[]> {
    return this.shown(await this.wh.listWebhooks(who.accountId !== undefined ? { accountId: who.accountId } : {}));
  }

  /** One webhook as shown; 404 when `who` may not see it. */
  async get(id: string, who: Owner): Promise<PublicWebhook> {
    return this.one(await this.owned(id, who));
  }

  /**
   * Change a webhook: any of `url`, `filter`, `types`, `description` (checked as `create`
   * checks them: destination, saved filter against the current release, event types) and
   * `status` (`active` / `disabled`, as `setStatus`). Members left out stay; the watermarks,
   * secret and queued deliveries stay too, so a new filter or type applies to leads and events
   * that arrive from now on.
   */
  async update(
    id: string,
    who: Owner,
    o: { url?: unknown; filter?: unknown; types?: unknown; description?: unknown; status?: unknown },
  ): Promise<PublicWebhook> {
    const w = await this.owned(id, who);
    const types = await this.checkMembers(o, false);
    const patch: WebhookPatch = {};
    if (o.url !== undefined) patch.url = o.url as string;
    if (o.types !== undefined) patch.types = types;
    if (o.description !== undefined) patch.description = (o.description as string | null) ?? null;
    if (o.filter !== undefined) {
      const parsed = parseSavedFilter(o.filter as string, (await this.currentSnapshot()).places);
      patch.filter = { filter: parsed.filter, filters: parsed.filters as Record<string, unknown> };
    }
    if (Object.keys(patch).length) await this.wh.updateWebhook(id, patch);
    if (o.status !== undefined && o.status !== w.status) {
      await this.wh.setWebhookStatus(
        id,
        o.status as 'active' | 'disabled',
        o.status === 'disabled' ? `disabled by its owner at ${this.deps.clock().toISOString()}` : null,
      );
    }
    return this.one((await this.wh.getWebhook(id))!);
  }

  /** Delete a webhook with its queued deliveries and delivery log (what the account area's delete does). */
  async remove(id: string, who: Owner): Promise<void> {
    await this.owned(id, who);
    if (!(await this.wh.deleteWebhook(id))) throw notFound(`webhook ${id}`);
  }

  /** Enable or disable a webhook (disabling records when, as the reason). */
  async setStatus(id: string, who: Owner, status: 'active' | 'disabled'): Promise<PublicWebhook> {
    await this.owned(id, who);
    return this.one(
      (await this.wh.setWebhookStatus(
        id,
        status,
        status === 'disabled' ? `disabled by its owner at ${this.deps.clock().toISOString()}` : null,
      ))!,
    );
  }

  /** New secret (returned once); the old one keeps signing for `overlapMs` (default WEBHOOK_ROTATION_OVERLAP_MS). */
  async rotateSecret(
    id: string,
    who: Owner,
    overlapMs: number = this.deps.config.webhookRotationOverlapMs,
  ): Promise<{ webhook: PublicWebhook; secret: string }> {
    await this.owned(id, who);
    const secret = generateSecret();
    const w = await this.wh.rotateSecret(id, secret, new Date(this.deps.clock().getTime() + overlapMs));
    return { webhook: await this.one(w!), secret };
  }

  /**
   * Send a `webhook.test` event now and return its delivery (recorded in the delivery log);
   * `suspended` (not sent) when the account holds no key that may receive the webhook.
   */
  async test(id: string, who: Owner): Promise<Delivery> {
    const w = await this.owned(id, who);
    const snap = await this.deps.leads.snapshot();
    const ev = testEvent({ webhookId: w.id, releaseId: snap?.releaseId ?? null, createdAt: this.deps.clock() });
    await this.wh.enqueue(w.id, [ev]);
    return (await this.deps.dispatcher.deliverOne(ev.id))!;
  }

  /**
   * The delivery log, `raw` being the query (`status`, `limit`: DELIVERIES_QUERY_SCHEMA, the CLI
   * passes its options). Its shape — unknown parameters, then the first of `status` / `limit`
   * given twice — is refused before the ownership check, its values after it (404 before 400).
   */
  async deliveries(id: string, who: Owner, raw: RawQuery = {}): Promise<Delivery[]> {
    return (await this.deliveriesPage(id, who, raw, null)).results;
  }

  /**
   * A page of the delivery log (as `deliveries`), keyset-paged by `cursor` (the previous page's
   * `next_cursor`, signed with `secrets`; null: no cursor accepted or made): `next_cursor` is
   * null on the last page. New deliveries (at the top) never shift a walk.
   */
  async deliveriesPage(
    id: string,
    who: Owner,
    raw: RawQuery,
    secrets: CursorSecrets | null,
  ): Promise<{ results: Delivery[]; next_cursor: string | null }> {
    const q = parseQuery(DELIVERIES_QUERY_SCHEMA, raw, { parsers: { limit: deliveriesLimit } });
    const unknown = q.errors.filter((e) => e.reason === REASONS.unknownParameter);
    if (unknown.length) throw invalidParams(unknown);
    const repeated = Object.keys(DELIVERIES_QUERY_SCHEMA.properties)
      .map((name) => q.errors.find((e) => e.name === name && e.reason === REASONS.repeated))
      .find((e) => e !== undefined);
    if (repeated) throw invalidParams([repeated]);
    await this.owned(id, who);
    if (q.errors.length) throw invalidParams(q.errors);
    const status = q.values['status'] as DeliveryStatus | undefined;
    const limit =
      (q.values['limit'] as number | undefined) ?? (DELIVERIES_QUERY_SCHEMA.properties.limit.default as number);
    const hash = filtersHash(`deliveries ${id}`, { status: status ?? null }, '');
    const cursor = q.values['cursor'] as string | undefined;
    if (cursor !== undefined && !secrets) throw invalidParams([{ name: 'cursor', reason: REASONS.unknownParameter }]);
    const after =
      cursor !== undefined ? (decodeCursor(cursor, hash, secrets!).key as unknown as DeliveryPosition) : undefined;
    const page = await this.wh.pageDeliveries(id, {
      ...(status !== undefined ? { status } : {}),
      limit: limit + 1,
      ...(after ? { after } : {}),
    });
    const more = page.deliveries.length > limit;
    const results = more ? page.deliveries.slice(0, limit) : page.deliveries;
    if (!more || !secrets) return { results, next_cursor: null };
    return { results, next_cursor: encodeCursor(page.positions[limit - 1]!, '', hash, secrets) };
  }

  /** Put dead letters back in the queue (the ids given, or all); the ids replayed. */
  async replay(id: string, who: Owner, deliveryIds?: string[]): Promise<string[]> {
    await this.owned(id, who);
    if (deliveryIds) {
      const errors: ParamError[] = [];
      for (const d of deliveryIds) {
        const got = await this.wh.getDelivery(d);
        if (!got || got.webhook_id !== id)
          errors.push({ name: 'delivery_ids', reason: `no delivery ${d} of webhook ${id}` });
        else if (got.status !== 'dead')
          errors.push({
            name: 'delivery_ids',
            reason: `delivery ${d} is ${got.status}, not dead; only dead letters are replayed`,
          });
      }
      if (errors.length) throw invalidParams(errors);
    }
    return this.wh.replayDead(id, this.deps.clock(), deliveryIds);
  }

  /** Webhooks as shown, with their access now (one read of keys per account and scope). */
  private async shown(ws: Webhook[]): Promise<PublicWebhook[]> {
    const now = this.deps.clock();
    const seen = new Map<string, Promise<WebhookAccess>>();
    return Promise.all(
      ws.map(async (w) => {
        const k = `${w.account_id}\u0000${w.scope}`;
        let p = seen.get(k);
        if (!p) seen.set(k, (p = this.accessOf(w.account_id, w.scope, now)));
        return publicWebhook(w, await p);
      }),
    );
  }

  private async one(w: Webhook): Promise<PublicWebhook> {
    return (await this.shown([w]))[0]!;
  }

  /**
   * Check the members of a webhook as `create` and `update` take them (`url` is checked when
   * given, or always with `urlRequired`): every bad one named in one 400. The event types to
   * store (the default when `types` is absent).
   */
  private async checkMembers(
    o: { url?: unknown; filter?: unknown; types?: unknown; description?: unknown; status?: unknown },
    urlRequired = true,
  ): Promise<WebhookEventType[]> {
    const errors: ParamError[] =
      urlRequired || o.url !== undefined
        ? [
            ...(await checkDestination(
              o.url,
              this.deps.config.webhookAllowHosts,
              this.deps.resolveHost ?? systemResolver,
            )),
          ]
        : [];
    if (o.status !== undefined && o.status !== 'active' && o.status !== 'disabled')
      errors.push({ name: 'status', reason: 'must be active or disabled', allowed: ['active', 'disabled'] });
    const types = parseWebhookTypes(o.types);
    if ('reason' in types) errors.push(types);
    if (o.filter !== undefined && typeof o.filter !== 'string')
      errors.push({ name: 'filter', reason: 'must be a query string such as vertical=solar&county=Cork' });
    if (
      o.description !== undefined &&
      o.description !== null &&
      (typeof o.description !== 'string' || o.description.length > 200)
    ) {
      errors.push({ name: 'description', reason: 'must be a string of at most 200 characters' });
    }
    if (errors.length) throw invalidParams(errors);
    return (types as { types: WebhookEventType[] }).types;
  }

  /** The current release's snapshot (saved filters are checked against its places); 503 before the first release. */
  private async currentSnapshot() {
    const snap = await this.deps.leads.snapshot();
    if (!snap)
      throw new ApiError(
        503,
        'no_release',
        'no release is published yet: saved filters are checked against the current release',
      );
    return snap;
  }

  /** The webhook `id` if `who` may see it; 404 otherwise (unknown, or another account's). */
  private async owned(id: string, who: Owner): Promise<Webhook> {
    const w = await this.wh.getWebhook(id);
    if (!w || (who.accountId !== undefined && w.account_id !== who.accountId)) throw notFound(`webhook ${id}`);
    return w;
  }
}

/** The webhook service over `deps` (see `WebhookService`). */
export function webhookService(deps: WebhookServiceDeps): WebhookService {
  return new WebhookService(deps);
}

/** The best webhook-capable scope among an account's active keys (the CLI's default), or null. */
export function bestWebhookScope(keyScopes: Scope[]): Scope | null {
  const capable = SCOPES.filter((s) => CAPABILITIES[s].webhooks && keyScopes.includes(s));
  return capable.at(-1) ?? null;
}
