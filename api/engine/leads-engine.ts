/**
 * The leads engine of a release: everything `GET /v1/leads` and `GET /v1/leads/{id}` ask of the
 * release's in-memory indexes, behind one interface. A route asks for "a page of leads for this
 * query, masked for this caller" or "the detail of lead n, masked for this caller" and gets the
 * JSON it sends; it never sees row slots, byte buffers or column masks.
 *
 * Inside, three structures built at load in a child process (api/engine/release-indexes.ts):
 *  - the lead index (api/engine/lead-index.ts): filters, sorts, `q`, totals, keyset cursors;
 *  - the row store (api/engine/row-store.ts): every lead as its JSON text, written byte for byte
 *    into a pooled response buffer;
 *  - the detail index (api/engine/detail-index.ts): area comparables, nearby leads, suppliers,
 *    companies and filings.
 *
 * Masking is an argument of every method (`Masking`: the caller's scope and the schemas that say
 * what is enriched) and is applied here, by api/access/masking.ts: a list page by the column mask
 * `columnMask` derives from the same schema walk as `maskRecord` (or, when an enriched field sits
 * inside a column's value, by `maskRecord` itself on each row), a detail by `maskRecord` on the
 * assembled record — so a field marked enriched is null wherever it appears, the detail's
 * `project` section and each of its `nearby_leads` included.
 *
 * With `near`, each result carries `distance_m` (from the lead index, api/engine/geo-index.ts),
 * written after the lead's columns, the same for every scope.
 *
 * The SQL builders of api/query/ define the same semantics; the tests check the engine against
 * them.
 */
import { BufferPool, ByteWriter } from '../render/bytes.ts';
import { columnMask, maskedFor, maskRecord, masksField, responseMeta, type Masking } from '../access/masking.ts';
import { placeNamesOf, type LeadsRequest, type PlaceNames } from '../query/leads-params.ts';
import { assembleLeadDetail } from '../query/lead-detail-query.ts';
import type { LeadsFilters, LeadsSort, SortKey } from '../query/leads-query.ts';
import { LEAD_CSV_FORMS } from '../query/export-query.ts';
import { LEAD_COLUMNS } from '../query/leads-query.ts';
import { loadReleaseIndexes, type ReleaseIndexes } from './release-indexes.ts';
import { CsvColumn } from './row-store.ts';

/** What a list page asks for (the parsed `GET /v1/leads` query). */
export interface LeadsPageQuery {
  filters: LeadsFilters;
  sort: LeadsSort;
  pageSize: number;
  /** Offset paging (0 with a cursor). */
  offset: number;
  /** Keyset paging: the leads after this key. */
  after: SortKey | null;
}

/** The page a parsed `GET /v1/leads` asks for: its offset in page mode, its key in cursor mode. */
export function pageQueryOf(req: LeadsRequest): LeadsPageQuery {
  const { paging } = req;
  return {
    filters: req.filters,
    sort: req.sort,
    pageSize: paging.pageSize,
    offset: paging.mode === 'page' ? paging.offset : 0,
    after: paging.mode === 'cursor' ? paging.after : null,
  };
}

/** A JSON response body in a pooled buffer: send `bytes`, then call `done` once nothing reads them. */
export interface JsonBody {
  bytes: Buffer;
  done(): void;
}

/** A list page, found but not yet written (the caller charges its budget and makes the cursor first). */
export interface LeadsPage {
  /** Leads matching the filters (regardless of paging). */
  total: number;
  /** Leads on this page. */
  count: number;
  /** The sort key of the page's last lead when more follow (for `next_cursor`), else null. */
  next: SortKey | null;
  /** The page as `GET /v1/leads` answers it (schemas/leads-page.schema.json), `_meta` included. */
  json(head: { page: number | null; next_cursor: string | null }): JsonBody;
}

/** A page of the cursor export, found but not yet written (the caller charges its budget and makes the cursor first). */
export interface ExportPage {
  /** Leads on this page. */
  count: number;
  /** The id of the page's last lead (null on an empty page). */
  lastId: number | null;
  /** Whether more leads follow. */
  more: boolean;
  /** The page as `GET /v1/export/applications` answers it (schemas/export-page.schema.json), `_meta` included. */
  json(head: { next_cursor: string | null }): JsonBody;
}

/** A lead detail, assembled and masked. */
export interface LeadDetail {
  /** The record (schemas/lead-detail.schema.json), masked. */
  record: Record<string, unknown>;
  /** The record with its `_meta`, as `GET /v1/leads/{id}` answers it. */
  json(): JsonBody;
}

type Row = Record<string, unknown>;

/** Leads per chunk of a JSON Lines or CSV export (~2 KB of JSON each: a chunk about fills a pooled 256 KB buffer, ~0.5 ms of the event loop). */
const EXPORT_CHUNK_ROWS = 100;

export class LeadsEngine {
  /** Leads in the release. */
  readonly size: number;
  /** Mean document length of the release's search index (for the SQL builders' `q`), null when it has none. */
  readonly avgdl: number | null;
  private readonly ix: ReleaseIndexes;
  private readonly placeMaps: PlaceNames;
  private readonly buffers = new BufferPool();
  /** The `_meta` JSON of a list page, per masking (it depends only on the release and the masking). */
  private readonly listMeta = new WeakMap<Masking, string>();
  /** `csvForms`' answer. */
  private csvFormsOf: Uint8Array | null = null;

  /** Id of the release (`_meta.release`). */
  readonly releaseId: string;
  constructor(releaseId: string, indexes: ReleaseIndexes) {
    this.releaseId = releaseId;
    this.ix = indexes;
    this.size = indexes.rows.size;
    this.avgdl = indexes.avgdl;
    // the values the leads hold for each `multi` filter (the row store's dictionaries), folded as the parser folds them
    this.placeMaps = placeNamesOf((column) => indexes.rows.distinct(column));
  }

  /** The release's canonical authority and county names, folded for matching (what the query parser needs). */
  places(): PlaceNames {
    return this.placeMaps;
  }

  /** Leads matching `filters` (`q` included). */
  count(filters: LeadsFilters): number {
    return this.ix.index.page({ filters, sort: 'newest', limit: 0, offset: 0, after: null }).total;
  }

  /** One list page: the matching leads in the sort's order after the offset or cursor, masked by `masking`. */
  page(query: LeadsPageQuery, masking: Masking): LeadsPage {
    const { rows, total } = this.ix.index.page({
      filters: query.filters,
      sort: query.sort,
      limit: query.pageSize + 1,
      offset: query.offset,
      after: query.after,
    });
    const count = Math.min(rows.length, query.pageSize);
    const slots = rows.slice(0, count).map((r) => this.slotOf(r.id));
    const distances = rows.slice(0, count).map((r) => r.distance);
    const last = rows[count - 1];
    const next: SortKey | null = rows.length > query.pageSize && last ? [last.sortValue, last.id] : null;
    const page = { total, count, next } as LeadsPage;
    // assigned, not written in the literal: there tsx would name the closure (Object.defineProperty, ~0.5 µs a page)
    page.json = (head) => {
      const out = new ByteWriter(this.buffers.take(1024 + count * 2048));
      out.ascii(
        `{"total":${total},"page":${head.page === null ? 'null' : head.page},"page_size":${query.pageSize},"next_cursor":`,
      );
      out.ascii(head.next_cursor === null ? 'null' : `"${head.next_cursor}"`);
      out.ascii(',"results":[');
      this.writeRows(out, slots, masking, distances);
      out.ascii('],"_meta":');
      out.utf8(this.listMetaJson(masking));
      out.byte(0x7d); // }
      return this.body(out);
    };
    return page;
  }

  /**
   * A page of the cursor export (`GET /v1/export/applications`): up to `limit` leads matching
   * `filters` in id order after `afterId` (the semantics of `exportRowsQuery`), masked by `masking`.
   */
  exportPage(filters: LeadsFilters, afterId: number | null, limit: number, masking: Masking): ExportPage {
    const { rows } = this.ix.index.idPage(filters, afterId, limit + 1);
    const count = Math.min(rows.length, limit);
    const slots = rows.slice(0, count).map((r) => this.slotOf(r.id));
    const page = { count, lastId: rows[count - 1]?.id ?? null, more: rows.length > limit } as ExportPage;
    page.json = (head) => {
      const out = new ByteWriter(this.buffers.take(1024 + count * 2048));
      out.ascii('{"results":[');
      this.writeRows(out, slots, masking, []);
      out.ascii(
        `],"next_cursor":${head.next_cursor === null ? 'null' : `"${head.next_cursor}"`},"count":${count},"_meta":`,
      );
      out.utf8(this.listMetaJson(masking));
      out.byte(0x7d); // }
      return this.body(out);
    };
    return page;
  }

  /**
   * The leads matching `filters` as export lines (`GET /v1/export/applications.jsonl` / `.csv`),
   * masked by `masking`, in the release's order (newest first: the index's positions): `json`,
   * each lead as in a list page's `results`, one per line (`\n`); `csv`, each lead as DuckDB's CSV
   * writer writes the export's columns (`LEAD_CSV_FORMS`), masked columns empty, CRLF (no header).
   * A pull: each call writes the next `rows` leads (a keyset page of the index) into a pooled
   * buffer and returns it, null once all are written — the caller writes chunk by chunk, so a
   * whole export never holds the event loop for long. Null (no lines) when a masked field sits
   * inside a column's value, which a column writer cannot mask: the caller writes that export
   * another way.
   */
  exportLines(
    format: 'json' | 'csv',
    filters: LeadsFilters,
    masking: Masking,
    rows = EXPORT_CHUNK_ROWS,
  ): (() => JsonBody | null) | null {
    const store = this.ix.rows;
    const mask = columnMask('lead', store.columns, masking);
    if (format === 'csv' && !mask.complete) return null;
    const forms = format === 'csv' ? this.csvForms() : null;
    let after: SortKey | null = null;
    let done = false;
    return () => {
      if (done) return null;
      const page = this.ix.index.page({ filters, sort: 'newest', limit: rows, offset: 0, after });
      const last = page.rows.at(-1);
      if (page.rows.length < rows || !last) done = true;
      else after = [last.sortValue, last.id];
      if (page.rows.length === 0) return null;
      const slots = page.rows.map((r) => this.slotOf(r.id));
      const out = new ByteWriter(this.buffers.take(slots.length * 2048));
      if (forms === null) {
        this.writeRows(out, slots, masking, [], 0x0a); // \n
        out.byte(0x0a);
      } else {
        for (const slot of slots) {
          store.writeCsv(out, slot, mask.nulled, forms);
          out.ascii('\r\n');
        }
      }
      return this.body(out);
    };
  }

  /** `LEAD_CSV_FORMS` over the row store's columns, as `RowStore.writeCsv` takes them (made once: the store classifies its dictionaries once per forms). */
  private csvForms(): Uint8Array {
    if (this.csvFormsOf) return this.csvFormsOf;
    const form = new Map(LEAD_COLUMNS.map((c, i) => [c, LEAD_CSV_FORMS[i]!]));
    return (this.csvFormsOf = Uint8Array.from(this.ix.rows.columns, (c) => {
      const f = form.get(c);
      if (f === undefined) throw new Error(`the row store's column ${c} is not a lead column`);
      return CsvColumn[f];
    }));
  }

  /** The detail of lead `id` (null when the release has none), with the sections `masking` lets the caller see. */
  detail(id: number, masking: Masking): LeadDetail | null {
    const store = this.ix.rows;
    const lead = store.get(id);
    if (!lead) return null;
    const dx = this.ix.detail;
    const area = lead as { county: string; eircode_routing_key: string | null; received_date: string };
    const companyNo = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
    const applicantNo = companyNo(lead['applicant_company_number']);
    const contractorNo = companyNo(lead['main_contractor_company_number']);
    const nearby = dx.nearby(id).flatMap((n) => {
      const at = store.slotOf(n.neighbour_id);
      if (at < 0) return [];
      const v = (column: string): unknown => store.value(at, column);
      return [
        {
          id: v('id'),
          description: v('description'),
          distance_m: n.distance_m,
          use_class: v('use_class'),
          lead_readiness: v('lead_readiness'),
          est_value: v('est_value'),
        },
      ];
    });
    // A section the caller sees as null is not even read.
    const shown = (section: string): boolean => !masksField('lead-detail', section, masking);
    const assembled = assembleLeadDetail({
      lead,
      salesSummary: dx.salesSummary(area),
      recentSales: dx.recentSales(area),
      nearby,
      ...(shown('suppliers')
        ? { suppliers: dx.suppliers(area.county, (lead['verticals'] as string[] | null) ?? []) }
        : {}),
      ...(shown('main_contractor') ? { contractorCompany: contractorNo ? dx.company(contractorNo) : null } : {}),
      ...(shown('registered_company') ? { applicantCompany: applicantNo ? dx.company(applicantNo) : null } : {}),
      ...(shown('company_filings') ? { filings: applicantNo ? dx.filings(applicantNo) : [] } : {}),
    });
    const { record, masked } = maskRecord('lead-detail', assembled, masking.scope, masking.schemas);
    return {
      record,
      json: () => {
        const out = new ByteWriter(this.buffers.take(16 * 1024));
        out.utf8(JSON.stringify({ ...record, _meta: responseMeta(this.releaseId, masking.scope, masked) }));
        return this.body(out);
      },
    };
  }

  /** The row store's slot of a lead the index found. */
  private slotOf(id: number): number {
    const slot = this.ix.rows.slotOf(id);
    if (slot < 0) throw new Error(`lead ${id} is not in the row store of release ${this.releaseId}`);
    return slot;
  }

  /**
   * The rows at `slots` as a JSON array's items: each lead's JSON text straight from the row store,
   * masked columns written as null; when an enriched field sits inside a column's value, the row is
   * masked as a record. With `near`, `distance_m` last (`distances[i]`), for every scope alike.
   * Rows are separated by `separator` (a comma in a JSON array, a newline in JSON Lines).
   */
  private writeRows(
    out: ByteWriter,
    slots: number[],
    masking: Masking,
    distances: (number | undefined)[],
    separator = 0x2c, // ,
  ): void {
    const store = this.ix.rows;
    const mask = columnMask('lead', store.columns, masking);
    slots.forEach((slot, i) => {
      if (i > 0) out.byte(separator);
      if (mask.complete) store.writeJson(out, slot, mask.nulled);
      else out.utf8(JSON.stringify(maskRecord('lead', this.rowAt(slot), masking.scope, masking.schemas).record));
      const d = distances[i];
      if (d !== undefined) {
        out.len--; // the row's closing brace
        out.ascii(`,"distance_m":${d}}`);
      }
    });
  }

  /** Row `slot` as a record. */
  private rowAt(slot: number): Row {
    return this.ix.rows.get(this.ix.rows.value(slot, 'id') as number)!;
  }

  private listMetaJson(masking: Masking): string {
    let json = this.listMeta.get(masking);
    if (json === undefined) {
      json = JSON.stringify(
        responseMeta(this.releaseId, masking.scope, maskedFor('lead', masking.scope, masking.schemas)),
      );
      this.listMeta.set(masking, json);
    }
    return json;
  }

  /** The bytes written, and a `done` that gives the buffer back to the pool. */
  private body(out: ByteWriter): JsonBody {
    const used = out.buf; // (a new one if the answer outgrew the pooled buffer)
    return { bytes: out.view(), done: this.buffers.give.bind(this.buffers, used) }; // (bound: an arrow here would be named by tsx per response)
  }
}

/**
 * Build the leads engine of the release in `dir` (its indexes in a child process,
 * `loadReleaseIndexes`): rejects with a ReleaseRefusedError when the release's files do not match
 * its manifest, or with the child's error when the build fails.
 */
export async function loadLeadsEngine(
  releaseId: string,
  dir: string,
  opts: { log?: (line: string) => void } = {},
): Promise<LeadsEngine> {
  return new LeadsEngine(releaseId, await loadReleaseIndexes(dir, opts));
}
