/**
 * The lead record, declared once: `schemas/lead.schema.json`. Its properties, in order, are the
 * columns of the leads table, of every export and of the API's list and detail answers; this
 * module reads them for both sides (the pipeline's record type is generated from the same file,
 * `pipeline/lead-record.ts`, by `common/write-lead-derived.ts`).
 */
import { readFileSync } from 'node:fs';

/** A property of the lead schema, as far as the code that derives from it reads it. */
export interface LeadProperty {
  type: string | string[];
  description?: string;
  format?: string;
  enum?: (string | null)[];
  items?: { type?: string; enum?: string[] };
  'x-enriched'?: boolean;
  /** Left out of `content_hash`: derived from hashed fields, so adding it or its change alone is no update. */
  'x-unhashed'?: boolean;
  [k: string]: unknown;
}

export interface LeadSchema {
  properties: Record<string, LeadProperty>;
  required: string[];
  [k: string]: unknown;
}

/** `schemas/lead.schema.json`, parsed once. */
export const LEAD_SCHEMA: LeadSchema = JSON.parse(
  readFileSync(new URL('../schemas/lead.schema.json', import.meta.url), 'utf8'),
) as LeadSchema;

/** The lead's fields in schema order: the columns of `leads.parquet`, of exports and answers. */
export const LEAD_COLUMNS: readonly string[] = Object.freeze(Object.keys(LEAD_SCHEMA.properties));

/** The fields left out of a lead's `content_hash` (`x-unhashed`): added to every lead, they mark none updated. */
export const LEAD_UNHASHED: readonly string[] = Object.freeze(
  LEAD_COLUMNS.filter((c) => LEAD_SCHEMA.properties[c]!['x-unhashed'] === true),
);
