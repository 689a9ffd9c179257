/**
 * The baseline of `make bench`'s api section: the same `GET /leads` list queries (and a bare
 * `GET /leads/{id}`) served by a plain Koa + `pg` handler over PostgreSQL, with B-tree indexes on
 * every filtered and sorted column. It answers the question "is the embedded-DuckDB API worth
 * it, compared with the obvious design?".
 *
 * Same request contract as `/v1/leads` (filters, comma = OR, case/accent-insensitive authority and
 * county, page + page_size, keyset cursor, sort), same response envelope minus `_meta`. `q` uses
 * PostgreSQL's own full-text search (a stored `tsvector` with a GIN index, terms OR-ed, ranked
 * with `ts_rank`), the standard way to do it without a search server. `vertical` is an array
 * overlap with a GIN index (a B-tree cannot index `&&`).
 *
 * Load once per release (skipped when `bench_baseline.meta` already holds the release id):
 *
 *   const r = await loadBaseline({ pgUrl, releaseDir, tmpDir });   // DuckDB → CSV → COPY FROM STDIN
 *
 * Serve (in a child process, so its event loop and RSS are its own):
 *
 *   node --import tsx bench/baseline-pg.ts --port 0 --key-sha256 HEX [--pg URL] [--pool 8]
 *   → prints one JSON line {"port": N} when listening
 *
 * Only `bench/` uses this; nothing runs on import.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createReadStream, mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Koa from 'koa';
import pg from 'pg';
import { foldSearchText } from '../common/search-text.ts';
import { FILTERS, filterClauses, filtersOfKind, type LeadsFilters } from '../api/query/lead-filters.ts';
import { openDb, sqlString } from '../pipeline/lib/duckdb.ts';

export const BASELINE_SCHEMA = 'bench_baseline';
/** PostgreSQL of this machine (trust auth), as the OS user; `BENCH_PG_URL` overrides. */
export const PG_URL_DEFAULT =
  process.env['BENCH_PG_URL'] ?? `postgres://${encodeURIComponent(userInfo().username)}@127.0.0.1:5432/test`;

/** Text search configuration and document, mirroring the search index's document (docs/search.md). */
const TSV_EXPR = `to_tsvector('english', coalesce(description, '') || ' ' || coalesce(address, '') || ' ' || coalesce(planning_authority, '') || ' ' || coalesce(application_number, ''))`;

/** The list filters of the API's filter table (`enum` / `multi`): their values are checked against the table's distinct values. */
const LIST_FILTERS = filtersOfKind('enum', 'multi');

const SORTS = ['newest', 'oldest', 'value_desc', 'value_asc', 'relevance'] as const;
type Sort = (typeof SORTS)[number];

const ALLOWED_PARAMS = new Set<string>([...FILTERS.map((f) => f.name), 'page', 'page_size', 'cursor', 'sort']);

/** A bad request: the parameter and why (the baseline answers 400 with this). */
export class BaselineParamError extends Error {
  readonly param: string;
  readonly reason: string;
  constructor(param: string, reason: string) {
    super(`${param}: ${reason}`);
    this.param = param;
    this.reason = reason;
  }
}

/** Allowed values of each list filter (by parameter name): folded value → canonical value (from the table). */
export type EnumValues = Record<string, Map<string, string>>;

/** A parsed, validated list request. */
export interface BaselineListRequest {
  q: string[] | null;
  /** The filters of the API's table except `q` (list filters hold canonical values). */
  filters: LeadsFilters;
  sort: Sort;
  page: number;
  pageSize: number;
  cursor: { key: [string, number]; filters: string } | null;
}

export interface SqlQuery {
  sql: string;
  params: unknown[];
}

/**
 * Parse `/leads` query parameters the way the API does (unknown parameter, bad enum value or bad
 * number → BaselineParamError). Authority and county values are folded (case, accents) and mapped
 * to the canonical name.
 */
export function parseBaselineList(query: URLSearchParams, values: EnumValues): BaselineListRequest {
  for (const k of query.keys()) if (!ALLOWED_PARAMS.has(k)) throw new BaselineParamError(k, 'unknown parameter');
  const one = (k: string): string | null => {
    const v = query.get(k);
    return v === null || v === '' ? null : v;
  };
  const int = (k: string, min: number, max: number): number | null => {
    const v = one(k);
    if (v === null) return null;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
      throw new BaselineParamError(k, `must be an integer from ${min} to ${max}`);
    return Number(v);
  };
  const bool = (k: string): boolean | null => {
    const v = one(k)?.toLowerCase() ?? null;
    if (v === null) return null;
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw new BaselineParamError(k, 'must be true, false, 1 or 0');
  };
  const filters: Record<string, unknown> = {};
  for (const f of FILTERS) {
    const v = one(f.name);
    if (v === null) continue;
    switch (f.kind) {
      case 'text':
        break;
      case 'enum':
      case 'multi':
        filters[f.name] = v.split(',').map((x) => {
          const canonical = values[f.name]?.get(foldSearchText(x.trim()));
          if (canonical === undefined) throw new BaselineParamError(f.name, `unknown value '${x}'`);
          return canonical;
        });
        break;
      case 'range':
        if (!(f.type === 'integer' ? /^\d{1,15}$/ : /^\d{1,15}(\.\d{1,9})?$/).test(v))
          throw new BaselineParamError(f.name, `must be ${f.type === 'integer' ? 'an integer' : 'a number'} ≥ 0`);
        filters[f.name] = Number(v);
        break;
      case 'flag':
        filters[f.name] = bool(f.name);
        break;
      case 'date':
        if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) !== v)
          throw new BaselineParamError(f.name, 'must be a date YYYY-MM-DD');
        filters[f.name] = v;
        break;
    }
  }
  const qText = one('q');
  const q =
    qText === null
      ? null
      : [
          ...new Set(
            foldSearchText(qText)
              .split(/[^a-z0-9]+/)
              .filter((w) => w.length >= 2),
          ),
        ];
  const sortText = one('sort') ?? (q ? 'relevance' : 'newest');
  if (!(SORTS as readonly string[]).includes(sortText))
    throw new BaselineParamError('sort', `one of ${SORTS.join(', ')}`);
  const sort = sortText as Sort;
  if (sort === 'relevance' && !q) throw new BaselineParamError('sort', 'relevance needs q');
  const req: BaselineListRequest = {
    q: q && q.length > 0 ? q : null,
    filters: filters as LeadsFilters,
    sort,
    page: int('page', 1, 100) ?? 1,
    pageSize: int('page_size', 1, 100) ?? 25,
    cursor: null,
  };
  const cursor = one('cursor');
  if (cursor !== null) {
    if (sort !== 'newest' && sort !== 'oldest')
      throw new BaselineParamError('cursor', 'the baseline pages by cursor on newest/oldest only');
    if (query.has('page')) throw new BaselineParamError('page', 'use page or cursor, not both');
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      throw new BaselineParamError('cursor', 'malformed');
    }
    const c = parsed as { k?: unknown; f?: unknown };
    if (
      !Array.isArray(c.k) ||
      c.k.length !== 2 ||
      typeof c.k[0] !== 'string' ||
      typeof c.k[1] !== 'number' ||
      c.f !== filterHash(req)
    ) {
      throw new BaselineParamError('cursor', 'not a cursor of this query');
    }
    req.cursor = { key: [c.k[0], c.k[1]], filters: c.f };
  }
  return req;
}

/** Hash of everything that selects and orders rows (a cursor is only valid for the same set). */
export function filterHash(req: BaselineListRequest): string {
  const { q, filters, sort } = req;
  return createHash('sha256')
    .update(JSON.stringify([q, filters, sort]))
    .digest('base64url')
    .slice(0, 16);
}

/** The cursor that continues after `last` (a row with received_date and id). */
export function baselineCursor(req: BaselineListRequest, last: { received_date: string; id: number }): string {
  return Buffer.from(JSON.stringify({ k: [last.received_date, last.id], f: filterHash(req) })).toString('base64url');
}

/** WHERE clause (without the keyword) and its params, numbered from `$<first>`. */
export function baselineWhere(req: BaselineListRequest, first = 1): { clauses: string[]; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const p = (v: unknown): string => {
    params.push(v);
    return `$${first + params.length - 1}`;
  };
  if (req.q) clauses.push(`l.search @@ to_tsquery('english', ${p(req.q.join(' | '))})`);
  // the API's filter clauses, in PostgreSQL's dialect
  const f = filterClauses(req.filters, 'postgres', first + params.length);
  return { clauses: [...clauses, ...f.clauses], params: [...params, ...f.params] };
}

/** ORDER BY of a sort. */
export function baselineOrder(sort: Sort): string {
  switch (sort) {
    case 'newest':
      return 'l.received_date DESC, l.id DESC';
    case 'oldest':
      return 'l.received_date ASC, l.id ASC';
    case 'value_desc':
      return 'l.est_value DESC NULLS LAST, l.id DESC';
    case 'value_asc':
      return 'l.est_value ASC NULLS LAST, l.id ASC';
    case 'relevance':
      return 'score DESC, l.id ASC';
  }
}

/** The page query and the count query of a list request. `columns` are the served columns. */
export function baselineListQuery(
  req: BaselineListRequest,
  columns: readonly string[],
): { page: SqlQuery; count: SqlQuery } {
  const table = `${BASELINE_SCHEMA}.leads l`;
  const where = baselineWhere(req);
  const countSql = `SELECT count(*)::int AS n FROM ${table}${where.clauses.length ? ` WHERE ${where.clauses.join(' AND ')}` : ''}`;
  const clauses = [...where.clauses];
  const params = [...where.params];
  if (req.cursor) {
    params.push(req.cursor.key[0], req.cursor.key[1]);
    const op = req.sort === 'oldest' ? '>' : '<';
    clauses.push(`(l.received_date, l.id) ${op} ($${params.length - 1}::date, $${params.length})`);
  }
  const cols = columns.map((c) => `l.${c}`).join(', ');
  const score = req.q ? `, ts_rank(l.search, to_tsquery('english', $1)) AS score` : '';
  params.push(req.pageSize, req.cursor ? 0 : (req.page - 1) * req.pageSize);
  const sql =
    `SELECT ${cols}${score} FROM ${table}${clauses.length ? ` WHERE ${clauses.join(' AND ')}` : ''} ` +
    `ORDER BY ${baselineOrder(req.sort)} LIMIT $${params.length - 1} OFFSET $${params.length}`;
  return { page: { sql, params }, count: { sql: countSql, params: where.params } };
}

// ---------------------------------------------------------------------------------------------
// Loading

/** Minimal COPY … FROM STDIN for `pg` (what pg-copy-streams does): streams a file as CopyData. */
class CopyFromFile implements pg.Submittable {
  private error: Error | null = null;
  readonly done: Promise<void>;
  private resolve!: () => void;
  private reject!: (e: Error) => void;
  readonly text: string;
  readonly file: string;
  constructor(text: string, file: string) {
    this.text = text;
    this.file = file;
    this.done = new Promise((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }
  submit(connection: pg.Connection): void {
    (connection as unknown as { query(text: string): void }).query(this.text);
  }
  handleCopyInResponse(connection: {
    sendCopyFromChunk(b: Buffer): void;
    endCopyFrom(): void;
    sendCopyFail(m: string): void;
  }): void {
    const stream = createReadStream(this.file, { highWaterMark: 1 << 20 });
    stream.on('data', (chunk) => connection.sendCopyFromChunk(chunk as Buffer));
    stream.on('end', () => connection.endCopyFrom());
    stream.on('error', (e) => connection.sendCopyFail(e.message));
  }
  handleCommandComplete(): void {}
  handleError(err: Error): void {
    this.error = err;
  }
  handleReadyForQuery(): void {
    if (this.error) this.reject(this.error);
    else this.resolve();
  }
}

const PG_TYPES: Record<string, string> = {
  BIGINT: 'bigint',
  INTEGER: 'integer',
  VARCHAR: 'text',
  DOUBLE: 'double precision',
  DATE: 'date',
  BOOLEAN: 'boolean',
  'VARCHAR[]': 'text[]',
};

/** The id of the release in `releaseDir` (its manifest). */
export function releaseIdOf(releaseDir: string): string {
  return (JSON.parse(readFileSync(join(releaseDir, 'manifest.json'), 'utf8')) as { release_id: string }).release_id;
}

/** The release a bench schema holds (its `meta` row), or null when the schema is empty or absent. */
export function loadedRelease(client: pg.Client, schema: string): Promise<{ release_id: string; rows: number } | null> {
  return client
    .query<{ release_id: string; rows: number }>(`SELECT release_id, rows FROM ${schema}.meta`)
    .then((r) => r.rows[0] ?? null)
    .catch(() => null);
}

/**
 * Load the release's leads into `bench_baseline.leads` (DuckDB writes a CSV, `COPY FROM STDIN`
 * reads it), then build the indexes and ANALYZE. Skipped when the schema already holds this
 * release (the `meta` table records its id).
 */
export async function loadBaseline(opts: {
  pgUrl: string;
  releaseDir: string;
  tmpDir: string;
}): Promise<{ rows: number; ms: number; reused: boolean }> {
  const t0 = performance.now();
  const releaseId = releaseIdOf(opts.releaseDir);
  const client = new pg.Client({ connectionString: opts.pgUrl });
  await client.connect();
  try {
    const have = await loadedRelease(client, BASELINE_SCHEMA);
    if (have?.release_id === releaseId) return { rows: have.rows, ms: performance.now() - t0, reused: true };

    const parquet = join(opts.releaseDir, 'leads.parquet');
    mkdirSync(opts.tmpDir, { recursive: true });
    const csv = join(opts.tmpDir, 'baseline-leads.csv');
    const db = await openDb({ threads: 2 });
    let columns: { name: string; type: string }[];
    try {
      columns = (
        await db.all<{ column_name: string; column_type: string }>(
          `DESCRIBE SELECT * FROM read_parquet(${sqlString(parquet)})`,
        )
      ).map((c) => ({
        name: c.column_name,
        type: c.column_type,
      }));
      const select = columns
        .map((c) =>
          c.type.endsWith('[]')
            ? `CASE WHEN ${c.name} IS NULL THEN NULL ELSE '{' || array_to_string(${c.name}, ',') || '}' END AS ${c.name}`
            : c.name,
        )
        .join(', ');
      await db.run(
        `COPY (SELECT ${select} FROM read_parquet(${sqlString(parquet)})) TO ${sqlString(csv)} (FORMAT CSV, HEADER false)`,
      );
    } finally {
      db.close();
    }
    const ddl = columns.map((c) => {
      const t = PG_TYPES[c.type];
      if (!t) throw new Error(`baseline: no PostgreSQL type for ${c.name} ${c.type}`);
      return `${c.name} ${t}${c.name === 'id' ? ' PRIMARY KEY' : ''}`;
    });
    await client.query(`DROP SCHEMA IF EXISTS ${BASELINE_SCHEMA} CASCADE`);
    await client.query(`CREATE SCHEMA ${BASELINE_SCHEMA}`);
    await client.query(
      `CREATE TABLE ${BASELINE_SCHEMA}.leads (${ddl.join(', ')}, search tsvector GENERATED ALWAYS AS (${TSV_EXPR}) STORED)`,
    );
    const copy = new CopyFromFile(
      `COPY ${BASELINE_SCHEMA}.leads (${columns.map((c) => c.name).join(', ')}) FROM STDIN (FORMAT csv)`,
      csv,
    );
    client.query(copy);
    await copy.done;
    rmSync(csv, { force: true });
    // B-tree on the sort and every filtered column; GIN on list columns (a B-tree cannot index `&&`)
    const listColumns = new Set(
      filtersOfKind('enum')
        .filter((f) => f.listColumn)
        .map((f) => f.column),
    );
    const filtered = [...new Set(FILTERS.filter((f) => f.kind !== 'text').map((f) => f.column))];
    const indexes = [
      'received_date DESC, id DESC',
      'est_value',
      ...filtered.filter((c) => !listColumns.has(c) && c !== 'est_value'),
    ];
    for (const [i, cols] of indexes.entries())
      await client.query(`CREATE INDEX leads_b${i} ON ${BASELINE_SCHEMA}.leads (${cols})`);
    for (const c of listColumns)
      await client.query(`CREATE INDEX leads_${c} ON ${BASELINE_SCHEMA}.leads USING gin (${c})`);
    await client.query(`CREATE INDEX leads_search ON ${BASELINE_SCHEMA}.leads USING gin (search)`);
    await client.query(`VACUUM ANALYZE ${BASELINE_SCHEMA}.leads`);
    const n = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${BASELINE_SCHEMA}.leads`)).rows[0]!.n;
    await client.query(`CREATE TABLE ${BASELINE_SCHEMA}.meta AS SELECT $1::text AS release_id, $2::int AS rows`, [
      releaseId,
      n,
    ]);
    return { rows: n, ms: performance.now() - t0, reused: false };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Serving

// BIGINT → number, DATE → 'YYYY-MM-DD' (the API's JSON shapes).
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1082, (v) => v);

/** Build the baseline Koa app over a pool. `keySha256` is the hex SHA-256 of the accepted key. */
export async function createBaselineApp(pool: pg.Pool, keySha256: string): Promise<Koa> {
  const columns = (
    await pool.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'leads' AND column_name <> 'search' ORDER BY ordinal_position`,
      [BASELINE_SCHEMA],
    )
  ).rows.map((r) => r.column_name);
  const values: EnumValues = {};
  for (const f of LIST_FILTERS) {
    const col = f.column;
    const sql =
      f.kind === 'enum' && f.listColumn
        ? `SELECT DISTINCT unnest(${col}) AS v FROM ${BASELINE_SCHEMA}.leads`
        : `SELECT DISTINCT ${col} AS v FROM ${BASELINE_SCHEMA}.leads WHERE ${col} IS NOT NULL`;
    values[f.name] = new Map((await pool.query<{ v: string }>(sql)).rows.map((r) => [foldSearchText(r.v), r.v]));
  }
  const want = Buffer.from(keySha256, 'hex');
  const detailSql = `SELECT ${columns.join(', ')} FROM ${BASELINE_SCHEMA}.leads WHERE id = $1`;

  const app = new Koa();
  app.use(async (ctx) => {
    const auth = /^Bearer (\S+)$/.exec(ctx.get('authorization'));
    const got = auth ? createHash('sha256').update(auth[1]!).digest() : Buffer.alloc(32);
    if (!auth || !timingSafeEqual(got, want)) {
      ctx.status = 401;
      ctx.body = { code: 'unknown_key' };
      return;
    }
    if (ctx.method !== 'GET') {
      ctx.status = 405;
      return;
    }
    if (ctx.path === '/leads') {
      let req: BaselineListRequest;
      try {
        req = parseBaselineList(new URLSearchParams(ctx.querystring), values);
      } catch (e) {
        if (!(e instanceof BaselineParamError)) throw e;
        ctx.status = 400;
        ctx.body = { code: 'invalid_parameter', errors: [{ name: e.param, reason: e.reason }] };
        return;
      }
      const q = baselineListQuery(req, columns);
      const [page, count] = await Promise.all([
        pool.query(q.page.sql, q.page.params),
        pool.query<{ n: number }>(q.count.sql, q.count.params),
      ]);
      const rows = page.rows as { received_date: string; id: number }[];
      const last = rows[rows.length - 1];
      const more = rows.length === req.pageSize && (req.sort === 'newest' || req.sort === 'oldest');
      ctx.body = {
        total: count.rows[0]!.n,
        page: req.cursor ? null : req.page,
        page_size: req.pageSize,
        next_cursor: more && last ? baselineCursor(req, last) : null,
        results: rows,
      };
      return;
    }
    const m = /^\/leads\/(\d{1,15})$/.exec(ctx.path);
    if (m) {
      const r = await pool.query(detailSql, [Number(m[1])]);
      if (r.rows.length === 0) ctx.status = 404;
      else ctx.body = r.rows[0];
      return;
    }
    ctx.status = 404;
  });
  return app;
}

/** Start the baseline server; resolves once it listens. */
export async function startBaselineServer(opts: {
  pgUrl: string;
  port: number;
  host?: string;
  keySha256: string;
  poolSize: number;
}): Promise<{ port: number; close: () => Promise<void> }> {
  // Parallel query helps one query alone but costs throughput when 16 clients already keep both
  // cores busy, so the baseline runs each query on one process (the usual OLTP setting).
  const pool = new pg.Pool({
    connectionString: opts.pgUrl,
    max: opts.poolSize,
    options: '-c max_parallel_workers_per_gather=0',
  });
  const app = await createBaselineApp(pool, opts.keySha256);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: async () => {
      await new Promise<void>((r) => server.close(() => r()));
      await pool.end();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values: a } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      pg: { type: 'string', default: PG_URL_DEFAULT },
      'key-sha256': { type: 'string' },
      pool: { type: 'string', default: '8' },
    },
  });
  if (!a['key-sha256']) throw new Error('--key-sha256 is required');
  const s = await startBaselineServer({
    pgUrl: a.pg!,
    port: Number(a.port),
    keySha256: a['key-sha256'],
    poolSize: Number(a.pool),
  });
  console.log(JSON.stringify({ port: s.port }));
  const stop = (): void => void s.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
