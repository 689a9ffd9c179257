/**
 * Bulk exports of leads (spec 4.3), with the filters of `GET /v1/leads`:
 *
 * - `GET /v1/export/applications` — cursor pages in id order, envelope `{ results, next_cursor,
 *   count, _meta }` (spec 2.9). A cursor is pinned to the release the export started on: later
 *   pages are read from that release while it is kept on disk (`api/releases/kept-release.ts`), else 410
 *   `cursor_expired`.
 * - `GET /v1/export/applications.csv` / `.jsonl` — the whole filtered set in the release's order
 *   (newest first), written by DuckDB's own CSV / JSON writer (`COPY … TO` a temp file) and
 *   streamed while it is written (`api/render/copy-stream.ts`; never held whole in memory), gzip
 *   when accepted; `.parquet` — written by DuckDB to a temp file, then streamed. A download
 *   filename is given in `Content-Disposition`.
 *
 * Budgets: a cursor page charges its rows; a one-shot file charges the whole filtered count (from
 * the release's leads engine, `Release.leads.count`) up front, so a file larger than the
 * remaining daily budget is refused (429) before any byte is sent. `HEAD` answers the GET's headers (and status) and `dry_run=1` a quote; neither charges.
 *
 * Temp space: a file export reserves its temp file (`api/exports/temp-space.ts`: private folder, `0600`,
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
import { attribution, maskedFor, responseMeta } from '../access/masking.ts';
import { charging, served, type Served } from '../access/budget.ts';
import { releaseSourcesCache } from '../releases/release-lookups.ts';
import { encodeCursor } from '../query/paging.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';
import {
  EXPORT_FORMATS,
  exportHash,
  exportRowsQuery,
  jsonLineSql,
  parseExportQuery,
  type ExportFormat,
} from '../query/export-query.ts';
import { csvStream } from '../render/csv.ts';
import { jsonlStream } from '../render/jsonl.ts';
import { maybeGzip } from '../render/lines.ts';
import { parquetStream } from '../render/parquet.ts';
import { ExportTempSpace } from '../exports/temp-space.ts';
import { areaIds } from '../gis/geometry-ids.ts';

/** The exports router (paths relative to the /v1 mount). */
export function exportsRouter(
  config: ApiConfig,
  deps: Pick<AppDeps, 'db' | 'exportTemp' | 'log' | 'metrics'>,
): Router<AppState> {
  const router = new Router<AppState>();
  const sourcesFor = releaseSourcesCache(deps.db);
  // the server prepares it at start (leftovers removed); an app built without one makes it on first use
  let temp = deps.exportTemp ?? null;
  const tempSpace = (): ExportTempSpace =>
    (temp ??= new ExportTempSpace({
      root: config.exportTempDir,
      maxBytes: config.exportTempMaxMb * 1e6,
      waitMs: config.exportTempWaitMs,
      log: deps.log,
    }));

  router.get(
    '/export/applications',
    charging(async (ctx: AppContext) => {
      const { release: pinned, key } = ctx.state;
      const req = parseExportQuery(ctx.query, 'page', config, (await sourcesFor(pinned)).places);
      const release = req.cursor ? releaseForCursor(config.dataDir, pinned, req.cursor.release) : pinned;
      const src = await sourcesFor(release);
      const masked = maskedFor('lead', key.scope);
      const ids = await areaIds(deps.db, src.leads.leads, req.filters); // geometry filters: tested by api/gis/geometry.ts, ids into the SQL
      const q = exportRowsQuery(
        src.leads,
        {
          filters: req.filters,
          afterId: req.cursor?.afterId ?? null,
          limit: req.limit + 1,
          ...(ids ? { areaIds: ids } : {}),
        },
        `${jsonLineSql(new Set(masked.map((m) => m.field)))} AS j`,
      );
      const rows = await deps.db.all<{ j: string }>(q.sql, q.params);
      const more = rows.length > req.limit;
      const results = (more ? rows.slice(0, req.limit) : rows).map((r) => JSON.parse(r.j) as Record<string, unknown>);
      return served(results.length, () => {
        const last = results.at(-1);
        const nextCursor =
          more && last ? encodeCursor([last['id']], release.id, exportHash(req.filters), config) : null;
        setPageLinks(ctx, { next: nextCursor && pageHref(ctx, { cursor: nextCursor }) });
        ctx.body = {
          results,
          next_cursor: nextCursor,
          count: results.length,
          _meta: responseMeta(release.id, key.scope, masked),
        };
      });
    }),
  );

  for (const format of Object.keys(EXPORT_FORMATS) as ExportFormat[]) {
    router.get(
      `/export/applications.${format}`,
      charging((ctx: AppContext) => exportFile(ctx, format)),
    );
  }

  /**
   * One file export: counted, then (after the charge, `send`) written and streamed. The whole
   * file is charged before any byte is sent.
   */
  async function exportFile(ctx: AppContext, format: ExportFormat): Promise<Served> {
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
    // temp space first (it may wait, or answer 503): a refused export is not charged, and a
    // refused charge gives the temp space back
    const file = await tempSpace().acquire(format, rows);
    return served(
      rows,
      async () => {
        // running from here until its response is sent or cut (the `exports_running` gauge)
        const running = deps.metrics?.exportsRunning;
        if (running) {
          running.inc();
          ctx.res.once('close', () => running.dec());
        }
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
        const stream =
          format === 'csv'
            ? csvStream(deps.db, src.leads, rowsReq, maskedSet, file)
            : jsonlStream(deps.db, src.leads, rowsReq, maskedSet, file);
        ctx.body = maybeGzip(ctx, stream);
        ctx.type = type; // setting a stream body may reset the type
      },
      () => file.release(),
    );
  }

  return router;
}
