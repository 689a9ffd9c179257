/**
 * Operator commands of the access model (dispatched by api/cli/main.ts):
 *   licences create|link|list   record an organisation licence and issue one-time claim links
 *   licences claim <link>       the organisation's side from a terminal: generate the key here,
 *                               send only its hash to the API, print {"id","key","scope"}
 *   usage --account N           the usage ledger of an account (table, --json or --csv)
 * and the self-serve key rules `keys create` applies.
 */
import { parseArgs } from 'node:util';
import { loadApiConfig } from '../config.ts';
import type { CliIo } from '../../common/cli-io.ts';
import { FailedError, UsageError } from './usage-errors.ts';
import { generateKey } from '../access/keys.ts';
import type { Scope } from '../access/scopes.ts';
import type { Account, AccountUsage, Licence, StateStore } from '../state/store-interface.ts';
import {
  CLAIM_LINK_DAYS,
  isLicensedScope,
  issueClaimLink,
  LICENSED_SCOPES,
  licenceEnd,
  MAX_SELF_SERVE_KEYS,
  newLicenceId,
  parseClaimLink,
  selfServeRefusal,
} from '../access/licences.ts';
import { isDay, utcDay } from '../access/limits.ts';

type Command = (args: string[], store: () => StateStore, io: CliIo) => Promise<number>;

export const ACCESS_USAGE = `  licences create --org N --scope ${LICENSED_SCOPES.join('|')} --seats N --expires YYYY-MM-DD [--link-days D] [--json]
                         record an organisation licence (valid through --expires) and print a one-time claim link
  licences link LICENCE_ID [--link-days D] [--json]
                         issue another one-time claim link (one per seat to fill)
  licences list [--org N] [--json]
                         licences with seats used and end dates
  licences claim LINK [--name LABEL] [--json]
                         claim a key from a terminal: the key is generated here, only its hash is sent;
                         prints {"id","key","scope"} (the key is shown once)
  usage --account N [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json|--csv]
                         usage ledger per key and day (revoked and expired keys included)
`;

/** Why `keys create` refuses this scope for this account (plan rules, licensed scopes), or null. */
export async function keyCreationRefusal(_store: StateStore, account: Account, scope: Scope): Promise<string | null> {
  return selfServeRefusal(scope, account.plan);
}

export const keyLimitMessage = (account: string): string =>
  `account '${account}' already holds ${MAX_SELF_SERVE_KEYS} active self-serve keys, the most a self-serve account may hold; revoke one first (leads keys list --account ${account}, then leads keys revoke ID). Revoked keys keep their usage history.`;

const positiveInt = (what: string, v: string | undefined, dflt?: number): number => {
  if (v === undefined) {
    if (dflt !== undefined) return dflt;
    throw new UsageError(`--${what} is required`);
  }
  if (!/^\d{1,6}$/.test(v) || Number(v) < 1) throw new UsageError(`--${what} must be a positive integer, got ${v}`);
  return Number(v);
};

/** The account's usage as one row per key and day (what `usage` prints, as a table, CSV or JSON). */
function usageRows(a: Account, u: AccountUsage) {
  const byKey = new Map(u.keys.map((k) => [k.id, k]));
  return u.days.map((d) => {
    const k = byKey.get(d.key_id)!;
    return {
      account: a.name,
      key_id: k.id,
      key_name: k.name,
      scope: k.scope,
      status: k.status,
      licence_id: k.licence_id,
      date: d.day,
      requests: d.requests,
      errors: d.errors,
      rows: d.rows,
    };
  });
}

type UsageRow = ReturnType<typeof usageRows>[number];

/** `usage --json`: the account's keys, its rows per key and day, and its rows per route. */
function usageJson(a: Account, from: string, to: string, u: AccountUsage, rows: UsageRow[]): string {
  const routes = u.routes.map((r) => ({
    key_id: r.key_id,
    date: r.day,
    route: r.route,
    requests: r.requests,
    errors: r.errors,
    rows: r.rows,
  }));
  return JSON.stringify({
    account: a.name,
    from,
    to,
    keys: u.keys.map((k) => ({
      id: k.id,
      name: k.name,
      scope: k.scope,
      status: k.status,
      licence_id: k.licence_id,
      created_at: k.created_at,
      revoked_at: k.revoked_at,
      expires_at: k.expires_at,
    })),
    days: rows,
    routes,
  });
}

/** A CSV cell: quoted when it holds a quote, comma or line break, and kept from being read as a formula. */
function csvCell(v: unknown): string {
  const t = v === null || v === undefined ? '' : String(v);
  return /[",\n\r]/.test(t) || /^[=+\-@]/.test(t) ? `"${(/^[=+\-@]/.test(t) ? "'" : '') + t.replace(/"/g, '""')}"` : t;
}

/** `usage --csv`: a header line, then one line per key and day. */
function usageCsv(rows: UsageRow[]): string {
  const cols = [
    'account',
    'key_id',
    'key_name',
    'scope',
    'status',
    'licence_id',
    'date',
    'requests',
    'errors',
    'rows',
  ] as const;
  return [cols.join(','), ...rows.map((r) => cols.map((c) => csvCell(r[c])).join(','))].join('\n');
}

/** `usage` for people: the lines of an aligned table (counts right-aligned). */
function usageTable(rows: UsageRow[]): string[] {
  const table = [
    ['date', 'key', 'scope', 'status', 'requests', 'errors', 'rows'],
    ...rows.map((r) => [r.date, r.key_id, r.scope, r.status, String(r.requests), String(r.errors), String(r.rows)]),
  ];
  const w = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  return table.map((r) =>
    r
      .map((c, i) => (i >= 4 ? c.padStart(w[i]!) : c.padEnd(w[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

const publicLicence = (l: Licence) => ({
  id: l.id,
  org: l.account_name,
  scope: l.scope,
  seats: l.seats,
  seats_used: l.seats_used,
  expires_at: l.expires_at,
  created_at: l.created_at,
});

async function printLink(
  { out, err, env }: CliIo,
  l: Licence,
  store: StateStore,
  days: number,
  json: boolean,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const now = new Date();
  if (Date.parse(l.expires_at) <= now.getTime()) throw new FailedError(`licence ${l.id} ended at ${l.expires_at}`);
  if (l.seats_used >= l.seats)
    throw new FailedError(
      `every seat of licence ${l.id} (${l.seats}) holds an active key; revoke one or record more seats`,
    );
  const { url, link } = await issueClaimLink(store, l, loadApiConfig(env).publicBaseUrl, { now, days });
  if (json) out(JSON.stringify({ ...publicLicence(l), ...extra, claim_link: url, link_expires_at: link.expires_at }));
  else {
    out(url);
    err(
      `one-time claim link for licence ${l.id} (${l.scope}, ${l.seats_used}/${l.seats} seats used, ends ${l.expires_at}); valid until ${link.expires_at}, once. Send it to the organisation over a private channel.`,
    );
  }
}

export const accessCommands: Record<string, Record<string, Command>> = {
  licences: {
    async create(args, store, io) {
      const { values } = parseArgs({
        args,
        options: {
          org: { type: 'string' },
          scope: { type: 'string' },
          seats: { type: 'string' },
          expires: { type: 'string' },
          'link-days': { type: 'string' },
          json: { type: 'boolean', default: false },
        },
      });
      if (!values.org?.trim()) throw new UsageError("--org is required (the organisation's account name)");
      if (!values.scope || !isLicensedScope(values.scope))
        throw new UsageError(`--scope must be one of ${LICENSED_SCOPES.join(', ')}, got ${values.scope ?? 'nothing'}`);
      const seats = positiveInt('seats', values.seats);
      const end = values.expires === undefined ? null : licenceEnd(values.expires);
      if (!end)
        throw new UsageError(
          `--expires must be the licence's last day as YYYY-MM-DD, got ${values.expires ?? 'nothing'}`,
        );
      if (Date.parse(end) <= Date.now()) throw new UsageError(`--expires ${values.expires} is in the past`);
      const days = positiveInt('link-days', values['link-days'], CLAIM_LINK_DAYS);
      const s = store();
      const org = await s.getAccountByName(values.org.trim());
      if (!org)
        throw new FailedError(
          `no account named '${values.org}' (create it with: leads accounts create --name ${values.org} --plan basic)`,
        );
      const l = await s.createLicence({
        id: newLicenceId(),
        account_id: org.id,
        scope: values.scope,
        seats,
        expires_at: end,
      });
      await printLink(io, l, s, days, values.json);
      return 0;
    },
    async link(args, store, io) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { 'link-days': { type: 'string' }, json: { type: 'boolean', default: false } },
      });
      if (positionals.length !== 1)
        throw new UsageError('licences link needs exactly one licence id (see leads licences list)');
      const s = store();
      const l = await s.getLicence(positionals[0]!);
      if (!l) throw new FailedError(`no licence with id '${positionals[0]}'`);
      await printLink(io, l, s, positiveInt('link-days', values['link-days'], CLAIM_LINK_DAYS), values.json);
      return 0;
    },
    async list(args, store, io) {
      const { out } = io;
      const { values } = parseArgs({
        args,
        options: { org: { type: 'string' }, json: { type: 'boolean', default: false } },
      });
      const s = store();
      let id: number | undefined;
      if (values.org !== undefined) {
        const a = await s.getAccountByName(values.org);
        if (!a) throw new FailedError(`no account named '${values.org}'`);
        id = a.id;
      }
      const ls = (await s.listLicences(id)).map(publicLicence);
      if (values.json) out(JSON.stringify(ls));
      else if (!ls.length) out('no licences');
      else
        for (const l of ls)
          out(`${l.id}  ${l.org}  ${l.scope}  seats ${l.seats_used}/${l.seats}  ends ${l.expires_at}`);
      return 0;
    },
    async claim(args, _store, io) {
      const { out, err } = io;
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { name: { type: 'string' }, json: { type: 'boolean', default: false } },
      });
      if (positionals.length !== 1)
        throw new UsageError('licences claim needs exactly one claim link (quote it: the part after # matters)');
      const parsed = parseClaimLink(positionals[0]!);
      if (!parsed) throw new UsageError('not a claim link: expected https://…/v1/claim#<43-character token>');
      const post = async (path: string, body: unknown): Promise<any> => {
        let res: Response;
        try {
          res = await fetch(parsed.base + path, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify(body),
          });
        } catch (e) {
          throw new FailedError(`cannot reach ${parsed.base}: ${(e as Error).message}`);
        }
        const data = (await res.json().catch(() => null)) as { detail?: string } | null;
        if (!res.ok) throw new FailedError(data?.detail ?? `the API answered ${res.status}`);
        return data;
      };
      const lic = (await post('/claim/lookup', { token: parsed.token })) as { scope: Scope; organisation: string };
      if (!isLicensedScope(lic.scope)) throw new FailedError(`unexpected licence scope ${lic.scope}`);
      const k = generateKey(lic.scope); // generated here: only the hash leaves this machine
      const made = (await post('/claim', {
        token: parsed.token,
        key_hash: k.hash,
        display_prefix: k.displayPrefix,
        ...(values.name ? { name: values.name } : {}),
      })) as { id: string; scope: Scope; expires_at: string };
      if (values.json) out(JSON.stringify({ id: made.id, key: k.raw, scope: made.scope }));
      else {
        out(k.raw);
        err(
          `key ${made.id} (${made.scope}) claimed for ${lic.organisation}; it works until ${made.expires_at}. This is the only time the key is shown: store it now.`,
        );
      }
      return 0;
    },
  },
  usage: {
    async ''(args, store, io) {
      const { out } = io;
      const { values } = parseArgs({
        args,
        options: {
          account: { type: 'string' },
          from: { type: 'string' },
          to: { type: 'string' },
          json: { type: 'boolean', default: false },
          csv: { type: 'boolean', default: false },
        },
      });
      if (!values.account?.trim()) throw new UsageError('--account is required');
      if (values.json && values.csv) throw new UsageError('give --json or --csv, not both');
      for (const k of ['from', 'to'] as const)
        if (values[k] !== undefined && !isDay(values[k]!))
          throw new UsageError(`--${k} must be a date YYYY-MM-DD, got ${values[k]}`);
      const to = values.to ?? utcDay(Date.now());
      const from = values.from ?? '2000-01-01'; // the whole ledger by default
      if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
      const s = store();
      const a = await s.getAccountByName(values.account.trim());
      if (!a) throw new FailedError(`no account named '${values.account}'`);
      const u = await s.accountUsage(a.id, from, to);
      const rows = usageRows(a, u);
      if (values.json) out(usageJson(a, from, to, u, rows));
      else if (values.csv) out(usageCsv(rows));
      else if (!rows.length) out(`no usage for account '${a.name}' from ${from} to ${to} (${u.keys.length} keys)`);
      else for (const line of usageTable(rows)) out(line);
      return 0;
    },
  },
};
