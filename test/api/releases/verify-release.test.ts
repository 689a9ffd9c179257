/**
 * A release's files against its manifest (api/releases/verify-release.ts), on real files of a tiny
 * release built by the project's pipeline: the release as published passes; every file the
 * manifest lists, changed in one byte, is named; a truncated, missing or unlisted file is named;
 * a manifest without checksums or pointing outside the release is refused.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { appendFileSync, cpSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReleaseRefusedError, verifyReleaseFiles } from '../../../api/releases/verify-release.ts';
import { tinyRelease } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { recordInManifest } from '../../helpers/manifest.ts';

let n = 0;
/** A fresh copy of the tiny release. */
async function copy(): Promise<string> {
  const rel = await tinyRelease();
  const dir = join(tempDir('verify-release-'), `r${n++}`);
  cpSync(rel.dir, dir, { recursive: true, dereference: true });
  return dir;
}

const listed = (dir: string): string[] =>
  Object.keys((JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { files: object }).files);

/** Rejects with a ReleaseRefusedError whose reason matches `re`. */
const refused = (p: Promise<unknown>, re: RegExp): Promise<void> =>
  rejects(p, (e: unknown) => e instanceof ReleaseRefusedError && re.test(e.reason) && e.message === e.reason);

test('the release as published matches its manifest', async () => {
  const dir = await copy();
  const r = await verifyReleaseFiles(dir);
  assert.is(r.files, listed(dir).length);
  assert.ok(r.files > 20 && r.bytes > 100_000, JSON.stringify(r));
});

test('every file the manifest lists, changed in one byte (same size), is named', async () => {
  const dir = await copy();
  const files = listed(dir);
  // every kind: each Parquet table (search index included), every GeoJSON layer and its index, the rejects
  assert.ok(
    files.includes('leads.parquet') &&
      files.includes('search_postings.parquet') &&
      files.includes('geojson/index.json') &&
      files.includes('rejects.jsonl'),
  );
  for (const rel of files) {
    const path = join(dir, rel);
    const good = readFileSync(path);
    const bad = Buffer.from(good);
    bad[bad.length >> 1] ^= 0x01;
    writeFileSync(path, bad);
    await refused(
      verifyReleaseFiles(dir),
      new RegExp(
        `^files do not match manifest\\.json: ${rel.replace(/\./g, '\\.')} does not match its SHA-256 in the manifest$`,
      ),
    );
    writeFileSync(path, good);
  }
  await verifyReleaseFiles(dir);
});

test('truncated (mid-line and at a line break), missing and unlisted files are named', async () => {
  const dir = await copy();
  const layer = join(dir, 'geojson/leads/dublin-city.ndjson');
  const text = readFileSync(layer, 'utf8');
  const size = Buffer.byteLength(text);
  const atBreak = Buffer.byteLength(text.slice(0, text.indexOf('\n', text.length >> 1) + 1));
  truncateSync(layer, atBreak);
  await refused(
    verifyReleaseFiles(dir),
    new RegExp(`geojson/leads/dublin-city\\.ndjson has ${atBreak} bytes, the manifest says ${size}`),
  );
  truncateSync(layer, atBreak - 10); // mid-line
  await refused(verifyReleaseFiles(dir), new RegExp(`geojson/leads/dublin-city\\.ndjson has ${atBreak - 10} bytes`));
  writeFileSync(layer, text);
  rmSync(join(dir, 'sales.parquet'));
  appendFileSync(join(dir, 'geojson', 'extra.ndjson'), '{}\n');
  await refused(
    verifyReleaseFiles(dir),
    /^files do not match manifest\.json: sales\.parquet is missing; geojson\/extra\.ndjson is not listed in the manifest$/,
  );
});

test('GeoJSON that matches its manifest but is not JSON is refused like a checksum failure (issue 31)', async () => {
  const dir = await copy();
  const layer = join(dir, 'geojson/leads/dublin-city.ndjson');
  const lines = readFileSync(layer, 'utf8').split('\n');
  lines[2] = lines[2]!.replace(/\}$/, ','); // same size, still starts like a pre-rendered Point feature
  writeFileSync(layer, lines.join('\n'));
  recordInManifest(dir, 'geojson/leads/dublin-city.ndjson');
  await refused(
    verifyReleaseFiles(dir),
    /^files do not match manifest\.json: geojson\/leads\/dublin-city\.ndjson is not valid JSON \(line 3\) although it matches the manifest$/,
  );
  writeFileSync(layer, lines.slice(0, 2).join('\n') + '\n[1,2]\n');
  recordInManifest(dir, 'geojson/leads/dublin-city.ndjson');
  await refused(verifyReleaseFiles(dir), /dublin-city\.ndjson is not valid JSON \(line 3\)/);
  writeFileSync(layer, lines.slice(0, 2).join('\n')); // no newline after the last line
  recordInManifest(dir, 'geojson/leads/dublin-city.ndjson');
  await refused(verifyReleaseFiles(dir), /dublin-city\.ndjson is not valid JSON \(line 2 \(no newline at the end\)\)/);
  writeFileSync(layer, lines.join('\n').replace(/,$/m, '}'));
  const index = join(dir, 'geojson/index.json');
  writeFileSync(index, readFileSync(index, 'utf8').replace(/\}\s*$/, ''));
  recordInManifest(dir, 'geojson/index.json');
  recordInManifest(dir, 'geojson/leads/dublin-city.ndjson');
  await refused(
    verifyReleaseFiles(dir),
    /^files do not match manifest\.json: geojson\/index\.json is not valid JSON \(the file\) although it matches the manifest$/,
  );
});

test('many bad files: five named, the rest counted', async () => {
  const dir = await copy();
  for (const rel of listed(dir)
    .filter((f) => f.startsWith('geojson/leads/'))
    .slice(0, 8))
    rmSync(join(dir, rel));
  await refused(
    verifyReleaseFiles(dir),
    /^files do not match manifest\.json: ([^;]+ is missing; ){4}[^;]+ is missing and 3 more$/,
  );
});

test('a manifest without checksums, with a path outside the release, or unreadable is refused', async () => {
  const dir = await copy();
  const file = join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as { files?: Record<string, unknown> };
  const files = manifest.files!;
  delete manifest.files;
  writeFileSync(file, JSON.stringify(manifest));
  await refused(verifyReleaseFiles(dir), /manifest\.json lists no files/);
  writeFileSync(
    file,
    JSON.stringify({ ...manifest, files: { ...files, '../elsewhere.parquet': files['leads.parquet'] } }),
  );
  await refused(verifyReleaseFiles(dir), /outside the release: "\.\.\/elsewhere\.parquet"/);
  writeFileSync(file, JSON.stringify({ ...manifest, files: { ...files, 'leads.parquet': { bytes: 1 } } }));
  await refused(verifyReleaseFiles(dir), /the entry of leads\.parquet has no valid bytes and sha256/);
  writeFileSync(file, '{"files": ');
  await refused(verifyReleaseFiles(dir), /^manifest\.json cannot be read: /);
});

test.run();
