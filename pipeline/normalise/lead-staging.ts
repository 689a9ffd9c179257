/**
 * The lead build's inputs staged on disk, and the SQL that links them (issue 34: a refresh that
 * grows linearly in bounded memory). `read:planning` and `read:commencements` stream every
 * accepted row through `leadSource` / `linkedNotice` (names decided on evidence, never staged):
 * the row itself goes to a heap file (pipeline/lib/row-heap.ts) and a line of its small index
 * columns — its keys and where it lies in the heap — to a tab-separated index file, with the
 * arrival numbers each adapter kept in another. DuckDB then does the relational work
 * `buildLeads` does in memory — the kept rows, one application per lead key, notices linked by
 * permission number and authority — over the index files only, and the `leads` stage streams the
 * result back in lead-key order, reading each lead's rows from the heaps as it goes. Neither
 * DuckDB nor JavaScript ever holds the rows of the whole build.
 *
 * Every index field is a code, a date, a number or an application or notice number (cleaned:
 * whitespace folded to single spaces), so a tab or a newline never occurs in one (`stagedField`
 * refuses one). Pure, but for the writers' file I/O.
 */
import { sqlString } from '../lib/duckdb.ts';
import { RowHeapWriter } from '../lib/row-heap.ts';
import { openLineSink, stagingSource } from '../release/tables.ts';
import type { LeadSource, LinkedNotice } from './leads.ts';

/** One staged planning application: the row as the lead build reads it, with its keys. */
export interface StagedApplication {
  /** Arrival number in read order (the adapter's). */
  arrival: number;
  /** Lead key, `<authority slug>/<APPLICATION NUMBER>` (`leadKey`). */
  leadKey: string;
  /** The resolved authority's slug; null when the authority is unknown (such a lead links no notice). */
  slug: string | null;
  /** Canonical authority name (null when unknown), for the manifest's per-authority reads. */
  authority: string | null;
  source: LeadSource;
}

/** One staged commencement notice. */
export interface StagedNotice {
  arrival: number;
  /** The application number it names (null: links nowhere). */
  permissionNumber: string | null;
  /** Slug of the authority the notice names (null: none, or unknown — then it links by number alone when unique). */
  slug: string | null;
  /** Canonical authority name (null when unknown), for the manifest's per-authority reads. */
  authority: string | null;
  notice: LinkedNotice;
}

/** The staging files of one build (under the build folder; their names start with '.', and they are removed once read). */
export interface LeadStagingFiles {
  /** The applications (`LeadSource` JSON, one per line) and their index. */
  applicationHeap: string;
  applications: string;
  /** Arrival numbers of the applications the adapter kept, with their first-read position. */
  keptApplications: string;
  /** The notices (`LinkedNotice` JSON) and their index. */
  noticeHeap: string;
  notices: string;
  keptNotices: string;
}

/** The staging file paths under `dir`. */
export function leadStagingFiles(dir: string): LeadStagingFiles {
  return {
    applicationHeap: `${dir}/.stage-applications.jsonl`,
    applications: `${dir}/.stage-applications.tsv`,
    keptApplications: `${dir}/.stage-applications-kept.tsv`,
    noticeHeap: `${dir}/.stage-notices.jsonl`,
    notices: `${dir}/.stage-notices.tsv`,
    keptNotices: `${dir}/.stage-notices-kept.tsv`,
  };
}

/** An index field: '' for null (no staged value is ever empty), refusing a tab or a newline. */
export function stagedField(v: string | number | null): string {
  if (v === null) return '';
  const s = String(v);
  if (s === '' || /[\t\n\r]/.test(s))
    throw new Error(`a staged field must be non-empty and hold no tab or newline: ${JSON.stringify(s.slice(0, 40))}`);
  return s;
}

/** A staging writer: rows to the heap, index lines to the index file. */
export interface StagingSink<T> {
  write(row: T): void;
  close(): void;
}

function stagingSink<T>(
  heapPath: string,
  indexPath: string,
  payload: (row: T) => unknown,
  fields: (row: T) => (string | number | null)[],
): StagingSink<T> {
  const heap = new RowHeapWriter(heapPath);
  const index = openLineSink<string>(indexPath, (line) => line);
  return {
    write(row) {
      const { offset, bytes } = heap.append(payload(row));
      index.write([offset, bytes, ...fields(row).map(stagedField)].join('\t'));
    },
    close() {
      heap.close();
      index.close();
    },
  };
}

/** Stage applications: index columns `offset, bytes, arrival, lead_key, slug, application_number, authority, received_date, etl_date`. */
export function openApplicationSink(files: LeadStagingFiles): StagingSink<StagedApplication> {
  return stagingSink(
    files.applicationHeap,
    files.applications,
    (a) => a.source,
    (a) => [
      a.arrival,
      a.leadKey,
      a.slug,
      a.source.application_number,
      a.authority,
      a.source.received_date,
      a.source.etl_date,
    ],
  );
}

/** Stage notices: index columns `offset, bytes, arrival, permission_number, slug, authority, newest_date`. */
export function openNoticeSink(files: LeadStagingFiles): StagingSink<StagedNotice> {
  return stagingSink(
    files.noticeHeap,
    files.notices,
    (n) => n.notice,
    (n) => [n.arrival, n.permissionNumber, n.slug, n.authority, n.notice.submitted_date ?? n.notice.commencement_date],
  );
}

/** Write the kept arrival numbers, each with its position (the order its key was first read). */
export function writeKept(path: string, kept: readonly number[]): number {
  let pos = 0;
  const sink = openLineSink<number>(path, (arrival) => `${pos++}\t${arrival}`);
  for (const a of kept) sink.write(a);
  return sink.close();
}

/** An index file as DuckDB reads it, `columns` by name and type. */
const tsv = (path: string, columns: Record<string, string>): string =>
  stagingSource('tsv', path, Object.entries(columns));

/**
 * SQL statements (run in order on one connection) that materialise the lead build's input, over
 * the index files only:
 *
 * - `kept_application`, `application`: the applications the adapter kept (its duplicate rule),
 *   then one per lead key — of those sharing one, the later in the adapter's order (`buildLeads`' rule);
 * - `notice`: the notices the adapter kept;
 * - `link`: each notice and the lead it links to — by application number and the same authority,
 *   or, for a notice naming no known authority, by number alone when exactly one lead has it.
 */
export function linkStatements(files: LeadStagingFiles): string[] {
  const applications = tsv(files.applications, {
    offset: 'BIGINT',
    bytes: 'INTEGER',
    arrival: 'BIGINT',
    lead_key: 'VARCHAR',
    slug: 'VARCHAR',
    application_number: 'VARCHAR',
    authority: 'VARCHAR',
    received_date: 'VARCHAR',
    etl_date: 'VARCHAR',
  });
  const keptApplications = tsv(files.keptApplications, { pos: 'BIGINT', arrival: 'BIGINT' });
  const notices = tsv(files.notices, {
    offset: 'BIGINT',
    bytes: 'INTEGER',
    arrival: 'BIGINT',
    permission_number: 'VARCHAR',
    slug: 'VARCHAR',
    authority: 'VARCHAR',
    newest_date: 'VARCHAR',
  });
  const keptNotices = tsv(files.keptNotices, { pos: 'BIGINT', arrival: 'BIGINT' });
  return [
    `CREATE TABLE kept_application AS
       SELECT a.*, k.pos FROM ${applications} a JOIN ${keptApplications} k USING (arrival)`,
    `CREATE TABLE application AS
       SELECT * FROM kept_application
       WHERE arrival IN (SELECT arg_max(arrival, pos) FROM kept_application GROUP BY lead_key)`,
    `CREATE TABLE notice AS
       SELECT n.* FROM ${notices} n JOIN ${keptNotices} k USING (arrival)`,
    `CREATE TABLE link AS
       SELECT n.arrival AS notice, a.lead_key
       FROM notice n JOIN application a ON a.application_number = n.permission_number AND a.slug = n.slug
       UNION ALL
       SELECT n.arrival, any_value(a.lead_key)
       FROM notice n JOIN application a ON a.application_number = n.permission_number
       WHERE n.slug IS NULL
       GROUP BY n.arrival HAVING count(*) = 1`,
  ];
}

/** Kept rows and their newest date per authority and source (the manifest's per-authority reads). */
export const AUTHORITY_READS_SQL = `
  SELECT 'planning' AS source, authority, count(*)::BIGINT AS records, max(received_date) AS newest_date
  FROM kept_application WHERE authority IS NOT NULL GROUP BY authority
  UNION ALL
  SELECT 'commencements', authority, count(*)::BIGINT, max(newest_date)
  FROM notice WHERE authority IS NOT NULL GROUP BY authority`;

/** The as-of date (latest ETL date of the kept applications) and the linked / unlinked notice counts. */
export const LINK_SUMMARY_SQL = `
  SELECT (SELECT max(etl_date) FROM kept_application) AS latest_etl,
         (SELECT count(*) FROM link)::BIGINT AS linked,
         (SELECT count(*) FROM notice)::BIGINT AS notices`;

/** One row of `LEAD_ORDER_SQL`'s table: a lead's application (where it lies in its heap), its id and its previous registry entry. */
export interface LeadInput {
  lead_key: string;
  offset: number;
  bytes: number;
  received_date: string;
  /** The lead's id: its previous one, or the one it is issued now. */
  id: number;
  prev_id: number | null;
  prev_first_seen: string | null;
  prev_last_changed: string | null;
  prev_content_hash: string | null;
  prev_removed_on: string | null;
}

/** One row of `LEAD_NOTICES_SQL`: a linked notice of a lead, where it lies in its heap. */
export interface LeadNoticeRef {
  lead_key: string;
  offset: number;
  bytes: number;
}

/**
 * SQL creating table `lead_order`: every lead's application (heap reference), its previous
 * registry entry (null columns when new) and its id — the previous one, or, for a lead the
 * previous registry does not have, `maxId` + its rank among the new leads in lead-key order (the
 * ids `ChangeTracker` issued one by one in that order) — stored in the leads table's own order
 * (received date, then id, newest first), so that the leads are built, and staged, in the order
 * they are published and their file needs no sort. `previousRegistry` is a Parquet path, or null
 * for a first build. Only narrow columns are sorted; every step spills to disk when it must.
 */
export function leadOrderSql(previousRegistry: string | null, maxId: number): string {
  const prev = previousRegistry
    ? `(SELECT key, id, first_seen, last_changed, content_hash, removed_on
        FROM read_parquet(${sqlString(previousRegistry)}) WHERE kind = 'leads')`
    : `(SELECT NULL::VARCHAR AS key, NULL::BIGINT AS id, NULL::DATE AS first_seen, NULL::DATE AS last_changed,
               NULL::VARCHAR AS content_hash, NULL::DATE AS removed_on WHERE false)`;
  return `CREATE TABLE lead_order AS
    WITH j AS (
      SELECT a.lead_key, a.offset, a.bytes, a.received_date,
             p.id AS prev_id, p.first_seen AS prev_first_seen, p.last_changed AS prev_last_changed,
             p.content_hash AS prev_content_hash, p.removed_on AS prev_removed_on
      FROM application a LEFT JOIN ${prev} p ON p.key = a.lead_key),
    fresh AS (
      SELECT lead_key, ${Math.trunc(maxId)} + row_number() OVER (ORDER BY lead_key) AS new_id
      FROM j WHERE prev_id IS NULL)
    SELECT j.*, coalesce(j.prev_id, f.new_id) AS id
    FROM j LEFT JOIN fresh f USING (lead_key)
    ORDER BY j.received_date DESC, id DESC`;
}

/** The leads of `lead_order`, in its order (a table scan keeps it; the leads stage checks it). */
export const LEAD_INPUT_SQL = `SELECT * FROM lead_order`;

/** Each lead's linked notices, in the order of `lead_order` (then read order): merged with it by lead key. */
export const LEAD_NOTICES_SQL = `
  SELECT o.lead_key, n.offset, n.bytes
  FROM link l JOIN notice n ON n.arrival = l.notice JOIN lead_order o USING (lead_key)
  ORDER BY o.received_date DESC, o.id DESC, n.arrival`;

/** The previous registry's lead entries whose key this build does not have, and the largest lead id it issued. */
export function previousLeadsSql(previousRegistry: string): { absent: string; maxId: string } {
  const prev = `read_parquet(${sqlString(previousRegistry)})`;
  return {
    absent: `SELECT * FROM ${prev} p WHERE kind = 'leads' AND NOT EXISTS (SELECT 1 FROM application a WHERE a.lead_key = p.key)`,
    maxId: `SELECT coalesce(max(id), 0)::BIGINT AS max_id FROM ${prev} WHERE kind = 'leads'`,
  };
}
