/**
 * Identity and change tracking. Every lead and infrastructure project gets a stable integer id
 * the first time its natural key (`lead_key`, `project_key`) is seen; the id never changes and
 * is never reused, even after the record disappears and comes back. Each entry remembers when
 * the record was first seen, when its content last changed, and a content hash; comparing a
 * new build with the registry yields the change log (new / updated / removed).
 *
 * The registry travels inside every release (`registry.parquet`), so the registry of the
 * current release is always consistent with the data it describes and publishing it is part of
 * the same atomic switch. Pure: no I/O here (see pipeline/release/tables.ts for reading/writing).
 */
import { hash } from 'node:crypto';

export type RegistryKind = 'leads' | 'infrastructure';

export interface RegistryEntry {
  kind: RegistryKind;
  key: string;
  id: number;
  first_seen: string;
  last_changed: string;
  content_hash: string;
  /** Date the record was last absent from a build; null while it is present. */
  removed_on: string | null;
}

/** The fields `trackChanges` fills in on each draft. */
export type Tracking = {
  id: number;
  first_seen: string;
  last_changed: string;
  content_hash: string;
};

const TRACKING_FIELDS: readonly (keyof Tracking)[] = ['id', 'first_seen', 'last_changed', 'content_hash'];

/**
 * Placeholders of the tracking fields, for a draft to be made with (`{ ...fields, ...UNTRACKED }`).
 * Filling in a field a draft already has is a store; adding four properties to a ~60-property
 * object turns it into a dictionary in V8 (+2.6 KB a lead: +580 MB at the default refresh's peak).
 * They are never part of the content hash.
 */
export const UNTRACKED: Readonly<Tracking> = { id: 0, first_seen: '', last_changed: '', content_hash: '' };

export type ChangeKind = 'new' | 'updated' | 'removed';

export interface Change {
  table: RegistryKind;
  id: number;
  key: string;
  change: ChangeKind;
}

export interface ChangeCounts {
  new: number;
  updated: number;
  removed: number;
  unchanged: number;
}

/**
 * Stable content hash of a record draft: sha256 over its JSON with keys sorted, first 16 hex.
 * Independent of property order, so a refactor that reorders fields does not mark every
 * record updated.
 */
export function contentHash(draft: Record<string, unknown>, unhashed: readonly string[] = []): string {
  return hash('sha256', canonicalJson(draft, unhashed)).slice(0, 16);
}

const sortedKeysCache = new Map<string, string[]>();

/**
 * Canonical JSON: keys sorted at every level, the top level's `unhashed` keys left out. Flat records (the common case: no nested
 * objects, arrays of scalars) take a fast path — `JSON.stringify` with the sorted key list
 * as replacer, cached per key set — which is ~10× quicker than walking the value.
 */
function canonicalJson(v: unknown, unhashed: readonly string[]): string {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const keys = unhashed.length === 0 ? Object.keys(o) : Object.keys(o).filter((k) => !unhashed.includes(k));
    let flat = true;
    for (const k of keys) {
      const x = o[k];
      if (
        x !== null &&
        typeof x === 'object' &&
        (!Array.isArray(x) || x.some((e) => e !== null && typeof e === 'object'))
      ) {
        flat = false;
        break;
      }
    }
    if (flat) {
      const id = keys.join('\u0000'); // (the unhashed keys are not in it: the key set says it all)
      let sorted = sortedKeysCache.get(id);
      if (!sorted) sortedKeysCache.set(id, (sorted = [...keys].sort()));
      return JSON.stringify(o, sorted);
    }
    if (unhashed.length > 0) return walkJson(Object.fromEntries(keys.map((k) => [k, o[k]])));
  }
  return walkJson(v);
}

function walkJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v ?? null);
  if (Array.isArray(v)) return `[${v.map(walkJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${walkJson(o[k])}`)
    .join(',')}}`;
}

export interface Tracked<T> {
  records: (T & { id: number; first_seen: string; last_changed: string; content_hash: string })[];
  entries: RegistryEntry[];
  changes: Change[];
  counts: ChangeCounts;
}

/**
 * Assign ids and tracking dates to this build's drafts of one kind.
 *
 * - key unseen → next id (max id ever issued + 1), first_seen = last_changed = asOf: `new`
 * - key seen, hash differs (or it was removed and came back) → same id, last_changed = asOf: `updated`
 * - key seen, same hash → same id and dates: unchanged
 * - registry key absent from the build → entry kept with removed_on = asOf: `removed`
 *
 * Drafts are processed in the order given; give them in a deterministic order (e.g. by key)
 * so that new ids are assigned deterministically. Each draft is completed in place (the
 * tracking fields are added to it) and returned in `records`.
 */
export function trackChanges<T extends Record<string, unknown>>(
  kind: RegistryKind,
  drafts: readonly T[],
  keyOf: (d: T) => string,
  previous: readonly RegistryEntry[],
  asOf: string,
  /** Fields left out of the content hash (derived from hashed ones: a change to them alone is no update). */
  unhashed: readonly string[] = [],
): Tracked<T> {
  const prev = new Map<string, RegistryEntry>();
  let maxId = 0;
  for (const e of previous) {
    if (e.kind !== kind) continue;
    prev.set(e.key, e);
    if (e.id > maxId) maxId = e.id;
  }
  const seen = new Set<string>();
  const records: Tracked<T>['records'] = [];
  const entries: RegistryEntry[] = [];
  const changes: Change[] = [];
  const counts: ChangeCounts = { new: 0, updated: 0, removed: 0, unchanged: 0 };
  const leftOut = [...unhashed, ...TRACKING_FIELDS];
  for (const d of drafts) {
    const key = keyOf(d);
    if (seen.has(key)) throw new Error(`duplicate ${kind} key in build: ${key}`);
    seen.add(key);
    const hash = contentHash(d, leftOut);
    const old = prev.get(key);
    let entry: RegistryEntry;
    if (!old) {
      entry = { kind, key, id: ++maxId, first_seen: asOf, last_changed: asOf, content_hash: hash, removed_on: null };
      changes.push({ table: kind, id: entry.id, key, change: 'new' });
      counts.new++;
    } else if (old.content_hash !== hash || old.removed_on !== null) {
      entry = { ...old, last_changed: asOf, content_hash: hash, removed_on: null };
      changes.push({ table: kind, id: entry.id, key, change: 'updated' });
      counts.updated++;
    } else {
      entry = old;
      counts.unchanged++;
    }
    entries.push(entry);
    // Completed in place rather than copied: a build holds 200,000 leads and a copy of each
    // doubled the refresh's memory. Drafts made with UNTRACKED keep their shape here.
    records.push(
      Object.assign(d, {
        id: entry.id,
        first_seen: entry.first_seen,
        last_changed: entry.last_changed,
        content_hash: hash,
      }),
    );
  }
  for (const old of prev.values()) {
    if (seen.has(old.key)) continue;
    if (old.removed_on === null) {
      entries.push({ ...old, removed_on: asOf });
      changes.push({ table: kind, id: old.id, key: old.key, change: 'removed' });
      counts.removed++;
    } else {
      entries.push(old);
    }
  }
  return { records, entries, changes, counts };
}
