/** Temporary folders for tests, removed at process exit. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** Create a fresh temp folder that is deleted when the test process exits. */
export function tempDir(prefix = 'leads-test-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

/** Repository root (for reading schemas/ or ../shared/realdata). */
export const REPO_ROOT = new URL('../../', import.meta.url).pathname;
