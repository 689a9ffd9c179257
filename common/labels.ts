/**
 * What a buyer reads for the product's codes: trades (verticals), stages, statuses, kinds of
 * works and use classes. The codes stay the API's; these are the words the
 * account area shows beside them (and the pipeline's trade table takes its labels from here).
 */

/** The trades a lead is published for (`verticals`): code → label. */
export const VERTICAL_LABELS: Readonly<Record<string, string>> = {
  agricultural_buildings: 'Agricultural buildings',
  concrete: 'Concrete and precast',
  data_centre_fitout: 'Data-centre fit-out',
  demolition: 'Demolition',
  electrical: 'Electrical',
  ev_charging: 'EV charging',
  flooring: 'Flooring and tiling',
  glazing_facades: 'Glazing and facades',
  groundworks: 'Groundworks and drainage',
  heat_pumps: 'Heat pumps',
  hvac: 'HVAC and ventilation',
  insulation: 'Insulation and retrofit',
  kitchens_interiors: 'Kitchens and interiors',
  landscaping: 'Landscaping',
  plumbing_heating: 'Plumbing and heating',
  roofing: 'Roofing',
  scaffolding: 'Scaffolding',
  security_fire: 'Security and fire safety',
  signage_shopfronts: 'Signage and shopfronts',
  solar: 'Solar PV',
  steel_structures: 'Steel structures',
  telecoms: 'Telecoms',
  windows_doors: 'Windows and doors',
};

/** Stages (`lead_readiness`), in lifecycle order. */
export const STAGE_LABELS: Readonly<Record<string, string>> = {
  application: 'Application lodged',
  further_information: 'Further information requested',
  appealed: 'Under appeal',
  granted: 'Granted',
  commencing: 'Commencing',
  under_construction: 'Under construction',
  completed: 'Completed',
  refused: 'Refused',
  withdrawn: 'Withdrawn',
  expired: 'Permission expired',
};

/** Coarse statuses (`status`). */
export const STATUS_LABELS: Readonly<Record<string, string>> = {
  planning: 'In planning',
  approved: 'Approved, not started',
  active: 'On site',
  closed: 'Closed',
};

/** Kinds of works (`works_kind`). */
export const WORKS_KIND_LABELS: Readonly<Record<string, string>> = {
  new_works: 'New works',
  extension_of_duration: 'Extension of duration',
  outline: 'Outline permission',
  retention: 'Retention of works done',
  amendment: 'Amendment',
  declaration: 'Declaration (no works)',
};

/** Use classes whose words are not their code's. */
const USE_CLASS_LABELS: Readonly<Record<string, string>> = {
  residential_multi: 'Apartments and housing schemes',
  residential_extension: 'House extension',
  house: 'New house',
  mixed_use: 'Mixed use',
  change_of_use: 'Change of use',
  warehouse_logistics: 'Warehouse and logistics',
  data_centre: 'Data centre',
};

/** `snake_case` → "Snake case". */
export function humanise(code: string): string {
  const s = code.replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The fields `labelOf` knows; `scale` has no table, its codes are humanised. */
type LabelledField = 'verticals' | 'lead_readiness' | 'status' | 'works_kind' | 'use_class' | 'scale';

/** Each field's table, built once: `labelOf` runs per table cell. */
const LABELS_OF_FIELD: ReadonlyMap<LabelledField, Readonly<Record<string, string>>> = new Map([
  ['verticals', VERTICAL_LABELS],
  ['lead_readiness', STAGE_LABELS],
  ['status', STATUS_LABELS],
  ['works_kind', WORKS_KIND_LABELS],
  ['use_class', USE_CLASS_LABELS],
]);

/** The label of a code of `field`, or the humanised code. */
export function labelOf(field: LabelledField, code: string): string {
  return LABELS_OF_FIELD.get(field)?.[code] ?? humanise(code);
}
