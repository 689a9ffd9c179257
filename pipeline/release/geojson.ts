/**
 * Pre-rendered GIS layers of a release: newline-delimited GeoJSON (one RFC 7946 Feature per
 * line) rendered by DuckDB straight from the release's Parquet files, so the API's
 * `/feeds/*.geojson` can stream (and filter) prepared lines instead of building 200,000 features
 * per request.
 *
 * Layout under `<releaseDir>/geojson/`:
 * - `leads/<authority slug>.ndjson` every lead with coordinates, one file per planning authority,
 *                                   each ordered by id
 * - `infrastructure.ndjson`         every infrastructure project with coordinates
 * - `index.json`                    a `GeoJsonIndex` describing the files
 *
 * The leads are stored once: the national `leads` layer has no file of its own but lists its
 * `parts` (the authority layers), and the API merges their indexes by id. (Until issue 17 a
 * `leads.ndjson` held every line a second time: ~360 MB of an ~800 MB default release.)
 *
 * A feature line is
 * `{"type":"Feature","id":<int>,"geometry":{"type":"Point","coordinates":[lon,lat]},"properties":{…every column…,"link":…}}`
 * with coordinates rounded to 6 decimals and `link` the record's public page: its `public_url` (the
 * planning authority's page of an application, the consenting body's case page of a project — by
 * the source's link or the documented pattern of its case reference, pipeline/sources/), or null
 * when it has none. Never a URL of this API: a release is built once and served from any address,
 * so an absolute link to the API written here would name the address of the build (issue 31.15).
 * Properties are the whole Parquet row, so columns added to the release flow through without a
 * change here.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sqlString, type Db } from '../lib/duckdb.ts';
import { foldText, resolveAuthority } from '../reference/authorities.ts';

export interface GeoJsonLayer {
  /** "leads", "leads/<authority slug>" or "infrastructure". */
  name: string;
  /** Path relative to the release folder, '/'-separated: "geojson/leads/cork-city.ndjson"; absent on a layer made of `parts`. */
  file?: string;
  /** The national leads layer: the names of the authority layers that make it up (their lines merged by id). */
  parts?: string[];
  features: number;
  bytes: number;
  /** [min lon, min lat, max lon, max lat] of the features, null for an empty layer. */
  bbox: [number, number, number, number] | null;
  /** Canonical authority name, on per-authority layers only. */
  authority?: string;
}

export interface GeoJsonIndex {
  layers: GeoJsonLayer[];
  skipped_without_coordinates: { leads: number; infrastructure: number };
}

/**
 * Render the release's GeoJSON layers from `releaseDir/leads.parquet` and
 * `releaseDir/infrastructure.parquet` into `releaseDir/geojson/` and return (and write as
 * `geojson/index.json`) the index of layers. Rows without usable coordinates are skipped and
 * counted. The per-authority folder is rebuilt from scratch so no stale authority file survives.
 *
 * @example
 * const index = await writeGeoJson(db, 'data/releases/2025-06-02');
 */
export async function writeGeoJson(db: Db, releaseDir: string): Promise<GeoJsonIndex> {
  const outDir = join(releaseDir, 'geojson');
  await rm(join(outDir, 'leads'), { recursive: true, force: true });
  await mkdir(join(outDir, 'leads'), { recursive: true });
  const leadsParquet = join(releaseDir, 'leads.parquet');
  const infraParquet = join(releaseDir, 'infrastructure.parquet');
  const layers: GeoJsonLayer[] = [];

  // Leads: copied in layer and id order, then rendered in one read and streamed here a chunk at a
  // time into each layer's file (`writeLeadLayers`; a COPY per authority read the whole file 31
  // times: the leads are stored by received date, so every row group holds every authority).
  const leadsSource = `(SELECT t.planning_authority AS _authority, ${featureColumns('t')}
     FROM read_parquet(${sqlString(leadsParquet)}) t WHERE ${hasCoordinates('t')})`;
  const authorities = await db.all<{ authority: string | null }>(
    `SELECT DISTINCT planning_authority AS authority FROM read_parquet(${sqlString(leadsParquet)}) t
     WHERE ${hasCoordinates('t')} ORDER BY 1`,
  );
  if (authorities.some((a) => a.authority === null))
    throw new Error('leads with coordinates but no planning authority: the GeoJSON layers are stored per authority');
  // each authority's count and bbox in one scan (a query per layer was 31 more scans)
  const statsOf = new Map(
    (
      await db.all<LayerStats & { authority: string }>(
        `SELECT _authority AS authority, ${statsColumns()} FROM ${leadsSource} GROUP BY 1`,
      )
    ).map((s) => [s.authority, s]),
  );
  const bySlug = groupBySlug(authorities.map((a) => a.authority!));
  const parts: GeoJsonLayer[] = [];
  for (const [slug, names] of bySlug) {
    const layer = { name: `leads/${slug}`, file: `geojson/leads/${slug}.ndjson`, authority: names[0]! };
    parts.push(describeLayer(layer, mergeStats(names.map((n) => statsOf.get(n)!))));
  }
  await writeLeadLayers(db, releaseDir, leadsParquet, bySlug);
  for (const p of parts) p.bytes = (await stat(join(releaseDir, ...p.file!.split('/')))).size;
  layers.push(nationalLayer('leads', parts), ...parts);

  const infraSource = `(SELECT ${featureColumns('t')}
     FROM read_parquet(${sqlString(infraParquet)}) t WHERE ${hasCoordinates('t')})`;
  layers.push(
    await writeLayer(
      db,
      releaseDir,
      { name: 'infrastructure', file: 'geojson/infrastructure.ndjson' },
      infraSource,
      (await db.all<LayerStats>(`SELECT ${statsColumns()} FROM ${infraSource}`))[0]!,
    ),
  );

  const [skipped] = await db.all<{ leads: number; infrastructure: number }>(
    `SELECT (SELECT count(*) FROM read_parquet(${sqlString(leadsParquet)}) t WHERE NOT (${hasCoordinates('t')})) AS leads,
            (SELECT count(*) FROM read_parquet(${sqlString(infraParquet)}) t WHERE NOT (${hasCoordinates('t')})) AS infrastructure`,
  );
  const index: GeoJsonIndex = {
    layers,
    skipped_without_coordinates: { leads: Number(skipped!.leads), infrastructure: Number(skipped!.infrastructure) },
  };
  await writeFile(join(outDir, 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
  return index;
}

/** The layer made of `parts`: their features, bytes and bbox added up. */
function nationalLayer(name: string, parts: readonly GeoJsonLayer[]): GeoJsonLayer {
  const boxes = parts.map((p) => p.bbox).filter((b): b is NonNullable<GeoJsonLayer['bbox']> => b !== null);
  const bbox: GeoJsonLayer['bbox'] =
    boxes.length === 0
      ? null
      : [
          Math.min(...boxes.map((b) => b[0])),
          Math.min(...boxes.map((b) => b[1])),
          Math.max(...boxes.map((b) => b[2])),
          Math.max(...boxes.map((b) => b[3])),
        ];
  return {
    name,
    parts: parts.map((p) => p.name),
    features: parts.reduce((a, p) => a + p.features, 0),
    bytes: parts.reduce((a, p) => a + p.bytes, 0),
    bbox,
  };
}

/** True in SQL when row `t` has finite lat and lon. */
function hasCoordinates(t: string): string {
  return `(${t}.lat IS NOT NULL AND ${t}.lon IS NOT NULL AND isfinite(${t}.lat) AND isfinite(${t}.lon))`;
}

/**
 * The four Feature members as SQL select items, in RFC 7946 order. `properties` is the whole row
 * (`t` as a struct keeps the column order) with `link` appended: the record's `public_url`, null without one.
 */
function featureColumns(t: string): string {
  return [
    `'Feature' AS "type"`,
    `CAST(${t}.id AS BIGINT) AS id`,
    `{'type': 'Point', 'coordinates': [round(CAST(${t}.lon AS DOUBLE), 6), round(CAST(${t}.lat AS DOUBLE), 6)]} AS geometry`,
    `struct_insert(${t}, link := ${t}.public_url) AS properties`,
  ].join(',\n       ');
}

/** A layer's feature count and bbox corners (null when it has none). */
type LayerStats = {
  n: number | bigint;
  w: number | null;
  s: number | null;
  e: number | null;
  nn: number | null;
};

/** SQL select items of `LayerStats` over rows of `featureColumns`. */
function statsColumns(): string {
  return `count(*) AS n,
          min(geometry.coordinates[1]) AS w, min(geometry.coordinates[2]) AS s,
          max(geometry.coordinates[1]) AS e, max(geometry.coordinates[2]) AS nn`;
}

/** The stats of several authorities written to one file (names sharing a slug). */
function mergeStats(all: LayerStats[]): LayerStats {
  const pick = (k: 'w' | 's' | 'e' | 'nn', f: (...v: number[]) => number): number | null => {
    const v = all.map((x) => x[k]).filter((x): x is number => x !== null);
    return v.length ? f(...v) : null;
  };
  return {
    n: all.reduce((a, x) => a + Number(x.n), 0),
    w: pick('w', Math.min),
    s: pick('s', Math.min),
    e: pick('e', Math.max),
    nn: pick('nn', Math.max),
  };
}

/** Write one layer file with DuckDB's JSON writer (newline-delimited) and describe it with its `stats`. */
async function writeLayer(
  db: Db,
  releaseDir: string,
  layer: { name: string; file: string; authority?: string },
  source: string,
  stats: LayerStats,
): Promise<GeoJsonLayer> {
  const path = join(releaseDir, ...layer.file.split('/'));
  await db.run(
    `COPY (SELECT "type", id, geometry, properties FROM ${source} ORDER BY id) TO ${sqlString(path)} (FORMAT JSON)`,
  );
  const described = describeLayer(layer, stats);
  described.bytes = (await stat(path)).size;
  return described;
}

/** A layer's entry in the index from its `stats` (its `bytes` once its file is written). */
function describeLayer(layer: { name: string; file: string; authority?: string }, stats: LayerStats): GeoJsonLayer {
  const features = Number(stats.n);
  const bbox: GeoJsonLayer['bbox'] = features === 0 ? null : [stats.w!, stats.s!, stats.e!, stats.nn!];
  return {
    name: layer.name,
    file: layer.file,
    features,
    bytes: 0,
    bbox,
    ...(layer.authority ? { authority: layer.authority } : {}),
  };
}

/**
 * Write every authority's layer file. The leads with coordinates are first copied into a scratch
 * Parquet file in layer then id order (a sort of plain columns, which DuckDB spills to disk when
 * it must); that file is then read in its order, each feature rendered by DuckDB's JSON writer
 * (`to_json` of the feature's struct is the line `COPY … (FORMAT JSON)` writes) and appended to
 * its layer's file as the chunks arrive.
 */
async function writeLeadLayers(
  db: Db,
  releaseDir: string,
  leadsParquet: string,
  bySlug: Map<string, string[]>,
): Promise<void> {
  const slugOf = new Map([...bySlug].flatMap(([slug, names]) => names.map((n) => [n, slug] as const)));
  if (slugOf.size === 0) return;
  const values = [...slugOf].map(([n, slug]) => `(${sqlString(n)}, ${sqlString(slug)})`).join(', ');
  const scratch = join(releaseDir, '.geojson-leads.parquet');
  let slug: string | null = null;
  let fd: number | null = null;
  let lastId = -Infinity;
  const written = new Set<string>();
  let pending: string[] = [];
  const flush = (): void => {
    if (fd !== null && pending.length) writeSync(fd, pending.join('\n') + '\n');
    pending = [];
  };
  try {
    await db.run(
      `COPY (SELECT t.* FROM read_parquet(${sqlString(leadsParquet)}) t
             JOIN (VALUES ${values}) l(authority, slug) ON l.authority = t.planning_authority
             WHERE ${hasCoordinates('t')} ORDER BY l.slug, t.id)
       TO ${sqlString(scratch)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE 20000)`,
    );
    const features = `SELECT _authority, id, to_json({'type': "type", 'id': id, 'geometry': geometry, 'properties': properties})::VARCHAR AS line
      FROM (SELECT t.planning_authority AS _authority, ${featureColumns('t')} FROM read_parquet(${sqlString(scratch)}) t)`;
    // the scratch file is read in its order (DuckDB preserves a scan's order); checked, never assumed
    for await (const chunk of db.stream<{ _authority: string; id: number; line: string }>(features)) {
      for (const row of chunk) {
        const rowSlug = slugOf.get(row._authority)!;
        if (rowSlug !== slug) {
          flush();
          if (fd !== null) closeSync(fd);
          if (written.has(rowSlug)) throw new Error(`GeoJSON layer ${rowSlug}: its features came back out of order`);
          written.add(rowSlug);
          slug = rowSlug;
          lastId = -Infinity;
          fd = openSync(join(releaseDir, 'geojson', 'leads', `${slug}.ndjson`), 'w');
        }
        if (row.id <= lastId) throw new Error(`GeoJSON layer ${rowSlug}: feature ${row.id} came back after ${lastId}`);
        lastId = row.id;
        pending.push(row.line);
      }
      flush();
    }
  } finally {
    if (fd !== null) closeSync(fd);
    await rm(scratch, { force: true });
  }
}

/** Group authority names by file slug (the reference slug, or the folded name for an unknown one). */
function groupBySlug(names: string[]): Map<string, string[]> {
  const bySlug = new Map<string, string[]>();
  for (const name of names) {
    const slug = resolveAuthority(name)?.slug ?? (foldText(name).replace(/ /g, '-') || 'unknown');
    bySlug.set(slug, [...(bySlug.get(slug) ?? []), name]);
  }
  return bySlug;
}
