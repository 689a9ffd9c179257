/**
 * What the shared state store (api/state/accounts-store.ts, access.ts, webhook-store.ts,
 * migrations.ts) needs from a database, and the ONE place that says how SQLite and PostgreSQL
 * differ: each backend file (sqlite.ts, postgres.ts) fills in a `Backend` — its Kysely instance
 * (which compiles every query for its dialect), a runner that executes compiled queries on its
 * driver, and the small `Dialect` capability table below. No store method asks which database
 * it is on.
 *
 * Store methods are written as operations: generators that yield compiled queries and receive
 * their rows, e.g.
 *
 * @example
 *   const n = await b.run('atomic', function* () {
 *     const [c] = yield countKeys(accountId);
 *     if (c.n >= max) return 'limit';
 *     yield insertKey(...);
 *   });
 *
 * so the same code runs synchronously inside one `BEGIN IMMEDIATE` transaction on SQLite (no
 * other statement of the process can interleave, and no await sits inside the write lock) and
 * asynchronously inside a pg transaction on PostgreSQL.
 */
import type {
  ColumnDefinitionBuilder,
  Compilable,
  CompiledQuery,
  CreateTableBuilder,
  Expression,
  Kysely,
  SelectQueryBuilder,
} from 'kysely';
import type { Tables } from './tables.ts';

/** A result row as the driver returns it (instants as ISO strings, integers as numbers). */
export type Row = Record<string, any>;

/** A store operation: yields compiled queries, receives each one's rows, returns its result. */
export type Op<T> = Generator<CompiledQuery, T, Row[]>;

/**
 * How an operation runs:
 * - `plain`: statement by statement, each atomic on its own (reads, single writes);
 * - `atomic`: in one transaction — SQLite takes the write lock first (`BEGIN IMMEDIATE`),
 *   PostgreSQL relies on the row locks the operation takes (`Dialect.lockRows`) and atomic upserts;
 * - `counter`: the per-request counters (hourly window, daily rows): SQLite as `atomic`,
 *   PostgreSQL statement by statement on a pool that commits without waiting for the WAL flush.
 */
export type Mode = 'plain' | 'atomic' | 'counter';

/** The differences between the SQL dialects that the shared code has to know (and nothing else). */
export interface Dialect {
  /** Column type of an instant (written and read as an ISO-8601 string). */
  readonly instantType: 'text' | 'timestamptz';
  /** Column type of a counter that may pass 2^31. */
  readonly bigintType: 'integer' | 'bigint';
  /** An integer primary key numbered by the database. */
  autoId(col: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /** A table read only by its primary key (SQLite: WITHOUT ROWID). */
  keyedTable<T extends CreateTableBuilder<any, any>>(t: T): T;
  /** webhook_deliveries in insertion order: the column to add (PostgreSQL) and how to order by it. */
  readonly insertionOrder: { addColumn<T extends CreateTableBuilder<any, any>>(t: T): T; ref: string };
  /** Text ordered byte by byte (SQLite's default; PostgreSQL needs COLLATE "C"), so both list in the same order. */
  bytewise(ref: string): Expression<unknown>;
  /**
   * Lock the selected rows until the transaction ends (`skipLocked`: pass over rows another
   * transaction holds). PostgreSQL: FOR UPDATE; SQLite: nothing (the IMMEDIATE transaction
   * already holds the database's write lock).
   */
  lockRows<Q extends SelectQueryBuilder<any, any, any>>(q: Q, opts?: { skipLocked?: boolean; of?: string }): Q;
  /** Statements that open the migration transaction (PostgreSQL: an advisory lock per schema, the schema itself). */
  readonly migrationPrologue: CompiledQuery[];
  /**
   * Statements run after a key is revoked or a plan changed, telling other processes to drop
   * their cached keys (PostgreSQL: `pg_notify` on the schema's channel; SQLite: none, its
   * `PRAGMA data_version` already moves for every other connection). api/state/revocations.ts.
   */
  keyChangeNotice(token: string): CompiledQuery[];
}

/** A database the state store runs on. */
export interface Backend {
  /** Query builder and compiler for the backend's dialect (never used to execute). */
  readonly db: Kysely<Tables>;
  readonly dialect: Dialect;
  /** Run an operation (see `Mode`); waits for the migrations first. */
  run<T>(mode: Mode, op: () => Op<T>): Promise<T>;
  /** Settles when the migrations have been applied, or rejects with why not. */
  readonly ready: Promise<void>;
  /** Moves when another connection may have changed keys or plans (api/state/revocations.ts); read per request, no query. */
  readonly changeStamp: () => number;
  /** After a key change was committed with `Dialect.keyChangeNotice(token)`: resolves once it has reached the other processes (PostgreSQL: this store's own listener got it). */
  keyChangeSent(token: string): Promise<void>;
  /** Close the connections (after the migrations have finished); idempotent. */
  close(): Promise<void>;
}

/** An operation of one query, returning its rows. */
export function* rows(q: CompiledQuery): Op<Row[]> {
  return yield q;
}

/** Drive an operation whose queries are executed synchronously (SQLite). */
export function driveSync<T>(op: Op<T>, exec: (q: CompiledQuery) => Row[]): T {
  let step = op.next(undefined as never);
  while (!step.done) step = op.next(exec(step.value));
  return step.value;
}

/** Drive an operation whose queries are executed asynchronously (PostgreSQL). */
export async function driveAsync<T>(op: Op<T>, exec: (q: CompiledQuery) => Promise<Row[]>): Promise<T> {
  let step = op.next(undefined as never);
  while (!step.done) step = op.next(await exec(step.value));
  return step.value;
}

/** A placeholder for a template's argument (see `template`). */
class Arg {
  readonly index: number;
  constructor(index: number) {
    this.index = index;
  }
}

/**
 * Build and compile a query once, bind its arguments per call: the builder gets placeholders
 * in place of the arguments and the compiled parameters are swapped for the call's values. For
 * the hot path (authentication, counters), where building and compiling per request would cost
 * more than the query. Only for queries whose shape does not depend on the argument values.
 *
 * @example
 *   const byId = template((id: number) => db.selectFrom('accounts').selectAll().where('id', '=', id));
 *   yield byId(7);
 */
export function template<A extends unknown[]>(build: (...args: A) => Compilable): (...args: A) => CompiledQuery {
  const placeholders = Array.from({ length: build.length }, (_, i) => new Arg(i)) as unknown as A;
  const compiled = build(...placeholders).compile();
  const slots = compiled.parameters.map((p) => (p instanceof Arg ? p.index : -1));
  if (new Set(slots.filter((s) => s >= 0)).size !== build.length)
    throw new Error(`template: every argument must be a bound value in ${compiled.sql}`);
  return (...args: A): CompiledQuery => ({
    ...compiled,
    parameters: slots.map((s, i) => (s < 0 ? compiled.parameters[i] : args[s])),
  });
}
