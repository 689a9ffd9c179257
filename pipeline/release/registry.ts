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

/**
 * Canonical JSON: keys sorted at every level, the top level's `unhashed` keys left out. Flat records (the common case: no nested
 * objects, arrays of scalars) take a fast path — the writer compiled for their key set
 * (`flatWriter`) — which is ~5× quicker than `JSON.stringify` with a sorted key list as replacer
 * and ~20× quicker than walking the value.
 */
function canonicalJson(v: unknown, unhashed: readonly string[]): string {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (isFlat(o, keys)) return flatWriter(keys, unhashed)(o);
    const kept = unhashed.length === 0 ? keys : keys.filter((k) => !unhashed.includes(k));
    if (unhashed.length > 0) return walkJson(Object.fromEntries(kept.map((k) => [k, o[k]])));
  }
  return walkJson(v);
}

/** No value is an object, nor an array holding one. */
function isFlat(o: Record<string, unknown>, keys: readonly string[]): boolean {
  for (const k of keys) {
    const x = o[k];
    if (
      x !== null &&
      typeof x === 'object' &&
      (!Array.isArray(x) || x.some((e) => e !== null && typeof e === 'object'))
    )
      return false;
  }
  return true;
}

type FlatWriter = (o: Record<string, unknown>) => string;

/** Writers by their sorted key list; the last one used, by the key list it was asked for. */
const flatWriters = new Map<string, FlatWriter>();
let lastWriter: { keys: readonly string[]; unhashed: readonly string[]; write: FlatWriter } | null = null;

/**
 * The canonical writer of flat records with these `keys` (`unhashed` left out): `JSON.stringify`
 * of an object literal naming the kept keys in sorted order — the same text as `JSON.stringify(o,
 * sortedKeys)` (an undefined value is left out either way), in one allocation of a known shape.
 * Records of one kind share their key set, so the last writer is checked first, key by key.
 */
function flatWriter(keys: readonly string[], unhashed: readonly string[]): FlatWriter {
  const last = lastWriter;
  if (
    last &&
    last.unhashed === unhashed &&
    last.keys.length === keys.length &&
    last.keys.every((k, i) => k === keys[i])
  )
    return last.write;
  const sorted = keys.filter((k) => !unhashed.includes(k)).sort();
  const id = sorted.join('\u0000');
  let write = flatWriters.get(id);
  if (!write) {
    const literal = sorted.map((k) => `${JSON.stringify(k)}: o[${JSON.stringify(k)}]`).join(', ');
    write = new Function('o', `return JSON.stringify({ ${literal} });`) as FlatWriter;
    flatWriters.set(id, write);
  }
  lastWriter = { keys, unhashed, write };
  return write;
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
 * Assigns ids and tracking dates to one build's drafts of one kind, one draft at a time, given
 * each draft's previous registry entry; the refresh streams its leads through one in key order.
 *
 * - key unseen → next id (max id ever issued + 1), first_seen = last_changed = asOf: `new`
 * - key seen, hash differs (or it was removed and came back) → same id, last_changed = asOf: `updated`
 * - key seen, same hash → same id and dates: unchanged
 * - a previous entry absent from the build (`absent`) → kept with removed_on = asOf: `removed`
 */
export class ChangeTracker {
  readonly counts: ChangeCounts = { new: 0, updated: 0, removed: 0, unchanged: 0 };
  readonly kind: RegistryKind;
  readonly asOf: string;
  private maxId: number;
  private readonly firstNewId: number;
  private readonly leftOut: readonly string[];

  /**
   * @param maxId the largest id the previous registry issued for this kind (0 for none)
   * @param unhashed fields left out of the content hash (derived from hashed ones: a change to them alone is no update)
   */
  constructor(kind: RegistryKind, maxId: number, asOf: string, unhashed: readonly string[] = []) {
    this.kind = kind;
    this.maxId = maxId;
    this.firstNewId = maxId + 1;
    this.asOf = asOf;
    this.leftOut = [...unhashed, ...TRACKING_FIELDS];
  }

  /**
   * Track one draft with its previous entry (undefined when its key was never seen). The draft is
   * completed in place — its tracking fields filled in — and returned with its entry and change.
   * A new key gets the next id after the largest issued, or `newId` when the caller issued the ids
   * itself (the refresh has DuckDB number the new keys in key order: the same ids, tracked in
   * another order); `newId` must be above the previous registry's largest.
   */
  track<T extends Record<string, unknown>>(
    draft: T,
    key: string,
    old: RegistryEntry | undefined,
    newId?: number,
  ): { record: T & Tracking; entry: RegistryEntry; change: Change | null } {
    const { kind, asOf } = this;
    const hash = contentHash(draft, this.leftOut);
    let entry: RegistryEntry;
    let change: Change | null = null;
    if (!old) {
      if (newId !== undefined && !(Number.isSafeInteger(newId) && newId >= this.firstNewId))
        throw new Error(
          `${kind} ${key}: new id ${newId} is not above the largest issued before (${this.firstNewId - 1})`,
        );
      entry = {
        kind,
        key,
        id: newId ?? ++this.maxId,
        first_seen: asOf,
        last_changed: asOf,
        content_hash: hash,
        removed_on: null,
      };
      change = { table: kind, id: entry.id, key, change: 'new' };
      this.counts.new++;
    } else if (old.content_hash !== hash || old.removed_on !== null) {
      entry = { ...old, last_changed: asOf, content_hash: hash, removed_on: null };
      change = { table: kind, id: entry.id, key, change: 'updated' };
      this.counts.updated++;
    } else {
      entry = old;
      this.counts.unchanged++;
    }
    // Completed in place rather than copied: a build holds 200,000 leads and a copy of each
    // doubled the refresh's memory. Drafts made with UNTRACKED keep their shape here.
    const record = Object.assign(draft, {
      id: entry.id,
      first_seen: entry.first_seen,
      last_changed: entry.last_changed,
      content_hash: hash,
    });
    return { record, entry, change };
  }

  /** A previous entry whose key this build does not have: removed now, or still removed. */
  absent(old: RegistryEntry): { entry: RegistryEntry; change: Change | null } {
    if (old.removed_on !== null) return { entry: old, change: null };
    this.counts.removed++;
    return {
      entry: { ...old, removed_on: this.asOf },
      change: { table: this.kind, id: old.id, key: old.key, change: 'removed' },
    };
  }
}

/**
 * Assign ids and tracking dates to this build's drafts of one kind (`ChangeTracker` over arrays).
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
  const tracker = new ChangeTracker(kind, maxId, asOf, unhashed);
  const seen = new Set<string>();
  const records: Tracked<T>['records'] = [];
  const entries: RegistryEntry[] = [];
  const changes: Change[] = [];
  for (const d of drafts) {
    const key = keyOf(d);
    if (seen.has(key)) throw new Error(`duplicate ${kind} key in build: ${key}`);
    seen.add(key);
    const t = tracker.track(d, key, prev.get(key));
    entries.push(t.entry);
    if (t.change) changes.push(t.change);
    records.push(t.record);
  }
  for (const old of prev.values()) {
    if (seen.has(old.key)) continue;
    const t = tracker.absent(old);
    entries.push(t.entry);
    if (t.change) changes.push(t.change);
  }
  return { records, entries, changes, counts: tracker.counts };
}
