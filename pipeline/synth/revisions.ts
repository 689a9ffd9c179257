/**
 * Weekly revisions of existing applications that the base timeline (planning.ts) does not make
 * often enough for a sync test to see every kind of change within a few weeks: a revised floor
 * area (a value update), a withdrawal while undecided (a stage move to `withdrawn`) and a
 * take-down (an invalidated application that vanishes from the authority's file: a removal).
 *
 * Each base slot draws from its own stream (`planning-revision`), so adding this changed no other
 * record: a tenth of the applications never granted are taken down on a day in weeks 2–13 (half of them in weeks 2–4), 15 %
 * of those undecided at week 1 are withdrawn within four weeks of it and 4 % of those with a floor
 * area have it revised in weeks 2–13 (half in weeks 2–4; see docs/generator.md, "Week semantics", for the rates).
 * Kept apart from planning.ts so the base timeline stays as it was; applied by the generator only
 * to slots received before week 1's snapshot.
 */
import type { PlanningApp } from './planning.ts';
import { dayToIso } from './output.ts';
import { recordRng } from './rng.ts';

export type RevisionKind = 'take_down' | 'withdraw' | 'amend';

export interface Revision {
  kind: RevisionKind;
  /** The day the revision happens at the source (a day number). */
  day: number;
}

/** Share of base applications never granted that are taken down in weeks 2–13. */
const TAKE_DOWN_SHARE = 0.1;
/** Share of the applications undecided at week 1 that are withdrawn in the four weeks after it. */
const WITHDRAW_SHARE = 0.15;
/** Share of base applications with a floor area that have it revised in weeks 2–13. */
const AMEND_SHARE = 0.04;

/** The revision of a base slot, or null (most slots). `week1` is week 1's snapshot day. */
export function revisionOf(seed: number, app: PlanningApp, week1: number): Revision | null {
  const r = recordRng(seed, 'planning-revision', app.slot);
  const u = r.next();
  // half in weeks 2–4 (an invalid application is taken off the register soon after it is lodged;
  // a sync test over four weeks sees every kind of change), half in weeks 5–13
  const day = week1 + 7 * (r.chance(0.5) ? r.int(1, 3) : r.int(4, 12)) - r.int(0, 6);
  const soon = week1 + r.int(1, 27);
  const after = (d: number | null, t: number): boolean => d === null || d > t;
  if (u < TAKE_DOWN_SHARE && app.grant === null && app.bad < 0 && day > app.received) return { kind: 'take_down', day };
  if (
    u < WITHDRAW_SHARE &&
    [app.decision, app.withdrawn, app.fiRequest].every((d) => after(d, soon)) &&
    soon > app.received
  ) {
    return { kind: 'withdraw', day: soon };
  }
  if (u > 1 - AMEND_SHARE && app.dev.floorM2 !== null && day > app.received) return { kind: 'amend', day };
  return null;
}

/**
 * The application as published on `asOf` under its revision: null once taken down; withdrawn
 * (no later decision, grant or appeal) from the withdrawal day; with a floor area 25 % larger
 * from the amendment day. Before the day, the application itself.
 */
export function revisedApp(app: PlanningApp, rev: Revision | null, asOf: number): PlanningApp | null {
  if (!rev || rev.day > asOf) return app;
  switch (rev.kind) {
    case 'take_down':
      return null;
    case 'withdraw':
      return {
        ...app,
        outcome: 'withdrawn',
        withdrawn: rev.day,
        decision: null,
        grant: null,
        appealRef: null,
        appealSubmitted: null,
        appealDecided: null,
        appealDecision: null,
        fiRequest: null,
        fiReceived: null,
      };
    case 'amend':
      return { ...app, dev: { ...app.dev, floorM2: Math.round(app.dev.floorM2! * 1.25) } };
  }
}

/** The ETL_DATE a revised line carries: the revision's day when it is later than the line's own. */
export function revisedEtlDate(etl: string, rev: Revision | null, asOf: number): string {
  if (!rev || rev.day > asOf) return etl;
  const d = dayToIso(rev.day);
  return d > etl ? d : etl;
}
