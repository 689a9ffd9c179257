/**
 * Validation of published records against the JSON Schemas in `schemas/` (the single source of
 * truth for every record the pipeline publishes and the API serves).
 *
 * All schemas are read synchronously and compiled once by `loadValidators`; validating a row is
 * then a single call into ajv's generated code (`allErrors: false`: the first error is enough to
 * reject a row, and keeps the bulk path fast). Error messages name the field (JSON pointer) and
 * never echo the row's values, so they are safe to log.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

export type RecordKind =
  | 'lead'
  | 'lead-detail'
  | 'infrastructure-project'
  | 'company'
  | 'filing'
  | 'property-sale'
  | 'supplier'
  | 'lead-neighbour'
  | 'change'
  | 'event'
  | 'reject'
  | 'price-index-point'
  | 'rental-yield'
  | 'emerging-zone'
  | 'material-cost'
  | 'release-manifest'
  | 'problem';

/** Every record kind, one schema file `<kind>.schema.json` each. */
export const RECORD_KINDS: readonly RecordKind[] = [
  'lead',
  'lead-detail',
  'infrastructure-project',
  'company',
  'filing',
  'property-sale',
  'supplier',
  'lead-neighbour',
  'change',
  'event',
  'reject',
  'price-index-point',
  'rental-yield',
  'emerging-zone',
  'material-cost',
  'release-manifest',
  'problem',
];

export interface Validators {
  /** Validate one row; `[]` when valid, otherwise messages that name the offending field. */
  validate(kind: RecordKind, row: unknown): string[];
}

/** Base URI of every schema `$id`. */
export const SCHEMA_BASE_URI = 'https://schemas.leads.ie/v1/';

/** `<repo>/schemas`, resolved from this module's location. */
export const DEFAULT_SCHEMA_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'schemas');

// ajv-formats is CommonJS; under NodeNext its default import is the module object at type level.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

type JsonSchema = Record<string, unknown>;

/** Read every `*.schema.json` of a folder, keyed by file name. */
function readSchemaTexts(schemaDir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of readdirSync(schemaDir).sort()) {
    if (f.endsWith('.schema.json')) out.set(f, readFileSync(join(schemaDir, f), 'utf8'));
  }
  return out;
}

const parsedSchemas = (texts: Map<string, string>): Map<string, JsonSchema> =>
  new Map([...texts].map(([f, text]) => [f, JSON.parse(text) as JsonSchema]));

/** Compiled validators by the text of their schema folder: compiling takes ~0.3 s, and a process
 * (a test file, a server running several refreshes) asks again for the same schemas. */
const compiledBySchemas = new Map<string, Validators>();

/**
 * Turn one ajv error into a message naming the field, e.g.
 * `/lat must be <= 55.5`, `/ must have required property 'county'`,
 * `/ must NOT have additional property 'phone'`. Never includes the value.
 */
export function formatError(e: ErrorObject): string {
  const path = e.instancePath || '/';
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'required') return `${path} must have required property '${String(p.missingProperty)}'`;
  if (e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties') {
    const name = p.additionalProperty ?? p.unevaluatedProperty;
    return `${path} must NOT have additional property '${String(name)}'`;
  }
  if (e.keyword === 'enum') {
    const allowed = (p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
    return `${path} must be one of ${allowed.length > 300 ? `${allowed.slice(0, 300)}…` : allowed}`;
  }
  return `${path} ${e.message ?? e.keyword}`;
}

/**
 * Load every schema of `schemaDir` (default `<repo>/schemas`) and return a validator for all
 * record kinds, each kind compiled when first validated; the same schema texts again return the
 * validators already loaded. Throws when a kind's schema or its `$id` is missing (a schema that
 * does not compile throws at its kind's first row; test/pipeline/validate.test.ts compiles them all).
 *
 * @example
 *   const v = loadValidators();
 *   v.validate('lead', row); // [] or ['/lat must be <= 55.5']
 */
export function loadValidators(schemaDir: string = DEFAULT_SCHEMA_DIR): Validators {
  const texts = readSchemaTexts(schemaDir);
  const key = [schemaDir, ...[...texts].flat()].join('\u0000');
  let validators = compiledBySchemas.get(key);
  if (!validators) compiledBySchemas.set(key, (validators = compileValidators(schemaDir, texts)));
  return validators;
}

function compileValidators(schemaDir: string, texts: Map<string, string>): Validators {
  const ajv = new Ajv2020({
    allErrors: false,
    strict: true,
    allowUnionTypes: true,
    // price_eur is `multipleOf: 0.01`; floating-point division needs a tolerance.
    multipleOfPrecision: 6,
  });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'x-enriched', schemaType: 'boolean' });
  ajv.addKeyword({ keyword: 'x-unhashed', schemaType: 'boolean' });
  const schemas = parsedSchemas(texts);
  for (const schema of schemas.values()) ajv.addSchema(schema);
  // Each kind is compiled when first asked for (ajv's code generation is most of the cost): the
  // sales reader's worker thread validates one kind and compiles only that one. Every kind's
  // schema and `$id` are checked here, so a missing one still fails at load.
  for (const kind of RECORD_KINDS) {
    const file = `${kind}.schema.json`;
    if (!schemas.has(file)) throw new Error(`schema ${file} is missing from ${schemaDir}`);
    if (schemas.get(file)!['$id'] !== `${SCHEMA_BASE_URI}${file}`)
      throw new Error(`schema ${file} has no $id ${SCHEMA_BASE_URI}${file}`);
  }
  const compiled = new Map<RecordKind, ValidateFunction>();
  const compile = (kind: RecordKind): ValidateFunction => {
    if (!RECORD_KINDS.includes(kind)) throw new Error(`unknown record kind: ${String(kind)}`);
    const fn = ajv.getSchema(`${SCHEMA_BASE_URI}${kind}.schema.json`)!;
    compiled.set(kind, fn);
    return fn;
  };
  return {
    validate(kind, row) {
      const fn = compiled.get(kind) ?? compile(kind);
      if (fn(row)) return [];
      return (fn.errors ?? []).map(formatError);
    },
  };
}

/**
 * Validates rows of one kind one at a time (the refresh streams rows through one); counts the
 * invalid ones and keeps up to `maxErrors` sample messages, each prefixed with the row's 0-based
 * index (`row 12: /lat must be <= 55.5`).
 */
export class RowCheck {
  checked = 0;
  invalid = 0;
  readonly samples: string[] = [];
  private readonly v: Validators;
  private readonly kind: RecordKind;
  private readonly maxErrors: number;

  constructor(v: Validators, kind: RecordKind, maxErrors = 10) {
    this.v = v;
    this.kind = kind;
    this.maxErrors = maxErrors;
  }

  /** Validate one row. */
  check(row: unknown): void {
    const errors = this.v.validate(this.kind, row);
    if (errors.length > 0) {
      this.invalid++;
      if (this.samples.length < this.maxErrors) this.samples.push(`row ${this.checked}: ${errors.join('; ')}`);
    }
    this.checked++;
  }
}

/** Validate many rows of one kind (`RowCheck` over an iterable). */
export function validateAll(
  v: Validators,
  kind: RecordKind,
  rows: Iterable<unknown>,
  maxErrors = 10,
): { checked: number; invalid: number; samples: string[] } {
  const c = new RowCheck(v, kind, maxErrors);
  for (const row of rows) c.check(row);
  return { checked: c.checked, invalid: c.invalid, samples: c.samples };
}

const enrichedCache = new Map<RecordKind, string[]>();

/**
 * Top-level property names of a record kind marked `"x-enriched": true` in its schema (directly,
 * or on the property a `$ref` points to). These are served only to enriched scopes.
 */
export function enrichedFields(kind: RecordKind): string[] {
  const cached = enrichedCache.get(kind);
  if (cached) return [...cached];
  const schemas = parsedSchemas(readSchemaTexts(DEFAULT_SCHEMA_DIR));
  const schema = schemas.get(`${kind}.schema.json`);
  if (!schema) throw new Error(`unknown record kind: ${String(kind)}`);
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out = Object.keys(props).filter((name) => isEnriched(props[name]!, schemas));
  enrichedCache.set(kind, out);
  return [...out];
}

function isEnriched(prop: JsonSchema, schemas: Map<string, JsonSchema>): boolean {
  if (prop['x-enriched'] === true) return true;
  const target = typeof prop.$ref === 'string' ? resolveRef(prop.$ref, schemas) : null;
  return target !== null && target['x-enriched'] === true;
}

/** Resolve a `file.schema.json#/json/pointer` reference between sibling schema files. */
function resolveRef(ref: string, schemas: Map<string, JsonSchema>): JsonSchema | null {
  const [file, pointer = ''] = ref.split('#');
  if (!file) return null;
  let node: unknown = schemas.get(file.replace(SCHEMA_BASE_URI, ''));
  for (const part of pointer.split('/').filter(Boolean)) {
    if (node === null || typeof node !== 'object') return null;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node !== null && typeof node === 'object' ? (node as JsonSchema) : null;
}
