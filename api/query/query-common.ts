/**
 * What every query parser of the API shares (leads, exports, webhook filters, infrastructure,
 * intel, GIS feeds): one Ajv instance for the query schemas of `schemas/`, one place-name folder
 * for every parameter that takes a county or an authority, and one wording per kind of mistake.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { foldSearchText } from '../../common/search-text.ts';

// ajv-formats is CommonJS; under NodeNext its default import is the module object at type level.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

let ajv: Ajv2020 | null = null;

/**
 * The one Ajv instance that validates query parameters (all errors, the formats of ajv-formats,
 * union types, `verbose` so that an error carries the schema node it broke). `parseQuery`
 * compiles each query schema of `schemas/` on it once; the schemas they reference are added with
 * `addSchema` (once per `$id`). It does not coerce types (`coerceTypes`): Ajv would take `1e3`,
 * ` 12` and `0x10` as numbers and refuses `1` / `0` as booleans, so `parseQuery` shapes the text
 * itself (NUMBER_TEXT, BOOLEAN_TEXT) and the answers stay what they were.
 */
export function queryAjv(): Ajv2020 {
  if (!ajv) {
    ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true, verbose: true });
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

/**
 * The one wording of each kind of mistake in a query (the `reason` of a 400's `errors[]`). Every
 * parser takes its reasons from here; `parseQuery` (api/query/parse-query.ts) turns each schema
 * error into one of them.
 */
export const REASONS = {
  unknownParameter: 'unknown parameter',
  repeated: 'given more than once',
  notAllowed: 'not an allowed value',
  empty: 'must not be empty',
  required: 'is required',
  pageAndCursor: 'give either page or cursor, not both',
  notADate: 'must be a date YYYY-MM-DD',
  notAWholeNumber: 'must be a whole number',
  notANumber: 'must be a number',
  notABoolean: 'must be true, false, 1 or 0',
  notNegative: 'must not be negative',
  /** A number below its schema `minimum` (other than 0). */
  atLeast: (min: number): string => `must be at least ${min}`,
  /** A number above its `maximum` (or a configured limit such as PAGE_SIZE_MAX). */
  atMost: (max: number): string => `must be at most ${max}`,
  /** A whole number with both bounds declared, whatever is wrong with it (not a number, too small, too large). */
  wholeNumberFrom: (min: number, max: number): string => `must be an integer from ${min} to ${max}`,
  /** `page` beyond PAGE_MAX on a list that pages by cursor too. */
  pageBeyond: (max: number): string => `must be at most ${max}; page deeper with cursor (pass next_cursor as cursor)`,
  tooLong: (max: number): string => `must be at most ${max} characters`,
  tooShort: (min: number): string => `must be at least ${min} characters`,
  tooMany: (max: number): string => `must have at most ${max} values`,
  tooFew: (min: number): string => `must have at least ${min} values`,
  /** A text not matching its schema `pattern` (the schema's `x-pattern-reason` says it better when it has one). */
  pattern: (pattern: string): string => `must match pattern "${pattern}"`,
  /** The end of a date range before its start. */
  notBefore: (start: string): string => `must not be before ${start}`,
  /** An alias given beside its filter's own name with another value. */
  aliasOf: (name: string): string => `an alias of ${name}, which is given with another value: give one of the two`,
  /** The top of a numeric range below its bottom. */
  notBelow: (bottom: string): string => `must be greater than or equal to ${bottom}`,
  /** Release-valued names (authorities, counties, …) that match none the release knows. */
  unknownValues: (name: string, values: readonly string[]): string =>
    `unknown ${name} ${values.map((v) => JSON.stringify(v)).join(', ')}`,
  /** A cursor that decodes but does not fit the request. */
  badCursor: (how: string): string => `not a valid cursor; ${how}`,
} as const;
