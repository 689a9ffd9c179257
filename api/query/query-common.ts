/**
 * What every query parser of the API shares (leads, exports, webhook filters, infrastructure,
 * intel, GIS feeds): one Ajv instance for the query schemas of `schemas/`, one place-name folder
 * for every parameter that takes a county or an authority, and one wording per kind of mistake.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { foldSearchText } from '../../common/search-text.ts';

// ajv-formats is CommonJS; under NodeNext its default import is the module object at type level.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

let ajv: Ajv2020 | null = null;

/**
 * The one Ajv instance that validates query parameters (all errors, the formats of ajv-formats,
 * union types). Each parser compiles its schema from `schemas/` on it once; schemas they
 * reference are added with `addSchema` (once per `$id`).
 */
export function queryAjv(): Ajv2020 {
  if (!ajv) {
    ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true });
    addFormats(ajv);
  }
  return ajv;
}

/** Add a schema to the query Ajv unless one with its `$id` is there already. */
export function addQuerySchema(schema: { $id?: string }): void {
  const a = queryAjv();
  if (!schema.$id || !a.getSchema(schema.$id)) a.addSchema(schema);
}

/**
 * Fold a place name (county or authority) for matching: accents and case ignored, runs of spaces
 * collapsed, and a leading "Co." / "Co" / "County" dropped — "Co. Cork", "county cork", "CORK"
 * and "cork" all fold to "cork"; "Dún  Laoghaire-Rathdown" to "dun laoghaire-rathdown".
 *
 * @example foldPlace('Co. Cork') // 'cork'
 */
export function foldPlace(s: string): string {
  return foldText(s).replace(/^(?:co\.?|county)\s+(?=\S)/, '');
}

/** Fold a value for matching without case or accents, spaces collapsed ("PERMISSION" = "permission"). */
export function foldText(s: string): string {
  return foldSearchText(s).replace(/\s+/g, ' ').trim();
}

/** The one wording of each kind of mistake in a query (the `reason` of a 400's `errors[]`). */
export const REASONS = {
  unknownParameter: 'unknown parameter',
  repeated: 'given more than once',
  notAllowed: 'not an allowed value',
  empty: 'must not be empty',
  pageAndCursor: 'give either page or cursor, not both',
  notADate: 'must be a date YYYY-MM-DD',
} as const;
