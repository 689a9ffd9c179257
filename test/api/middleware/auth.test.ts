/** Bearer-key authentication: the 401 table over HTTP, each scope, and the lookup cache. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Koa from 'koa';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { authMiddleware } from '../../../api/middleware/auth.ts';
import { problemMiddleware } from '../../../api/http/errors.ts';
import { requestIdMiddleware } from '../../../api/middleware/request-id.ts';
import { generateKey } from '../../../api/access/keys.ts';
import { SCOPES } from '../../../api/access/scopes.ts';
import type { StoredKey } from '../../../api/state/store-interface.ts';
import { addKey, assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api.close();
});

test('401 table: missing, malformed, unknown, revoked', async () => {
  const account = (await api.store.getAccountByName('test'))!;
  const revoked = await addKey(api.store, account.id, 'ent_api');
  await api.store.revokeKey(revoked.id);
  const cases: [Record<string, string>, string][] = [
    [{}, 'missing_key'],
    [{ Authorization: '' }, 'missing_key'],
    [{ Authorization: api.keys.ent_api }, 'malformed_key'],
    [{ Authorization: `Basic ${api.keys.ent_api}` }, 'malformed_key'],
    [{ Authorization: 'Bearer lk_ea_short' }, 'malformed_key'],
    [{ Authorization: `Bearer ${generateKey('ent_api').raw}` }, 'unknown_key'],
    [{ Authorization: `Bearer ${revoked.raw}` }, 'revoked_key'],
  ];
  for (const [headers, code] of cases) {
    const res = await api.request('/v1/meta', { key: null, headers });
    assertProblem(res, 401, code);
    const challenge = res.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer realm="leads"/, code);
    if (code !== 'missing_key') assert.match(challenge, /error="invalid_token", error_description="[^"]+"$/, code);
  }
  // a key is never logged, only ids
  for (const line of api.logs) {
    for (const k of [...Object.values(api.keys), revoked.raw]) assert.not.ok(line.includes(k), 'raw key in the log');
  }
});

test('every scope is let in and the key is on ctx.state', async () => {
  for (const scope of SCOPES) {
    const res = await api.request('/v1/meta', { key: api.keys[scope] });
    assert.is(res.status, 200, scope);
    assert.is(res.body._meta.scope, scope);
  }
});

test('unknown paths under /v1 need a key too; public docs paths do not', async () => {
  assertProblem(await api.request('/v1/nothing-here', { key: null }), 401, 'missing_key');
  assert.is((await api.request('/v1/openapi.json', { key: null })).status, 200);
});

/** A minimal app with only the auth middleware, over a fake store and clock. */
async function authApp(keys: Map<string, StoredKey>, cacheMs: number, clock: { t: number }, changes = { stamp: 0 }) {
  let lookups = 0;
  const store = {
    keyChangeStamp: () => changes.stamp,
    async findKeyByHash(hash: string) {
      lookups++;
      const k = keys.get(hash);
      return k ? { ...k } : null;
    },
  };
  const app = new Koa();
  app.use(problemMiddleware(() => {}));
  app.use(requestIdMiddleware());
  app.use(authMiddleware(store, { publicPaths: [], cacheMs, now: () => clock.t }));
  app.use((ctx) => {
    ctx.body = { key: ctx.state['key'] };
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/x`;
  return { url, lookups: () => lookups, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('lookups are cached for cacheMs while nothing changes; an entry expires after cacheMs', async () => {
  const k = generateKey('custom');
  const stored: StoredKey = {
    id: k.id,
    account_id: 1,
    account_name: 'a',
    scope: 'custom',
    name: null,
    display_prefix: k.displayPrefix,
    status: 'active',
    created_at: 'now',
    revoked_at: null,
    licence_id: null,
    expires_at: null,
    key_hash: k.hash,
    account_plan: 'basic',
  };
  const clock = { t: 1000 };
  const app = await authApp(new Map([[k.hash, stored]]), 5000, clock);
  try {
    const get = () => fetch(app.url, { headers: { Authorization: `Bearer ${k.raw}` } });
    const first = await get();
    assert.is(first.status, 200);
    const body = (await first.json()) as { key: Record<string, unknown> };
    assert.is(body.key['id'], k.id);
    assert.not.ok('key_hash' in body.key, 'the hash is not put on ctx.state');
    await get();
    assert.is(app.lookups(), 1, 'second request served from the cache');
    stored.status = 'revoked'; // written behind the store's back: no change stamp moved
    clock.t += 4999;
    assert.is((await get()).status, 200, 'still cached within the TTL');
    clock.t += 2;
    assert.is((await get()).status, 401, 'the entry expired: read again after the TTL');
    assert.is(app.lookups(), 2);
    // unknown keys are not cached
    const other = generateKey('custom');
    for (let i = 0; i < 3; i++) await fetch(app.url, { headers: { Authorization: `Bearer ${other.raw}` } });
    assert.is(app.lookups(), 5);
  } finally {
    await app.close();
  }
});

test('a moved change stamp (a revocation anywhere) drops the cache: the very next request is refused', async () => {
  const k = generateKey('ent_api');
  const stored: StoredKey = {
    id: k.id,
    account_id: 1,
    account_name: 'a',
    scope: 'ent_api',
    name: null,
    display_prefix: k.displayPrefix,
    status: 'active',
    created_at: 'now',
    revoked_at: null,
    licence_id: null,
    expires_at: null,
    key_hash: k.hash,
    account_plan: 'premium',
  };
  const changes = { stamp: 7 };
  const app = await authApp(new Map([[k.hash, stored]]), 60_000, { t: 1000 }, changes);
  try {
    const get = () => fetch(app.url, { headers: { Authorization: `Bearer ${k.raw}` } });
    assert.is((await get()).status, 200);
    assert.is((await get()).status, 200);
    assert.is(app.lookups(), 1, 'cached while the stamp stays put');
    stored.status = 'revoked';
    changes.stamp++;
    const res = await get();
    assert.is(res.status, 401, 'refused at once, long before cacheMs');
    assert.is(((await res.json()) as { code: string }).code, 'revoked_key');
    assert.is(app.lookups(), 2);
    // a plan change is a change too: the downgrade applies on the next request
    stored.status = 'active';
    changes.stamp++;
    assert.is((await get()).status, 200);
    stored.account_plan = 'pro';
    changes.stamp++;
    assert.is((await get()).status, 403, 'insufficient_plan at once after a downgrade');
  } finally {
    await app.close();
  }
});

test.run();
