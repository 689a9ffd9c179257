/** The manifest's pure builders: authority counts, records total, gate flags and key order. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  authorityFreshness,
  authorityLeads,
  authoritySourceReads,
  buildManifest,
  countByAuthority,
  recordsTotal,
  SCHEMA_VERSION,
  type ManifestInput,
} from '../../../pipeline/release/manifest.ts';
import { AUTHORITIES } from '../../../pipeline/reference/authorities.ts';

test('countByAuthority: every known authority listed (0 when none), leads counted, latest received date kept, unknown ones added', () => {
  const known = AUTHORITIES[0]!.name;
  const c = countByAuthority([
    { planning_authority: known, received_date: '2026-01-02' },
    { planning_authority: known, received_date: '2026-03-04' },
    { planning_authority: known, received_date: '2025-12-31' },
    { planning_authority: 'Somewhere Else', received_date: '2026-02-01' },
  ]);
  assert.equal(Object.keys(c), [...AUTHORITIES.map((a) => a.name), 'Somewhere Else']);
  assert.equal(c[known], { leads: 3, latest_received: '2026-03-04' });
  assert.equal(c[AUTHORITIES[1]!.name], { leads: 0, latest_received: null });
  assert.equal(c['Somewhere Else'], { leads: 1, latest_received: '2026-02-01' });
});

test('authority freshness: rows and newest date per source, leads by status and bbox, fetch times per source', () => {
  const [a, b] = [AUTHORITIES[0]!, AUTHORITIES[1]!];
  const reads = authoritySourceReads(
    [
      { authority: a.name, received_date: '2026-11-02' },
      { authority: a.name, received_date: '2026-11-05' },
      { authority: b.name, received_date: '2026-10-01' },
    ],
    [
      { authority: a.name.toUpperCase(), submitted_date: null, commencement_date: '2026-11-07' },
      { authority: 'Nowhere', submitted_date: '2026-11-08', commencement_date: null },
    ],
  );
  assert.equal(reads[a.name], {
    planning: { records: 2, newest_date: '2026-11-05' },
    commencements: { records: 1, newest_date: '2026-11-07' },
  });
  assert.equal(
    reads[b.name]!.commencements,
    { records: 0, newest_date: null },
    'no new data from a source is told apart from no leads',
  );
  const leads = authorityLeads([
    { planning_authority: a.name, status: 'planning', lat: 52.1, lon: -7.1 },
    { planning_authority: a.name, status: 'planning', lat: 52.3, lon: -7.3 },
    { planning_authority: a.name, status: 'closed', lat: null, lon: null },
  ]);
  assert.equal(leads[a.name], { by_status: { planning: 2, closed: 1 }, bbox: [-7.3, 52.1, -7.1, 52.3] });
  assert.equal(leads[b.name], { by_status: {}, bbox: null });
  const log = {
    origin: 'fetched' as const,
    updated_at: '2026-11-09T05:00:00Z',
    downloads: {
      'planning/a.csv': {
        source: 'planning',
        file: 'a.csv',
        protocol: 'http-file' as const,
        url: null,
        status: 'not_modified' as const,
        checked_at: '2026-11-09T04:00:00Z',
        fetched_at: '2026-11-02T04:00:00Z',
        etag: null,
        last_modified: null,
        bytes: 1,
        sha256: null,
        error: null,
      },
    },
  };
  const f = authorityFreshness(reads, leads, log);
  assert.equal(f.sources.planning, {
    origin: 'fetched',
    fetched_at: '2026-11-02T04:00:00Z',
    checked_at: '2026-11-09T04:00:00Z',
    records: 3,
    newest_date: '2026-11-05',
  });
  assert.equal(f.sources.commencements, {
    origin: 'unknown',
    fetched_at: null,
    checked_at: null,
    records: 1,
    newest_date: '2026-11-07',
  });
  assert.equal(f.authorities[a.name], {
    county: a.county,
    by_status: { planning: 2, closed: 1 },
    bbox: [-7.3, 52.1, -7.1, 52.3],
    sources: reads[a.name]!,
  });
  assert.is(
    authorityFreshness(reads, leads, { origin: 'generated', updated_at: '2026-11-09T05:00:00Z', downloads: {} }).sources
      .planning.origin,
    'generated',
  );
});

const input = (over: Partial<ManifestInput> = {}): ManifestInput => ({
  releaseId: '20261109T060000Z',
  builtAt: new Date('2026-11-09T06:00:00Z'),
  asOf: '2026-11-06',
  previousReleaseId: null,
  tables: { sales: 5, leads: 3, infrastructure: 2, companies: 7 },
  sources: {},
  authorities: {},
  linkedNotices: 1,
  unlinkedNotices: 0,
  publishedNames: {},
  changes: {
    leads: { new: 3, updated: 0, removed: 0, unchanged: 0 },
    infrastructure: { new: 2, updated: 0, removed: 0, unchanged: 0 },
  },
  search: { docs: 3, terms: 10, postings: 12, avgdl: 4 },
  geojson: { layers: [], skipped_without_coordinates: { leads: 0, infrastructure: 0 } },
  analytics: { sales: 5, excluded_sales: {}, eligible_sales: 5, pairs_used: 0, homes_used: 0, excluded_pairs: {} },
  files: {},
  stages: { fingerprint: { ms: 1, rows: 27, rows_per_s: 27000 } },
  gates: { passed: true, messages: [] },
  force: false,
  fingerprint: 'ab'.repeat(32),
  freshness: null,
  authorityFreshness: authorityFreshness({}, {}, null),
  ...over,
});

test('buildManifest: records total is leads + infrastructure + companies; keys in the published order', () => {
  assert.is(recordsTotal({ sales: 5, leads: 3, infrastructure: 2, companies: 7 }), 12);
  const m = buildManifest(input());
  assert.is(m.schema_version, SCHEMA_VERSION);
  assert.is(m.built_at, '2026-11-09T06:00:00.000Z');
  assert.is(m.counts.records_total, 12);
  assert.equal(Object.keys(m), [
    'schema_version',
    'release_id',
    'built_at',
    'as_of',
    'previous_release',
    'counts',
    'changes',
    'search_index',
    'geojson',
    'analytics',
    'files',
    'stages',
    'gates',
    'input_fingerprint',
    'authority_freshness',
  ]);
});

test('buildManifest: sources_freshness is the last member when the raw folder has a fetch log, absent otherwise', () => {
  assert.not.ok('sources_freshness' in buildManifest(input()));
  const freshness = {
    origin: 'generated' as const,
    updated_at: '2026-11-09T05:00:00.000Z',
    generator: { seed: 1, scale: 1, week: 1 },
    downloads: [],
  };
  const m = buildManifest(input({ freshness }));
  assert.equal(Object.keys(m).at(-1), 'sources_freshness');
  assert.equal(m.sources_freshness, freshness);
});

test('buildManifest: a failed gate is recorded as forced only with --force; a passed gate never is', () => {
  const failed = { passed: false, messages: ["source 'ppr' shrank"] };
  assert.equal(buildManifest(input({ gates: failed, force: true })).gates, {
    passed: false,
    forced: true,
    messages: failed.messages,
  });
  assert.equal(buildManifest(input({ gates: failed, force: false })).gates, {
    passed: false,
    forced: false,
    messages: failed.messages,
  });
  assert.equal(buildManifest(input({ force: true })).gates, { passed: true, forced: false, messages: [] });
});

test.run();
