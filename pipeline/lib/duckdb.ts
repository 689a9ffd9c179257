/**
 * The pipeline's one door to DuckDB. Only this module imports `@duckdb/node-api`; every other
 * stage gets a `Db` with `all`, `run` and `close`, so SQL building stays apart from I/O.
 */
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { plainRow, sqlIdent, sqlString } from '../../common/sql.ts';

export type Params = DuckDBValue[] | Record<string, DuckDBValue>;
export type Row = Record<string, unknown>;

export interface Db {
  /** Run a query and return its rows as plain JS objects (BIGINT → number when safe). */
  all<T extends Row = Row>(sql: string, params?: Params): Promise<T[]>;
  /**
   * Run a query and yield its rows in DuckDB's chunks (≤ 2,048 rows each) as plain JS objects,
   * as DuckDB produces them: a large result never sits in memory whole. Each stream has a
   * connection of its own, so two can be read side by side (and `all` / `run` used meanwhile).
   */
  stream<T extends Row = Row>(sql: string, params?: Params): AsyncGenerator<T[]>;
  /** Run a statement for its effect. */
  run(sql: string, params?: Params): Promise<void>;
  close(): void;
}

export interface DbOptions {
  /** DuckDB memory_limit, e.g. '1GB'. */
  memoryLimit?: string;
  threads?: number;
  /** Folder for spilling to disk. */
  tempDirectory?: string;
  /** A database file (its tables live on disk, paged in and out by the buffer pool); default in memory. */
  path?: string;
}

/** Open a DuckDB (in memory unless `path` names its file) for one pipeline phase. */
export async function openDb(opts: DbOptions = {}): Promise<Db> {
  const config: Record<string, string> = {};
  if (opts.memoryLimit) config['memory_limit'] = opts.memoryLimit;
  if (opts.threads) config['threads'] = String(opts.threads);
  if (opts.tempDirectory) config['temp_directory'] = opts.tempDirectory;
  const instance = await DuckDBInstance.create(opts.path ?? ':memory:', config);
  const conn: DuckDBConnection = await instance.connect();
  return {
    async all<T extends Row = Row>(sql: string, params?: Params): Promise<T[]> {
      const reader = await conn.runAndReadAll(sql, params);
      return reader.getRowObjectsJS().map(plainRow) as T[];
    },
    async *stream<T extends Row = Row>(sql: string, params?: Params): AsyncGenerator<T[]> {
      const own = await instance.connect();
      try {
        const result = await own.stream(sql, params);
        for await (const rows of result.yieldRowObjectJs()) yield rows.map(plainRow) as T[];
      } finally {
        own.closeSync();
      }
    },
    async run(sql: string, params?: Params): Promise<void> {
      await conn.run(sql, params);
    },
    close(): void {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

export { sqlIdent, sqlString };
