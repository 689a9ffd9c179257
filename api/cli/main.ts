/**
 * `leads` commands for operators of the API: accounts, keys and webhooks (api/cli/webhook-commands.ts). Exit codes: 0 ok, 1 failed,
 * 2 usage error. The raw key is printed once, by `keys create`; nothing else ever shows it
 * (or its hash). Reads DATA_DIR / DATABASE_URL like the server.
 */
import { parseArgs } from 'node:util';
import { ApiConfigError, loadApiConfig } from '../config.ts';
import { generateKey } from '../access/keys.ts';
import { ACCESS_USAGE, accessCommands, keyCreationRefusal, keyLimitMessage } from './access-commands.ts';
import { MAX_SELF_SERVE_KEYS, planAllowsScope, SCOPE_PLAN } from '../access/licences.ts';
import { FailedError, UsageError } from './usage-errors.ts';
import { PLANS, SCOPES, type Plan, type Scope } from '../access/scopes.ts';
import { openStateStore } from '../state/open.ts';
import type { ApiKey, StateStore } from '../state/store-interface.ts';
import { ApiError } from '../http/errors.ts';
import { CliFailure, webhookCommands, WEBHOOKS_USAGE } from './webhook-commands.ts';
import { issueInvitation } from '../app-area/invitations.ts';
import { ALERTS_USAGE, alertCommands } from './alert-commands.ts';

export type Command = (args: string[], store: () => StateStore) => Promise<number>;

export const USAGE = `API accounts and keys:
  accounts create --name N --plan ${PLANS.join('|')} [--json]
                         create a customer account
  accounts set-plan --name N --plan ${PLANS.join('|')} [--json]
                         move an account to another plan; after a downgrade its keys of a scope the
                         plan no longer allows (ent_api needs premium) stop working everywhere (API,
                         GIS tokens, webhooks) until the plan allows them again
  accounts invite --account N [--email ADDR] [--json]
                         print a one-time link to the account area (<app>/invite#<token>, valid
                         INVITE_TTL_HOURS, default 72) where the owner sets a passkey or password;
                         also e-mailed to ADDR when SMTP_URL is set. A new invitation replaces the
                         account's unused ones and is how a lost credential is recovered
  keys create --account N --scope ${SCOPES.join('|')} [--name LABEL] [--json]
                         create an API key; prints the key once (store it now: only its hash is kept)
  keys list [--account N] [--json]
                         list keys (ids, scopes, status — never the keys themselves)
  keys revoke ID         revoke a key; the API refuses it on the next request, on every replica
${ACCESS_USAGE}

${WEBHOOKS_USAGE}
${ALERTS_USAGE}
Environment: DATA_DIR, DATABASE_URL (default file:<DATA_DIR>/state.sqlite), PUBLIC_BASE_URL, INVITE_TTL_HOURS, SMTP_URL, SMTP_FROM
`;

export { UsageError, FailedError };

const err = (s: string): void => void process.stderr.write(s.endsWith('\n') ? s : s + '\n');
const out = (s: string): void => void process.stdout.write(s.endsWith('\n') ? s : s + '\n');

const oneOf = <T extends string>(what: string, allowed: readonly T[], v: string | undefined): T => {
  if (v === undefined) throw new UsageError(`--${what} is required (${allowed.join(', ')})`);
  if (!(allowed as readonly string[]).includes(v))
    throw new UsageError(`--${what} must be one of ${allowed.join(', ')}, got ${v}`);
  return v as T;
};

const required = (what: string, v: string | undefined): string => {
  if (v === undefined || v.trim() === '') throw new UsageError(`--${what} is required`);
  return v.trim();
};

const publicKey = (k: ApiKey) => ({
  id: k.id,
  account: k.account_name,
  scope: k.scope,
  name: k.name,
  prefix: k.display_prefix,
  status: k.status,
  created_at: k.created_at,
  revoked_at: k.revoked_at,
});

const commands: Record<string, Record<string, Command>> = {
  ...accessCommands,
  accounts: {
    async create(args, store) {
      const { values } = parseArgs({
        args,
        options: { name: { type: 'string' }, plan: { type: 'string' }, json: { type: 'boolean', default: false } },
      });
      const name = required('name', values.name);
      const plan = oneOf<Plan>('plan', PLANS, values.plan);
      const s = store();
      if (await s.getAccountByName(name)) throw new FailedError(`an account named '${name}' already exists`);
      const a = await s.createAccount(name, plan);
      if (values.json) out(JSON.stringify({ id: a.id, name: a.name, plan: a.plan, created_at: a.created_at }));
      else
        out(
          `account '${a.name}' created (plan ${a.plan}); next: leads keys create --account ${a.name} --scope ent_api`,
        );
      return 0;
    },
    async 'set-plan'(args, store) {
      const { values } = parseArgs({
        args,
        options: { name: { type: 'string' }, plan: { type: 'string' }, json: { type: 'boolean', default: false } },
      });
      const name = required('name', values.name);
      const plan = oneOf<Plan>('plan', PLANS, values.plan);
      const s = store();
      const before = await s.getAccountByName(name);
      if (!before) throw new FailedError(`no account named '${name}'`);
      const a = (await s.setAccountPlan(before.id, plan))!;
      const active = (await s.listKeys(a.id)).filter((k) => k.status === 'active');
      const stopped = active.filter((k) => !planAllowsScope(plan, k.scope));
      if (values.json) {
        out(
          JSON.stringify({
            id: a.id,
            name: a.name,
            plan: a.plan,
            previous_plan: before.plan,
            keys_without_access: stopped.map((k) => ({ id: k.id, scope: k.scope })),
          }),
        );
      } else {
        out(
          `account '${a.name}' is on plan ${a.plan}${before.plan === a.plan ? ' (unchanged)' : ` (was ${before.plan})`}`,
        );
        if (stopped.length) {
          const scopes = [...new Set(stopped.map((k) => k.scope))];
          err(
            `${stopped.length} active key(s) of scope ${scopes.join(', ')} no longer grant access (${stopped.map((k) => k.id).join(', ')}): requests get 403 insufficient_plan ` +
              `from the next request and webhooks relying on them are held, until the plan is ${scopes.map((sc) => SCOPE_PLAN[sc]).join(', ')} again`,
          );
        }
      }
      return 0;
    },
    async invite(args, store) {
      const { values } = parseArgs({
        args,
        options: { account: { type: 'string' }, email: { type: 'string' }, json: { type: 'boolean', default: false } },
      });
      const name = required('account', values.account);
      const email = values.email?.trim() || null;
      if (email !== null && !/^[^\s@]+@[^\s@]+$/.test(email))
        throw new UsageError(`--email must be an e-mail address, got ${email}`);
      const config = loadApiConfig(process.env);
      const s = store();
      const a = await s.getAccountByName(name);
      if (!a)
        throw new FailedError(
          `no account named '${name}' (create it with: leads accounts create --name ${name} --plan basic)`,
        );
      const inv = await issueInvitation(s, config, a, { now: new Date(), email });
      if (values.json)
        out(JSON.stringify({ account: a.name, url: inv.url, expires_at: inv.expires_at, emailed: inv.emailed }));
      else {
        out(inv.url);
        err(
          `invitation for account '${a.name}', valid once until ${inv.expires_at}${inv.emailed ? '; also e-mailed' : ''}. Earlier unused invitations of the account no longer work.`,
        );
      }
      if (email !== null && !inv.emailed)
        err('SMTP_URL is not set: the invitation was NOT e-mailed; send the link above to the account owner yourself');
      return 0;
    },
  },
  keys: {
    async create(args, store) {
      const { values } = parseArgs({
        args,
        options: {
          account: { type: 'string' },
          scope: { type: 'string' },
          name: { type: 'string' },
          json: { type: 'boolean', default: false },
        },
      });
      const accountName = required('account', values.account);
      const scope = oneOf<Scope>('scope', SCOPES, values.scope);
      const s = store();
      const account = await s.getAccountByName(accountName);
      if (!account)
        throw new FailedError(
          `no account named '${accountName}' (create it with: leads accounts create --name ${accountName} --plan basic)`,
        );
      const refusal = await keyCreationRefusal(s, account, scope);
      if (refusal) throw new FailedError(refusal);
      const k = generateKey(scope);
      const made = await s.insertSelfServeKey(
        {
          id: k.id,
          account_id: account.id,
          scope,
          name: values.name ?? null,
          display_prefix: k.displayPrefix,
          hash: k.hash,
        },
        MAX_SELF_SERVE_KEYS,
      );
      if (made === 'limit') throw new FailedError(keyLimitMessage(account.name));
      if (values.json) out(JSON.stringify({ id: k.id, key: k.raw, scope, account: account.name }));
      else {
        out(k.raw);
        err(
          `key ${k.id} (scope ${scope}) created for account '${account.name}'. This is the only time the key is shown: store it now.`,
        );
      }
      return 0;
    },
    async list(args, store) {
      const { values } = parseArgs({
        args,
        options: { account: { type: 'string' }, json: { type: 'boolean', default: false } },
      });
      const s = store();
      let accountId: number | undefined;
      if (values.account !== undefined) {
        const a = await s.getAccountByName(values.account);
        if (!a) throw new FailedError(`no account named '${values.account}'`);
        accountId = a.id;
      }
      const keys = (await s.listKeys(accountId)).map(publicKey);
      if (values.json) out(JSON.stringify(keys));
      else if (keys.length === 0) out('no keys');
      else {
        const rows = [
          ['id', 'account', 'scope', 'prefix', 'status', 'created_at', 'name'],
          ...keys.map((k) => [k.id, k.account, k.scope, k.prefix + '…', k.status, k.created_at, k.name ?? '']),
        ];
        const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
        for (const r of rows)
          out(
            r
              .map((c, i) => c.padEnd(widths[i]!))
              .join('  ')
              .trimEnd(),
          );
      }
      return 0;
    },
    async revoke(args, store) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { json: { type: 'boolean', default: false } },
      });
      if (positionals.length !== 1) throw new UsageError('keys revoke needs exactly one key id (see leads keys list)');
      const id = positionals[0]!;
      const s = store();
      const before = (await s.listKeys()).find((k) => k.id === id);
      if (!before) throw new FailedError(`no key with id '${id}'`);
      const k = (await s.revokeKey(id))!;
      if (values.json) out(JSON.stringify(publicKey(k)));
      else
        out(
          before.status === 'revoked'
            ? `key ${id} was already revoked (${k.revoked_at})`
            : `key ${id} revoked; the API refuses it from the next request`,
        );
      return 0;
    },
  },
  alerts: Object.fromEntries(
    Object.entries(alertCommands).map(([name, fn]) => [
      name,
      (args: string[], store: () => StateStore) => fn(args, store, { out, err }),
    ]),
  ),
  webhooks: Object.fromEntries(
    Object.entries(webhookCommands).map(([name, fn]) => [
      name,
      (args: string[], store: () => StateStore) => fn(args, store, { out, err }),
    ]),
  ),
};

/** Run an `accounts …` or `keys …` command line; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [group, sub, ...rest] = argv;
  if (!group || group === 'help' || group === '--help' || group === '-h') {
    out(USAGE);
    return group ? 0 : 2;
  }
  const table = commands[group];
  // single-word commands (`usage --account N`) sit under the key ''
  const single = table && (!sub || sub.startsWith('-')) ? table[''] : undefined;
  const cmd = single ?? (table && sub ? table[sub] : undefined);
  if (single && sub !== undefined) rest.unshift(sub);
  if (!table || !cmd) {
    err(`unknown command '${[group, sub].filter(Boolean).join(' ')}'\n\n${USAGE}`);
    return 2;
  }
  let store: StateStore | null = null;
  const open = (): StateStore => (store ??= openStateStore(loadApiConfig(process.env).databaseUrl));
  try {
    return await cmd(rest, open);
  } catch (e) {
    const name = single ? `leads ${group}` : `leads ${group} ${sub}`;
    if (
      e instanceof UsageError ||
      e instanceof ApiConfigError ||
      (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      err(`${name}: ${(e as Error).message}`);
      return 2;
    }
    if (e instanceof ApiError && e.expose) {
      err(`${name}: ${e.message}`);
      return e.status === 400 ? 2 : 1;
    }
    err(
      `${name}: ${e instanceof FailedError || e instanceof CliFailure ? e.message : `failed: ${(e as Error).message}`}`,
    );
    return 1;
  } finally {
    await (store as StateStore | null)?.close();
  }
}
