/**
 * Pure SQL builders for `GET /v1/leads/{id}` (the lead plus its company-360 sections) and the
 * pure assembly of the response from their rows. One builder per section; each returns
 * `{ sql, params }` with every value bound and tables from the release's `tables.*` fragments.
 * The route runs the independent ones in parallel once the lead is known.
 */
import type { ReleaseTables } from '../releases/tables.ts';
import { LEAD_COLUMNS, type SqlQuery } from './leads-query.ts';

type Tables = ReleaseTables;
type Row = Record<string, unknown>;

/** Months of property sales before the lead's received date used for area comparables. */
export const COMPARABLES_WINDOW_MONTHS = 24;
/** Most recent sales listed in area comparables. */
export const RECENT_SALES_MAX = 5;
/** Suppliers listed (top by projects as builder). */
export const SUPPLIERS_MAX = 10;
/** Filings listed, newest first. */
export const FILINGS_MAX = 20;

/**
 * Plain-language descriptions of the land-use / zoning codes the planning authorities publish
 * (`land_use_code`); codes not listed get a null description.
 */
export const LAND_USE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  RES: 'Residential',
  COM: 'Commercial',
  AGR: 'Agricultural',
  IND: 'Industrial',
  UTL: 'Utilities and infrastructure',
  MIX: 'Mixed use',
  CMY: 'Community',
  EDU: 'Education',
  HLT: 'Health care',
  OFF: 'Office',
  RET: 'Retail',
  TOU: 'Tourism and hospitality',
  OSR: 'Open space and recreation',
};

export const COMPANY_COLUMNS = [
  'company_number',
  'company_name',
  'status',
  'status_code',
  'company_type',
  'reg_date',
  'last_ar_date',
  'last_accounts_date',
  'dissolved_date',
  'status_date',
  'address',
  'county',
  'eircode_routing_key',
  'nace_code',
] as const;

/** The lead row (all lead columns) by id. */
export function leadByIdQuery(t: Tables, id: number): SqlQuery {
  return { sql: `SELECT ${LEAD_COLUMNS.join(', ')} FROM ${t.leads} WHERE id = ?`, params: [id] };
}

/** The comparables area: the lead's routing key within its county, or the whole county when it has none. */
function areaWhere(lead: { county: string; eircode_routing_key: string | null }): SqlQuery {
  return lead.eircode_routing_key
    ? { sql: 'county = ? AND eircode_routing_key = ?', params: [lead.county, lead.eircode_routing_key] }
    : { sql: 'county = ?', params: [lead.county] };
}

/** Window condition: sales in the `COMPARABLES_WINDOW_MONTHS` months before `received_date`. */
function windowWhere(receivedDate: string): SqlQuery {
  return {
    sql: `date_of_sale >= CAST(? AS DATE) - INTERVAL ${COMPARABLES_WINDOW_MONTHS} MONTH AND date_of_sale < CAST(? AS DATE)`,
    params: [receivedDate, receivedDate],
  };
}

/** Count and median price of the area's sales in the window. */
export function salesSummaryQuery(
  t: Tables,
  lead: { county: string; eircode_routing_key: string | null; received_date: string },
): SqlQuery {
  const a = areaWhere(lead);
  const w = windowWhere(lead.received_date);
  return {
    sql: `SELECT count(*) AS sales_count, CAST(median(price_eur) AS DOUBLE) AS median_price_eur FROM ${t.sales} WHERE ${a.sql} AND ${w.sql}`,
    params: [...a.params, ...w.params],
  };
}

/** The area's most recent sales in the window, newest first. */
export function recentSalesQuery(
  t: Tables,
  lead: { county: string; eircode_routing_key: string | null; received_date: string },
): SqlQuery {
  const a = areaWhere(lead);
  const w = windowWhere(lead.received_date);
  return {
    sql: `SELECT date_of_sale, address, CAST(price_eur AS DOUBLE) AS price_eur, is_new_dwelling, description
          FROM ${t.sales} WHERE ${a.sql} AND ${w.sql} ORDER BY date_of_sale DESC, sale_id LIMIT ?`,
    params: [...a.params, ...w.params, RECENT_SALES_MAX],
  };
}

/** Precomputed nearest leads (lead_neighbours) joined with the leads, nearest first. */
export function nearbyLeadsQuery(t: Tables, id: number): SqlQuery {
  return {
    sql: `SELECT l.id, l.description, n.distance_m, l.use_class, l.lead_readiness, l.est_value
          FROM ${t.lead_neighbours} AS n JOIN ${t.leads} AS l ON l.id = n.neighbour_id
          WHERE n.lead_id = ? ORDER BY n.rank`,
    params: [id],
  };
}

/** Suppliers of the lead's county in any of its verticals, top by projects as builder. */
export function suppliersQuery(t: Tables, county: string, verticals: readonly string[]): SqlQuery {
  if (verticals.length === 0) return { sql: 'SELECT NULL LIMIT 0', params: [] };
  return {
    sql: `SELECT company_number, company_name, vertical, county, nace_code, projects_as_builder
          FROM ${t.suppliers} WHERE county = ? AND vertical IN (${verticals.map(() => '?').join(', ')})
          ORDER BY projects_as_builder DESC, company_number, vertical LIMIT ?`,
    params: [county, ...verticals, SUPPLIERS_MAX],
  };
}

/** One company by CRO number. */
export function companyQuery(t: Tables, companyNumber: string): SqlQuery {
  return {
    sql: `SELECT ${COMPANY_COLUMNS.join(', ')} FROM ${t.companies} WHERE company_number = ?`,
    params: [companyNumber],
  };
}

/** A company's filings, newest first. */
export function filingsQuery(t: Tables, companyNumber: string): SqlQuery {
  return {
    sql: `SELECT company_number, document_number, filing_type, description, filing_date, effective_date
          FROM ${t.filings} WHERE company_number = ? ORDER BY filing_date DESC, document_number DESC NULLS LAST LIMIT ?`,
    params: [companyNumber, FILINGS_MAX],
  };
}

/** The rows the detail is assembled from (enriched ones are absent when not fetched). */
export interface DetailRows {
  lead: Row;
  salesSummary: Row | undefined;
  recentSales: Row[];
  nearby: Row[];
  suppliers?: Row[];
  contractorCompany?: Row | null;
  applicantCompany?: Row | null;
  filings?: Row[];
}

/**
 * Assemble the detail record (schemas/lead-detail.schema.json) from its rows: every lead field,
 * with `main_contractor` replaced by its section object, plus the sections. Enriched sections not
 * fetched are null (masking then reports them).
 */
export function assembleLeadDetail(r: DetailRows): Row {
  // `main_contractor` keeps its place among the lead's fields; the other sections follow them
  return { ...r.lead, ...leadDetailSections(r) };
}

/**
 * The sections of the detail record, in order: `main_contractor` (which replaces the lead's flat
 * field of that name), `project`, `zoning_and_appeals`, `area_comparables`, `suppliers`,
 * `registered_company`, `company_filings`. `assembleLeadDetail` is the lead's fields with these.
 */
export function leadDetailSections(r: DetailRows): Row {
  const l = r.lead;
  const pick = (keys: readonly string[]): Row => Object.fromEntries(keys.map((k) => [k, l[k] ?? null]));
  const landUse =
    typeof l['land_use_code'] === 'string' ? (LAND_USE_DESCRIPTIONS[l['land_use_code'].toUpperCase()] ?? null) : null;
  const contractorName = l['main_contractor'];
  return {
    main_contractor:
      r.contractorCompany === undefined || typeof contractorName !== 'string' || contractorName === ''
        ? null
        : {
            name: contractorName,
            company_number: l['main_contractor_company_number'] ?? null,
            company: r.contractorCompany,
          },
    project: pick([
      'description',
      'use_class',
      'works_kind',
      'verticals',
      'explicit_verticals',
      'vertical_evidence',
      'scale',
      'num_units',
      'floor_area_m2',
      'site_area_ha',
      'demolition',
      'est_value',
      'est_value_basis',
      'application_type',
      'lead_readiness',
      'status',
      'received_date',
      'decision',
      'decision_date',
      'grant_date',
      'expiry_date',
      'commencement_date',
      'proposed_end_date',
      'completion_date',
      'public_url',
    ]),
    zoning_and_appeals: {
      land_use_code: l['land_use_code'] ?? null,
      land_use_description: landUse,
      further_info_requested: l['further_info_requested'],
      decision: l['decision'] ?? null,
      decision_date: l['decision_date'] ?? null,
      appeal_ref: l['appeal_ref'] ?? null,
      appeal_status: l['appeal_status'] ?? null,
      appeal_decision: l['appeal_decision'] ?? null,
      appeal_decision_date: l['appeal_decision_date'] ?? null,
    },
    area_comparables: {
      eircode_routing_key: l['eircode_routing_key'] ?? null,
      county: l['county'],
      window_months: COMPARABLES_WINDOW_MONTHS,
      sales_count: Number(r.salesSummary?.['sales_count'] ?? 0),
      median_price_eur: (r.salesSummary?.['median_price_eur'] as number | null | undefined) ?? null,
      recent_sales: r.recentSales,
      nearby_leads: r.nearby,
    },
    suppliers: r.suppliers ?? null,
    registered_company:
      r.applicantCompany && typeof l['applicant_match_confidence'] === 'number'
        ? { ...r.applicantCompany, match_confidence: l['applicant_match_confidence'] }
        : null,
    company_filings: r.filings ?? null,
  };
}
