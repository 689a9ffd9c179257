/**
 * Bulk exports of leads (spec 4.3), with the filters of `GET /v1/leads`:
 *
 * - `GET /v1/export/applications` — cursor pages in id order, envelope `{ results, next_cursor,
 *   count, _meta }` (spec 2.9). A cursor is pinned to the release the export started on: later
 *   pages are read from that release while it is kept on disk (`api/releases/kept-release.ts`), else 410
 *   `cursor_expired`.
 * - `GET /v1/export/applications.csv` / `.jsonl` — the whole filtered set in the release's order
 *   (newest first), gzip when accepted, written by the release's leads engine from memory, ~100
 *   leads a chunk as the response wants them (`api/render/engine-lines.ts`), never held whole in
 *   memory; CSV byte for byte what DuckDB's CSV writer writes (which still writes it, into a temp
 *   file, in the one case the engine cannot: a masked field inside a column's value).
 *   `.parquet` — written by DuckDB to a temp file, then streamed. A download filename is given in
 *   `Content-Disposition`.
 *
 * Budgets: a cursor page charges its rows; a one-shot file charges the whole filtered count (from
 * the release's leads engine, `Release.leads.count`) up front, so a file larger than the
 * remaining daily budget is refused (429) before any byte is sent. `HEAD` answers the GET's headers (and status) and `dry_run=1` a quote; neither charges.
 *
 * Temp space: a Parquet export (or a CSV DuckDB writes) reserves its temp file (`api/exports/temp-space.ts`: private folder, `0600`,
 * bounded by EXPORT_TEMP_MAX_MB) before it charges the budget, so an export that gets `503
 * export_busy` costs nothing; quotes take no temp space.
 *
 * Masking: `maskedFor` (api/access/masking.ts) names the enriched columns the scope may not see; they
 * are rendered as NULL (JSON null, blank CSV field, typed NULL Parquet column), never dropped.
 * Attribution (commonwealth): `_meta.attribution` in JSON, the `Link rel="license"` and
 * `X-Attribution` headers on every format (api/middleware/attribution.ts), and the Parquet
 * file's key-value metadata (`attribution`, `license`).
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { releaseForCursor } from '../releases/kept-release.ts';
import { attribution, maskedFor, maskingFor, responseMeta } from '../access/masking.ts';
import { sendJsonBody } from '../render/json-body.ts';
import { served, type Served } from '../access/budget.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import { releaseSourcesCache } from '../releases/release-lookups.ts';
import { encodeCursor } from '../query/paging.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';
import {
  EXPORT_FORMATS,
  EXPORT_LIMIT_DEFAULT,
  EXPORT_LIMIT_MAX,
  exportQuerySchema,
  exportHash,
  exportRowsQuery,
  jsonLineSql,
  parseExportQuery,
  type ExportFormat,
} from '../query/export-query.ts';
import { csvEngineStream, csvStream } from '../render/csv.ts';
import { jsonlStream } from '../render/jsonl.ts';
import { maybeGzip } from '../render/lines.ts';
import { parquetStream } from '../render/parquet.ts';
import { lazyExportTempSpace, type ExportTempSpace } from '../exports/temp-space.ts';
import { areaIds } from '../gis/geometry-ids.ts';

/** What the export operations share: the release lookups and the temp space. */
interface ExportsEnv {
  config: ApiConfig;
  deps: Pick<AppDeps, 'db' | 'exportTemp' | 'log' | 'metrics'>;
  sourcesFor: ReturnType<typeof releaseSourcesCache>;
  tempSpace: () => ExportTempSpace;
}

/**
 * `GET /v1/export/applications`: one cursor page, from the release the cursor is pinned to — on
 * the serving release by its leads engine (id order through the lead index: work in proportion
 * to the page), on a kept older release by DuckDB over its files, with the same semantics.
 */
async function exportPage(ctx: AppContext, { config, deps, sourcesFor }: ExportsEnv): Promise<Served> {
  const { release: pinned, key } = ctx.state;
  const req = parseExportQuery(ctx.query, 'page', config, (await sourcesFor(pinned)).places);
  const afterId = req.cursor?.afterId ?? null;
  const cursorAt = (releaseId: string, lastId: unknown): string =>
    encodeCursor([lastId as number], releaseId, exportHash(req.filters), config);
  if (!req.cursor || req.cursor.release === pinned.id) {
    const page = pinned.leads.exportPage(req.filters, afterId, req.limit, maskingFor(key.scope));
    return served(page.count, () => {
      const nextCursor = page.more && page.lastId !== null ? cursorAt(pinned.id, page.lastId) : null;
      setPageLinks(ctx, { next: nextCursor && pageHref(ctx, { cursor: nextCursor }) });
      sendJsonBody(ctx, page.json({ next_cursor: nextCursor }));
    });
  }
  const release = releaseForCursor(config.dataDir, pinned, req.cursor.release);
  const src = await sourcesFor(release);
  const masked = maskedFor('lead', key.scope);
  const ids = await areaIds(deps.db, src.leads.leads, req.filters); // geometry filters: tested by api/gis/geometry.ts, ids into the SQL
  const q = exportRowsQuery(
    src.leads,
    { filters: req.filters, afterId, limit: req.limit + 1, ...(ids ? { areaIds: ids } : {}) },
    `${jsonLineSql(new Set(masked.map((m) => m.field)))} AS j`,
  );
  const rows = await deps.db.all<{ j: string }>(q.sql, q.params);
  const more = rows.length > req.limit;
  const results = (more ? rows.slice(0, req.limit) : rows).map((r) => JSON.parse(r.j) as Record<string, unknown>);
  return served(results.length, () => {
    const last = results.at(-1);
    const nextCursor = more && last ? cursorAt(release.id, last['id']) : null;
    setPageLinks(ctx, { next: nextCursor && pageHref(ctx, { cursor: nextCursor }) });
    ctx.body = {
      results,
      next_cursor: nextCursor,
      count: results.length,
      _meta: responseMeta(release.id, key.scope, masked),
    };
  });
}

/**
 * One file export: counted, then (after the charge, `send`) written and streamed. The whole
 * file is charged before any byte is sent.
 */
async function exportFile(
  ctx: AppContext,
  format: ExportFormat,
  { config, deps, sourcesFor, tempSpace }: ExportsEnv,
): Promise<Served> {
  const { release, key, budget } = ctx.state;
  const src = await sourcesFor(release);
  const req = parseExportQuery(ctx.query, 'file', config, src.places);
  const masked = maskedFor('lead', key.scope);
  const maskedSet = new Set(masked.map((m) => m.field));
  const rows = release.leads.count(req.filters);
  const { type, ext } = EXPORT_FORMATS[format];
  const filename = `applications-${release.id}.${ext}`;
  const remaining = budget.remaining;
  ctx.set('X-Export-Rows', String(rows));
  ctx.set('X-Export-Release', release.id);
  ctx.set('X-Budget-Remaining', remaining === null ? 'unlimited' : String(remaining));
  ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
  ctx.type = type;
  // The whole file is charged before any byte is sent. For dry_run=1 the access model's budget
  // answers the quote by throwing from charge(); for HEAD its budget refuses as the GET's would
  // and charges nothing: the GET's headers, no COPY, no temp space.
  if (budget.quoting || ctx.method === 'HEAD') {
    return served(rows, () => {
      ctx.status = 200;
    });
  }
  // running from the charge until its response is sent or cut (the `exports_running` gauge)
  const running = (): void => {
    const gauge = deps.metrics?.exportsRunning;
    if (!gauge) return;
    gauge.inc();
    ctx.res.once('close', () => gauge.dec());
  };
  // written by the release's leads engine from memory (no temp file): JSON Lines always, CSV
  // whenever masking is by whole columns
  const masking = maskingFor(key.scope);
  const engineStream =
    format === 'jsonl'
      ? jsonlStream(release.leads, req.filters, masking)
      : format === 'csv'
        ? csvEngineStream(release.leads, req.filters, masking)
        : null;
  if (engineStream) {
    return served(
      rows,
      () => {
        running();
        ctx.body = maybeGzip(ctx, engineStream);
        ctx.type = type; // setting a stream body may reset the type
      },
      () => void engineStream.destroy(), // not sent (refused by the budget): nothing was written
    );
  }
  // temp space first (it may wait, or answer 503): a refused export is not charged, and a
  // refused charge gives the temp space back
  const file = await tempSpace().acquire(format, rows);
  return served(
    rows,
    async () => {
      running();
      const ids = await areaIds(deps.db, src.leads.leads, req.filters);
      const rowsReq = { filters: req.filters, afterId: null, limit: null, ...(ids ? { areaIds: ids } : {}) };
      if (format === 'parquet') {
        const { body, bytes } = await parquetStream(
          deps.db,
          src.leads,
          rowsReq,
          maskedSet,
          file,
          attribution(key.scope)?.metadata ?? null,
        );
        ctx.body = body;
        ctx.length = bytes;
        return;
      }
      ctx.body = maybeGzip(ctx, csvStream(deps.db, src.leads, rowsReq, maskedSet, file));
      ctx.type = type; // setting a stream body may reset the type
    },
    () => file.release(),
  );
}

const FILE_FORMATS = [
  [
    'csv',
    'text/csv',
    "CSV (RFC 4180): a header with every lead column, in schema order, the same for every scope (enriched columns blank for scopes without them, never dropped); CRLF line ends; text quoted, lists joined with `;`, dates `YYYY-MM-DD`, booleans `true`/`false`, NULL as an empty field, numbers as DuckDB prints them (a whole decimal number as `1.0`). Written from the release's in-memory leads engine as the response is read, byte for byte what DuckDB's CSV writer writes; gzip with `Accept-Encoding: gzip`.",
  ],
  [
    'jsonl',
    'application/x-ndjson',
    "JSON Lines: one lead object per line, the same keys and values as `GET /leads` results (enriched fields null for scopes without them). Written from the release's in-memory leads engine as the response is read (no temp file); gzip with `Accept-Encoding: gzip`.",
  ],
  [
    'parquet',
    'application/vnd.apache.parquet',
    'Parquet (ZSTD): one row per lead, every lead column with its type (enriched columns typed NULL for scopes without them), for loading into data warehouses. Written by DuckDB to a temporary file, then sent with its `Content-Length`.',
  ],
] as const;

const FILE_OPERATIONS = FILE_FORMATS.map(([ext, type, what]): Operation<ExportsEnv> => ({
  method: 'get',
  path: `/export/applications.${ext}`,
  tag: 'Exports',
  summary: `Whole filtered set as ${ext === 'jsonl' ? 'JSON Lines' : ext.toUpperCase()}`,
  description:
    `${what} The filters of \`/leads\` (AND across filters, OR within one); rows in the release's order, newest first (received_date descending; no sort, so an export never holds every row in memory). The file is named in \`Content-Disposition\` (\`applications-<release>.${ext}\`). ` +
    'The whole filtered count is charged to the daily row budget (commonwealth, ent_api) before any byte is sent; a file larger than what is left today is refused with 429 `budget_exhausted` (retry after the reset), one larger than the whole daily budget with 403 `budget_too_small` (narrow it: filters, `changed_since`, `/events`). ' +
    "`HEAD` (the GET's status and headers, no file written) or `dry_run=1` say what it would cost (`X-Export-Rows`, `X-Budget-Cost`; `dry_run=1` as a BudgetQuote, `application/vnd.leads.quote+json`) and charge nothing. " +
    (ext === 'jsonl'
      ? 'No temp file: the lines are written from memory as the response is read.'
      : ext === 'csv'
        ? 'No temp file: the lines are written from memory as the response is read (were a masked field ever inside a column, DuckDB would write it to a temp file, with the `export_busy` and `export_too_large` answers of `.parquet`).'
        : 'The file is written to a temp file readable by the server alone; when the exports running on the server hold their temp space, a new one waits a few seconds, then gets 503 `export_busy` with `Retry-After` (not charged); one export expected to take more than the whole temp bound gets 507 `export_too_large` (not charged), and one that passes it while it is written is stopped (the response is cut).'),
  query: exportQuerySchema('file'), // dry_run: added to every keyed operation by the access model (api/openapi/access.ts)
  ok: {
    schema: { type: 'string', description: `The ${ext} file.` },
    type,
    description: `The ${ext} file (or, with \`dry_run=1\`, a BudgetQuote as application/vnd.leads.quote+json).`,
  },
  errors: ext === 'parquet' ? [400, 429, 507] : [400, 429],
  cached: true,
  handler: (ctx, env) => exportFile(ctx, ext, env),
}));

/** The export operations (paths relative to the /v1 mount). */
export const EXPORTS_OPERATIONS: readonly Operation<ExportsEnv>[] = [
  {
    method: 'get',
    path: '/export/applications',
    tag: 'Exports',
    summary: 'Cursor-paginated JSON export',
    description:
      `The filtered leads in id order, \`limit\` per page (default ${EXPORT_LIMIT_DEFAULT}, at most ${EXPORT_LIMIT_MAX}); pass \`next_cursor\` as \`cursor\` (with the same filters) until it is null. ` +
      'A cursor is pinned to the release the export started on, so a release published meanwhile does not change the export; it stays valid while that release is kept on disk (RELEASE_RETENTION_WEEKS), then 410 `cursor_expired`. Each page is charged to the daily row budget.',
    query: exportQuerySchema('page'),
    ok: { schema: schemaRef('ExportPage'), description: 'A page of the export.' },
    errors: [400, 410, 429],
    cached: true,
    handler: exportPage,
  },
  ...FILE_OPERATIONS,
];

/** The exports router (paths relative to the /v1 mount). */
export function exportsRouter(
  config: ApiConfig,
  deps: Pick<AppDeps, 'db' | 'exportTemp' | 'log' | 'metrics'>,
): Router<AppState> {
  const tempSpace = lazyExportTempSpace(config, deps.exportTemp, deps.log);
  return mount(EXPORTS_OPERATIONS, { config, deps, sourcesFor: releaseSourcesCache(deps.db), tempSpace });
}
