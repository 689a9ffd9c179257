/**
 * `leads accounts …` / `leads keys …` against the state file of a running test API, run in
 * process (test/helpers/cli.ts: the command's own store connection, its own env and output):
 * keys created by the CLI work over HTTP, lists never show a key, and a revoked key is refused on
 * the very next request (the server's key cache learns it from SQLite's data_version,
 * api/state/revocations.ts). One smoke test runs the real `bin/leads.js` in a child process.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { KEY_PATTERN } from '../../../api/access/keys.ts';
import { KEY_PREFIX, SCOPES } from '../../../api/access/scopes.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';
import { leads as runLeads, type CliResult } from '../../helpers/cli.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi({ config: { keyCacheMs: 60_000 } }); // a long cache: a revocation must not wait for it
});
test.after(async () => {
  await api.close();
});

const env = (): Record<string, string | undefined> => ({ ...process.env, DATA_DIR: api.dataDir, DATABASE_URL: '' });

/** The command line run in this process. */
const leads = (...args: string[]): Promise<CliResult> => runLeads(args, env());

/** The command line run by the real binary, in a child process (the smoke test). */
function leadsBinary(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      'node',
      [join(REPO_ROOT, 'bin/leads.js'), ...args],
      { env: env(), cwd: REPO_ROOT },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const created: Record<string, { id: string; key: string }> = {};

test('accounts create --json', async () => {
  const r = await leads('accounts', 'create', '--name', 'acme', '--plan', 'premium', '--json');
  assert.is(r.code, 0, r.stderr);
  const a = JSON.parse(r.stdout);
  assert.is(a.name, 'acme');
  assert.is(a.plan, 'premium');
  assert.is((await api.store.getAccountByName('acme'))?.plan, 'premium');
});

const SELF_SERVE = SCOPES.filter((s) => s === 'commonwealth' || s === 'ent_api');

test('keys create --json for each self-serve scope prints {id, key, scope, account}; each key works over HTTP', async () => {
  const results = await Promise.all(
    SELF_SERVE.map((scope) =>
      leads('keys', 'create', '--account', 'acme', '--scope', scope, '--name', `cli ${scope}`, '--json'),
    ),
  );
  for (const [i, r] of results.entries()) {
    const scope = SELF_SERVE[i]!;
    assert.is(r.code, 0, r.stderr);
    const k = JSON.parse(r.stdout);
    assert.equal(Object.keys(k), ['id', 'key', 'scope', 'account']);
    assert.is(k.scope, scope);
    assert.is(k.account, 'acme');
    assert.match(k.key, KEY_PATTERN);
    assert.ok(k.key.startsWith(KEY_PREFIX[scope]));
    created[scope] = k;
    const res = await api.request('/v1/meta', { key: k.key });
    assert.is(res.status, 200, scope);
    assert.is(res.body._meta.scope, scope);
  }
});

test('keys list never shows a key or a hash', async () => {
  const [text, one] = await Promise.all([leads('keys', 'list'), leads('keys', 'list', '--account', 'acme', '--json')]);
  for (const r of [text, one]) {
    assert.is(r.code, 0, r.stderr);
    for (const k of [...Object.values(created).map((c) => c.key), ...Object.values(api.keys)])
      assert.not.ok(r.stdout.includes(k), 'raw key listed');
    assert.not.match(r.stdout, /[0-9a-f]{64}/, 'hash listed');
  }
  for (const id of (await api.store.listKeys()).map((k) => k.id))
    assert.match(text.stdout, id, 'every key of every account listed');
  const mine = JSON.parse(one.stdout) as { id: string; account: string; prefix: string; status: string }[];
  assert.equal(
    mine.map((k) => k.id).sort(),
    Object.values(created)
      .map((c) => c.id)
      .sort(),
  );
  for (const k of mine) assert.is(k.status, 'active');
  for (const c of Object.values(created)) assert.match(text.stdout, c.id);
});

test('keys revoke → the key gets 401 revoked_key over HTTP', async () => {
  const k = created['ent_api']!;
  assert.is((await api.request('/v1/meta', { key: k.key })).status, 200); // cached now
  const r = await leads('keys', 'revoke', k.id);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, 'revoked');
  // no clock moved: the key cache (KEY_CACHE_MS 300 ms) learned of the revocation from another process at once
  assertProblem(await api.request('/v1/meta', { key: k.key }), 401, 'revoked_key');
  const listed = JSON.parse((await leads('keys', 'list', '--account', 'acme', '--json')).stdout) as {
    id: string;
    status: string;
  }[];
  assert.is(listed.find((x) => x.id === k.id)?.status, 'revoked');
  assert.is(
    (await api.request('/v1/meta', { key: created['commonwealth']!.key })).status,
    200,
    'other keys unaffected',
  );
});

test('errors: usage → exit 2, failures → exit 1, with a message', async () => {
  const cases: [string[], number, RegExp][] = [
    [['accounts', 'create', '--name', 'x', '--plan', 'gold'], 2, /--plan must be one of basic, pro, premium/],
    [['accounts', 'create', '--name', 'acme', '--plan', 'basic'], 1, /already exists/],
    [['keys', 'create', '--account', 'nobody', '--scope', 'ent_api'], 1, /no account named 'nobody'/],
    [
      ['keys', 'create', '--account', 'acme', '--scope', 'admin'],
      2,
      /--scope must be one of commonwealth, ent_api, ent_feed, custom/,
    ],
    [['keys', 'revoke', 'key_nope'], 1, /no key with id 'key_nope'/],
    [['keys', 'rotate'], 2, /unknown command 'keys rotate'/],
  ];
  const results = await Promise.all(cases.map(([args]) => leads(...args)));
  for (const [i, r] of results.entries()) {
    const [args, code, msg] = cases[i]!;
    assert.is(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, msg, args.join(' '));
  }
});

test('help lists the API commands next to the pipeline ones', async () => {
  const r = await leads('help');
  assert.is(r.code, 0);
  for (const c of ['refresh', 'accounts create', 'keys create', 'keys list', 'keys revoke']) assert.match(r.stdout, c);
});

test('smoke: the real bin/leads.js runs both command tables and reads the environment', async () => {
  const help = await leadsBinary('help');
  assert.is(help.code, 0, help.stderr);
  for (const c of ['refresh', 'accounts create', 'keys revoke']) assert.match(help.stdout, c);
  const r = await leadsBinary('keys', 'list', '--account', 'acme', '--json');
  assert.is(r.code, 0, r.stderr);
  assert.equal(
    (JSON.parse(r.stdout) as { id: string }[]).map((k) => k.id).sort(),
    (await api.store.listKeys((await api.store.getAccountByName('acme'))!.id)).map((k) => k.id).sort(),
    'the keys of the state file DATA_DIR names',
  );
  const bad = await leadsBinary('keys', 'rotate');
  assert.is(bad.code, 2, 'the exit code of main() is the process exit code');
  assert.match(bad.stderr, /unknown command 'keys rotate'/);
});

test.run();
