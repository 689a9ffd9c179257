/**
 * The temp files of the exports DuckDB writes (Parquet; CSV only where the leads engine cannot,
 * api/render/csv.ts): where they live, who may read them, how much disk they may hold, and what
 * happens to those a dead server left behind.
 *
 * - **Private.** `EXPORT_TEMP_DIR` (default `<DATA_DIR>/export-tmp`) is created `0700` (an
 *   existing one is made `0700`; one owned by another user, or a symlink, stops the start). Each
 *   server process works in a folder of its own inside it, `<host>-<pid>-<random>` (`0700`), and
 *   every file is created empty with mode `0600` before DuckDB writes into it (`USE_TMP_FILE
 *   false`, so DuckDB keeps the file and its mode).
 * - **Leftovers.** At start the server removes the folders of dead processes of this host (a pid
 *   that no longer runs, or its own pid: a restarted container), anything else in the folder that
 *   is not a process folder, and the `leads-export-*` files earlier versions left in the system
 *   temp folder (owned by this user, untouched for a minute). Folders of other hosts sharing the
 *   folder are theirs to clean. On stop the server removes its own folder.
 * - **Bounded.** An export reserves what its file is expected to take (its rows × the bytes per
 *   row of that format, learnt from the exports before it) before it starts; the space held is the
 *   sum over the files in use of the larger of the reservation and the file's size. A new export
 *   that would take the space held past `EXPORT_TEMP_MAX_MB` waits (first come, first served) for
 *   files to be released, at most `EXPORT_TEMP_WAIT_MS`, then gets `503 export_busy` with
 *   `Retry-After`. An export expected to take more than the bound on its own is refused at once
 *   with `507 export_too_large` (narrow the filters, or another format), and one that passes the
 *   bound while it is written is stopped (its COPY cancelled, the response cut: api/render/
 *   copy-stream.ts), so no export writes more than `EXPORT_TEMP_MAX_MB` (issue 31: with 50 MB one
 *   full CSV export wrote 108 MB). The space is released when the response ends, fails or its
 *   client goes away, which deletes the file.
 */
import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  chmodSync,
  unlinkSync,
} from 'node:fs';
import { unlink } from 'node:fs/promises';
import { randomBytes, randomUUID } from 'node:crypto';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiConfig } from '../config.ts';
import { ApiError } from '../http/errors.ts';

/** Formats of the file exports. */
export type TempFormat = 'csv' | 'jsonl' | 'parquet';

/** Bytes per row assumed until an export of the format has been measured (generated data: CSV ~0.7 KB, JSON Lines ~1.6 KB, Parquet ~0.1 KB; with room for longer texts). */
export const BYTES_PER_ROW_DEFAULT: Record<TempFormat, number> = { csv: 1_000, jsonl: 2_000, parquet: 300 };

/** Seconds a client is told to wait after `503 export_busy`. */
export const EXPORT_BUSY_RETRY_S = 30;

/** One export's temp file: created `0600`, empty, in the process's private folder. */
export interface TempFile {
  readonly path: string;
  /** The most bytes the file may reach (EXPORT_TEMP_MAX_MB): its writer stops past it. */
  readonly limitBytes: number;
  /**
   * Delete the file (once DuckDB is done with it) and give its space back; idempotent. Resolves
   * when both are done (the file is unlinked off the event loop).
   */
  release(): Promise<void>;
}

export interface ExportTempOptions {
  /** The folder (EXPORT_TEMP_DIR). */
  root: string;
  maxBytes: number;
  waitMs: number;
  log?: (line: string) => void;
}

interface Held {
  path: string;
  reserved: number;
  format: TempFormat;
  rows: number;
}

const PROCESS_DIR = /^(.+)-(\d+)-([0-9a-f]{8})$/;
const LEGACY_FILE = /^leads-export-[0-9a-f-]{36}\.(csv|jsonl|parquet)$/;
const safeHost = (): string => hostname().replace(/[^A-Za-z0-9.]/g, '_') || 'host';

/** `507 export_too_large`: one export of `format` would take (or took) `bytes`, more than the bound `maxBytes`. */
export function exportTooLarge(format: TempFormat, bytes: number, maxBytes: number): ApiError {
  const mb = (n: number): string => `${Math.max(1, Math.round(n / 1e6))} MB`;
  const smaller =
    format === 'parquet'
      ? ', or use .csv or .jsonl (written from memory, no temp space)'
      : ', or use format=parquet (about a tenth of the size)';
  return new ApiError(
    507,
    'export_too_large',
    `this ${format} file would take about ${mb(bytes)} of temp space, more than this server's bound of ${mb(maxBytes)} for one export; narrow the filters${smaller}`,
    { title: 'Insufficient Storage', expose: true },
  );
}

/** Whether a process with this pid runs on this host. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The folder exists, is a real folder owned by this user, and is `0700`; throws otherwise. */
function privateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (st.isSymbolicLink() || !st.isDirectory())
    throw new Error(
      `export temp folder ${dir} is not a folder (a symlink or a file); set EXPORT_TEMP_DIR to a folder of this server's own`,
    );
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new Error(
      `export temp folder ${dir} belongs to uid ${st.uid}, not to this server's user (uid ${uid}); set EXPORT_TEMP_DIR to a folder of its own`,
    );
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/**
 * Remove what dead servers left in `root` (see the module comment); returns the entries removed.
 * `self` is this process's folder name, which is never removed.
 */
export function removeLeftovers(
  root: string,
  self: string | null = null,
  log: (line: string) => void = () => {},
): string[] {
  const host = safeHost();
  const removed: string[] = [];
  for (const name of readdirSync(root)) {
    if (name === self) continue;
    const m = PROCESS_DIR.exec(name);
    if (m && m[1] !== host) continue; // another host's process: its own to clean
    if (m && Number(m[2]) !== process.pid && alive(Number(m[2]))) continue;
    rmSync(join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  // files of earlier versions, written straight into the system temp folder
  const uid = process.getuid?.();
  const tmp = tmpdir();
  let legacy: string[] = [];
  try {
    legacy = readdirSync(tmp).filter((f) => LEGACY_FILE.test(f));
  } catch {
    /* no system temp folder to read */
  }
  for (const f of legacy) {
    try {
      const st = lstatSync(join(tmp, f));
      if (!st.isFile() || (uid !== undefined && st.uid !== uid) || Date.now() - st.mtimeMs < 60_000) continue;
      unlinkSync(join(tmp, f));
      removed.push(join(tmp, f));
    } catch {
      /* gone meanwhile, or not ours */
    }
  }
  if (removed.length)
    log(
      `export temp: removed ${removed.length} leftover${removed.length === 1 ? '' : 's'} of earlier server processes (${removed.slice(0, 5).join(', ')}${removed.length > 5 ? ', …' : ''})`,
    );
  return removed;
}

/** The export temp space of one server process. */
export class ExportTempSpace {
  /** The process's own folder. */
  readonly dir: string;
  private readonly held = new Set<Held>();
  private readonly waiting: { need: number; admit: () => void }[] = [];
  private readonly perRow: Record<TempFormat, number> = { ...BYTES_PER_ROW_DEFAULT };

  /** Prepare `root` (private, leftovers removed) and this process's folder in it. */
  private readonly opts: ExportTempOptions;
  constructor(opts: ExportTempOptions) {
    this.opts = opts;
    privateFolder(opts.root);
    const name = `${safeHost()}-${process.pid}-${randomBytes(4).toString('hex')}`;
    removeLeftovers(opts.root, name, opts.log);
    this.dir = join(opts.root, name);
    mkdirSync(this.dir, { mode: 0o700 });
  }

  /** Bytes the files in use hold or have reserved. */
  heldBytes(): number {
    let sum = 0;
    for (const h of this.held) {
      let size = 0;
      try {
        size = statSync(h.path).size;
      } catch {
        /* not there (yet) */
      }
      sum += Math.max(h.reserved, size);
    }
    return sum;
  }

  /** Exports waiting for space now (tests await it instead of guessing when an export is queued). */
  waitingExports(): number {
    return this.waiting.length;
  }

  /** Bytes a file of `rows` rows in `format` is expected to take. */
  estimate(format: TempFormat, rows: number): number {
    return Math.ceil(Math.max(0, rows) * this.perRow[format]);
  }

  private fits(need: number): boolean {
    return this.held.size === 0 || this.heldBytes() + need <= this.opts.maxBytes;
  }

  /** Let waiting exports in, in order, while the next one fits. */
  private admitWaiting(): void {
    while (this.waiting.length && this.fits(this.waiting[0]!.need)) this.waiting.shift()!.admit();
  }

  /**
   * Reserve the space of a `format` file of `rows` rows and create the file (`0600`, empty).
   * Waits up to EXPORT_TEMP_WAIT_MS when the space is taken, then throws `503 export_busy`.
   */
  async acquire(format: TempFormat, rows: number): Promise<TempFile> {
    const need = this.estimate(format, rows);
    if (need > this.opts.maxBytes) throw exportTooLarge(format, need, this.opts.maxBytes);
    if (this.waiting.length === 0 && this.fits(need)) return this.take(format, rows, need);
    const file = await new Promise<TempFile | Error | null>((resolve) => {
      const w = {
        need,
        admit: () => {
          clearTimeout(timer);
          try {
            resolve(this.take(format, rows, need)); // reserved before the next waiter is looked at
          } catch (e) {
            resolve(e as Error);
          }
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(w), 1);
        resolve(null);
        this.admitWaiting(); // a large file giving up may let smaller ones behind it in
      }, this.opts.waitMs);
      this.waiting.push(w);
    });
    if (file instanceof Error) throw file;
    if (file) return file;
    const mb = (n: number): string => `${Math.round(n / 1e6)} MB`;
    throw new ApiError(
      503,
      'export_busy',
      `the exports running on this server hold ${mb(this.heldBytes())} of temp space (at most ${mb(this.opts.maxBytes)}) and this ${format} file needs about ${mb(need)}; try again in ${EXPORT_BUSY_RETRY_S} seconds`,
      { title: 'Service Unavailable', expose: true, headers: { 'Retry-After': String(EXPORT_BUSY_RETRY_S) } },
    );
  }

  /** Reserve `need` bytes and create the file. */
  private take(format: TempFormat, rows: number, need: number): TempFile {
    const path = join(this.dir, `export-${randomUUID()}.${format}`);
    closeSync(openSync(path, 'wx', 0o600));
    const h: Held = { path, reserved: need, format, rows };
    this.held.add(h);
    let released: Promise<void> | null = null;
    return {
      path,
      limitBytes: this.opts.maxBytes,
      release: () => {
        if (released) return released;
        try {
          const size = statSync(path).size;
          if (rows >= 1000 && size > 0) this.perRow[format] = size / rows; // learn from a real file
        } catch {
          /* already gone */
        }
        // off the event loop: unlinking a file of hundreds of MB takes 20–80 ms
        released = unlink(path)
          .catch(() => undefined) // already gone
          .then(() => {
            this.held.delete(h);
            this.admitWaiting();
          });
        return released;
      },
    };
  }

  /** Remove this process's folder (on stop, after the last response). */
  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The settings an export temp space is made from (the API config's). */
export type ExportTempConfig = Pick<ApiConfig, 'exportTempDir' | 'exportTempMaxMb' | 'exportTempWaitMs'>;

/** A temp space from the API config's settings. */
export function exportTempSpace(config: ExportTempConfig, log: (line: string) => void): ExportTempSpace {
  return new ExportTempSpace({
    root: config.exportTempDir,
    maxBytes: config.exportTempMaxMb * 1e6,
    waitMs: config.exportTempWaitMs,
    log,
  });
}

/**
 * The temp space of a router: the server's (prepared at start, leftovers removed) when it has
 * one, else one made from `config` on first use (an app built without a server).
 */
export function lazyExportTempSpace(
  config: ExportTempConfig,
  given: ExportTempSpace | null | undefined,
  log: (line: string) => void,
): () => ExportTempSpace {
  let temp = given ?? null;
  return () => (temp ??= exportTempSpace(config, log));
}
