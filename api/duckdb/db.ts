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
  const free: DuckDBConnection[] = [];
  for (let i = 0; i < opts.connections; i++) free.push(await instance.connect());
  const waiting: ((c: DuckDBConnection) => void)[] = [];
  const take = (): Promise<DuckDBConnection> =>
    free.length > 0 ? Promise.resolve(free.pop()!) : new Promise((r) => waiting.push(r));
  const give = (c: DuckDBConnection): void => {
    const w = waiting.shift();
    if (w) w(c);
    else free.push(c);
  };
  // Slots for long statements: a FIFO of waiters, each resolved when a slot frees.
  const aloneSlots = opts.aloneSlots ?? defaultAloneSlots();
  let aloneFree = aloneSlots;
  const aloneWaiting: (() => void)[] = [];
  const releaseAlone = (): void => {
    const w = aloneWaiting.shift();
    if (w) w();
    else aloneFree++;
  };
  const startAlone = (sql: string, params: readonly unknown[] = []): { done: Promise<void>; cancel(): void } => {
    let cancelled = false;
    let conn: DuckDBConnection | null = null;
    let queued: (() => void) | null = null;
    let dequeue: ((e: Error) => void) | null = null;
    const slot = new Promise<void>((resolve, reject) => {
      if (aloneFree > 0) {
        aloneFree--;
        resolve();
        return;
      }
      queued = resolve;
      dequeue = reject;
      aloneWaiting.push(resolve);
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
        releaseAlone();
      }
    })();
    return {
      done,
      cancel(): void {
        if (cancelled) return;
        cancelled = true;
        if (queued) {
          const i = aloneWaiting.indexOf(queued);
          if (i >= 0) {
            aloneWaiting.splice(i, 1);
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
  };
  const withConn = async <T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> => {
    const c = await take();
    try {
      return await fn(c);
    } finally {
      give(c);
    }
  };
  return {
    all<T extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
      return withConn(async (c) => {
        const reader = await c.runAndReadAll(sql, params as Params);
        return reader.getRowObjectsJS().map(plainRow) as T[];
      });
    },
    columns(
      sql: string,
      params: readonly unknown[],
      onChunk: (columns: unknown[][], rows: number) => void,
    ): Promise<void> {
      return withConn(async (c) => {
        const result = await c.stream(sql, params as Params);
        for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
          onChunk(chunk.getColumns(), chunk.rowCount);
        }
      });
    },
    run(sql: string, params: readonly unknown[] = []): Promise<void> {
      return withConn(async (c) => {
        await c.run(sql, params as Params);
      });
    },
    async *stream(sql: string, params: readonly unknown[] = []): AsyncGenerator<unknown[][], void, undefined> {
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
    },
    aloneLoad() {
      return { running: aloneSlots - aloneFree, waiting: aloneWaiting.length };
    },
    runAlone(sql: string, params: readonly unknown[] = []): Promise<void> {
      return startAlone(sql, params).done;
    },
    startAlone,
    close(): void {
      for (const c of free) c.closeSync();
      instance.closeSync();
    },
  };
}

export { sqlIdent, sqlString };
