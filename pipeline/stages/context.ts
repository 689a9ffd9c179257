/**
 * What a refresh's stages share: the typed build context (config, injected clock and log, the
 * previous release, the per-source accounts, and what each stage made for the later ones), and
 * the refresh's result types. No I/O here.
 */
import type { EventType } from '../release/events.ts';
import type { PipelineConfig } from '../config.ts';
import type { AnalyticsSummary } from '../intel/analytics.ts';
import type { CompanyIndex } from '../normalise/company-match.ts';
import type { InfraDraft } from '../normalise/infrastructure.ts';
import type { LeadResolvers } from '../normalise/leads.ts';
import type { LeadStagingFiles } from '../normalise/lead-staging.ts';
import type { Supplier } from '../normalise/suppliers.ts';
import type { PointColumns } from '../normalise/neighbours.ts';
import type { GateResult, SourceCounts } from '../release/gates.ts';
import type { GeoJsonIndex } from '../release/geojson.ts';
import type { AuthorityCounts, AuthorityLeads, AuthoritySourceReads, PreviousManifest } from '../release/manifest.ts';
import type { NameGate, NameGateResult } from '../release/name-gate.ts';
import type { RawFiles } from '../release/raw-files.ts';
import type { ChangeCounts, RegistryKind, Tracked } from '../release/registry.ts';
import type { SearchIndexStats, SearchStaging } from '../release/search-index.ts';
import type { TableSpec } from '../release/tables.ts';
import { countReasons } from '../sources/common.ts';
import type { AdapterResult, CompanyRow, FilingRow, InfraFragment, MaterialRow, Reject, RentRow } from '../types.ts';
import type { RecordKind, Validators } from '../validate.ts';
import type { Build } from './build.ts';
import type { TableSinks } from './sinks.ts';

/** What reading the PPR files made (pipeline/stages/sales.ts, in a worker thread): the staging files and the source's accounts. */
export interface SalesRead {
  /** The staged sales (`sales.parquet`'s staging file) and how many. */
  stagingPath: string;
  count: number;
  /** The analytics stage's private copy (pipeline/intel/sales-input.ts). */
  intelSalesPath: string;
  lines: number;
  rejects: Reject[];
  invalid: { invalid: number; samples: string[] };
}

export interface PipelineDeps {
  /** Clock for build timestamps and release ids. */
  now: () => Date;
  /** Progress sink (stderr by default). */
  log: (line: string) => void;
  /** Test hook: called as each stage starts (a test may kill the process here). */
  onStage?: (stage: string) => void | Promise<void>;
  /**
   * What runs after each stage: by default a full garbage collection (pipeline/lib/memory.ts),
   * which hands a real refresh's freed rows back before the next stage. Tests on tiny data in a
   * long-lived test process pass a no-op: there it frees next to nothing and costs a full mark
   * of the process's heap per stage.
   */
  collectGarbage?: () => void;
}

export interface StageTiming {
  ms: number;
  rows: number;
  rows_per_s: number;
}

export interface RefreshSummary {
  status: 'published' | 'unchanged' | 'blocked';
  releaseId: string | null;
  previousReleaseId: string | null;
  asOf: string | null;
  changes: Record<'leads' | 'infrastructure', ChangeCounts> | null;
  counts: Record<string, number>;
  sources: Record<string, SourceCounts>;
  gates: GateResult & { forced: boolean };
  stages: Record<string, StageTiming>;
  /** Bytes on disk of the release that was built (every file the manifest lists, plus manifest.json); null when none was built. */
  releaseBytes: number | null;
  peakRssMb: number;
  /** The stage during which the sampled peak was seen. */
  peakRssStage: string;
  wallMs: number;
  message: string;
}

/** How a refresh ends, said by the stage after which it ends; the runner adds timings and memory. */
export type StageOutcome = Pick<RefreshSummary, 'status' | 'message'> &
  Partial<Pick<RefreshSummary, 'releaseId' | 'asOf' | 'changes' | 'counts' | 'sources' | 'gates' | 'releaseBytes'>>;

/** Rows of one record kind that failed schema validation: how many, and up to five examples. */
export interface InvalidRows {
  invalid: number;
  samples: string[];
}

/** The current release before this refresh. */
export interface PreviousRelease {
  id: string;
  dir: string;
  manifest: PreviousManifest;
}

/** Everything a stage makes for a later one, by name. Read with `need`. */
export interface BuildProducts {
  files: RawFiles;
  fingerprint: string;
  build: Build;
  /** Bytes of the built release (its files and manifest.json), set by the manifest stage. */
  releaseBytes: number;
  validators: Validators;
  /** The sales being read in a worker thread since `start` (pipeline/stages/sales.ts); `read:ppr` waits for them. */
  salesRead: () => Promise<SalesRead>;
  /** The published sales, staged by the sales reader and turned into Parquet by `write:sales`. */
  sales: { spec: TableSpec; stagingPath: string; count: number };
  /** The analytics stage's private copy of the sales (pipeline/intel/sales-input.ts). */
  intelSalesPath: string;
  companies: { companies: AdapterResult<CompanyRow>; filings: AdapterResult<FilingRow> };
  /** The release's company register, read first: names are decided on its evidence as the leads' sources are read. */
  register: CompanyIndex;
  resolvers: LeadResolvers;
  /** The applications and notices staged by `read:planning` and `read:commencements` (pipeline/normalise/lead-staging.ts). */
  staging: LeadStagingFiles;
  infrastructure: AdapterResult<InfraFragment>;
  rents: AdapterResult<RentRow>;
  materials: AdapterResult<MaterialRow>;
  /** The release's as-of date: the latest planning extract date, else the build day. */
  asOf: string;
  /** Notices linked to a lead, and not (`link`). */
  linked: { linkedNotices: number; unlinkedNotices: number };
  infraDrafts: InfraDraft[];
  /** The tables streamed as their rows are made, each row validated on the way (`leads`, `track`). */
  sinks: TableSinks;
  /** New / updated / removed / unchanged per registry kind. */
  changeCounts: Record<RegistryKind, ChangeCounts>;
  /** Each lead's id and coordinates, for the nearest neighbours (`leads` → `track`). */
  points: PointColumns;
  /** Leads per main contractor's company number (`leads` → `track`'s suppliers). */
  projects: Map<string, number>;
  tracked: {
    infra: Tracked<InfraDraft>;
    suppliers: Supplier[];
  };
  /** The other tables' rows as published (validated, then written by `write:tables`). */
  published: {
    companies: Omit<CompanyRow, 'line' | 'name_key'>[];
    filings: Omit<FilingRow, 'line'>[];
  };
  /** This release's events by type (the `events` stage). */
  events: Record<EventType, number>;
  /** The privacy gate, fed each lead (`leads`) and project (`track`) as it is written. */
  nameGate: NameGate;
  names: NameGateResult;
  authorities: AuthorityCounts;
  /** Per authority and source: rows read and their newest date (normalise). */
  authorityReads: AuthoritySourceReads;
  /** Per authority: leads by status and bbox (`leads`). */
  authorityLeads: AuthorityLeads;
  /** Each lead's search terms, staged by `leads` for `search-index`. */
  searchStaging: SearchStaging;
  search: SearchIndexStats;
  geojson: GeoJsonIndex;
  analytics: AnalyticsSummary;
  gates: GateResult;
}

export interface BuildContext {
  readonly config: PipelineConfig;
  readonly deps: PipelineDeps;
  readonly previous: PreviousRelease | null;
  /** Lines, rows and rejects per source, in the order the sources were read (manifest, gates). */
  readonly sources: Record<string, SourceCounts>;
  /** Every source's rejects, in the same order (`rejects.jsonl`). */
  readonly rejects: Reject[];
  /** Record kinds with rows that failed schema validation. */
  readonly invalid: Record<string, InvalidRows>;
  /** Rows per published table, in the order the tables were written. */
  readonly counts: Record<string, number>;
  /** Timing of each stage run so far, in table order. */
  readonly stages: Record<string, StageTiming>;
  /** What the stages run so far made. */
  readonly made: Partial<BuildProducts>;
}

/** A fresh context for one refresh. */
export function createContext(
  config: PipelineConfig,
  deps: PipelineDeps,
  previous: PreviousRelease | null,
): BuildContext {
  return { config, deps, previous, sources: {}, rejects: [], invalid: {}, counts: {}, stages: {}, made: {} };
}

/** What an earlier stage made; throws when no stage made it yet (a stage table out of order). */
export function need<K extends keyof BuildProducts>(ctx: BuildContext, key: K): BuildProducts[K] {
  const v = ctx.made[key];
  if (v === undefined) throw new Error(`refresh stage order: '${key}' is needed before any stage made it`);
  return v as BuildProducts[K];
}

/** Record one source's counts and rejects (`rows` when rows were streamed rather than kept). */
export function account<T>(ctx: BuildContext, name: string, r: AdapterResult<T>, rows = r.rows.length): void {
  ctx.sources[name] = { lines: r.lines, rows, rejects: r.rejects.length, reasons: countReasons(r.rejects) };
  for (const x of r.rejects) ctx.rejects.push(x); // not push(...): a broken file can reject 800,000 rows
}

/** Note the rows of `kind` that failed validation, if any. */
export function noteInvalid(ctx: BuildContext, kind: RecordKind, r: { invalid: number; samples: string[] }): void {
  if (r.invalid > 0) ctx.invalid[kind] = { invalid: r.invalid, samples: r.samples };
}
