/**
 * Row types passed between pipeline stages. Adapters (`pipeline/sources/`) turn raw publisher
 * rows into the `*Row` types below and never emit personal data: homeowner names, phone
 * numbers and personal addresses are dropped at the adapter boundary, only their presence
 * survives as flags. Names that may be an organisation's (no forename given) travel in memory
 * to the normaliser, which publishes them only with evidence (normalise/name-evidence.ts). The normaliser (`pipeline/normalise/`) turns rows into the published
 * records (`Lead`, `InfraProject`, …) whose JSON Schemas live in `schemas/`.
 *
 * Dates are ISO `YYYY-MM-DD` strings; absent values are `null`, never `undefined` or ''.
 */
import type { SourceName } from './sources/formats.ts';
import type { LeadRecord } from './lead-record.ts';

export type IsoDate = string;

export { WORKS_KINDS, type WorksKind } from '../common/lead-vocabulary.ts';

/** The kinds of evidence that a name is an organisation's, in the order they are tried (normalise/name-evidence.ts). */
export const NAME_EVIDENCE = ['company_register', 'legal_form', 'public_body'] as const;
export type NameEvidence = (typeof NAME_EVIDENCE)[number];

/** Why a source row was not used. Stable snake_case codes, counted in the manifest. */
export type RejectReason =
  | 'malformed_row' // wrong number of fields, unterminated quote, undecodable line
  | 'missing_field' // a required field is empty (detail names it)
  | 'invalid_date' // a date field that is present but not a date (detail names it)
  | 'invalid_number' // a numeric field that is present but not a number (detail names it)
  | 'unknown_authority'
  | 'unknown_county'
  | 'invalid_coordinates' // outside Ireland or not numbers
  | 'duplicate' // same key as an earlier row of the same source (the later/newer one is kept)
  | 'unknown_header' // a file whose header matches no known layout (one reject for the file)
  | 'unknown_category'; // a classification value the pipeline cannot place (e.g. a rent table's property type)

/**
 * A rejected row. Never carries the raw line (it may hold personal data): the file, the line
 * number and the record's own key are enough to find it in the source.
 */
export interface Reject {
  source: SourceName;
  file: string;
  line: number;
  key: string | null;
  reason: RejectReason;
  detail: string | null;
}

export interface AdapterResult<T> {
  rows: T[];
  rejects: Reject[];
  /** Data lines read (header excluded): rows.length + rejects.length when nothing is merged. */
  lines: number;
}

export type ApplicantType = 'individual' | 'organisation' | 'unknown';

/** One planning application, as read from the national planning export. */
export interface PlanningRow {
  authority: string; // canonical short name, see pipeline/reference/authorities.ts
  application_number: string;
  description: string;
  address: string | null;
  eircode_routing_key: string | null; // first 3 chars of DevelopmentPostcode; full code dropped
  lat: number | null;
  lon: number | null;
  application_status: string | null;
  application_type: string | null;
  decision: string | null; // cleaned raw decision text, e.g. "GRANT PERMISSION"
  land_use_code: string | null;
  site_area_ha: number | null;
  num_units: number | null;
  floor_area_m2: number | null;
  one_off_house: boolean;
  received_date: IsoDate;
  withdrawn_date: IsoDate | null;
  decision_date: IsoDate | null;
  decision_due_date: IsoDate | null;
  grant_date: IsoDate | null;
  expiry_date: IsoDate | null;
  appeal_ref: string | null;
  appeal_status: string | null;
  appeal_decision: string | null;
  appeal_decision_date: IsoDate | null;
  appeal_submitted_date: IsoDate | null;
  fi_request_date: IsoDate | null;
  fi_received_date: IsoDate | null;
  public_url: string | null;
  etl_date: IsoDate | null;
  site_id: string | null;
  /** The row gives an applicant forename: a person, whose name is dropped by the adapter. */
  applicant_person: boolean;
  /**
   * The applicant's name when the row gives no forename: possibly an organisation's. Held in
   * memory only; published as `applicant_org` only with evidence (normalise/name-evidence.ts).
   */
  applicant_name: string | null;
  /** True when the source held applicant contact details (the details themselves are dropped). */
  has_contact: boolean;
  line: number;
}

/** One BCMS commencement notice (with its completion certificate columns, if any). */
export interface CommencementRow {
  cn_number: string;
  permission_number: string | null; // links to PlanningRow.application_number
  authority: string | null;
  project_name: string | null;
  description: string | null;
  project_type: string | null;
  activity_type: string | null;
  date_granted: IsoDate | null;
  submitted_date: IsoDate | null;
  commencement_date: IsoDate | null;
  proposed_end_date: IsoDate | null;
  units_for_phase: number | null;
  phase: string | null;
  total_units: number | null;
  town: string | null;
  eircode_routing_key: string | null;
  county: string | null;
  lat: number | null;
  lon: number | null;
  validation_status: string | null;
  not_commenced: boolean;
  opt_out: boolean;
  /**
   * Builder (main contractor) as the notice names it. Held in memory only; published as
   * `main_contractor` only with evidence that it is an organisation (normalise/name-evidence.ts).
   */
  builder_name: string | null;
  builder_company_number: string | null;
  ccc_number: string | null;
  ccc_date: IsoDate | null;
  ccc_type: string | null;
  ccc_units_completed: number | null;
  line: number;
}

/** One Property Price Register sale. */
export interface SaleRow {
  date_of_sale: IsoDate;
  address: string;
  county: string;
  eircode_routing_key: string | null;
  /** sha256 of the normalised address and full Eircode: identifies a home without the code. */
  home_key: string;
  /**
   * 64-bit hash (16 hex) of the full Eircode, upper-case without spaces; null when the row has
   * none. Internal: lets the repeat-sale matcher tell two homes at one address apart without the
   * code; never published (release/published-sale.ts drops it from the sales table).
   */
  eircode_hash: string | null;
  price_cents: number; // exact: parsed from the text, never through a float
  not_full_market_price: boolean;
  vat_exclusive: boolean;
  description: string | null;
  is_new_dwelling: boolean;
  property_size: string | null;
  line: number;
}

/** One company from the CRO extract. */
export interface CompanyRow {
  company_number: string;
  company_name: string;
  name_key: string; // normalised for matching, see normalise/company-match.ts
  status: string | null; // trimmed, e.g. "Normal"
  status_code: string | null;
  company_type: string | null;
  reg_date: IsoDate | null;
  last_ar_date: IsoDate | null;
  last_accounts_date: IsoDate | null;
  dissolved_date: IsoDate | null;
  status_date: IsoDate | null;
  address: string | null; // registered office, lines joined with ", "
  county: string | null;
  eircode_routing_key: string | null;
  nace_code: string | null; // "6202" (the extract's float form "6202.0" is normalised)
  line: number;
}

/** One filing of a company. */
export interface FilingRow {
  company_number: string;
  document_number: string | null;
  filing_type: string;
  description: string | null;
  filing_date: IsoDate;
  effective_date: IsoDate | null;
  line: number;
}

export type InfraVertical = 'data_centre' | 'wind' | 'solar' | 'battery_storage' | 'grid';

/**
 * A fragment of an infrastructure project from one of the four infrastructure files. The
 * normaliser merges fragments that share `project_key` (normalised project name).
 */
export interface InfraFragment {
  kind: 'abp_case' | 'auction' | 'grid_connection' | 'data_centre';
  project_key: string;
  name: string;
  vertical: InfraVertical | null;
  technology: string | null;
  applicant: string | null;
  capacity_mw: number | null;
  connection_voltage_kv: number | null;
  county: string | null;
  authority: string | null;
  lat: number | null;
  lon: number | null;
  case_id: string | null;
  category: string | null;
  description: string | null;
  lodged_date: IsoDate | null;
  decision: string | null;
  decision_date: IsoDate | null;
  connection_date: IsoDate | null;
  auction_round: string | null;
  status: string | null;
  cru_connection_policy: boolean | null;
  public_url: string | null;
  line: number;
  file: string;
}

import type { LeadStatus, Readiness } from '../common/lead-lifecycle.ts';
export type { LeadStatus, Readiness };

export type { Scale } from '../common/lead-vocabulary.ts';

/**
 * A published lead (one per planning application, merged with its commencement notices).
 * `id`, `first_seen`, `last_changed` and `content_hash` are set by the registry
 * (pipeline/release/registry.ts); everything else by the normaliser.
 * Fields marked enriched are served only to enriched scopes (schemas mark them `x-enriched`).
 */
export type Lead = LeadRecord;

/** A published strategic-infrastructure or energy project. */
export interface InfraProject {
  id: number;
  project_key: string;
  name: string;
  vertical: InfraVertical;
  technology: string;
  applicant: string | null; // enriched
  applicant_evidence: NameEvidence | null; // enriched
  applicant_company_number: string | null; // enriched
  capacity_mw: number | null;
  connection_voltage_kv: number | null;
  county: string | null;
  planning_authority: string | null;
  lat: number | null;
  lon: number | null;
  status: 'proposed' | 'in_planning' | 'consented' | 'refused' | 'operational';
  consenting_route: 'strategic_infrastructure' | 'local_authority' | 'appeal' | 'unknown';
  case_id: string | null;
  lodged_date: IsoDate | null;
  decision: string | null;
  decision_date: IsoDate | null;
  connection_date: IsoDate | null;
  auction_round: string | null;
  auction_winner: boolean;
  eu_fast_lane: boolean;
  regulator_connection_rule: boolean;
  sources: string[]; // which infrastructure files contributed
  description: string | null;
  public_url: string | null;
  first_seen: IsoDate;
  last_changed: IsoDate;
  content_hash: string;
}

/** How the rent index groups dwellings; `all` is the table's "All property types". */
export type DwellingClass = 'all' | 'house' | 'apartment';

/** One cell of the RTB rent index (RIQ02): average monthly rent of one area, type, size and quarter. */
export interface RentRow {
  quarter: string; // "2023Q1"
  period_start: IsoDate; // first day of the quarter
  location: string; // as published: "Ireland", a county, a Dublin postal district, a town…
  /** Canonical county when the location is a county (Dublin postal districts → null); null for "Ireland". */
  county: string | null;
  national: boolean;
  property_type: string; // as published, e.g. "Semi detached house"
  dwelling: DwellingClass;
  bedrooms: string; // as published, e.g. "All bedrooms", "Two bed"
  all_bedrooms: boolean;
  rent_eur: number;
  line: number;
}

/** One month of one material in the CSO building-materials wholesale price index (WPM28). */
export interface MaterialRow {
  month: string; // "2023-01"
  period_start: IsoDate;
  material: string; // as published, e.g. "Structural steel"
  index_value: number; // base 2015 = 100
  line: number;
}
