/**
 * `leads generate`: write a deterministic weekly snapshot of every raw source file (planning,
 * commencements, PPR, companies, infrastructure, rents, materials) in the publishers' layouts, with their ugliness.
 * Same (seed, scale, week) → byte-identical files. Week N+1 is week N plus that week's new
 * records and the events (decisions, grants, appeals, notices, corrections, sales) dated in it;
 * records untouched by the week are written with exactly the same field values.
 *
 * @example
 *   const summary = await generateRaw({ outDir: 'data/raw', scale: SCALES.tiny, seed: 42, week: 1 });
 */
import { readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { csvLine } from '../lib/csv.ts';
import { COMMENCEMENT_COLUMNS, PLANNING_COLUMNS } from '../sources/formats.ts';
import { CN_EXEMPT_DEFAULT, CN_EXEMPT_WEEKLY, exemptNoticeLines, noticeLines } from './commencements.ts';
import { buildCompanies, writeCompanies } from './companies.ts';
import { buildProjects, writeInfrastructure } from './infrastructure.ts';
import { FileSink, type FileStats, dayToIso, isoToDay } from './output.ts';
import {
  NumberAllocator,
  PLANNING_BAD_SHARE,
  PLANNING_DEFAULT,
  PLANNING_WEEKLY,
  buildApp,
  lastEvent,
  planningLines,
  receivedSampler,
  type PlanningApp,
} from './planning.ts';
import { writePpr } from './ppr.ts';
import { writeRents } from './rents.ts';
import { writeMaterials } from './materials.ts';
import { revisedApp, revisedEtlDate, revisionOf } from './revisions.ts';
import { recordRng } from './rng.ts';
import { NameTruth } from './truth.ts';

export interface GenerateOptions {
  outDir: string;
  scale: number;
  seed: number;
  week: number;
  /**
   * Where to write the ground truth about names (`truth.ts`): which names in the raw files are
   * individuals' and which organisations'. Kept apart from `outDir`; the pipeline never reads it.
   */
  truthFile?: string;
}

export interface GenerateSummary {
  week: number;
  snapshotDate: string;
  files: { path: string; rows: number; bytes: number }[];
}

/** Named scales: multipliers of the default volumes. */
export const SCALES: Record<'tiny' | 'small' | 'default' | 'stress', number> = {
  tiny: 0.005,
  small: 0.05,
  default: 1,
  stress: 10,
};

/** Snapshot date of week 1. */
export const WEEK1_SNAPSHOT = '2026-11-09';

/** The date a week's snapshot is taken: week 1 = 2026-11-09, week N = + 7·(N−1) days. */
export function snapshotDate(week: number): string {
  if (!Number.isInteger(week) || week < 1) throw new RangeError(`week must be a whole number >= 1, got ${week}`);
  return dayToIso(isoToDay(WEEK1_SNAPSHOT) + 7 * (week - 1));
}

function validate(opts: GenerateOptions): void {
  if (!opts.outDir) throw new TypeError('outDir is required');
  if (!Number.isFinite(opts.scale) || opts.scale <= 0 || opts.scale > 100)
    throw new RangeError(`scale must be in (0, 100], got ${opts.scale}`);
  if (!Number.isInteger(opts.seed) || opts.seed < 0 || opts.seed > 0xffffffff)
    throw new RangeError(`seed must be an integer in [0, 2^32), got ${opts.seed}`);
  snapshotDate(opts.week);
}

/** Write planning applications and commencement notices (one pass: notices follow their applications). */
function writePlanningAndNotices(
  seed: number,
  scale: number,
  week: number,
  asOf: number,
  outDir: string,
  companies: ReturnType<typeof buildCompanies>,
  truth: NameTruth | undefined,
): FileStats[] {
  const s1 = isoToDay(WEEK1_SNAPSHOT);
  const planning = new FileSink(`${outDir}/planning/planning-applications.csv`, {
    encoding: 'utf-8',
    bom: true,
    eol: '\r\n',
  });
  const notices = new FileSink(`${outDir}/commencements/bcms-commencement-notices.csv`, {
    encoding: 'utf-8',
    eol: '\n',
  });
  planning.header(csvLine(PLANNING_COLUMNS));
  notices.header(csvLine(COMMENCEMENT_COLUMNS));
  const ctx = { seed, companies, numbers: new NumberAllocator(), truth };
  const sample = receivedSampler(s1);
  const baseSlots = Math.round((PLANNING_DEFAULT * scale) / (1 - PLANNING_BAD_SHARE));
  const perWeek = PLANNING_WEEKLY * scale;
  const newSlots = Math.floor(perWeek * (week - 1) + 1e-9);
  for (let slot = 0; slot < baseSlots + newSlots; slot++) {
    const rr = recordRng(seed, 'planning-received', slot);
    let received: number;
    if (slot < baseSlots) received = sample(rr);
    else {
      const wk = Math.floor((slot - baseSlots) / perWeek) + 2;
      received = s1 + 7 * (wk - 1) - rr.int(1, 7);
    }
    const built = buildApp(ctx, slot, received);
    const revision = slot < baseSlots ? revisionOf(seed, built, s1) : null;
    const app = revisedApp(built, revision, asOf);
    if (app === null) continue; // taken down by its authority (revisions.ts)
    const lines = planningLines(app, asOf);
    for (let i = 0; i < lines.length; i++)
      planning.row(i === lines.length - 1 ? reviseEtl(lines[i]!, app, revision, asOf) : lines[i]!);
    for (const line of noticeLines(app, seed, companies, asOf, truth)) notices.row(line);
  }
  const exemptStart = isoToDay('2020-03-01');
  const baseExempt = Math.round(CN_EXEMPT_DEFAULT * scale);
  const exemptPerWeek = CN_EXEMPT_WEEKLY * scale;
  const newExempt = Math.floor(exemptPerWeek * (week - 1) + 1e-9);
  for (let j = 0; j < baseExempt + newExempt; j++) {
    const rr = recordRng(seed, 'cn-exempt-day', j);
    const submitted =
      j < baseExempt
        ? rr.int(exemptStart, s1 - 1)
        : s1 + 7 * (Math.floor((j - baseExempt) / exemptPerWeek) + 1) - rr.int(1, 7);
    for (const line of exemptNoticeLines(seed, j, submitted, companies, asOf, truth)) notices.row(line);
  }
  return [planning.close(), notices.close()];
}

/** A planning line with its ETL_DATE moved to its revision's day (revisions.ts) when that is later. */
function reviseEtl(line: string, app: PlanningApp, revision: ReturnType<typeof revisionOf>, asOf: number): string {
  const etl = dayToIso(lastEvent(app, asOf));
  const moved = revisedEtlDate(etl, revision, asOf);
  if (moved === etl) return line;
  const at = line.lastIndexOf(`,${etl},`);
  return at < 0 ? line : `${line.slice(0, at)},${moved},${line.slice(at + etl.length + 2)}`;
}

/** Remove PPR year files a previous run (of a later week) left behind. */
function removeStalePpr(outDir: string, keep: Set<string>): void {
  let names: string[];
  try {
    names = readdirSync(join(outDir, 'ppr'));
  } catch {
    return;
  }
  for (const n of names) if (/^PPR-\d{4}\.csv$/.test(n) && !keep.has(n)) rmSync(join(outDir, 'ppr', n));
}

/**
 * Generate every raw source file of week `week` under `outDir/<source>/` (overwriting), and
 * return what was written (paths relative to `outDir`, data rows without the header, bytes).
 */
export async function generateRaw(opts: GenerateOptions): Promise<GenerateSummary> {
  validate(opts);
  const { outDir, scale, seed, week } = opts;
  const snap = snapshotDate(week);
  const asOf = isoToDay(snap);
  const companies = buildCompanies(seed, scale);
  const truth = opts.truthFile ? new NameTruth() : undefined;
  for (const c of companies.companies) truth?.organisation(c.name, 'register');
  const stats: FileStats[] = [];
  stats.push(...writePlanningAndNotices(seed, scale, week, asOf, outDir, companies, truth));
  const ppr = writePpr(seed, scale, asOf, outDir);
  removeStalePpr(outDir, new Set(ppr.map((f) => f.path.split('/').pop()!)));
  stats.push(...ppr);
  stats.push(...writeCompanies(companies, seed, asOf, outDir));
  const projects = buildProjects(seed, scale, isoToDay(WEEK1_SNAPSHOT), asOf, companies);
  stats.push(...writeInfrastructure(projects, asOf, outDir));
  // the developer is written as an applicant by the auction results and the data-centre file
  for (const p of projects) {
    const written = (p.auction !== null && p.auction[1] <= asOf) || (p.vertical === 'data_centre' && p.lodged <= asOf);
    truth?.organisation(p.developer, written ? 'applicant' : 'register');
  }
  if (truth) truth.write(opts.truthFile!);
  stats.push(writeRents(seed, asOf, outDir), writeMaterials(seed, snap, outDir));
  return {
    week,
    snapshotDate: snap,
    files: stats.map((f) => ({ path: relative(outDir, f.path).split('\\').join('/'), rows: f.rows, bytes: f.bytes })),
  };
}
