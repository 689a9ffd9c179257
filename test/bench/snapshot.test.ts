/**
 * bench/snapshot.ts on the tiny release: the request list covers every operation of
 * `/v1/openapi.json`; two runs on one release agree byte for byte (so the snapshot holds nothing
 * that varies between runs), and a changed release is reported. Its servers reuse the test
 * process's engine for the same release files (test/helpers/api.ts `reuseEngine`).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { compareSnapshots, currentRelease, REQUESTS, takeSnapshot, type Snapshot } from '../../bench/snapshot.ts';
import { buildOpenApi } from '../../api/openapi/document.ts';
import { documentedOperation, publishCopyOfRelease, reuseEngine, tinyRelease } from '../helpers/api.ts';
import { tempDir } from '../helpers/tmp.ts';

let dataDir: string;
let first: Snapshot;

test.before(async () => {
  const rel = await tinyRelease(7);
  dataDir = tempDir('leads-snapshot-test-');
  mkdirSync(join(dataDir, 'releases'));
  symlinkSync(rel.dir, join(dataDir, 'releases', rel.id));
  symlinkSync(`releases/${rel.id}`, join(dataDir, 'current'));
});

test('a data folder without a release is refused with what to do', () => {
  assert.throws(() => currentRelease(tempDir('leads-snapshot-empty-')), /no release in .*make refresh/);
});

test('the list: 200 requests, unique names, every documented operation, several scopes and every error class', async () => {
  first = await takeSnapshot(dataDir, REQUESTS, { loadEngine: reuseEngine });
  assert.is(REQUESTS.length, 200);
  assert.is(new Set(REQUESTS.map((r) => r.name)).size, 200, 'names are unique');
  const doc = buildOpenApi({ publicBaseUrl: 'http://localhost/v1' }) as Record<string, any>; // what /v1/openapi.json serves
  const covered = new Set(
    REQUESTS.map((r) => documentedOperation(doc, r.method ?? 'GET', r.path.replace(/\{\w+\}/g, 'x')))
      .filter((o) => o)
      .map((o) => `${o!.method} ${o!.template}`),
  );
  const missing: string[] = [];
  for (const [template, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
    // operations at the origin (/healthz, /readyz, /metrics: their own `servers`) are operators' probes, not /v1 answers to snapshot
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method] as { servers?: unknown } | undefined;
      if (op && !op.servers && !covered.has(`${method} ${template}`)) missing.push(`${method} ${template}`);
    }
  }
  assert.equal(missing, [], 'operations without a request');
  assert.equal(
    new Set(REQUESTS.map((r) => r.as)),
    new Set(['commonwealth', 'ent_api', 'ent_feed', 'custom', 'none', 'unknown_key']),
  );
  const statuses = new Set(first.entries.map((e) => e.status));
  for (const s of [200, 304, 400, 401, 403, 404]) assert.ok(statuses.has(s), `a ${s} answer`);
  // every id, cursor and link the list follows was in the earlier answer it is taken from
  assert.equal(
    first.entries.filter((e) => e.unfilled).map((e) => `${e.name}: ${e.unfilled}`),
    [],
  );
  // names say which answers are errors: the others succeed
  for (const e of first.entries)
    assert.is(e.status >= 400, /\b(400|401|403|404)\b/.test(e.name), `${e.name}: ${e.status}`);
});

test('record then compare on the same release: no difference', async () => {
  const again = await takeSnapshot(dataDir, REQUESTS, { loadEngine: reuseEngine });
  assert.equal(compareSnapshots(first, again), []);
});

test('a changed release: the differences are reported', async () => {
  publishCopyOfRelease(dataDir, '20261110T060000Z');
  const changed = await takeSnapshot(dataDir, REQUESTS.slice(0, 20), { loadEngine: reuseEngine });
  const diffs = compareSnapshots(first, changed);
  assert.ok(diffs.includes(`release: recorded ${first.release}, now 20261110T060000Z`), diffs.join('\n'));
  assert.ok(
    diffs.some((d) => /#0 meta .*header etag/.test(d)),
    'the ETag of /v1/meta',
  );
  assert.ok(
    diffs.some((d) => /#0 meta .*body .*first at \/.*20261110T060000Z/.test(d)),
    'the body of /v1/meta, with where it differs',
  );
  assert.ok(
    diffs.some((d) => /#20 .*only in the recorded snapshot/.test(d)),
    'requests missing from the new run',
  );
});

test.run();
