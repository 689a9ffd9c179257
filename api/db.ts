/**
 * The API's one door to DuckDB: a small pool of connections on one in-memory instance. Only
 * this module imports `@duckdb/node-api`. Queries get `{ sql, params }` from the pure builders
 * in `api/query/`; every value is a bound parameter.
 */
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { plainRow, sqlIdent, sqlString } from '../common/sql.ts';

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
  columns(sql: string, params: readonly unknown[], onChunk: (columns: unknown[][], rows: number) => void): Promise<void>;
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
  /** Run a long statement (e.g. `COPY … TO`) on a connection of its own, outside the pool. */
  runAlone(sql: string, params?: readonly unknown[]): Promise<void>;
  close(): void;
}

export interface ApiDbOptions {
  connections: number;
  threads: number;
  memoryLimit: string;
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
    columns(sql: string, params: readonly unknown[], onChunk: (columns: unknown[][], rows: number) => void): Promise<void> {
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
    async runAlone(sql: string, params: readonly unknown[] = []): Promise<void> {
      const c = await instance.connect();
      try {
        await c.run(sql, params as Params);
      } finally {
        c.closeSync();
      }
    },
    close(): void {
      for (const c of free) c.closeSync();
      instance.closeSync();
    },
  };
}

export { sqlIdent, sqlString };
