/**
 * A release's indexes built in a child process (`loadReleaseIndexes`) and moved as a pack answer
 * exactly as the same indexes built in this process: every row's bytes, list pages (filters,
 * sorts, q, cursors) and detail sections. A release whose files do not match its manifest is
 * refused before any build; one the child cannot build is an error naming the cause, not a
 * half-loaded index.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { openApiDb, type ApiDb } from '../../../api/duckdb/db.ts';
import { readPack, writePack } from '../../../api/engine/pack.ts';
import {
  buildReleaseIndexes,
  loadReleaseIndexes,
  packIndexes,
  unpackIndexes,
  type ReleaseIndexes,
} from '../../../api/engine/release-indexes.ts';
import { LEADS_SORTS, type LeadsPageRequest } from '../../../api/query/leads-query.ts';
import { ByteWriter } from '../../../api/render/bytes.ts';
import { columnMask, maskingFor } from '../../../api/access/masking.ts';
import { ReleaseRefusedError } from '../../../api/releases/verify-release.ts';
import { tinyRelease } from '../../helpers/api.ts';
import { recordInManifest } from '../../helpers/manifest.ts';
import { tempDir } from '../../helpers/tmp.ts';

let db: ApiDb;
let dir: string;
let local: ReleaseIndexes;

test.before(async () => {
  dir = (await tinyRelease()).dir;
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  local = await buildReleaseIndexes(db, dir);
});
test.after(() => db.close());

/** Everything the indexes answer, as text: rows, pages and detail sections. */
function answers(ix: ReleaseIndexes): string[] {
  const out: string[] = [`avgdl ${ix.avgdl}`];
  const w = new ByteWriter(1024);
  const { nulled } = columnMask('lead', ix.rows.columns, maskingFor('commonwealth'));
  for (let slot = 0; slot < ix.rows.size; slot++) {
    w.len = 0;
    ix.rows.writeJson(w, slot, slot % 2 ? nulled : null);
    out.push(w.toString());
  }
  const requests: LeadsPageRequest[] = [];
  for (const sort of LEADS_SORTS.filter((s) => s !== 'relevance')) {
    requests.push({ filters: {}, sort, limit: 30, offset: 10, after: null });
    requests.push({
      filters: { county: ['Cork', 'Dublin'], min_value: 100_000 },
      sort,
      limit: 20,
      offset: 0,
      after: null,
    });
    requests.push({ filters: { q: 'extension rear' }, sort, limit: 20, offset: 5, after: null });
  }
  for (const q of ['house', 'extension rear', 'dwelling solar panels roof', 'zzz'])
    requests.push({ filters: { q }, sort: 'relevance', limit: 25, offset: 3, after: null });
  for (const r of requests) out.push(JSON.stringify(ix.index.page(r)));
  const lead = (slot: number) =>
    ix.rows.get(ix.rows.value(slot, 'id') as number) as {
      id: number;
      county: string;
      eircode_routing_key: string | null;
      received_date: string;
      verticals: string[];
    };
  for (let slot = 0; slot < ix.rows.size; slot += 5) {
    const l = lead(slot);
    out.push(
      JSON.stringify([
        ix.detail.salesSummary(l),
        ix.detail.recentSales(l),
        ix.detail.nearby(l.id),
        ix.detail.suppliers(l.county, l.verticals ?? []),
      ]),
    );
  }
  return out;
}

test('pack and unpack in this process: the same answers', async () => {
  const pipe = new PassThrough();
  const [, tree] = await Promise.all([writePack(pipe, packIndexes(local)), readPack(pipe)]);
  const back = unpackIndexes(tree);
  const want = answers(local);
  assert.ok(want.length > 1000);
  assert.type(local.avgdl, 'number', 'the tiny release has a search index');
  assert.equal(answers(back), want);
});

test('built in a child process: the same answers, progress logged', async () => {
  const lines: string[] = [];
  const child = await loadReleaseIndexes(dir, { log: (l) => lines.push(l) });
  assert.equal(answers(child), answers(local));
  assert.ok(
    lines.some((l) => /leads \(row store [\d.]+ MB\) built in \d+ ms/.test(l)),
    lines.join('\n'),
  );
});

test('a release whose files do not match its manifest is refused before anything is built', async () => {
  const broken = join(tempDir('refused-release'), 'r');
  cpSync(dir, broken, { recursive: true });
  writeFileSync(join(broken, 'leads.parquet'), 'not a parquet file');
  await rejects(
    loadReleaseIndexes(broken),
    (e: unknown) =>
      e instanceof ReleaseRefusedError &&
      /^files do not match manifest\.json: leads\.parquet has 18 bytes/.test(e.reason),
  );
  await rejects(
    loadReleaseIndexes(join(broken, 'no-such-dir')),
    (e: unknown) => e instanceof ReleaseRefusedError && /manifest\.json cannot be read/.test(e.reason),
  );
});

test('a release the child cannot read (its manifest agreeing) is an error naming the cause', async () => {
  const broken = join(tempDir('broken-release'), 'r');
  cpSync(dir, broken, { recursive: true });
  writeFileSync(join(broken, 'leads.parquet'), 'not a parquet file');
  recordInManifest(broken, 'leads.parquet');
  await rejects(loadReleaseIndexes(broken), /building the indexes of .* failed \(exit 1\)[\s\S]*leads\.parquet/);
  rmSync(join(broken, 'search_postings.parquet'));
  const manifest = JSON.parse(readFileSync(join(broken, 'manifest.json'), 'utf8')) as {
    files: Record<string, unknown>;
  };
  delete manifest.files['search_postings.parquet'];
  writeFileSync(join(broken, 'manifest.json'), JSON.stringify(manifest));
  await rejects(loadReleaseIndexes(broken), /failed/);
});

test.run();
