/**
 * The one query parser of the API: every endpoint's query string is checked against its JSON
 * Schema in `schemas/` (`*-query.schema.json`) by `parseQuery`, and every mistake is worded by
 * `REASONS` (api/query/query-common.ts). The OpenAPI parameters are read from the same schemas
 * (api/openapi/document.ts `queryParameters`), so the parser and the document cannot drift.
 *
 * What `parseQuery` does, in order:
 *  1. shape the raw query as OpenAPI's `style: form, explode: false` says: a `type: array`
 *     parameter is a comma list (repeats are joined, items trimmed, empty items dropped); any other
 *     parameter given twice is `given more than once`; a parameter the schema does not declare is
 *     `unknown parameter`;
 *  2. fold a value of a string `enum` (the parameter's own or its items') to its canonical code,
 *     ignoring case and surrounding spaces (`vertical=Solar` → `solar`; `enumFolder`), so that
 *     codes are matched as loosely as place names are; a value that is no code stays as given
 *     and the schema refuses it with the canonical `allowed` list;
 *  3. convert text to the schema's type: numbers when they look like one (NUMBER_TEXT: negative and
 *     decimal too, so that the schema names the real problem — type, minimum), booleans from
 *     `true`/`false`/`1`/`0` in any case; anything else stays text for the schema to refuse;
 *  4. validate with the one Ajv instance (`queryAjv`) and word each parameter's first error
 *     (`paramErrorOf`);
 *  5. run the typed post-parsers an endpoint gives for what JSON Schema cannot say (a bbox's
 *     ranges, an OGC datetime interval): their verdict on a parameter is final.
 * Endpoint code keeps only what is its own (canonical place names from a release, the status →
 * stage rule, limits from the configuration, cursor decoding).
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { ParamError } from '../http/errors.ts';
import { addQuerySchema, queryAjv, REASONS } from './query-common.ts';

/** A raw query as Koa parses it. */
export type RawQuery = Record<string, string | string[] | undefined>;

type Json = Record<string, any>;

/** A number as query text: optional minus, up to 15 digits, up to 9 decimals (no exponent, sign or spaces). */
export const NUMBER_TEXT = /^-?\d{1,15}(\.\d{1,9})?$/;
/** Boolean texts (compared lower-cased). */
export const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, '1': true, false: false, '0': false };

const SCHEMA_DIR = new URL('../../schemas/', import.meta.url);
const files = new Map<string, Json>();

/** A schema file of `schemas/`, read once (callers that change it work on a copy). */
export function schemaFile(file: string): Json {
  let s = files.get(file);
  if (!s) {
    s = JSON.parse(readFileSync(new URL(file, SCHEMA_DIR), 'utf8')) as Json;
    files.set(file, s);
  }
  return s;
}

/** The files a schema's `$ref`s point to (`lead.schema.json#/…` → `lead.schema.json`). */
function referencedFiles(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const x of node) referencedFiles(x, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === '$ref' && typeof v === 'string' && !v.startsWith('#')) out.add(v.split('#')[0]!);
      else referencedFiles(v, out);
    }
  }
  return out;
}

/** Add the schema files `schema` references (and theirs) to the query Ajv. */
function addReferenced(schema: Json, seen = new Set<string>()): void {
  for (const f of referencedFiles(schema)) {
    if (seen.has(f)) continue;
    seen.add(f);
    const s = schemaFile(f);
    addReferenced(s, seen);
    addQuerySchema(s);
  }
}

/**
 * A query schema of `schemas/` with the schemas it references added to the query Ajv. Pass the
 * returned object (or a variant of it with its own `$id`) to `parseQuery`.
 */
export function querySchema(file: string): Json {
  const s = schemaFile(file);
  if (!prepared.has(file)) {
    addReferenced(s); // once per file: parsers call this on every request
    prepared.add(file);
  }
  return s;
}
const prepared = new Set<string>();

/** The query schema of an endpoint that takes no parameters (`no-query.schema.json`): each one given is an unknown parameter. */
export function noQuerySchema(): Json {
  return querySchema('no-query.schema.json');
}

/**
 * A variant of a query schema: only the parameters `keep` names (in the schema's order), and
 * `$id` suffixed with `variant` (each compiled schema needs its own id).
 *
 * @example schemaVariant(querySchema('gis-feed-query.schema.json'), 'leads', (name) => name !== 'min_mw')
 */
export function schemaVariant(
  schema: Json,
  variant: string,
  keep: (name: string, prop: Json) => boolean,
  change: (props: Json) => void = () => {},
): Json {
  const s = structuredClone(schema);
  s.$id = String(s.$id).replace(/\.schema\.json$/, `-${variant}.schema.json`);
  s.properties = Object.fromEntries(Object.entries(s.properties as Json).filter(([k, v]) => keep(k, v as Json)));
  if (Array.isArray(s.required)) s.required = s.required.filter((k: string) => k in s.properties);
  change(s.properties as Json);
  return s;
}

/**
 * A parameter's schema with a `$ref` to another file followed (`leads-query.schema.json#/properties/q`
 * → that property), so that shaping and wording see its type and bounds.
 */
export function derefProp(prop: Json): Json {
  let p = prop;
  for (let i = 0; i < 8 && typeof p.$ref === 'string' && !p.$ref.startsWith('#'); i++) {
    const [file, pointer = ''] = (p.$ref as string).split('#');
    let node: any = schemaFile(file!);
    for (const part of pointer.split('/').filter(Boolean)) node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (!node || typeof node !== 'object') throw new Error(`unresolved $ref ${p.$ref as string}`);
    const { $ref: _r, ...rest } = p;
    p = { ...node, ...rest };
  }
  return p;
}

const validators = new Map<string, ValidateFunction>();
function validatorOf(schema: Json): ValidateFunction {
  const id = String(schema.$id);
  let v = validators.get(id);
  if (!v) {
    addReferenced(schema);
    v = queryAjv().getSchema(id) ?? queryAjv().compile(schema);
    validators.set(id, v);
  }
  return v;
}

/** A typed post-parser: the parsed value, or the error that names the parameter. */
export type ValueParser = (text: string) => unknown;

export interface ParseQueryOptions {
  /** List the accepted parameters (`allowed`) on an `unknown parameter` error. */
  listAllowed?: boolean;
  /** Per list parameter: map each item before validation (e.g. a place name to its canonical spelling). */
  mapItems?: Readonly<Record<string, (item: string) => string>>;
  /** Per parameter: a typed parser run on its text; its value or error (a `ParamError`) replaces the schema's verdict. */
  parsers?: Readonly<Record<string, ValueParser>>;
}

export interface ParsedQuery {
  /** The valid parameters, converted (lists as arrays, numbers, booleans, post-parsed values). */
  values: Record<string, unknown>;
  /** Every parameter given and declared, shaped, valid or not. */
  shaped: Record<string, unknown>;
  /** One error per bad parameter: shaping errors in query order, then the schema's. */
  errors: ParamError[];
  /** Names of the parameters with an error. */
  bad: Set<string>;
}

function isParamError(v: unknown): v is ParamError {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    typeof (v as ParamError).reason === 'string' &&
    typeof (v as ParamError).name === 'string'
  );
}

/** The types a schema node declares. */
function typesOf(prop: Json | undefined): string[] {
  const t = prop?.type;
  return Array.isArray(t) ? t : typeof t === 'string' ? [t] : [];
}

/** Text → the type the schema expects; left as text when it does not convert (the schema then names it). */
function convert(text: string, prop: Json): unknown {
  const types = typesOf(prop);
  if ((types.includes('integer') || types.includes('number')) && NUMBER_TEXT.test(text)) return Number(text);
  if (types.includes('boolean') && text.toLowerCase() in BOOLEAN_TEXT) return BOOLEAN_TEXT[text.toLowerCase()];
  return text;
}

const folders = new WeakMap<Json, ((text: string) => string) | null>();

/**
 * The folder of a parameter whose values are codes of a string `enum` (its own, or its items' for
 * a list; `$ref`s followed): a text → the code it names ignoring case and surrounding spaces, or
 * the text unchanged when it names none. `undefined` for a parameter without such an enum.
 *
 * @example enumFolder({ type: 'array', items: { enum: ['solar', 'roofing'] } })!(' Solar ') // 'solar'
 */
export function enumFolder(prop: Json): ((text: string) => string) | undefined {
  let f = folders.get(prop);
  if (f === undefined) {
    const p = derefProp(prop);
    const node =
      typesOf(p).includes('array') && p.items && typeof p.items === 'object' ? derefProp(p.items as Json) : p;
    const codes =
      Array.isArray(node.enum) && node.enum.every((v: unknown) => typeof v === 'string')
        ? (node.enum as string[])
        : undefined;
    if (codes) {
      const byFolded = new Map(codes.map((c) => [c.toLowerCase(), c] as const));
      f = (text: string) => byFolded.get(text.trim().toLowerCase()) ?? text;
    } else f = null;
    folders.set(prop, f);
  }
  return f ?? undefined;
}

/** Keywords whose error names a parameter's problem best, first. */
const RANK: Readonly<Record<string, number>> = { required: 0, type: 1, format: 2, enum: 3 };

/**
 * One Ajv error as a parameter error, in the one wording of its kind (`REASONS`).
 * A parameter's own wording for a `pattern` comes from `x-pattern-reason` beside it.
 */
export function paramErrorOf(e: ErrorObject, schema: Json): ParamError {
  const p = e.params as Record<string, any>;
  const name =
    e.instancePath.split('/')[1] ||
    (p.missingProperty as string | undefined) ||
    (p.additionalProperty as string | undefined) ||
    '';
  const node = (e.parentSchema ?? {}) as Json;
  const prop = derefProp((schema.properties?.[name] ?? {}) as Json);
  const bounded =
    typesOf(prop).includes('integer') && typeof prop.minimum === 'number' && typeof prop.maximum === 'number';
  const err = (reason: string, allowed?: readonly (string | number)[]): ParamError =>
    allowed ? { name, reason, allowed: [...allowed] } : { name, reason };
  switch (e.keyword) {
    case 'additionalProperties':
      return err(REASONS.unknownParameter);
    case 'required':
      return err(REASONS.required, prop.enum as string[] | undefined);
    case 'enum':
      return err(REASONS.notAllowed, p.allowedValues as string[]);
    case 'const':
      return err(REASONS.notAllowed, [p.allowedValue as string]);
    case 'type': {
      if (bounded && e.instancePath === `/${name}`) return err(REASONS.wholeNumberFrom(prop.minimum, prop.maximum));
      const t = typesOf(node);
      if (t.includes('integer')) return err(REASONS.notAWholeNumber);
      if (t.includes('number')) return err(REASONS.notANumber);
      if (t.includes('boolean')) return err(REASONS.notABoolean);
      return err(`must be a ${t.join(' or ')}`);
    }
    case 'minimum':
    case 'exclusiveMinimum':
      if (bounded) return err(REASONS.wholeNumberFrom(prop.minimum, prop.maximum));
      return err(p.limit === 0 && e.keyword === 'minimum' ? REASONS.notNegative : REASONS.atLeast(p.limit as number));
    case 'maximum':
    case 'exclusiveMaximum':
      if (bounded) return err(REASONS.wholeNumberFrom(prop.minimum, prop.maximum));
      return err(REASONS.atMost(p.limit as number));
    case 'format':
      return err(p.format === 'date' ? REASONS.notADate : `must be a ${p.format as string}`);
    case 'pattern':
      return err(
        typeof node['x-pattern-reason'] === 'string' ? node['x-pattern-reason'] : REASONS.pattern(p.pattern as string),
      );
    case 'minItems':
      return err(p.limit === 1 ? REASONS.empty : REASONS.tooFew(p.limit as number));
    case 'maxItems':
      return err(REASONS.tooMany(p.limit as number));
    case 'minLength':
      return err(p.limit === 1 ? REASONS.empty : REASONS.tooShort(p.limit as number));
    case 'maxLength':
      return err(REASONS.tooLong(p.limit as number));
    default:
      return err(e.message ?? e.keyword);
  }
}

/**
 * Parse a raw query against a query schema (see the module comment). Never throws on a bad
 * query: the caller adds its own checks to `errors` and throws one `invalidParams`.
 *
 * @example
 *   const q = parseQuery(querySchema('infrastructure-query.schema.json'), { vertical: 'wind,solar', min_mw: '10' });
 *   // q.values → { vertical: ['wind', 'solar'], min_mw: 10 }, q.errors → []
 */
export function parseQuery(schema: Json, raw: RawQuery, opts: ParseQueryOptions = {}): ParsedQuery {
  const props = schema.properties as Record<string, Json>;
  const errors: ParamError[] = [];
  const shaped: Record<string, unknown> = {};
  const texts: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const prop = Object.hasOwn(props, name) ? derefProp(props[name]!) : undefined;
    if (!prop) {
      errors.push(
        opts.listAllowed
          ? { name, reason: REASONS.unknownParameter, allowed: Object.keys(props) }
          : { name, reason: REASONS.unknownParameter },
      );
      continue;
    }
    const values = Array.isArray(value) ? value : [value];
    if (typesOf(prop).includes('array')) {
      const items = values
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter((v) => v !== '');
      const map = opts.mapItems && Object.hasOwn(opts.mapItems, name) ? opts.mapItems[name] : undefined;
      const fold = enumFolder(props[name]!);
      const mapped = map ? items.map(map) : items;
      shaped[name] = fold ? mapped.map(fold) : mapped;
      continue;
    }
    if (values.length > 1) {
      errors.push({ name, reason: REASONS.repeated });
      continue;
    }
    const fold = enumFolder(props[name]!);
    const text = fold ? fold(values[0]!) : values[0]!;
    texts[name] = text;
    shaped[name] = convert(text, prop);
  }
  const bad = new Set(errors.map((e) => e.name));
  const validate = validatorOf(schema);
  const parsers = opts.parsers ?? {};
  if (!validate(shaped)) {
    const byName = new Map<string, ErrorObject>();
    for (const e of validate.errors ?? []) {
      const name = e.instancePath.split('/')[1] || ((e.params as Json).missingProperty as string | undefined) || '';
      if (bad.has(name) || Object.hasOwn(parsers, name)) continue;
      const had = byName.get(name);
      if (!had || (RANK[e.keyword] ?? 9) < (RANK[had.keyword] ?? 9)) byName.set(name, e);
    }
    for (const e of byName.values()) {
      const pe = paramErrorOf(e, schema);
      errors.push(pe);
      bad.add(pe.name);
    }
  }
  const values: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(shaped)) {
    if (bad.has(name)) continue;
    const parse = Object.hasOwn(parsers, name) ? parsers[name] : undefined;
    if (!parse) {
      values[name] = v;
      continue;
    }
    const parsed = parse(texts[name] ?? (v as string[]).join(','));
    if (isParamError(parsed)) {
      errors.push(parsed);
      bad.add(name);
    } else values[name] = parsed;
  }
  return { values, shaped, errors, bad };
}
