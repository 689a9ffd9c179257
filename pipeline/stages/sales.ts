/**
 * The property sales: the one source no other needs until the analytics, so it is read beside
 * the rest. `start` opens the build (folder, DuckDB, validators) and starts a worker thread
 * (pipeline/stages/sales-worker.ts) that streams the PPR files straight into the staging file
 * of `sales.parquet`, validated on the way (~800,000 rows never sit in memory), with a private
 * copy for the analytics stage (`readSales`); `read:ppr`, after the leads, waits for it and
 * accounts the source; `write:sales` has DuckDB number each sale's id and sort the staging file
 * into Parquet (pipeline/release/published-sale.ts). The two cores each read a source at once.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openIntelSalesSink } from '../intel/sales-input.ts';
import { publishedRow, salesCopySql, stagedSale, stagedSaleColumns } from '../release/published-sale.ts';
import { tableSpec } from '../release/table-specs.ts';
import { openCsvTableSink } from '../release/tables.ts';
import { readPpr } from '../sources/ppr.ts';
import { loadValidators } from '../validate.ts';
import { startBuild } from './build.ts';
import { account, need, noteInvalid, type SalesRead } from './context.ts';
import type { Stage } from './runner.ts';

/** Stands for a sale's id while it is validated: the real one is made when the table is written. */
const ID_PLACEHOLDER = '0000000000000000';

/** Read the PPR `files` into staging files in the build folder `dir` (in the worker thread). */
export async function readSales(files: string[], dir: string): Promise<SalesRead> {
  const validators = loadValidators();
  const columns = stagedSaleColumns(tableSpec('sales')).map(([n]) => n);
  const sink = openCsvTableSink(dir, 'sales', columns);
  const intelSales = openIntelSalesSink(dir); // the analytics stage's private copy (Eircode hashes)
  const invalid = { invalid: 0, samples: [] as string[] };
  let seq = 0;
  const ppr = await readPpr(files, (row) => {
    const sale = stagedSale(row, seq++);
    // validated as published; its id (DuckDB's, in write:sales) is 16 hex digits by construction
    const problems = validators.validate('property-sale', publishedRow(sale, ID_PLACEHOLDER));
    if (problems.length) {
      invalid.invalid++;
      if (invalid.samples.length < 5) invalid.samples.push(`line ${row.line}: ${problems.join(', ')}`);
    }
    sink.write(sale);
    intelSales.write(row);
  });
  const count = sink.close();
  intelSales.close();
  return {
    stagingPath: sink.path,
    count,
    intelSalesPath: intelSales.path,
    lines: ppr.lines,
    rejects: ppr.rejects,
    invalid,
  };
}

/**
 * `readSales` in a worker thread. The promise always has a handler (a failure is kept until a
 * stage asks for the result, not thrown as an unhandled rejection); `stop()` ends the worker and
 * resolves once it has ended (a worker that already finished ends at once).
 */
export function readSalesInWorker(
  files: string[],
  dir: string,
): { result: () => Promise<SalesRead>; stop: () => void } {
  const worker = new Worker(new URL('./sales-worker.ts', import.meta.url), { workerData: { files, dir } });
  const settled = new Promise<SalesRead>((resolve, reject) => {
    worker.once('message', (m: { ok?: SalesRead; error?: string }) =>
      m.ok ? resolve(m.ok) : reject(new Error(`reading the PPR files failed: ${m.error}`)),
    );
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the PPR reader stopped (exit code ${code}) before it finished`)));
  });
  const outcome = settled.then(
    (ok) => ({ ok }),
    (error: unknown) => ({ error }),
  );
  return {
    result: async () => {
      const o = await outcome;
      if ('error' in o) throw o.error;
      return o.ok;
    },
    stop: () => worker.terminate(),
  };
}

/** Open the build, load the validators and start reading the sales beside the next stages. */
export const startStage: Stage = {
  name: 'start',
  async run(ctx) {
    const build = (ctx.made.build = await startBuild(ctx.config, ctx.deps.now()));
    await build.fresh();
    ctx.made.validators = loadValidators();
    const reading = readSalesInWorker(need(ctx, 'files').by.ppr, build.dir);
    build.onClose(reading.stop);
    ctx.made.salesRead = reading.result;
    return need(ctx, 'files').by.ppr.length;
  },
};

/** Wait for the sales read started by `start`, and account the source. */
export const readPprStage: Stage = {
  name: 'read:ppr',
  async run(ctx) {
    const read = await need(ctx, 'salesRead')();
    ctx.made.sales = { spec: tableSpec('sales'), stagingPath: read.stagingPath, count: read.count };
    ctx.made.intelSalesPath = read.intelSalesPath;
    account(ctx, 'ppr', { rows: [], rejects: read.rejects, lines: read.lines }, read.count);
    noteInvalid(ctx, 'property-sale', read.invalid);
    return read.lines;
  },
};

export const writeSalesStage: Stage = {
  name: 'write:sales',
  async run(ctx) {
    const build = need(ctx, 'build');
    const sales = need(ctx, 'sales');
    for (const sql of salesCopySql(sales.spec, sales.stagingPath, join(build.dir, 'sales.parquet')))
      await build.db().run(sql);
    await rm(sales.stagingPath, { force: true });
    ctx.counts['sales'] = sales.count;
    // Closing the instance that sorted 800,000 sales hands its buffer pool back.
    await build.fresh();
    return sales.count;
  },
};
