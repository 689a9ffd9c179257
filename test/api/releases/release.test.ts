/**
 * Release switching against corrupt releases (issue 14.2), over real HTTP on a tiny release built
 * by the project's pipeline: a published release with any kind of file damaged (each Parquet
 * table — the search index included —, each kind of GeoJSON file, the rejects, a missing file, a
 * file the manifest does not list) is refused; the current release keeps serving every route
 * with the same answers; `GET /v1/meta` says which release was refused and why; a refused release
 * is tried again with backoff (the server's clock is injected: no waiting on wall time), and is
 * switched to once it is whole.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import {
  appendFileSync,
  cpSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { ReleaseRefusedError } from '../../../api/releases/verify-release.ts';
import { RETRY_FIRST_MS } from '../../../api/releases/release.ts';
import { loadApiConfig } from '../../../api/config.ts';
import { startServer } from '../../../api/server.ts';
import { assertProblem, publishCopyOfRelease, startTestApi, tinyRelease, type TestApi } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { recordInManifest } from '../../helpers/manifest.ts';

let nowMs = Date.parse('2026-11-20T10:00:00Z');
const clock = (): Date => new Date(nowMs);

/** Point `current` back at release `id` (the pipeline's atomic symlink switch). */
function switchTo(api: TestApi, id: string): void {
  const tmp = join(api.dataDir, `.current-back-${id}`);
  symlinkSync(`releases/${id}`, tmp);
  renameSync(tmp, join(api.dataDir, 'current'));
}

/** Routes answered from every kind of file: the row store (leads), DuckDB tables, GeoJSON layers, the search index. */
const PROBES: [path: string, scope: 'ent_api' | 'ent_feed'][] = [
  ['/v1/leads?page_size=3', 'ent_api'],
  ['/v1/leads?q=house&page_size=3', 'ent_api'],
  ['/v1/infrastructure?page_size=3', 'ent_api'],
  ['/v1/feeds/leads.geojson?page_size=5', 'ent_feed'],
  ['/v1/feeds/leads.geojson?authority=Cork%20County&page_size=5', 'ent_feed'],
  ['/v1/feeds/infrastructure.geojson', 'ent_feed'],
  ['/v1/ogc/collections/leads/items?limit=5', 'ent_feed'],
];

/** What a probe answers, without the per-request parts (time stamps, links with tokens). */
async function answers(api: TestApi): Promise<string[]> {
  const out: string[] = [];
  for (const [path, scope] of PROBES) {
    const res = await api.request(path, { key: api.keys[scope] });
    assert.is(res.status, 200, `${path}: ${res.text.slice(0, 300)}`);
    const b = res.body as Record<string, any>;
    out.push(
      JSON.stringify([
        path,
        b._meta?.release ?? null,
        b.numberMatched ?? b.total ?? null,
        (b.results ?? b.features).map((x: { id: unknown }) => x.id),
      ]),
    );
  }
  return out;
}

/** Damage one file of a release folder; returns the file name the reason must carry. */
type Damage = [label: string, file: string, damage: (path: string) => void];
const flipByte = (path: string): void => {
  const b = readFileSync(path);
  b[b.length >> 1] ^= 0xff;
  writeFileSync(path, b);
};
/** Break one line's JSON (a feature's closing brace becomes a comma, same size) and record the file in the manifest as the pipeline would: only the content check can tell (issue 31). */
const notJsonButListed =
  (rel: string) =>
  (path: string): void => {
    const text = readFileSync(path, 'utf8');
    const end = text.indexOf('\n', text.length >> 1);
    writeFileSync(path, `${text.slice(0, end - 1)},${text.slice(end)}`);
    recordInManifest(path.slice(0, -rel.length - 1), rel);
  };
const PARQUET = [
  'leads',
  'infrastructure',
  'companies',
  'filings',
  'suppliers',
  'lead_neighbours',
  'changes',
  'registry',
  'sales',
  'search_terms',
  'search_postings',
  'price_index',
  'yields',
  'emerging_zones',
  'material_costs',
];
const DAMAGES: Damage[] = [
  ...PARQUET.map((t): Damage => [`${t}.parquet, one byte changed`, `${t}.parquet`, flipByte]),
  [
    'an authority layer truncated mid-line',
    'geojson/leads/dublin-city.ndjson',
    (p) => {
      const text = readFileSync(p, 'utf8');
      truncateSync(p, Buffer.byteLength(text.slice(0, text.indexOf('\n', text.length >> 1) - 20)));
    },
  ],
  [
    'an authority layer truncated at a line break',
    'geojson/leads/dublin-city.ndjson',
    (p) => {
      const text = readFileSync(p, 'utf8');
      truncateSync(p, Buffer.byteLength(text.slice(0, text.indexOf('\n', text.length >> 1) + 1)));
    },
  ],
  ['an authority layer, one byte changed', 'geojson/leads/cork-county.ndjson', flipByte],
  ['the infrastructure layer, one byte changed', 'geojson/infrastructure.ndjson', flipByte],
  ['the layer index, one byte changed', 'geojson/index.json', flipByte],
  [
    'an authority layer whose line is not JSON, matching its manifest',
    'geojson/leads/cork-county.ndjson',
    notJsonButListed('geojson/leads/cork-county.ndjson'),
  ],
  [
    'the infrastructure layer whose line is not JSON, matching its manifest',
    'geojson/infrastructure.ndjson',
    notJsonButListed('geojson/infrastructure.ndjson'),
  ],
  ['rejects.jsonl, one line added', 'rejects.jsonl', (p) => appendFileSync(p, '{"source":"planning"}\n')],
  ['a listed file missing', 'lead_neighbours.parquet', (p) => rmSync(p)],
  ['a file the manifest does not list', 'geojson/roads.ndjson', (p) => writeFileSync(p, '{"type":"Feature"}\n')],
];

test('a release with any kind of file corrupted is refused; the current release keeps serving the same answers; /v1/meta says why', async () => {
  const api = await startTestApi({ clock, config: { releasePollMs: 3_600_000 } });
  try {
    const before = api.release();
    const baseline = await answers(api);
    const meta0 = await api.request('/v1/meta');
    assert.equal(meta0.body.release_status, { serving: before, refused: null });
    let k = 0;
    for (const [label, file, damage] of DAMAGES) {
      const id = `20261116T0600${String(k++).padStart(2, '0')}Z`;
      publishCopyOfRelease(api.dataDir, id); // a whole copy of the served release, then `current` → it
      damage(join(api.dataDir, 'releases', id, file));
      await rejects(
        api.checkRelease(),
        (e: unknown) => e instanceof ReleaseRefusedError && e.reason.includes(file),
        label,
      );
      assert.is(api.release(), before, label);
      assert.equal(await answers(api), baseline, `${label}: the same answers from the current release`);
      const meta = await api.request('/v1/meta');
      assert.is(meta.body.release.id, before, label);
      const s = meta.body.release_status;
      assert.is(s.serving, before, label);
      assert.is(s.refused.release, id, label);
      assert.match(s.refused.reason, file, label);
      assert.not.match(s.refused.reason, api.dataDir, `${label}: no server paths in the reason`);
      assert.is(s.refused.attempts, 1, label);
      assert.ok(
        api.logs.some(
          (l) => l.startsWith(`release ${id} refused (attempt 1; still serving ${before}`) && l.includes(file),
        ),
        `${label}: logged`,
      );
      // `current` back on the served release: nothing is refused any more
      switchTo(api, before);
      assert.is(await api.checkRelease(), false);
      assert.equal((await api.request('/v1/meta')).body.release_status, { serving: before, refused: null }, label);
      rmSync(join(api.dataDir, 'releases', id), { recursive: true });
    }
  } finally {
    await api.close();
  }
});

test('a refused release is retried with backoff, not on every poll, and served once whole; /v1/meta ETag follows the status', async () => {
  const api = await startTestApi({ clock, config: { releasePollMs: 3_600_000 } });
  try {
    const before = api.release();
    const etag0 = (await api.request('/v1/meta')).headers.get('etag')!;
    const id = '20261123T060000Z';
    publishCopyOfRelease(api.dataDir, id);
    const layer = join(api.dataDir, 'releases', id, 'geojson/leads/dublin-city.ndjson');
    const good = readFileSync(layer);
    truncateSync(layer, good.length >> 1);
    const t0 = nowMs;
    await rejects(api.checkRelease(), ReleaseRefusedError);
    const status = async () => (await api.request('/v1/meta')).body.release_status;
    assert.equal((await status()).refused, {
      release: id,
      reason: `files do not match manifest.json: geojson/leads/dublin-city.ndjson has ${good.length >> 1} bytes, the manifest says ${good.length}`,
      failed_at: new Date(t0).toISOString(),
      attempts: 1,
      next_attempt_at: new Date(t0 + RETRY_FIRST_MS).toISOString(),
    });
    // the old ETag no longer matches: the refusal is news
    const stale = await api.request('/v1/meta', { headers: { 'If-None-Match': etag0 } });
    assert.is(stale.status, 200);
    const refusedLogs = (): number => api.logs.filter((l) => l.startsWith(`release ${id} refused`)).length;
    // polls before the backoff has passed do not rebuild
    for (let i = 0; i < 5; i++) assert.is(await api.checkRelease(), false);
    // then it is tried again, each wait twice the last
    let r = (await status()).refused;
    for (const attempt of [2, 3, 4]) {
      const wait = Date.parse(r.next_attempt_at) - Date.parse(r.failed_at);
      nowMs = Date.parse(r.next_attempt_at) - 1;
      assert.is(await api.checkRelease(), false, `1 ms before attempt ${attempt}`);
      assert.is(refusedLogs(), attempt - 1);
      nowMs += 1;
      await rejects(api.checkRelease(), ReleaseRefusedError);
      r = (await status()).refused;
      assert.is(r.attempts, attempt);
      assert.is(Date.parse(r.failed_at), nowMs);
      assert.is(Date.parse(r.next_attempt_at) - nowMs, wait * 2, `attempt ${attempt}`);
    }
    assert.is(refusedLogs(), 4);
    assert.is(api.release(), before);
    // repaired: switched to at its next attempt
    writeFileSync(layer, good);
    nowMs = Date.parse(r.next_attempt_at);
    assert.is(await api.checkRelease(), true);
    assert.is(api.release(), id);
    assert.equal(await status(), { serving: id, refused: null });
    const feed = await api.request('/v1/feeds/leads.geojson?page_size=5', { key: api.keys.ent_feed });
    assert.is(feed.status, 200);
    assert.is(feed.body.features.length, 5);
  } finally {
    await api.close();
  }
});

test('a server started on a refused release runs, answers 503 no_release and logs why', async () => {
  const rel = await tinyRelease();
  const dataDir = tempDir('leads-refused-start-');
  const dir = join(dataDir, 'releases', rel.id);
  cpSync(rel.dir, dir, { recursive: true, dereference: true });
  symlinkSync(`releases/${rel.id}`, join(dataDir, 'current'));
  rmSync(join(dir, 'search_terms.parquet'));
  const logs: string[] = [];
  const config = loadApiConfig(
    {},
    { dataDir, port: 0, host: '127.0.0.1', duckdbConnections: 1, duckdbThreads: 1, releasePollMs: 3_600_000 },
  );
  const s = await startServer(config, { log: (l) => void logs.push(l), clock });
  try {
    assert.equal(
      s.releases.status().refused?.reason,
      'files do not match manifest.json: search_terms.parquet is missing',
    );
    const res = await fetch(`${s.url}/v1/meta`);
    assertProblem({ status: res.status, headers: res.headers, body: await res.json() }, 503, 'no_release');
    assert.ok(
      logs.some((l) => l.startsWith(`release ${rel.id} refused (attempt 1; still serving no release;`)),
      logs.join('\n'),
    );
  } finally {
    await s.close();
  }
});

test.run();
