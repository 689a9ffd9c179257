/**
 * The tables of a release and how a request names them: declared below the release manager
 * (release.ts) and the query builders and engine that read them, which import it.
 */
/**
 * Tables loaded into DuckDB memory (small and queried per request); the rest are read from
 * Parquet. Each release gets its own in-memory catalog attached with `COMPRESS` and checkpointed
 * after loading; `DETACH` frees it when the release is dropped. The leads, the search index and
 * the company-360 tables are not held in DuckDB: list pages and lead details are answered from
 * the release's leads engine (`Release.leads`: its in-memory indexes, built from the Parquet files
 * at load by a child process).
 */
export const IN_MEMORY = ['infrastructure'] as const;
export const FROM_PARQUET = [
  'leads',
  'lead_neighbours',
  'suppliers',
  'companies',
  'search_terms',
  'search_postings',
  'filings',
  'sales',
  'changes',
  'events',
  'price_index',
  'yields',
  'emerging_zones',
  'material_costs',
] as const;
export type TableName = (typeof IN_MEMORY)[number] | (typeof FROM_PARQUET)[number];
/** Every table of a release. */
export const TABLE_NAMES: readonly TableName[] = [...IN_MEMORY, ...FROM_PARQUET];

/** SQL table expressions of a release, e.g. `"r_20261122T053431Z"."leads"` or `read_parquet('…')`. */
export type ReleaseTables = Readonly<Record<TableName, string>>;
