/**
 * The API's one door to DuckDB: a small pool of connections on one in-memory instance. Only
 * this module imports `@duckdb/node-api`. Queries get `{ sql, params }` from the pure builders
 * in `api/query/`; every value is a bound parameter.
 */
import { availableParallelism } from 'node:os';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { plainRow, sqlIdent, sqlString } from '../../common/sql.ts';

export type Params = DuckDBValue[];
export type Row = Record<string, unknown>;

export interface ApiDb {
  /** Run a query on a free connection and return plain JS rows (BIGINT → number, DATE → 'YYYY-MM-DD'). */
  all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * Stream a query's result chunk by chunk (≤ 2,048 rows each) as columns of DuckDB values, for
   * building in-memory indexes without holding the whole result as row objects. Cast columns in
   * the SQL to INTEGER / DOUBLE / VARCHAR / BOOLEAN so values arrive as plain JS numbers,
   * strings and booleans (null for NULL).
   */
  columns(
    sql: string,
    params: readonly unknown[],
    onChunk: (columns: unknown[][], rows: number) => void,
  ): Promise<void>;
  /** Run a statement for its effect (DDL when loading a release). */
  run(sql: string, params?: readonly unknown[]): Promise<void>;
  /**
   * Stream a query's result in DuckDB chunks (≤ 2,048 rows), column-major: each batch is one
   * array of values per column (VARCHAR → string; convert other types yourself). Runs on a
   * connection of its own, so a long export never holds a pool connection; the connection is
   * closed when the loop ends, breaks or throws. Backpressure: the next chunk is fetched only
   * when the consumer asks for it.
   */
  stream(sql: string, params?: readonly unknown[]): AsyncGenerator<unknown[][], void, undefined>;
  /** Run a long statement (e.g. `COPY … TO`) on a connection of its own, outside the pool (one of the `aloneSlots`). */
  runAlone(sql: string, params?: readonly unknown[]): Promise<void>;
  /**
   * Start a long statement (`COPY … TO`) like `runAlone`, with a way to stop it: `cancel()`
   * interrupts it (DuckDB's `interrupt`), after which `done` rejects; before it has started,
   * `cancel()` takes it out of the queue and `done` rejects at once.
   */
  startAlone(sql: string, params?: readonly unknown[]): { done: Promise<void>; cancel(): void };
  /** Long statements running now and waiting for a slot (what `runAlone` / `startAlone` hold). */
  aloneLoad(): { running: number; waiting: number };
  close(): void;
}

export interface ApiDbOptions {
  connections: number;
  threads: number;
  memoryLimit: string;
  /**
   * Long statements (`runAlone` / `startAlone`) run at once; more wait their turn. Each holds a
   * thread of Node's libuv pool (UV_THREADPOOL_SIZE, default 4) for its whole run, the pool that
   * also serves async file reads, zlib and every other DuckDB call, so some must stay free.
   * Default: the pool size minus 2, and at most the cores minus 1 (a COPY keeps a core busy; on
   * 2 cores a second one at once starves the event loop), at least 1.
   */
  aloneSlots?: number;
}

/** Default `aloneSlots`: leave two libuv pool threads and one core for everything else. */
export function defaultAloneSlots(env: NodeJS.ProcessEnv = process.env, cores = availableParallelism()): number {
  const pool = Number(env['UV_THREADPOOL_SIZE']);
  return Math.max(1, Math.min((Number.isInteger(pool) && pool > 0 ? Math.min(pool, 1024) : 4) - 2, cores - 1));
}

/** Cancelled before it ran or while it ran. */
export class StatementCancelled extends Error {
  constructor() {
    super('statement cancelled');
  }
}

/** The pooled connections: the free ones, and the callers waiting for one (first come, first served). */
interface Pool {
  readonly free: DuckDBConnection[];
  readonly waiting: ((c: DuckDBConnection) => void)[];
}

/** A free connection of `p`, or the next one given back. */
function take(p: Pool): Promise<DuckDBConnection> {
  return p.free.length > 0 ? Promise.resolve(p.free.pop()!) : new Promise((r) => p.waiting.push(r));
}

/** Give a connection back to `p`: to the first waiting caller, else to the free ones. */
function give(p: Pool, c: DuckDBConnection): void {
  const w = p.waiting.shift();
  if (w) w(c);
  else p.free.push(c);
}

/** Run `fn` on a pooled connection, given back however `fn` ends. */
async function withConn<T>(p: Pool, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const c = await take(p);
  try {
    return await fn(c);
  } finally {
    give(p, c);
  }
}

/** Slots for long statements: how many, how many are free, and a FIFO of waiters, each resolved when a slot frees. */
interface AloneSlots {
  readonly size: number;
  free: number;
  readonly waiting: (() => void)[];
}

/** Free a slot: to the first waiter, else back to the free ones. */
function releaseAlone(s: AloneSlots): void {
  const w = s.waiting.shift();
  if (w) w();
  else s.free++;
}

/** `ApiDb.startAlone` on `instance`, its slot taken from `s`. */
function startAlone(
  instance: DuckDBInstance,
  s: AloneSlots,
  sql: string,
  params: readonly unknown[],
): { done: Promise<void>; cancel(): void } {
  let cancelled = false;
  let conn: DuckDBConnection | null = null;
  let queued: (() => void) | null = null;
  let dequeue: ((e: Error) => void) | null = null;
  const slot = new Promise<void>((resolve, reject) => {
    if (s.free > 0) {
      s.free--;
      resolve();
      return;
    }
    queued = resolve;
    dequeue = reject;
    s.waiting.push(resolve);
  });
  const done = (async () => {
    await slot;
    try {
      if (cancelled) throw new StatementCancelled();
      conn = await instance.connect();
      if (cancelled) throw new StatementCancelled();
      try {
        await conn.run(sql, params as Params);
      } catch (e) {
        throw cancelled ? new StatementCancelled() : e;
      }
      if (cancelled) throw new StatementCancelled();
    } finally {
      conn?.closeSync();
      releaseAlone(s);
    }
  })();
  return {
    done,
    cancel(): void {
      if (cancelled) return;
      cancelled = true;
      if (queued) {
        const i = s.waiting.indexOf(queued);
        if (i >= 0) {
          s.waiting.splice(i, 1);
          dequeue?.(new StatementCancelled());
          return;
        }
      }
      // DuckDB clears a connection's interrupt when a statement starts: an interrupt that lands
      // between `run` being called and the statement starting is lost, so it is repeated until
      // the statement has ended (a COPY of `range(1e12)` would otherwise run on for hours)
      conn?.interrupt();
      const again = setInterval(() => conn?.interrupt(), 50);
      again.unref();
      done.then(
        () => clearInterval(again),
        () => clearInterval(again),
      );
    },
  };
}

/** `ApiDb.stream` on a connection of its own, closed when the loop ends, breaks or throws. */
async function* streamAlone(
  instance: DuckDBInstance,
  sql: string,
  params: readonly unknown[],
): AsyncGenerator<unknown[][], void, undefined> {
  const c = await instance.connect();
  try {
    const result = await c.stream(sql, params as Params);
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      yield chunk.getColumns() as unknown[][];
    }
  } finally {
    c.closeSync();
  }
}

/** Open the server's DuckDB instance and its connection pool. */
export async function openApiDb(opts: ApiDbOptions): Promise<ApiDb> {
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(opts.threads),
    memory_limit: opts.memoryLimit,
    // Hand freed memory back to the OS after each task (DuckDB's jemalloc otherwise keeps up to
    // 128 MB per flush and the peak of a release load for good): RSS stays near what is in use.
    allocator_flush_threshold: '16MB',
    allocator_background_threads: 'true',
  });
  const pool: Pool = { free: [], waiting: [] };
  for (let i = 0; i < opts.connections; i++) pool.free.push(await instance.connect());
  const aloneSlots = opts.aloneSlots ?? defaultAloneSlots();
  const alone: AloneSlots = { size: aloneSlots, free: aloneSlots, waiting: [] };
  return {
    all<T extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
      return withConn(pool, async (c) => {
        const reader = await c.runAndReadAll(sql, params as Params);
        return reader.getRowObjectsJS().map(plainRow) as T[];
      });
    },
    columns(
      sql: string,
      params: readonly unknown[],
      onChunk: (columns: unknown[][], rows: number) => void,
    ): Promise<void> {
      return withConn(pool, async (c) => {
        const result = await c.stream(sql, params as Params);
        for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
          onChunk(chunk.getColumns(), chunk.rowCount);
        }
      });
    },
    run(sql: string, params: readonly unknown[] = []): Promise<void> {
      return withConn(pool, async (c) => {
        await c.run(sql, params as Params);
      });
    },
    stream(sql: string, params: readonly unknown[] = []): AsyncGenerator<unknown[][], void, undefined> {
      return streamAlone(instance, sql, params);
    },
    aloneLoad() {
      return { running: alone.size - alone.free, waiting: alone.waiting.length };
    },
    runAlone(sql: string, params: readonly unknown[] = []): Promise<void> {
      return startAlone(instance, alone, sql, params).done;
    },
    startAlone(sql: string, params: readonly unknown[] = []): { done: Promise<void>; cancel(): void } {
      return startAlone(instance, alone, sql, params);
    },
    close(): void {
      for (const c of pool.free) c.closeSync();
      instance.closeSync();
    },
  };
}

export { sqlIdent, sqlString };
