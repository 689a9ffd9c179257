/**
 * A release's files checked against its manifest before the server switches to it: every file
 * `manifest.json` lists under `files` (written by the pipeline's `checksumFiles`, pipeline/release/checksums.ts:
 * every file of the release folder, recursively, except `manifest.json` and names starting with
 * `.`) must exist with the listed size and SHA-256, and every such file of the folder must be
 * listed. Files are hashed as streams (never held whole in memory). The GeoJSON layers
 * (`geojson/*.ndjson`, served byte for byte as they are) must also hold one JSON object per line,
 * and `geojson/index.json` must parse: content that matches its manifest but does not parse is
 * refused like a checksum failure (issue 31: the layer index reads only each line's prefix). Runs
 * in the index-building child (api/engine/build-child.ts), so the server's event loop never
 * hashes or parses.
 *
 * @example
 *   await verifyReleaseFiles('/data/releases/20261116T060000Z'); // throws ReleaseRefusedError
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** Exit code of the index-building child when the release's files do not match its manifest (nothing was built). */
export const REFUSED_EXIT = 3;

/** A release whose files do not match its manifest; `reason` says which files and how. */
export class ReleaseRefusedError extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
    this.name = 'ReleaseRefusedError';
  }
}

interface ListedFile {
  bytes: number;
  sha256: string;
}

/** How many mismatched files a reason names before "and N more". */
const NAMED_MAX = 5;

/** Largest chunk a file is read in. */
const CHUNK_MAX = 1 << 20;

/** SHA-256 (hex) of a file, read as a stream. */
export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_MAX })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Files served as JSON without being parsed per request: each line (`lines`) or the whole file (`whole`) must parse. */
const jsonKindOf = (rel: string): 'lines' | 'whole' | null =>
  rel.startsWith('geojson/') ? (rel.endsWith('.ndjson') ? 'lines' : rel.endsWith('.json') ? 'whole' : null) : null;

/** Whether `text` parses as a JSON object. */
function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/**
 * SHA-256 (hex) of a file read once as a stream and, for `json`, where its content stops being
 * JSON (`lines`: the first line that is not a JSON object, by number; `whole`: the file).
 * `size` (from `stat`) only sizes the read buffer: a stream allocates a whole chunk per read,
 * so a small file read in 1 MiB chunks costs far more garbage than its bytes. The file is still
 * read to its end, whatever its size is by then.
 */
async function hashAndParse(
  path: string,
  json: 'lines' | 'whole' | null,
  size: number,
): Promise<{ sha256: string; badJson: string | null }> {
  const h = createHash('sha256');
  let badJson: string | null = null;
  let line = 0;
  let carry: Buffer = Buffer.alloc(0);
  const whole: Buffer[] = [];
  const highWaterMark = Math.min(CHUNK_MAX, Math.max(size, 1));
  for await (const chunk of createReadStream(path, { highWaterMark })) {
    const b = chunk as Buffer;
    h.update(b);
    if (json === 'whole') whole.push(b);
    if (json !== 'lines' || badJson !== null) continue;
    let data = carry.length > 0 ? Buffer.concat([carry, b]) : b;
    let start = 0;
    for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, start)) {
      line++;
      if (!isJsonObject(data.toString('utf8', start, nl))) {
        badJson = `line ${line}`;
        break;
      }
      start = nl + 1;
    }
    carry = badJson === null ? Buffer.from(data.subarray(start)) : Buffer.alloc(0);
    data = Buffer.alloc(0);
  }
  if (json === 'lines' && badJson === null && carry.length > 0) badJson = `line ${line + 1} (no newline at the end)`;
  if (json === 'whole' && !isJsonObject(Buffer.concat(whole).toString('utf8'))) badJson = 'the file';
  return { sha256: h.digest('hex'), badJson };
}

/** Every file under `dir` (relative, `/`-separated), skipping `manifest.json` and dot-names as the pipeline does. */
async function releaseFiles(dir: string, root = dir): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    const rel = relative(root, p).split(sep).join('/');
    if (rel === 'manifest.json' || rel.startsWith('.')) continue;
    if (e.isDirectory()) out.push(...(await releaseFiles(p, root)));
    else out.push(rel);
  }
  return out;
}

/** The manifest's `files`, checked for shape; throws ReleaseRefusedError when unusable. */
async function listedFiles(dir: string): Promise<Map<string, ListedFile>> {
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
  } catch (e) {
    throw new ReleaseRefusedError(`manifest.json cannot be read: ${(e as Error).message.replace(dir, '<release>')}`);
  }
  const files = (manifest as { files?: unknown } | null)?.files;
  if (files === null || typeof files !== 'object' || Array.isArray(files) || Object.keys(files).length === 0) {
    throw new ReleaseRefusedError('manifest.json lists no files (`files`), so the release cannot be verified');
  }
  const out = new Map<string, ListedFile>();
  for (const [rel, f] of Object.entries(files as Record<string, unknown>)) {
    const x = f as Partial<ListedFile> | null;
    const safe =
      rel !== '' &&
      !rel.startsWith('/') &&
      !rel.includes('\\') &&
      !rel.split('/').some((s) => s === '..' || s === '.' || s === '');
    if (!safe) throw new ReleaseRefusedError(`manifest.json lists a file outside the release: ${JSON.stringify(rel)}`);
    if (typeof x?.bytes !== 'number' || typeof x.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(x.sha256)) {
      throw new ReleaseRefusedError(`manifest.json: the entry of ${rel} has no valid bytes and sha256`);
    }
    out.set(rel, { bytes: x.bytes, sha256: x.sha256 });
  }
  return out;
}

/**
 * Check every file of the release in `dir` against its manifest. Resolves with what was checked;
 * rejects with a ReleaseRefusedError naming each missing, resized, changed or unlisted file.
 */
export async function verifyReleaseFiles(dir: string): Promise<{ files: number; bytes: number }> {
  const listed = await listedFiles(dir);
  const problems: string[] = [];
  let bytes = 0;
  for (const [rel, want] of [...listed].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const path = join(dir, ...rel.split('/'));
    let size: number;
    try {
      const s = await stat(path);
      if (!s.isFile()) {
        problems.push(`${rel} is not a file`);
        continue;
      }
      size = s.size;
    } catch {
      problems.push(`${rel} is missing`);
      continue;
    }
    if (size !== want.bytes) {
      problems.push(`${rel} has ${size} bytes, the manifest says ${want.bytes}`);
      continue;
    }
    const got = await hashAndParse(path, jsonKindOf(rel), size);
    if (got.sha256 !== want.sha256) problems.push(`${rel} does not match its SHA-256 in the manifest`);
    else if (got.badJson !== null)
      problems.push(`${rel} is not valid JSON (${got.badJson}) although it matches the manifest`);
    bytes += size;
  }
  for (const rel of (await releaseFiles(dir)).sort())
    if (!listed.has(rel)) problems.push(`${rel} is not listed in the manifest`);
  if (problems.length > 0) {
    const named = problems.slice(0, NAMED_MAX).join('; ');
    const more = problems.length > NAMED_MAX ? ` and ${problems.length - NAMED_MAX} more` : '';
    throw new ReleaseRefusedError(`files do not match manifest.json: ${named}${more}`);
  }
  return { files: listed.size, bytes };
}
