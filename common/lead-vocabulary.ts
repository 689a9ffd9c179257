/**
 * The classification's vocabulary, declared once for both sides: the codes of the trade verticals,
 * use classes, kinds of works and scale bands, in published order. The pipeline classifies leads
 * into them (pipeline/normalise/classify.ts); the API's filters accept them (api/query/lead-filters.ts);
 * common/labels.ts names them in words for the app.
 */

/** The trade verticals' codes (pipeline/normalise/classify.ts `VERTICALS` holds each one's keywords). */
export const VERTICAL_CODES = [
  'agricultural_buildings',
  'concrete',
  'data_centre_fitout',
  'demolition',
  'electrical',
  'ev_charging',
  'flooring',
  'glazing_facades',
  'groundworks',
  'heat_pumps',
  'hvac',
  'insulation',
  'kitchens_interiors',
  'landscaping',
  'plumbing_heating',
  'roofing',
  'scaffolding',
  'security_fire',
  'signage_shopfronts',
  'solar',
  'steel_structures',
  'telecoms',
  'windows_doors',
] as const;
export type VerticalCode = (typeof VERTICAL_CODES)[number];

/** Use classes (one per lead), in the order `classifyUseClass` tests them (see docs/data-model.md). */
export const USE_CLASS_CODES = [
  'data_centre',
  'energy',
  'telecoms',
  'mixed_use',
  'residential_multi',
  'house',
  'change_of_use',
  'healthcare',
  'hospitality',
  'education',
  'agricultural',
  'residential_extension',
  'warehouse_logistics',
  'industrial',
  'office',
  'retail',
  'community',
  'commercial',
  'other',
] as const;
export type UseClassCode = (typeof USE_CLASS_CODES)[number];

/** Kinds of works (`works_kind`); see docs/data-quality.md. */
export const WORKS_KINDS = [
  'new_works',
  'extension_of_duration',
  'outline',
  'retention',
  'amendment',
  'declaration',
] as const;
export type WorksKind = (typeof WORKS_KINDS)[number];

/** Project scale bands, smallest first. */
export const SCALES = ['minor', 'medium', 'large', 'major'] as const;
export type Scale = (typeof SCALES)[number];
