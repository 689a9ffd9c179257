/**
 * `leads webhooks …`: the operators' commands for webhooks (dispatched from api/cli/main.ts). They
 * read DATA_DIR / DATABASE_URL / WEBHOOK_* like the server, and the release `DATA_DIR/current`
 * points at (saved filters are checked against it; dispatch reads its leads). Failures are
 * `ApiError`s (api/cli/main.ts prints them: 400 → exit 2, others → exit 1) or `CliFailure`s.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { CliIo } from '../../common/cli-io.ts';
import { loadApiConfig, type ApiConfig } from '../config.ts';
import { ApiError } from '../http/errors.ts';
import { SCOPES, scopesWith, type Scope } from '../access/scopes.ts';
import type { StateStore } from '../state/store-interface.ts';
import type { Delivery } from '../state/webhook-interface.ts';
import { createDispatcher } from '../webhooks/dispatcher.ts';
import { dataDirLeadReader } from '../webhooks/lead-reader.ts';
import { keyRefusal } from '../webhooks/send-access.ts';
import { bestWebhookScope, webhookService, type PublicWebhook } from '../webhooks/service.ts';

export const WEBHOOKS_USAGE = `Webhooks (docs/webhooks.md):
  webhooks create --account N --url URL [--filter 'vertical=solar&county=Cork'] [--types lead.new,lead.stage_changed] [--scope S] [--description D] [--json]
                         create a webhook; prints its id and signing secret once (--json: {"id","secret"})
  webhooks list [--account N] [--json]
                         list webhooks (never their secrets) with their access: ok (scope) or suspended: why
  webhooks disable ID    stop deliveries (queued ones wait); webhooks enable ID resumes them
  webhooks enable ID     re-activate a disabled webhook
  webhooks rotate-secret ID [--overlap-hours H] [--json]
                         new secret (printed once); the old one also signs for H hours (default 24)
  webhooks test ID [--json]
                         send a webhook.test event now and show the result
  webhooks deliveries ID [--status pending|suspended|delivering|delivered|dead] [--limit N] [--json]
                         the delivery log, newest first (dead = the dead-letter list, suspended =
                         held while the account holds no key that may receive the webhook)
  webhooks replay ID [DELIVERY_ID…] [--json]
                         put dead letters (all, or those given) back in the queue
  webhooks dispatch [--json]
                         batch new leads of the current release and send every delivery due now
                         (a webhook whose account holds no active ent_api, ent_feed or custom key
                         is suspended: its deliveries are held until the account holds one again)
`;

/** A failed command (exit 1) with a message for the operator. */
export class CliFailure extends Error {}

type WebhookCommand = (args: string[], store: () => StateStore, io: CliIo) => Promise<number>;

function context(store: () => StateStore, io: CliIo) {
  const config: ApiConfig = loadApiConfig(io.env);
  const s = store();
  const leads = dataDirLeadReader(config.dataDir);
  const dispatcher = createDispatcher({
    store: s.webhooks,
    accounts: s,
    leads,
    config,
    clock: () => new Date(),
    log: (l) => io.err(l),
    owner: `cli-${process.pid}-${randomBytes(4).toString('hex')}`, // one per command, also when run in process
  });
  const service = webhookService({ store: s, leads, dispatcher, config, clock: () => new Date() });
  return {
    config,
    store: s,
    service,
    dispatcher,
    async close() {
      dispatcher.close();
      await leads.close();
    },
  };
}

const one = (positionals: string[], what: string): string => {
  if (positionals.length !== 1) throw new ApiError(400, 'usage', `needs exactly one ${what}`);
  return positionals[0]!;
};

function table(out: (s: string) => void, rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const r of rows)
    out(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
}

const webhookLine = (w: PublicWebhook): string[] => [
  w.id,
  w.account,
  w.scope,
  w.status,
  w.access.state === 'ok' ? `ok (${w.access.scope})` : `suspended: ${w.access.detail}`,
  w.url,
  w.filter || '(all leads)',
  w.created_at,
];
const deliveryLine = (d: Delivery): string[] => [
  d.id,
  d.type,
  d.status,
  String(d.lead_count),
  String(d.attempts),
  d.last_status_code === null ? '' : String(d.last_status_code),
  d.last_latency_ms === null ? '' : `${d.last_latency_ms} ms`,
  d.next_attempt_at ?? d.delivered_at ?? '',
  d.suspended_reason ?? d.dead_reason ?? d.last_error ?? '',
];

/** Run `fn` with the context, closing it afterwards. */
const withContext = async (
  store: () => StateStore,
  io: CliIo,
  fn: (c: ReturnType<typeof context>) => Promise<number>,
): Promise<number> => {
  const c = context(store, io);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
};

export const webhookCommands: Record<string, WebhookCommand> = {
  async create(args, store, io) {
    const { values } = parseArgs({
      args,
      options: {
        account: { type: 'string' },
        url: { type: 'string' },
        filter: { type: 'string' },
        types: { type: 'string' },
        scope: { type: 'string' },
        description: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    if (!values.account) throw new ApiError(400, 'usage', '--account is required');
    if (!values.url) throw new ApiError(400, 'usage', '--url is required');
    if (values.scope !== undefined && !(SCOPES as readonly string[]).includes(values.scope))
      throw new ApiError(400, 'usage', `--scope must be one of ${SCOPES.join(', ')}, got ${values.scope}`);
    return withContext(store, io, async (c) => {
      const account = await c.store.getAccountByName(values.account!);
      if (!account) throw new CliFailure(`no account named '${values.account}'`);
      // keys that grant their scope now: active, unexpired, of a scope the account's plan allows
      const now = new Date();
      const held = (await c.store.listKeys(account.id))
        .filter((k) => keyRefusal(k, account, now) === null)
        .map((k) => k.scope);
      const need = scopesWith('webhooks').join(', ');
      let scope: Scope;
      if (values.scope !== undefined) {
        scope = values.scope as Scope;
        if (!held.includes(scope))
          throw new CliFailure(
            `account '${account.name}' has no active ${scope} key (that its ${account.plan} plan allows)`,
          );
      } else {
        const best = bestWebhookScope(held);
        if (!best)
          throw new CliFailure(
            `account '${account.name}' has no active key of scope ${need}: webhooks need one (commonwealth cannot have webhooks)`,
          );
        scope = best;
      }
      const { webhook, secret } = await c.service.create({
        accountId: account.id,
        scope,
        url: values.url,
        filter: values.filter ?? '',
        types: values.types,
        description: values.description,
      });
      if (values.json) io.out(JSON.stringify({ id: webhook.id, secret }));
      else {
        io.out(secret);
        io.err(
          `webhook ${webhook.id} created for account '${account.name}' (scope ${scope}, types ${webhook.types.join(',')}, filter '${webhook.filter || 'all leads'}'). The signing secret above is shown only now: store it.`,
        );
      }
      return 0;
    });
  },
  async list(args, store, io) {
    const { values } = parseArgs({
      args,
      options: { account: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    return withContext(store, io, async (c) => {
      let accountId: number | undefined;
      if (values.account !== undefined) {
        const a = await c.store.getAccountByName(values.account);
        if (!a) throw new CliFailure(`no account named '${values.account}'`);
        accountId = a.id;
      }
      const list = await c.service.list({ ...(accountId !== undefined ? { accountId } : {}) });
      if (values.json) io.out(JSON.stringify(list));
      else if (list.length === 0) io.out('no webhooks');
      else
        table(io.out, [
          ['id', 'account', 'scope', 'status', 'access', 'url', 'filter', 'created_at'],
          ...list.map(webhookLine),
        ]);
      return 0;
    });
  },
  disable: statusCommand('disabled'),
  enable: statusCommand('active'),
  async 'rotate-secret'(args, store, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { 'overlap-hours': { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const id = one(positionals, 'webhook id');
    const h = values['overlap-hours'];
    if (h !== undefined && !(/^\d+(\.\d+)?$/.test(h) && Number(h) <= 720))
      throw new ApiError(400, 'usage', `--overlap-hours must be a number of hours between 0 and 720, got ${h}`);
    return withContext(store, io, async (c) => {
      const { webhook, secret } = await c.service.rotateSecret(
        id,
        {},
        h === undefined ? undefined : Math.round(Number(h) * 3600_000),
      );
      if (values.json)
        io.out(
          JSON.stringify({ id: webhook.id, secret, previous_secret_expires_at: webhook.previous_secret_expires_at }),
        );
      else {
        io.out(secret);
        io.err(
          `webhook ${id}: new secret above (shown only now); the previous one also signs until ${webhook.previous_secret_expires_at}`,
        );
      }
      return 0;
    });
  },
  async test(args, store, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { json: { type: 'boolean', default: false } },
    });
    const id = one(positionals, 'webhook id');
    return withContext(store, io, async (c) => {
      const d = await c.service.test(id, {});
      if (values.json) io.out(JSON.stringify(d));
      else if (d.status === 'suspended') io.out(`${d.id}: suspended, not sent (${d.suspended_reason})`);
      else
        io.out(
          `${d.id}: ${d.status}${d.last_status_code !== null ? `, HTTP ${d.last_status_code}` : ''}${d.last_latency_ms !== null ? ` in ${d.last_latency_ms} ms` : ''}${d.last_error ? ` (${d.last_error})` : ''}`,
        );
      return d.status === 'delivered' ? 0 : 1;
    });
  },
  async deliveries(args, store, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { status: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const id = one(positionals, 'webhook id');
    return withContext(store, io, async (c) => {
      const list = await c.service.deliveries(id, {}, { status: values.status, limit: values.limit });
      if (values.json) io.out(JSON.stringify(list));
      else if (list.length === 0) io.out('no deliveries');
      else
        table(io.out, [
          ['id', 'type', 'status', 'leads', 'attempts', 'code', 'latency', 'next/delivered', 'reason'],
          ...list.map(deliveryLine),
        ]);
      return 0;
    });
  },
  async replay(args, store, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { json: { type: 'boolean', default: false } },
    });
    if (positionals.length < 1)
      throw new ApiError(400, 'usage', 'needs a webhook id, then optionally the delivery ids to replay');
    const [id, ...ids] = positionals as [string, ...string[]];
    return withContext(store, io, async (c) => {
      const replayed = await c.service.replay(id, {}, ids.length ? ids : undefined);
      if (values.json) io.out(JSON.stringify({ replayed }));
      else
        io.out(
          replayed.length
            ? `${replayed.length} dead letter(s) queued again: ${replayed.join(', ')}`
            : 'no dead letters to replay',
        );
      return 0;
    });
  },
  async dispatch(args, store, io) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
    return withContext(store, io, async (c) => {
      const planned = await c.dispatcher.plan();
      const sent = await c.dispatcher.deliverDue();
      if (values.json) io.out(JSON.stringify({ planned, sent }));
      else {
        io.out(
          `release ${planned.release ?? '(none)'}: ${planned.leads} new lead(s) in ${planned.events} event(s) for ${planned.webhooks} webhook(s); ` +
            `sent ${sent.attempted}: ${sent.delivered} delivered, ${sent.retrying} to retry, ${sent.dead} dead` +
            (sent.held || sent.suspended || sent.resumed
              ? `; ${sent.held} held, ${sent.suspended} webhook(s) suspended, ${sent.resumed} resumed (account access)`
              : ''),
        );
      }
      return 0;
    });
  },
};

function statusCommand(status: 'active' | 'disabled'): WebhookCommand {
  return async (args, store, io) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { json: { type: 'boolean', default: false } },
    });
    const id = one(positionals, 'webhook id');
    return withContext(store, io, async (c) => {
      const w = await c.service.setStatus(id, {}, status);
      io.out(values.json ? JSON.stringify(w) : `webhook ${id} is ${w.status}`);
      return 0;
    });
  };
}
