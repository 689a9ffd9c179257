/**
 * Masking by scope: the ONE place that decides which fields of a record a key may see. Every
 * route calls `maskRecord` on every record it serves (or, for records written as bytes from the
 * row store, passes `maskedColumns` to the writer) and `responseMeta` to build the `_meta`
 * member; no route masks by hand.
 *
 * Enriched fields are read from the record schemas (`"x-enriched": true` in `schemas/`, directly
 * or through a `$ref`), so a field marked enriched there is masked here without a code change.
 * For scopes without the `enriched` capability they are set to `null` — never dropped — so every
 * scope gets the same shape. Homeowner names and contact data are never in a release, so there
 * is nothing else to hide.
 */
import { readFileSync } from 'node:fs';
import { ATTRIBUTION, CAPABILITIES, LICENCE_URL, scopesWith, type Scope } from './scopes.ts';

/** Record kinds the API serves, one schema file `schemas/<kind>.schema.json` each. */
export type MaskKind = 'lead' | 'lead-detail' | 'infrastructure-project';

/** One field hidden from the response and why. */
export interface MaskedField {
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

const SCHEMA_DIR = new URL('../schemas/', import.meta.url);

type JsonSchema = Record<string, unknown>;
const schemaCache = new Map<string, JsonSchema>();
const enrichedCache = new Map<MaskKind, readonly string[]>();

function loadSchema(file: string): JsonSchema {
  let s = schemaCache.get(file);
  if (!s) {
    s = JSON.parse(readFileSync(new URL(file, SCHEMA_DIR), 'utf8')) as JsonSchema;
    schemaCache.set(file, s);
  }
  return s;
}

/** Follow a `file.schema.json#/pointer` (or `#/pointer` within `from`) reference. */
function resolveRef(ref: string, from: string): JsonSchema | null {
  const [file, pointer = ''] = ref.split('#');
  let node: unknown = loadSchema(file || from);
  for (const part of pointer.split('/').filter(Boolean)) {
    if (node === null || typeof node !== 'object') return null;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node !== null && typeof node === 'object' ? (node as JsonSchema) : null;
}

/**
 * The enriched top-level fields of a record kind, in schema order (read once from `schemas/`).
 *
 * @example enrichedFields('lead') // ['applicant_org', 'applicant_company_number', …]
 */
export function enrichedFields(kind: MaskKind): readonly string[] {
  const cached = enrichedCache.get(kind);
  if (cached) return cached;
  const file = `${kind}.schema.json`;
  const props = (loadSchema(file).properties ?? {}) as Record<string, JsonSchema>;
  const out = Object.freeze(
    Object.keys(props).filter((name) => {
      const p = props[name]!;
      if (p['x-enriched'] === true) return true;
      const target = typeof p.$ref === 'string' ? resolveRef(p.$ref, file) : null;
      return target?.['x-enriched'] === true;
    }),
  );
  enrichedCache.set(kind, out);
  return out;
}

/** Why a scope without enriched access sees an enriched field as null. */
export function enrichedReason(scope: Scope): string {
  const may = scopesWith('enriched');
  const list = may.length > 1 ? `${may.slice(0, -1).join(', ')} or ${may.at(-1)}` : may.join('');
  return `scope ${scope} does not include enriched data (needs ${list})`;
}

/**
 * Return what `scope` may be served of `record`: a shallow copy with every enriched field set to
 * null when the scope lacks the `enriched` capability, and the list of masked fields with the
 * reason. The list names every enriched field of the kind (whether or not it held a value), so it
 * is the same for every record of a kind and scope. The input is not modified.
 *
 * @example
 * const { record, masked } = maskRecord('lead', row, 'commonwealth');
 * // record.applicant_org === null; masked[0] = { field: 'applicant_org', reason: 'scope commonwealth …' }
 */
export function maskRecord<T extends Record<string, unknown>>(kind: MaskKind, record: T, scope: Scope): { record: T; masked: MaskedField[] } {
  if (CAPABILITIES[scope].enriched) return { record, masked: [] };
  const reason = enrichedReason(scope);
  const out: Record<string, unknown> = { ...record };
  const masked: MaskedField[] = [];
  for (const field of enrichedFields(kind)) {
    out[field] = null;
    masked.push({ field, reason });
  }
  return { record: out as T, masked };
}

const columnMasks = new WeakMap<readonly string[], Map<string, Uint8Array | null>>();

/**
 * `maskRecord` for records written column by column (the row store writes list pages as bytes):
 * for each of `columns`, 1 when `scope` must see it as null, else 0; null when the scope sees
 * every column. The same rule as `maskRecord`, so both give the same record.
 */
export function maskedColumns(kind: MaskKind, scope: Scope, columns: readonly string[]): Uint8Array | null {
  let perColumns = columnMasks.get(columns);
  if (!perColumns) columnMasks.set(columns, (perColumns = new Map()));
  const k = `${kind}\u0000${scope}`;
  if (perColumns.has(k)) return perColumns.get(k)!;
  let mask: Uint8Array | null = null;
  if (!CAPABILITIES[scope].enriched) {
    const hidden = new Set(enrichedFields(kind));
    mask = Uint8Array.from(columns, (c) => (hidden.has(c) ? 1 : 0));
  }
  perColumns.set(k, mask);
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
export function attribution(scope: Scope): { headers: { Link: string; 'X-Attribution': string }; metadata: { attribution: string; license: string } } | null {
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
export function maskedFor(kind: MaskKind, scope: Scope): MaskedField[] {
  if (CAPABILITIES[scope].enriched) return [];
  const reason = enrichedReason(scope);
  return enrichedFields(kind).map((field) => ({ field, reason }));
}
