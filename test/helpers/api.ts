/**
 * In-process HTTP tests of the API: `startTestApi()` serves a tiny generated release (built
 * once per process and seed by the project's own generator and pipeline) from a fresh data
 * folder with its own SQLite state file and one key per scope, over real HTTP on port 0.
 *
 * @example
 *   const api = await startTestApi();
 *   const res = await api.request('/v1/leads?county=Cork', { key: api.keys.commonwealth });
 *   assert.is(res.status, 200);
 *   assertProblem(await api.request('/v1/leads', { key: null }), 401, 'missing_key');
 *   await api.close();
 */
import * as assert from 'uvu/assert';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { loadApiConfig, type ApiConfig } from '../../api/config.ts';
import { generateKey } from '../../api/access/keys.ts';
import { readCurrentLink, type LoadEngine } from '../../api/releases/release.ts';
import { LeadsEngine, loadLeadsEngine } from '../../api/engine/leads-engine.ts';
import {
  loadReleaseIndexes,
  packIndexes,
  unpackIndexes,
  type ReleaseIndexes,
} from '../../api/engine/release-indexes.ts';
import { ReleaseRefusedError, verifyReleaseFiles } from '../../api/releases/verify-release.ts';
import { buildOpenApi } from '../../api/openapi/document.ts';
import { validateResponse } from './openapi.ts';
import { SCOPES, type Scope } from '../../api/access/scopes.ts';
import { startServer } from '../../api/server.ts';
import type { RunningServer } from '../../api/startup/running-server.ts';
import type { StateStore } from '../../api/state/store-interface.ts';
import type { DeprecationTable } from '../../api/access/service-terms.ts';
import type { HostResolver } from '../../api/webhooks/destination.ts';
import type { ScryptCost } from '../../api/app-area/passwords.ts';
import { cachedPack, manifestKey } from './pack-cache.ts';
import { scaledRelease, type CachedRelease } from './scaled-release.ts';
import { tempDir } from './tmp.ts';
import { exchange } from './http-exchange.ts';

export interface TestResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON for JSON / problem+json bodies, else null. */
  body: any;
  text: string;
}

export interface TestApi {
  /** Origin, e.g. `http://127.0.0.1:41234`; request paths include `/v1`. */
  baseUrl: string;
  /** One active key per scope (account `test`, plan premium). */
  keys: Record<Scope, string>;
  /** The data folder served (`current` → `releases/<id>`). */
  dataDir: string;
  /** Id of the release new requests are answered from. */
  release: () => string;
  /**
   * Send a request. `key`: undefined → the ent_api key; null → no Authorization header; a string → that key.
   * It asks for `Accept-Encoding: identity` unless `headers` names one: fetch would ask for gzip,
   * and compressing every test answer cost the suite seconds of CPU; compression has its own tests
   * (test/api/middleware/compression.test.ts). Sent as fetch sends it (its default headers,
   * redirects followed, an encoded body decoded) over node:http (test/helpers/http-exchange.ts).
   */
  request(
    path: string,
    opts?: { key?: string | null; method?: string; headers?: Record<string, string>; body?: unknown },
  ): Promise<TestResponse>;
  close(): Promise<void>;
  // — extras beyond the shared contract —
  /** The config the server runs with. */
  config: ApiConfig;
  /** The server's state store (create or revoke keys directly). */
  store: StateStore;
  /** Every line the server logged (to check that no secret is logged). */
  logs: string[];
  /** Make the server look for a newly published release now (instead of waiting for the poll). */
  checkRelease(): Promise<boolean>;
  server: RunningServer;
}

export interface TestApiOptions {
  seed?: number;
  /** Config overrides (e.g. `{ keyCacheMs: 0 }`, `{ trustProxy: true }`). */
  config?: Partial<ApiConfig>;
  /** The server's clock (hour windows, budget days, key expiry), e.g. a settable one. */
  clock?: () => Date;
  /** A deprecation table in place of the project's (api/access/service-terms.ts), e.g. one fixture operation. */
  deprecations?: DeprecationTable;
  /** How webhook destinations are resolved (a fake resolver: no DNS query leaves the box). */
  resolveHost?: HostResolver;
  /**
   * Build the release's indexes in the child process even when this process built them for the
   * same files (`reuseEngine`): `true` for every release, `'new releases'` for those published
   * after the start (the one it starts on comes from `reuseEngine`).
   */
  freshEngine?: boolean | 'new releases';
  /**
   * Hash account-area passwords at the production cost (`SCRYPT`, N = 2^17: ~0.3 s of CPU a hash)
   * instead of `TEST_PASSWORD_COST`: the server is then started without `passwordCost`, as the
   * command line starts it.
   */
  productionPasswordCost?: boolean;
}

/**
 * The scrypt cost of the test servers' new password hashes (`ServerDeps.passwordCost`): N = 2^10,
 * ~1/128 of the production cost. What the tests check of passwords (set, verify, refuse, throttle,
 * recover) does not depend on the cost; `SCRYPT` itself is checked by
 * test/api/app-area/passwords.test.ts and by a server started with `productionPasswordCost`
 * (test/api/app-area/session.test.ts).
 */
export const TEST_PASSWORD_COST: ScryptCost = { logN: 10, r: 8, p: 1 };

/**
 * The tiny release of `seed` for the API tests: built by the project's generator and pipeline
 * on first use and cached under `.tmp/` by a fingerprint of their code (test/helpers/scaled-release.ts),
 * so later runs reuse it. Its id is `20261109T060000Z` (a fixed build clock). `truthFile` is the
 * generator's ground truth about names (pipeline/synth/truth.ts), kept outside the raw folder and
 * the release.
 */
export function tinyRelease(seed = 7): Promise<CachedRelease> {
  return scaledRelease('tiny', seed);
}

/** A fresh data folder whose `current` is the tiny release of `seed` (linked, not copied), without a state file. */
export async function tinyDataDir(seed = 7): Promise<string> {
  const rel = await tinyRelease(seed);
  const dataDir = tempDir('leads-api-');
  mkdirSync(join(dataDir, 'releases'));
  symlinkSync(rel.dir, join(dataDir, 'releases', rel.id));
  symlinkSync(`releases/${rel.id}`, join(dataDir, 'current'));
  return dataDir;
}

/** What identifies a release folder's files: its real path and every file's name, size and modification time. */
function filesKey(id: string, dir: string): string {
  const root = realpathSync(dir);
  const parts = [id, root];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        parts.push(`${p.slice(root.length)}:${s.size}:${s.mtimeMs}`);
      }
    }
  };
  walk(root);
  return parts.join('\n');
}

/** The content key (`manifestKey`) of each release folder whose files were found to match its manifest, by `filesKey`. */
const checked = new Map<string, string>();

/**
 * The content key of release `id` in `dir` when its files match its manifest (what the
 * index-building child checks first, api/engine/build-child.ts); when they do not, rejects with
 * the ReleaseRefusedError the child's check would send (`verifyReleaseFiles`, its reason on one
 * line as the child writes it); null when the check itself failed otherwise. A folder seen before
 * with the same files is not hashed again.
 */
async function contentKey(id: string, dir: string): Promise<string | null> {
  const files = filesKey(id, dir);
  let key = checked.get(files);
  if (key === undefined) {
    try {
      await verifyReleaseFiles(dir);
      key = manifestKey(id, dir);
    } catch (e) {
      if (e instanceof ReleaseRefusedError) throw new ReleaseRefusedError(e.reason.replace(/\n/g, ' '));
      return null;
    }
    checked.set(files, key);
  }
  return key;
}

const engines = new Map<string, Promise<LeadsEngine>>();
const ENGINES_KEPT = 8;

/**
 * `loadLeadsEngine` once per release content: the indexes are read-only and depend only on the
 * release's files, so a server started on the same files — the same folder again, or a copy of
 * it (the weekly releases, copied per test file) — gets the engine built the first time in this
 * test process, and a test process that has none yet reads the indexes another one built from
 * `.tmp/packs/` (test/helpers/pack-cache.ts) instead of building them in a child again (~0.6 s of
 * CPU per tiny release). Only files that match their manifest are looked up so; a release whose
 * files do not (a test that corrupts a file, one whose manifest lists a file that is missing) is
 * refused here by the check the child runs first, with the child's reason, without starting one
 * (~0.07 s of CPU each; the child's own refusal is tested in
 * test/api/engine/release-indexes.test.ts). A release first seen is built by the child
 * (`loadReleaseIndexes`, its errors as the server gets them) and its pack kept. The last
 * `ENGINES_KEPT` engines are kept.
 */
export const reuseEngine: LoadEngine = async (id, dir, opts) => {
  const key = await contentKey(id, dir);
  if (key === null) return loadLeadsEngine(id, dir, opts);
  let p = engines.get(key);
  if (!p) {
    p = (async () => {
      const made: { ix?: ReleaseIndexes } = {};
      const tree = await cachedPack('leads-engine', key, async () =>
        packIndexes((made.ix = await loadReleaseIndexes(dir, opts))),
      );
      if (!made.ix) opts?.log?.('leads engine read from .tmp/packs (same release files, built before)');
      return new LeadsEngine(id, made.ix ?? unpackIndexes(tree));
    })();
    p.catch(() => engines.delete(key));
    engines.set(key, p);
    if (engines.size > ENGINES_KEPT) engines.delete(engines.keys().next().value!);
  } else opts?.log?.('leads engine reused (same release files, this test process)');
  return p;
};

/** The test server's `loadEngine` for `freshEngine`: the child's build, or the engines of `reuseEngine` (for the starting release `startId` only when `fresh` is `'new releases'`). */
function engineLoader(fresh: boolean | 'new releases', startId: string | undefined): LoadEngine {
  if (fresh === 'new releases') return (id, dir, o) => (id === startId ? reuseEngine : loadLeadsEngine)(id, dir, o);
  return fresh ? loadLeadsEngine : reuseEngine;
}

/**
 * Point the served data folder's `current` at `releases/<id>` (the pipeline's atomic switch: a new
 * link renamed over the old), make the server look now, and check that it serves `id`.
 */
export async function serveRelease(api: TestApi, id: string): Promise<void> {
  const tmp = join(api.dataDir, `.current-${id}-${process.pid}-${Date.now()}`);
  symlinkSync(`releases/${id}`, tmp);
  renameSync(tmp, join(api.dataDir, 'current'));
  await api.checkRelease();
  assert.is(api.release(), id);
}

/** Insert a new key of `scope` for account `accountId` into `store`: its id and the raw key (what a client sends). */
export async function addKey(
  store: Pick<StateStore, 'insertKey'>,
  accountId: number,
  scope: Scope,
  name: string | null = null,
): Promise<{ id: string; raw: string }> {
  const k = generateKey(scope);
  await store.insertKey({
    id: k.id,
    account_id: accountId,
    scope,
    name,
    display_prefix: k.displayPrefix,
    hash: k.hash,
  });
  return { id: k.id, raw: k.raw };
}

/** Start the API on a tiny release with a fresh state file and one key per scope. */
export async function startTestApi(opts: TestApiOptions = {}): Promise<TestApi> {
  const dataDir = await tinyDataDir(opts.seed ?? 7);
  const config = loadApiConfig(
    {},
    {
      dataDir,
      port: 0,
      host: '127.0.0.1',
      databaseUrl: `file:${join(dataDir, 'state.sqlite')}`,
      publicBaseUrl: 'http://localhost/v1',
      duckdbConnections: 2,
      duckdbThreads: 1,
      releasePollMs: 100,
      webhookIntervalMs: 0, // no webhook scheduler unless a test asks for one
      ...opts.config,
    },
  );
  const logs: string[] = [];
  const server = await startServer(config, {
    log: (l) => void logs.push(l),
    shutdownGraceMs: 2000,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.deprecations ? { deprecations: opts.deprecations } : {}),
    ...(opts.resolveHost ? { resolveHost: opts.resolveHost } : {}),
    loadEngine: engineLoader(opts.freshEngine ?? false, readCurrentLink(dataDir)?.id),
    ...(opts.productionPasswordCost ? {} : { passwordCost: TEST_PASSWORD_COST }),
  });
  const account = await server.store.createAccount('test', 'premium');
  const keys = {} as Record<Scope, string>;
  for (const scope of SCOPES) keys[scope] = (await addKey(server.store, account.id, scope, `test ${scope}`)).raw;
  const baseUrl = server.url;
  // the client's connections, kept alive between requests as fetch keeps them
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  const docKey = `${config.publicBaseUrl} ${JSON.stringify(opts.deprecations ?? null)}`;
  let doc = docs.get(docKey);
  if (doc)
    docs.delete(docKey); // (most recent last)
  else doc = buildOpenApi(config, opts.deprecations ? { deprecations: opts.deprecations } : {});
  docs.set(docKey, doc);
  if (docs.size > DOCS_KEPT) docs.delete(docs.keys().next().value!);
  return {
    baseUrl,
    keys,
    dataDir,
    config,
    store: server.store,
    logs,
    server,
    release: () => server.releases.current().id,
    checkRelease: () => server.releases.check(),
    async request(path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'accept-encoding'))
        headers['Accept-Encoding'] = 'identity';
      const key = o.key === undefined ? keys.ent_api : o.key;
      if (key !== null) headers['Authorization'] = `Bearer ${key}`;
      // body: a string is sent as is, anything else as JSON
      if (o.body !== undefined && typeof o.body !== 'string') headers['Content-Type'] ??= 'application/json';
      const payload = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
      const res = await exchange(agents, baseUrl + path, {
        method: o.method ?? 'GET',
        headers,
        ...(payload !== undefined ? { body: payload } : {}),
      });
      const text = res.text;
      const type = res.headers.get('content-type') ?? '';
      // JSON media types (application/json, problem+json, geo+json) — not JSON Lines (x-ndjson).
      const body = text !== '' && /^application\/([a-z.+-]+\+)?json\s*(;|$)/.test(type) ? JSON.parse(text) : null;
      // Every response of a documented operation must be what the OpenAPI document promises.
      const op = documentedOperation(doc, o.method ?? 'GET', path);
      if (op) {
        const errors = validateResponse(doc, op.method, op.template, res.status, body, type.split(';')[0]!.trim());
        if (errors.length)
          throw new Error(
            `${op.method.toUpperCase()} ${path} → ${res.status} breaks the OpenAPI document:\n  ${errors.join('\n  ')}`,
          );
      }
      return { status: res.status, headers: res.headers, body, text };
    },
    async close() {
      agents.http.destroy();
      agents.https.destroy();
      await server.close();
    },
  };
}

/**
 * The OpenAPI documents responses are validated against, by public URL and deprecation table, the
 * most recently used last; each holds its compiled validators (test/helpers/openapi.ts, ~5 MB).
 * The last `DOCS_KEPT` are kept: one-off documents (a test's deprecation fixture, another URL) are
 * not carried through the worker's later files.
 */
const docs = new Map<string, Record<string, any>>();
const DOCS_KEPT = 2;

/**
 * The OpenAPI operation (`/v1`-relative path template and method) a request path falls under,
 * or null for paths and methods the document does not describe (unknown paths, 405 probes).
 */
export function documentedOperation(
  doc: Record<string, any>,
  method: string,
  path: string,
): { template: string; method: string } | null {
  const bare = path.split('?')[0]!;
  if (bare !== '/v1' && !bare.startsWith('/v1/')) return null;
  const rel = bare === '/v1' ? '/' : bare.slice(3); // `GET /v1` is the index of links, the document's `/`
  for (const [template, re] of templatesOf(doc)) {
    if (re.test(rel) && doc.paths[template][method.toLowerCase()]) return { template, method: method.toLowerCase() };
  }
  return null;
}

/** Each path template of `doc` with the expression its paths match, made once per document (every request asks). */
const templates = new WeakMap<Record<string, any>, [string, RegExp][]>();
function templatesOf(doc: Record<string, any>): [string, RegExp][] {
  let t = templates.get(doc);
  if (!t) {
    t = Object.keys(doc.paths ?? {}).map((template) => [
      template,
      new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
    ]);
    templates.set(doc, t);
  }
  return t;
}

/**
 * Publish a copy of the API's current release as a new release `id` and switch `current` to it
 * atomically (what the pipeline's publish step does), for release-swap tests.
 */
export function publishCopyOfRelease(dataDir: string, id: string): void {
  const cur = readCurrentLink(dataDir);
  if (!cur) throw new Error(`no current release under ${dataDir}`);
  const dir = join(dataDir, 'releases', id);
  cpSync(cur.dir, dir, { recursive: true, dereference: true });
  const manifestFile = join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { release_id: string };
  manifest.release_id = id;
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
  const tmp = join(dataDir, `.current-${id}`);
  symlinkSync(`releases/${id}`, tmp);
  renameSync(tmp, join(dataDir, 'current'));
}

/**
 * Assert an RFC 9457 problem response: the status, `application/problem+json`, `code`, `type`
 * URL, `title`, and a `request_id` equal to the `X-Request-Id` header.
 */
export function assertProblem(
  res: { status: number; headers: Headers; body: any },
  status: number,
  code: string,
): void {
  const where = `problem ${status} ${code}; got ${res.status} ${JSON.stringify(res.body)}`;
  assert.is(res.status, status, where);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/, `content type of ${where}`);
  assert.ok(res.body && typeof res.body === 'object', `problem body of ${where}`);
  assert.is(res.body.status, status, `body.status of ${where}`);
  assert.is(res.body.code, code, `body.code of ${where}`);
  assert.match(
    res.body.type,
    new RegExp(`^(https?://[^/]+(/[^/]+)*)?/v1/problems/${code}$`),
    `body.type of ${where}: the code's page (/v1/problems/{code})`,
  );
  assert.type(res.body.title, 'string');
  assert.type(res.body.detail, 'string');
  const rid = res.headers.get('x-request-id');
  assert.ok(rid, `X-Request-Id header on ${where}`);
  assert.is(res.body.request_id, rid, `body.request_id equals X-Request-Id on ${where}`);
}
