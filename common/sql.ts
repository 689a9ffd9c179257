/**
 * SQL text helpers and DuckDB result conversion shared by the pipeline's and the API's DuckDB
 * modules (`pipeline/lib/duckdb.ts`, `api/duckdb/db.ts`) and the query builders. Pure: no DuckDB import.
 */

/** Quote a string as a SQL literal (file paths in COPY / read_* calls, which take no bound parameters). */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** Quote an identifier. */
export function sqlIdent(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

/**
 * One DuckDB row (as `getRowObjectsJS` gives it) as plain JSON-ready values: BIGINT → number
 * when safe (else its decimal string), DATE → 'YYYY-MM-DD', lists and structs converted deeply.
 */
export function plainRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in row) out[k] = plain(row[k]);
  return out;
}

function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return plainRow(v as Record<string, unknown>);
  return v;
}
