/**
 * `read:ppr` and `write:sales`: the property sales stream from the PPR files straight into the
 * staging file of `sales.parquet`, validated on the way (~800,000 rows never sit in memory), with
 * a private copy for the analytics stage; then DuckDB numbers each sale's id and sorts the staging
 * file into Parquet (pipeline/release/published-sale.ts).
 *
 * `read:ppr` is the first stage that writes, so it starts the build (folder and DuckDB).
 */
import { openIntelSalesSink } from '../intel/sales-input.ts';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { publishedRow, salesCopySql, stagedSale } from '../release/published-sale.ts';
import { tableSpec } from '../release/table-specs.ts';
import { openTableSink } from '../release/tables.ts';
import { readPpr } from '../sources/ppr.ts';
import { loadValidators } from '../validate.ts';
import { startBuild } from './build.ts';
import { account, need, noteInvalid } from './context.ts';
import type { Stage } from './runner.ts';

/** Stands for a sale's id while it is validated: the real one is made when the table is written. */
const ID_PLACEHOLDER = '0000000000000000';

export const readPprStage: Stage = {
  name: 'read:ppr',
  async run(ctx) {
    const build = (ctx.made.build = await startBuild(ctx.config, ctx.deps.now()));
    await build.fresh();
    const validators = (ctx.made.validators = loadValidators());
    const spec = tableSpec('sales');
    const sink = openTableSink(build.dir, 'sales');
    const intelSales = openIntelSalesSink(build.dir); // the analytics stage's private copy (Eircode hashes)
    const check = { invalid: 0, samples: [] as string[] };
    let seq = 0;
    const ppr = await readPpr(need(ctx, 'files').by.ppr, (row) => {
      const sale = stagedSale(row, seq++);
      // validated as published; its id (DuckDB's, in write:sales) is 16 hex digits by construction
      const problems = validators.validate('property-sale', publishedRow(sale, ID_PLACEHOLDER));
      if (problems.length) {
        check.invalid++;
        if (check.samples.length < 5) check.samples.push(`line ${row.line}: ${problems.join(', ')}`);
      }
      sink.write(sale);
      intelSales.write(row);
    });
    const count = sink.close();
    intelSales.close();
    ctx.made.sales = { spec, sink, count };
    ctx.made.intelSalesPath = intelSales.path;
    account(ctx, 'ppr', ppr, count);
    noteInvalid(ctx, 'property-sale', check);
    return ppr.lines;
  },
};

export const writeSalesStage: Stage = {
  name: 'write:sales',
  async run(ctx) {
    const build = need(ctx, 'build');
    const sales = need(ctx, 'sales');
    await build.db().run(salesCopySql(sales.spec, sales.sink.path, join(build.dir, 'sales.parquet')));
    await rm(sales.sink.path, { force: true });
    ctx.counts['sales'] = sales.count;
    // Closing the instance that sorted 800,000 sales hands its buffer pool back.
    await build.fresh();
    return sales.count;
  },
};
