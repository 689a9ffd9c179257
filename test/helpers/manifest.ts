/**
 * Tests that hand-edit a release's files (a smaller leads table, a damaged Parquet file the build
 * must fail on) record the edit in its manifest, as the pipeline would have, so the server's
 * checksum check (api/releases/verify-release.ts) lets the release through to what is under test.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Set the manifest's size and SHA-256 of `rel` (a file of `releaseDir`) to the file as it now is. */
export function recordInManifest(releaseDir: string, rel: string): void {
  const file = join(releaseDir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as { files: Record<string, unknown> };
  const bytes = readFileSync(join(releaseDir, rel));
  manifest.files[rel] = { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), rows: null };
  writeFileSync(file, JSON.stringify(manifest, null, 2));
}
