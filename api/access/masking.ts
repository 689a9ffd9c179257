/**
 * Masking by scope: the ONE place that decides which fields of a record a key may see, at every
 * depth. Every route serves records through `maskRecord` (the leads engine, api/engine/leads-engine.ts,
 * takes a `Masking` and applies it inside; its byte writer uses `columnMask`, derived from the
 * same walk) and builds `_meta` with `responseMeta`; no route masks by hand.
 *
 * Enriched fields are read from the record schemas (`"x-enriched": true` in `schemas/`), by one
 * walk of the kind's schema (`maskPlan`): it follows `$ref`s (a property is enriched when it, or
 * any schema its `$ref`s lead to, is marked), `anyOf` / `oneOf` / `allOf` alternatives, object
 * `properties` and array `items`. So a field marked enriched is masked wherever the record holds
 * it — a top-level field, a field of a section (the detail's `project`), a field of each item of
 * a list (each of the detail's `area_comparables.nearby_leads`) — without a code change. For
 * scopes without the `enriched` capability such fields are set to `null` — never dropped — so
 * every scope gets the same shape; below an enriched field nothing more is looked at. Homeowner
 * names and contact data are never in a release, so there is nothing else to hide.
 *
 * The schema set is a parameter (default: the project's `schemas/`), so a test can mark any field
 * enriched in a copy and check that it is masked everywhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { ATTRIBUTION, CAPABILITIES, LICENCE_URL, scopesWith, type Scope } from './scopes.ts';

/** Record kinds the API serves, one schema file `schemas/<kind>.schema.json` each. */
export type MaskKind = 'lead' | 'lead-detail' | 'infrastructure-project';

/** One field hidden from the response and why. */
export interface MaskedField {
  /** The field: its name when top-level, else its path (`project.est_value`, `area_comparables.nearby_leads[].est_value`). */
  field: string;
  reason: string;
}

/** The `_meta` member of every response object (lists carry it once, at the top level). */
export interface ResponseMeta {
  release: string;
  scope: Scope;
  masked: MaskedField[];
  /** Present only for scopes that must attribute (commonwealth). */
  attribution?: string;
}

export type JsonSchema = Record<string, unknown>;

/** Schemas by file name (`lead.schema.json` → its parsed JSON), as `$ref`s name them. */
export type SchemaSet = ReadonlyMap<string, JsonSchema>;

const SCHEMA_DIR = new URL('../../schemas/', import.meta.url);
let projectSet: SchemaSet | null = null;

/** The project's schemas (`schemas/*.schema.json`, read once). */
export function projectSchemas(): SchemaSet {
  if (!projectSet) {
    const files = readdirSync(SCHEMA_DIR)
      .filter((f) => f.endsWith('.schema.json'))
      .sort();
    projectSet = new Map(files.map((f) => [f, JSON.parse(readFileSync(new URL(f, SCHEMA_DIR), 'utf8')) as JsonSchema]));
  }
  return projectSet;
}

/** Follow a `file.schema.json#/pointer` (or `#/pointer` within `from`) reference: the node and its file. */
function resolveRef(schemas: SchemaSet, ref: string, from: string): { node: JsonSchema; file: string } | null {
  const [fileRef, pointer = ''] = ref.split('#');
  const file = fileRef || from;
  let node: unknown = schemas.get(file);
  for (const part of pointer.split('/').filter(Boolean)) {
    if (node === null || typeof node !== 'object') return null;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node !== null && typeof node === 'object' ? { node: node as JsonSchema, file } : null;
}

/** What to null in a value of one schema: fields of an object, and the same below fields and array items. */
interface PlanNode {
  /** Enriched fields (set to null), in schema order. */
  nulled: string[];
  /** Fields whose value has enriched fields of its own, with their plan. */
  inner: [field: string, plan: PlanNode][];
  /** The plan of each item, for an array whose items have enriched fields. */
  items: PlanNode | null;
}

/** A kind's masking, read from its schema: the plan, and every masked field's path in walk order. */
export interface MaskPlan {
  root: PlanNode;
  /** Every masked field, as `_meta.masked` names it (top-level name, or dotted path with `[]` for array items). */
  fields: readonly string[];
}

/** The schema nodes a node stands for: itself, what its `$ref` chain leads to, and its alternatives. */
function expand(
  schemas: SchemaSet,
  node: JsonSchema,
  file: string,
  out: { node: JsonSchema; file: string }[],
  depth = 0,
): void {
  if (depth > 32) throw new Error(`schema ${file}: $ref chain too deep (a cycle?)`);
  out.push({ node, file });
  if (typeof node.$ref === 'string') {
    const target = resolveRef(schemas, node.$ref, file);
    if (target) expand(schemas, target.node, target.file, out, depth + 1);
  }
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    const alts = node[k];
    if (Array.isArray(alts))
      for (const a of alts) if (a && typeof a === 'object') expand(schemas, a as JsonSchema, file, out, depth + 1);
  }
}

/** Whether a property schema is enriched: it or any schema its `$ref` chain leads to is marked. */
function isEnriched(schemas: SchemaSet, node: JsonSchema, file: string): boolean {
  for (let at: { node: JsonSchema; file: string } | null = { node, file }, depth = 0; at; depth++) {
    if (at.node['x-enriched'] === true) return true;
    if (typeof at.node.$ref !== 'string' || depth > 32) return false;
    at = resolveRef(schemas, at.node.$ref, at.file);
  }
  return false;
}

/** The plan of a value described by `node` (null when nothing in it is enriched); `path` names it in `fields`. */
function planOf(
  schemas: SchemaSet,
  node: JsonSchema,
  file: string,
  path: string,
  fields: string[],
  depth: number,
): PlanNode | null {
  if (depth > 16) return null;
  const forms: { node: JsonSchema; file: string }[] = [];
  expand(schemas, node, file, forms);
  const plan: PlanNode = { nulled: [], inner: [], items: null };
  const seen = new Set<string>();
  for (const f of forms) {
    const props = f.node.properties;
    if (props && typeof props === 'object') {
      for (const [name, p] of Object.entries(props as Record<string, JsonSchema>)) {
        if (seen.has(name)) continue;
        seen.add(name);
        const at = path === '' ? name : `${path}.${name}`;
        if (isEnriched(schemas, p, f.file)) {
          plan.nulled.push(name);
          fields.push(at);
          continue;
        }
        const inner = planOf(schemas, p, f.file, at, fields, depth + 1);
        if (inner) plan.inner.push([name, inner]);
      }
    }
    const items = f.node.items;
    if (!plan.items && items && typeof items === 'object' && !Array.isArray(items)) {
      plan.items = planOf(schemas, items as JsonSchema, f.file, `${path}[]`, fields, depth + 1);
    }
  }
  return plan.nulled.length > 0 || plan.inner.length > 0 || plan.items ? plan : null;
}

const plans = new WeakMap<SchemaSet, Map<MaskKind, MaskPlan>>();

/**
 * The masking plan of a record kind: one walk of `schemas/<kind>.schema.json` (cached per schema
 * set). `fields` lists every enriched field wherever it sits, in schema order, depth first.
 *
 * @example maskPlan('lead').fields // ['applicant_org', 'applicant_org_evidence', …]
 */
export function maskPlan(kind: MaskKind, schemas: SchemaSet = projectSchemas()): MaskPlan {
  let perSet = plans.get(schemas);
  if (!perSet) plans.set(schemas, (perSet = new Map()));
  let plan = perSet.get(kind);
  if (!plan) {
    const file = `${kind}.schema.json`;
    const root = schemas.get(file);
    if (!root) throw new Error(`no schema ${file}`);
    const fields: string[] = [];
    plan = {
      root: planOf(schemas, root, file, '', fields, 0) ?? { nulled: [], inner: [], items: null },
      fields: Object.freeze(fields),
    };
    perSet.set(kind, plan);
  }
  return plan;
}

/**
 * The enriched fields of a record kind wherever they sit, in schema order (`maskPlan(kind).fields`):
 * top-level names, and paths for fields inside sections or list items.
 *
 * @example enrichedFields('lead') // ['applicant_org', 'applicant_org_evidence', 'applicant_company_number', …]
 */
export function enrichedFields(kind: MaskKind, schemas: SchemaSet = projectSchemas()): readonly string[] {
  return maskPlan(kind, schemas).fields;
}

/** Why a scope without enriched access sees an enriched field as null. */
export function enrichedReason(scope: Scope): string {
  const may = scopesWith('enriched');
  const list = may.length > 1 ? `${may.slice(0, -1).join(', ')} or ${may.at(-1)}` : may.join('');
  return `scope ${scope} does not include enriched data (needs ${list})`;
}

/** Apply a plan to a value: a copy with the plan's fields nulled at every depth (the input is not modified). */
function applyPlan(plan: PlanNode, value: unknown): unknown {
  if (Array.isArray(value)) return plan.items ? value.map((v) => applyPlan(plan.items!, v)) : value;
  if (value === null || typeof value !== 'object') return value;
  if (plan.nulled.length === 0 && plan.inner.length === 0) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const field of plan.nulled) out[field] = null;
  for (const [field, inner] of plan.inner) if (field in out) out[field] = applyPlan(inner, out[field]);
  return out;
}

/** How a response is masked: the caller's scope and the schemas that say what is enriched. */
export interface Masking {
  readonly scope: Scope;
  readonly schemas: SchemaSet;
}

const projectMaskings = new Map<Scope, Masking>();

/** The masking of `scope` (by the project's schemas unless a schema set is given). */
export function maskingFor(scope: Scope, schemas?: SchemaSet): Masking {
  if (schemas) return { scope, schemas };
  let m = projectMaskings.get(scope);
  if (!m) projectMaskings.set(scope, (m = Object.freeze({ scope, schemas: projectSchemas() })));
  return m;
}

/**
 * Return what `scope` may be served of `record`: a copy with every enriched field set to null —
 * at every depth: top-level fields, fields of sections, fields of each item of a list — when the
 * scope lacks the `enriched` capability, and the list of masked fields with the reason. The list
 * names every enriched field of the kind (whether or not it held a value), so it is the same for
 * every record of a kind and scope. The input is not modified.
 *
 * @example
 * const { record, masked } = maskRecord('lead', row, 'commonwealth');
 * // record.applicant_org === null; masked[0] = { field: 'applicant_org', reason: 'scope commonwealth …' }
 */
export function maskRecord<T extends Record<string, unknown>>(
  kind: MaskKind,
  record: T,
  scope: Scope,
  schemas: SchemaSet = projectSchemas(),
): { record: T; masked: MaskedField[] } {
  if (CAPABILITIES[scope].enriched) return { record, masked: [] };
  const plan = maskPlan(kind, schemas);
  return { record: applyPlan(plan.root, record) as T, masked: maskedFor(kind, scope, schemas) };
}

/** Whether `scope` sees the top-level field `field` of `kind` as null (e.g. an enriched detail section it need not even read). */
export function masksField(kind: MaskKind, field: string, m: Masking): boolean {
  return !CAPABILITIES[m.scope].enriched && maskPlan(kind, m.schemas).root.nulled.includes(field);
}

const columnMasks = new WeakMap<readonly string[], WeakMap<SchemaSet, Map<string, ColumnMask>>>();

/** `maskRecord` for records written column by column (see `columnMask`). */
export interface ColumnMask {
  /** Per column: 1 when it is written as null; null when no column is. */
  nulled: Uint8Array | null;
  /**
   * False when an enriched field sits inside a column's value (a field of an object column, of
   * an array column's items): the column writer cannot mask it, the record must go through
   * `maskRecord`.
   */
  complete: boolean;
}

/**
 * `maskRecord` for records written column by column (the row store writes list pages as bytes),
 * derived from the same plan: the top-level fields the plan nulls, as a mask over `columns`.
 * Writing each column, or null where the mask says 1, gives the bytes of `maskRecord`'s record
 * whenever `complete` is true.
 */
export function columnMask(kind: MaskKind, columns: readonly string[], m: Masking): ColumnMask {
  let perSet = columnMasks.get(columns);
  if (!perSet) columnMasks.set(columns, (perSet = new WeakMap()));
  let perKind = perSet.get(m.schemas);
  if (!perKind) perSet.set(m.schemas, (perKind = new Map()));
  const k = `${kind}\u0000${m.scope}`;
  let mask = perKind.get(k);
  if (!mask) {
    mask = { nulled: null, complete: true };
    if (!CAPABILITIES[m.scope].enriched) {
      const { root } = maskPlan(kind, m.schemas);
      const hidden = new Set(root.nulled);
      const nulled = Uint8Array.from(columns, (c) => (hidden.has(c) ? 1 : 0));
      const inner = new Set(root.inner.map(([f]) => f));
      mask = { nulled: nulled.includes(1) ? nulled : null, complete: !columns.some((c) => inner.has(c)) };
    }
    perKind.set(k, mask);
  }
  return mask;
}

/** Union of masked lists (first occurrence of each field wins), for a page of records. */
export function unionMasked(lists: Iterable<readonly MaskedField[]>): MaskedField[] {
  const seen = new Map<string, MaskedField>();
  for (const list of lists) for (const m of list) if (!seen.has(m.field)) seen.set(m.field, m);
  return [...seen.values()];
}

/**
 * The `_meta` member: release id, scope, what was masked and, for scopes that must attribute
 * (those without redistribution or enriched rights: commonwealth), the attribution text.
 */
export function responseMeta(release: string, scope: Scope, masked: MaskedField[]): ResponseMeta {
  const meta: ResponseMeta = { release, scope, masked };
  if (mustAttribute(scope)) meta.attribution = ATTRIBUTION;
  return meta;
}

/** Scopes whose use requires attribution (spec 1.5): commonwealth. */
export function mustAttribute(scope: Scope): boolean {
  return scope === 'commonwealth';
}

/**
 * The attribution carried outside a JSON body, for every format (CSV and JSON Lines have no
 * place for it that would not break a parser): HTTP headers — the licence as an RFC 8288
 * `Link: <…>; rel="license"` and the text as `X-Attribution` — and key-value metadata for files
 * that hold it (Parquet). Null for scopes that need not attribute.
 */
export function attribution(
  scope: Scope,
): { headers: { Link: string; 'X-Attribution': string }; metadata: { attribution: string; license: string } } | null {
  if (!mustAttribute(scope)) return null;
  return {
    headers: { Link: `<${LICENCE_URL}>; rel="license"`, 'X-Attribution': ATTRIBUTION },
    metadata: { attribution: ATTRIBUTION, license: LICENCE_URL },
  };
}

/**
 * The masked fields a page of `kind` records would carry for `scope`, without a record: lets an
 * empty list report the same `_meta.masked` as a full one.
 */
export function maskedFor(kind: MaskKind, scope: Scope, schemas: SchemaSet = projectSchemas()): MaskedField[] {
  if (CAPABILITIES[scope].enriched) return [];
  const reason = enrichedReason(scope);
  return maskPlan(kind, schemas).fields.map((field) => ({ field, reason }));
}

/** A changed field's value before and after (an event's `changes`, schemas/event.schema.json). */
export interface FieldChange {
  before: unknown;
  after: unknown;
}

/**
 * Mask an event's `changes` of `kind` records for `scope`: every field the scope sees as null
 * in a record (`maskedFor`, the same plan as `maskRecord`) keeps its place with before and after
 * null, so every scope gets the same shape. Returns a copy; `masked` as `maskedFor`.
 *
 * @example maskChanges('lead', { applicant_org: { before: null, after: 'Acme Ltd' } }, 'commonwealth').changes
 *   // { applicant_org: { before: null, after: null } }
 */
export function maskChanges(
  kind: MaskKind,
  changes: Readonly<Record<string, FieldChange>>,
  scope: Scope,
): { changes: Record<string, FieldChange>; masked: MaskedField[] } {
  const masked = maskedFor(kind, scope);
  if (masked.length === 0) return { changes: { ...changes }, masked };
  const hidden = new Set(masked.map((m) => m.field));
  const out: Record<string, FieldChange> = {};
  for (const [field, c] of Object.entries(changes)) out[field] = hidden.has(field) ? { before: null, after: null } : c;
  return { changes: out, masked };
}
