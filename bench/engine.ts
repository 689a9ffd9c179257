/**
 * `make bench` section `engine` (`--only engine [--against REF] [--scale 5x]`): the leads engine
 * alone, in this process, on the growth section's 3,000 list queries (filters with every sort and
 * `q`, made from the default release's values): µs a query by kind, a page and its bytes
 * (`LeadsEngine.page` and `json`), no HTTP, no access model.
 *
 * With `--against REF` the engine of REF's checkout runs beside this one in the same process, on
 * the same indexes (built once, packed, and read and unpacked by each side's own code), the two taking
 * turns pass by pass: what the box does meanwhile falls on both sides alike. Separate runs of the
 * same code moved ±15–40% on this shared box; in turns, unchanged kinds agree within ~10%. It is
 * the instrument for a change to the engine; the API's own throughput stays the `api` and
 * `growth` sections' business. REF's pack format must be this one's (its `unpackIndexes` reads it).
 */
import { realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import { maskingFor } from '../api/access/masking.ts';
import { loadApiConfig } from '../api/config.ts';
import { openApiDb } from '../api/duckdb/db.ts';
import { pageQueryOf, type LeadsEngine } from '../api/engine/leads-engine.ts';
import { Readable, Writable } from 'node:stream';
import { writePack, type Packable } from '../api/engine/pack.ts';
import { buildReleaseIndexes, packIndexes } from '../api/engine/release-indexes.ts';
import { parseLeadsQuery, type LeadsRequest } from '../api/query/leads-params.ts';
import { listMixQueries, releaseValues, type BenchRow } from './api.ts';

export interface EngineBenchOptions {
  root: string;
  /** The release's data folder (its `current` is served). */
  benchData: string;
  /** The default release, whose values make the queries (the growth section's). */
  valuesData: string;
  /** Another checkout whose engine runs beside this one. */
  against?: { root: string; label: string };
  /** Passes over the queries per side (the first is a warm-up, not counted). */
  passes?: number;
  /** The first `limit` queries only (tests). */
  limit?: number;
  log?: (line: string) => void;
}

/** A query's kind: filters or `q`, and its sort. */
export function queryKind(query: string): string {
  const sort = /(?:^|&)sort=(\w+)/.exec(query)?.[1] ?? (query.startsWith('q=') ? 'relevance' : 'newest');
  return `${query.startsWith('q=') ? 'q' : 'filters'}, ${sort}`;
}

/**
 * One side's engine, made by its own checkout's code from the shared pack's bytes: read by its
 * own `readPack` (so each side's arrays live where its server would hold them — since the
 * bitset kernel, a WebAssembly memory) and unpacked by its own `unpackIndexes`.
 */
async function engineOf(root: string, id: string, bytes: Buffer[]): Promise<LeadsEngine> {
  const { LeadsEngine: Engine } = (await import(join(root, 'api/engine/leads-engine.ts'))) as {
    LeadsEngine: new (id: string, ix: unknown) => LeadsEngine;
  };
  const { unpackIndexes } = (await import(join(root, 'api/engine/release-indexes.ts'))) as {
    unpackIndexes: (tree: Packable) => unknown;
  };
  const { readPack } = (await import(join(root, 'api/engine/pack.ts'))) as {
    readPack: (input: Readable) => Promise<Packable>;
  };
  return new Engine(id, unpackIndexes(await readPack(Readable.from(bytes))));
}

/** The pack of `ix` as bytes (the stream a build child writes). */
async function packBytes(ix: Parameters<typeof packIndexes>[0]): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk); // views into the built arrays, which nothing changes afterwards
      done();
    },
  });
  await writePack(sink, packIndexes(ix));
  return chunks;
}

export async function engineBench(opts: EngineBenchOptions): Promise<BenchRow[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  const passes = Math.max(2, opts.passes ?? 10);
  const dir = realpathSync(join(opts.benchData, 'current'));
  const id = basename(dir);
  const db = await openApiDb({ connections: 2, threads: 2, memoryLimit: '4GB' });
  let bytes: Buffer[];
  try {
    const t0 = performance.now();
    bytes = await packBytes(await buildReleaseIndexes(db, dir));
    log(`engine: indexes of ${id} built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    db.close();
  }
  const sides = [{ label: 'this checkout', root: opts.root }, ...(opts.against ? [opts.against] : [])];
  const engines: LeadsEngine[] = [];
  for (const s of sides) engines.push(await engineOf(s.root, id, bytes));

  const { values } = await releaseValues(join(opts.valuesData, 'current', 'leads.parquet'), 10);
  let queries = listMixQueries(values);
  if (opts.limit) queries = queries.slice(0, opts.limit);
  const config = loadApiConfig({});
  const masking = maskingFor('ent_api');
  const parsed: { kind: string; req: LeadsRequest }[] = queries.map((q) => ({
    kind: queryKind(q),
    req: parseLeadsQuery(Object.fromEntries(new URLSearchParams(q)), config, engines[0]!.places(), id),
  }));
  // ms by kind, per side; the sides take turns, first one then the other
  const ms = sides.map(() => new Map<string, number>());
  for (let pass = 0; pass < passes; pass++) {
    const order = pass % 2 === 0 ? [...sides.keys()] : [...sides.keys()].reverse();
    for (const s of order) {
      const engine = engines[s]!;
      for (const { kind, req } of parsed) {
        const t = performance.now();
        const page = engine.page(pageQueryOf(req), masking);
        page.json({ page: req.paging.mode === 'page' ? req.paging.page : null, next_cursor: null });
        if (pass > 0) ms[s]!.set(kind, (ms[s]!.get(kind) ?? 0) + performance.now() - t);
      }
    }
  }
  const counted = (kind: string | null): number =>
    parsed.filter((p) => kind === null || p.kind === kind).length * (passes - 1);
  const us = (s: number, kind: string | null): number => {
    const total = kind === null ? [...ms[s]!.values()].reduce((a, b) => a + b, 0) : ms[s]!.get(kind)!;
    return (total / counted(kind)) * 1000;
  };
  const kinds = [...new Set(parsed.map((p) => p.kind))].sort();
  const against = opts.against ? ` (vs ${opts.against.label})` : '';
  return [null, ...kinds].map((kind) => ({
    metric: `engine µs a query, ${kind ?? 'all'} ×${counted(kind) / (passes - 1)}${against}`,
    value: us(0, kind),
    unit: 'µs',
    ...(opts.against ? { baseline: us(1, kind) } : {}),
  }));
}
