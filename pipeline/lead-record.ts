/**
 * The lead record as the pipeline writes it: GENERATED from schemas/lead.schema.json by
 * common/write-lead-derived.ts (`make schemas`); edit the schema, never this file.
 */
export interface LeadRecord {
  /** Stable lead identifier assigned by the release registry; used in the detail path `/leads/{id}`. Never reused. */
  id: number;
  /** Natural key of the lead: `<authority slug>/<application number>`. */
  lead_key: string;
  /** Planning application number as issued by the planning authority. */
  application_number: string;
  /** Canonical short name of the local planning authority. */
  planning_authority: string;
  /** County of the planning authority. */
  county: string;
  /** Address of the development site (the site, never the applicant's address). */
  address: string | null;
  /** Eircode routing key (first three characters of the Eircode) of the development site; the full Eircode is never published. */
  eircode_routing_key: string | null;
  /** WGS84 latitude of the development site (decimal degrees, within the island of Ireland); null when not located. */
  lat: number | null;
  /** WGS84 longitude of the development site (decimal degrees, within the island of Ireland); null when not located. */
  lon: number | null;
  /** Development description as lodged with the planning authority. */
  description: string;
  /** Application type as published by the authority, e.g. "PERMISSION", "RETENTION". */
  application_type: string | null;
  /** Date the application was received by the authority. */
  received_date: string;
  /** Date of the authority's decision; null while undecided. */
  decision_date: string | null;
  /** Statutory date by which the decision is due. */
  decision_due_date: string | null;
  /** Date the final grant of permission issued. */
  grant_date: string | null;
  /** Date the permission expires. */
  expiry_date: string | null;
  /** Date the application was withdrawn. */
  withdrawn_date: string | null;
  /** Normalised decision of the planning authority; null while undecided. */
  decision: 'granted' | 'refused' | 'split' | 'invalid' | null;
  /** Lifecycle stage of the lead. */
  lead_readiness: 'application' | 'further_information' | 'appealed' | 'granted' | 'commencing' | 'under_construction' | 'completed' | 'refused' | 'withdrawn' | 'expired';
  /** Coarse lifecycle status (filterable as `status`). */
  status: 'planning' | 'approved' | 'active' | 'closed';
  /** Trade feeds the lead is relevant to, e.g. `solar`, `roofing`, `landscaping`. */
  verticals: string[];
  /** The verticals of `verticals` that the description itself names (its trade words, e.g. `dormer` → `roofing`), as opposed to those the kind of build implies (an extension implies `groundworks`). Filterable as `explicit_vertical`. Empty when `verticals` is. See docs/data-quality.md. */
  explicit_verticals: string[];
  /** Why each vertical is published, one entry per vertical in `verticals` order: `<vertical>: <trade words matched>` (`roofing: dormer, rooflight`; a match with a gap keeps its first and last word, `groundworks: underground … tanks`) or `<vertical>: implied by <kind of build>` (`groundworks: implied by extension`, `hvac: implied by change of use to food`, `telecoms: implied by use class telecoms`). Only trade words and the rules' own names appear: the applicant's own words ("I, …, intend to apply") are cut before classification. */
  vertical_evidence: string[];
  /** Use class of the development in snake_case, e.g. `residential`, `data_centre`. */
  use_class: string;
  /** What kind of application it is: `new_works` (permission for works not yet built), `extension_of_duration` (more time for permitted works, not yet built), `outline` (outline permission), `retention` (works or a use already there), `amendment` (changes to a permission already granted, compliance with its conditions) or `declaration` (a section 5 exempted-development or section 57 declaration; Dublin City's `EXPP`). From the application type where the source states one, else from the description. `retention`, `amendment` and `declaration` have no work to sell: their `verticals` are empty. Filterable as `works_kind`. See docs/data-quality.md. */
  works_kind: 'new_works' | 'extension_of_duration' | 'outline' | 'retention' | 'amendment' | 'declaration';
  /** Project scale band. */
  scale: 'minor' | 'medium' | 'large' | 'major';
  /** Number of residential units proposed. */
  num_units: number | null;
  /** Gross floor area proposed, in square metres. */
  floor_area_m2: number | null;
  /** Site area in hectares. */
  site_area_ha: number | null;
  /** True for a single one-off dwelling. */
  one_off_house: boolean;
  /** True when the development involves demolition. */
  demolition: boolean;
  /** Estimated project value in whole euros. */
  est_value: number;
  /** What the value estimate was derived from. */
  est_value_basis: 'floor_area' | 'units' | 'quantity' | 'typical';
  /** True when the source holds applicant contact details. The details themselves are never published. */
  has_contact: boolean;
  /** Whether the applicant is an organisation (a name with evidence, see `applicant_org_evidence`), an individual (a forename given, or a name without evidence: never published) or unknown (no name). */
  applicant_type: 'individual' | 'organisation' | 'unknown';
  /** Land-use / zoning code as published by the authority. */
  land_use_code: string | null;
  /** True when the authority requested further information. */
  further_info_requested: boolean;
  /** Reference of the appeal to the national consenting body, if any. */
  appeal_ref: string | null;
  /** Status of the appeal as published. */
  appeal_status: string | null;
  /** Decision on the appeal as published. */
  appeal_decision: string | null;
  /** Date of the appeal decision. */
  appeal_decision_date: string | null;
  /** Number of the latest building-control commencement notice for this permission. */
  commencement_notice: string | null;
  /** Commencement date given on the commencement notice. */
  commencement_date: string | null;
  /** Proposed completion date given on the commencement notice. */
  proposed_end_date: string | null;
  /** Date the completion certificate was validated. */
  completion_date: string | null;
  /** Units covered by completion certificates. */
  units_completed: number | null;
  /** Name of the applicant organisation, published only with evidence that it is an organisation (`applicant_org_evidence`); null for individuals and for names without evidence. Enriched field. (enriched) */
  applicant_org: string | null;
  /** Why `applicant_org` may be published: the evidence that it is an organisation's — `company_register` (the name's normalised key, legal form included, is a company of the release's CRO register, or the source declares that company's number), `legal_form` (the name ends in a legal form such as Limited, DAC, PLC, CLG, UC, Teoranta) or `public_body` (a local authority's council or a listed public body). Null when no name is published. See docs/data-model.md, 'Names and evidence'. Enriched field. (enriched) */
  applicant_org_evidence: 'company_register' | 'legal_form' | 'public_body' | null;
  /** Companies Registration Office number of the applicant organisation, when matched. Enriched field. (enriched) */
  applicant_company_number: string | null;
  /** Confidence (0–1) of the match between applicant organisation and registered company. Enriched field. (enriched) */
  applicant_match_confidence: number | null;
  /** Appointed main contractor (builder) named on the latest commencement notice, published only with evidence that it is an organisation (`main_contractor_evidence`). Enriched field. (enriched) */
  main_contractor: string | null;
  /** Why `main_contractor` may be published: the evidence that it is an organisation's — `company_register` (the name's normalised key, legal form included, is a company of the release's CRO register, or the source declares that company's number), `legal_form` (the name ends in a legal form such as Limited, DAC, PLC, CLG, UC, Teoranta) or `public_body` (a local authority's council or a listed public body). Null when no name is published. See docs/data-model.md, 'Names and evidence'. Enriched field. (enriched) */
  main_contractor_evidence: 'company_register' | 'legal_form' | 'public_body' | null;
  /** Companies Registration Office number of the main contractor. Enriched field. (enriched) */
  main_contractor_company_number: string | null;
  /** Link to the application on the authority's public planning portal. */
  public_url: string | null;
  /** Release date on which the lead first appeared. */
  first_seen: string;
  /** Release date on which the lead's content last changed. */
  last_changed: string;
  /** Hex hash of the lead's published content; changes whenever the content changes. */
  content_hash: string;
  /** Date the lead entered its lead_readiness stage, from the source's own dates: received, further information requested, appeal lodged, the standing decision, permission expiry, earliest commencement (commencing), the day after its 90-day window (under_construction), the last completion certificate, withdrawn. Null when the source gives no date for it. Derived from the stage and the dates it was read from, so it is not part of content_hash (x-unhashed): its arrival marked no lead updated. */
  readiness_since: string | null;
}
