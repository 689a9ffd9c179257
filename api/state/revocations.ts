/**
 * Key changes reach every process's key cache at once (issue 16): a revoked key (or a plan
 * change that takes a scope away) is refused on the very next request, on every replica, while
 * a key nobody touched keeps being answered from memory with no query per request.
 *
 * Each backend gives the state store a *change stamp*: a number read without a query, which
 * differs from the last one read whenever another connection may have changed keys or plans.
 * The auth middleware (api/middleware/auth.ts) drops its cached keys when the store's stamp
 * (`StateStore.keyChangeStamp`) moves; the store also moves it itself when this process revokes
 * a key or changes a plan.
 *
 *  - SQLite: `PRAGMA data_version`, which changes when ANOTHER connection (the operators' CLI,
 *    another process on the same file) commits. Any commit of another connection drops the
 *    cache (a plain re-read per cached key follows), not only revocations — never wrong. The
 *    pragma is only read when the file's WAL index header (the first 48 bytes of `<file>-shm`,
 *    https://www.sqlite.org/walformat.html: a change counter, the last frame and checksums that
 *    every commit of any connection rewrites) differs from the one read with the last value:
 *    one 48-byte `pread` per request, where the pragma opens and ends a read transaction
 *    (file locks, and a new read mark after each commit: ~10–20 µs of a list page under load).
 *    A commit of this process's own connection moves the header but not the pragma, so the
 *    stamp stays; a commit of any other connection moves both. Without a WAL index (another
 *    journal mode), the pragma is read on every call.
 *  - PostgreSQL: `LISTEN` on a channel of the schema; `revokeKey` / `setAccountPlan` send
 *    `pg_notify` in the transaction that changes the key (api/state/postgres.ts
 *    `Dialect.keyChangeNotice`), and return only once their own store's listener has received
 *    it; the other replicas receive it within the notification's delivery time (about a
 *    millisecond on one host: PostgreSQL signals every listening backend at commit). While
 *    the listening connection is down (not yet connected, dropped,
 *    reconnecting) every call returns a new stamp: nothing is trusted from the cache and each
 *    request reads its key from the store until the listener is back.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import type Database from 'better-sqlite3';
import pg from 'pg';

/** A stamp that changes whenever keys or plans may have been changed by another connection. */
export type ChangeStamp = () => number;

/** Bytes of the WAL index header's first copy (the copy a committing connection writes last). */
const WAL_INDEX_HEADER_BYTES = 48;

/**
 * The SQLite change stamp of `file` (`PRAGMA data_version`, read only when the WAL index header
 * has moved since it was last read); `close` before closing the file.
 */
export function sqliteChangeStamp(file: Database.Database): ChangeStamp & { close(): void } {
  const version = file.prepare('PRAGMA data_version').pluck();
  const read = (): number => (file.open ? (version.get() as number) : NaN);
  let shm: number | null = null;
  try {
    if (file.pragma('journal_mode', { simple: true }) === 'wal') shm = openSync(`${file.name}-shm`, 'r');
  } catch {
    shm = null; // no WAL index to read: the pragma on every call
  }
  if (shm === null) return Object.assign(read, { close() {} });
  const fd = shm;
  const seen = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  const now = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  let value = NaN;
  const stamp = (): number => {
    if (!file.open) return NaN;
    // the header first, then the pragma: a commit after the read moves the header again
    if (readSync(fd, now, 0, WAL_INDEX_HEADER_BYTES, 0) !== WAL_INDEX_HEADER_BYTES || !now.equals(seen)) {
      now.copy(seen);
      value = read();
    }
    return value;
  };
  return Object.assign(stamp, { close: () => closeSync(fd) });
}

/**
 * The notification channel of a schema's key changes (a channel name is at most 63 bytes, so
 * the schema is hashed into it).
 */
export function keyChangeChannel(schema: string): string {
  return `leads_keys_${createHash('sha256').update(schema).digest('hex').slice(0, 24)}`;
}

/** A PostgreSQL listener for key changes: its stamp, and `close`. */
export interface PgKeyListener {
  stamp: ChangeStamp;
  /**
   * Resolves when this listener has received the notification carrying `token` (so PostgreSQL
   * has pushed it to every listening replica), or after `timeoutMs`, or at once when not listening.
   */
  received(token: string, timeoutMs?: number): Promise<void>;
  /** Whether the listener is connected now (tests wait for it; the store never does). */
  readonly connected: () => boolean;
  close(): Promise<void>;
}

/**
 * Listen for key changes of `schema` on its own connection, reconnecting after `retryMs` when it
 * drops. While it is not connected, `stamp()` returns a new value on every call.
 */
export function pgKeyListener(
  connectionString: string,
  schema: string,
  opts: { retryMs?: number; onError?: (e: Error) => void } = {},
): PgKeyListener {
  const channel = keyChangeChannel(schema);
  const retryMs = opts.retryMs ?? 1000;
  let epoch = 0;
  let up = false;
  let closed = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  const waiting = new Map<string, () => void>();
  /** Tokens received lately (a notification may arrive before its sender starts waiting for it). */
  const recent = new Set<string>();

  const down = (e?: Error): void => {
    up = false;
    epoch++;
    if (e) opts.onError?.(e);
    const c = client;
    client = null;
    c?.removeAllListeners();
    c?.on('error', () => {});
    void c?.end().catch(() => {});
    if (!closed && !timer) {
      timer = setTimeout(() => {
        timer = null;
        void connect();
      }, retryMs);
      timer.unref();
    }
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new pg.Client({ connectionString });
    client = c;
    c.on('error', (e) => down(e));
    c.on('end', () => {
      if (client === c) down();
    });
    c.on('notification', (n) => {
      epoch++;
      if (!n.payload) return;
      recent.add(n.payload);
      if (recent.size > 1000) recent.delete(recent.values().next().value!);
      waiting.get(n.payload)?.();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      if (client !== c || closed) return;
      up = true;
      epoch++; // whatever happened while we were not listening
    } catch (e) {
      if (client === c) down(e as Error);
    }
  };
  void connect();

  return {
    stamp: () => (up ? epoch : ++epoch),
    received(token, timeoutMs = 2000) {
      if (!up || recent.has(token)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const t = setTimeout(done, timeoutMs);
        function done(): void {
          clearTimeout(t);
          waiting.delete(token);
          resolve();
        }
        waiting.set(token, done);
      });
    },
    connected: () => up,
    async close() {
      closed = true;
      up = false;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      c?.removeAllListeners();
      c?.on('error', () => {});
      await c?.end().catch(() => {});
    },
  };
}
