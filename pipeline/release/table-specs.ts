/**
 * The release's Parquet tables written from rows, each declared once: the schema its columns come
 * from (`schemas/<schema>.schema.json`) and the order its rows are stored in. The stages ask
 * `tableSpec(name)` for the full spec; the registry has no published schema, so its columns are
 * listed here.
 */
import { columnsFromSchema, type TableSpec } from './tables.ts';

interface TableLayout {
  readonly schema: string;
  /** ORDER BY clause contents: the order readers get (the API's default order for leads). */
  readonly orderBy: string;
  readonly rowGroupRows?: number;
}

/** Schema and row order of every table the stages write from rows (the analytics and search tables write their own). */
export const TABLE_LAYOUTS = {
  sales: {
    schema: 'property-sale',
    orderBy: 'county, eircode_routing_key, date_of_sale DESC, sale_id',
    rowGroupRows: 50_000,
  },
  leads: { schema: 'lead', orderBy: 'received_date DESC, id DESC' },
  infrastructure: { schema: 'infrastructure-project', orderBy: 'id' },
  companies: { schema: 'company', orderBy: 'company_number' },
  filings: { schema: 'filing', orderBy: 'company_number, filing_date DESC, document_number' },
  suppliers: { schema: 'supplier', orderBy: 'county, vertical, projects_as_builder DESC, company_name' },
  lead_neighbours: { schema: 'lead-neighbour', orderBy: 'lead_id, rank' },
  changes: { schema: 'change', orderBy: '"table", change, id' },
} as const satisfies Record<string, TableLayout>;

export type TableName = keyof typeof TABLE_LAYOUTS;

const DEFAULT_ROW_GROUP_ROWS = 100_000;

/** The spec of one table (reads its schema file); `rowGroupRows` overrides the layout's. */
export function tableSpec(name: TableName, rowGroupRows?: number): TableSpec {
  const layout: TableLayout = TABLE_LAYOUTS[name];
  return {
    name,
    columns: columnsFromSchema(layout.schema),
    orderBy: layout.orderBy,
    rowGroupRows: rowGroupRows ?? layout.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS,
  };
}

/** Identity and change tracking of every lead and project ever published (pipeline/release/registry.ts). */
export const REGISTRY_SPEC: TableSpec = {
  name: 'registry',
  columns: [
    ['kind', 'VARCHAR'],
    ['key', 'VARCHAR'],
    ['id', 'BIGINT'],
    ['first_seen', 'DATE'],
    ['last_changed', 'DATE'],
    ['content_hash', 'VARCHAR'],
    ['removed_on', 'DATE'],
  ],
  orderBy: 'kind, id',
};
