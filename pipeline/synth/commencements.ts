/**
 * Synthetic BCMS commencement notices. Most follow a granted application of the planning
 * generator (same permission number, address and coordinates; large schemes in several phases),
 * a few name no application at all (exempt works). Each notice is derived from its application's
 * own PRNG and becomes visible once its submission date has passed, so it keeps its CN_Number and
 * content from week to week. Owner name and phone are always personal data, as in the real file.
 */
import { AUTHORITIES } from '../reference/authorities.ts';
import { csvLine } from '../lib/csv.ts';
import { BUILDER_NACE, type CompanyRegistry, nameVariant, pickCompany } from './companies.ts';
import { type DateStyle, fmtDate } from './output.ts';
import type { PlanningApp } from './planning.ts';
import { type Rng, cumulative, recordRng } from './rng.ts';
import {
  BUSINESS_WORD_SURNAMES,
  SOLE_TRADES,
  eircode,
  personName,
  placeName,
  spacedEircode,
  streetName,
  townOf,
} from './vocab.ts';
import type { NameTruth } from './truth.ts';

/** Share of granted applications that get a commencement notice (eventually). */
export const CN_SHARE = 0.5;
/** Default-scale exempt / unmatched notices in week 1, and new ones per week. */
export const CN_EXEMPT_DEFAULT = 3000;
export const CN_EXEMPT_WEEKLY = 12;

const TRADE_NACE: Record<string, readonly string[]> = {
  solar: ['4321'],
  roofing: ['4391'],
  landscaping: ['8130', '4312'],
  windows: ['4332'],
  heat_pump: ['4322'],
  insulation: ['4329'],
  ev_charger: ['4321'],
  shopfront: ['4332', '4120'],
  signage: ['4399'],
  telecom: ['4399', '4321'],
  extension: ['4120', '4120', '4391', '4332'],
  agricultural: ['4120', '4399'],
};

function phone(r: Rng): string {
  return `08${r.pick(['3', '5', '6', '7', '9'])} ${r.int(100, 999)} ${r.int(1000, 9999)}`;
}

function fullName(r: Rng): string {
  const p = personName(r);
  return `${p.forename} ${p.surname}`;
}

function cnNumber(slot: number, phase: number): string {
  return `CN${String(100_000 + slot * 8 + phase).padStart(7, '0')}`;
}

function permissionVariant(r: Rng, n: string): string {
  const x = r.next();
  if (x < 0.9) return n;
  if (x < 0.94) return n.toLowerCase();
  if (x < 0.97) return ` ${n}`;
  return n.replace('/', ' / ');
}

interface NoticeBase {
  r: Rng;
  style: DateStyle;
  cnNumber: string;
  permission: string;
  projectName: string;
  description: string;
  projectType: string;
  activity: string;
  granted: number | null;
  submitted: number;
  commencement: number;
  end: number;
  unitsPhase: number | null;
  phase: string;
  totalUnits: number | null;
  street: string;
  town: string;
  eircode: string;
  county: string;
  lat: number | null;
  lon: number | null;
  subGroup: string;
  optOut: boolean;
  builder: string;
  builderNum: string;
  owner: string;
  authorityName: string;
  cccDay: number | null;
  cccType: string;
}

function noticeFields(n: NoticeBase, asOf: number): string[] {
  const s = n.style;
  const ccc = n.cccDay !== null && n.cccDay <= asOf;
  return [
    n.cnNumber,
    n.permission,
    n.projectName,
    n.description,
    n.projectType,
    n.activity,
    fmtDate(n.granted, s),
    fmtDate(n.submitted, s),
    fmtDate(n.commencement, s),
    fmtDate(n.end, s),
    n.unitsPhase === null ? '' : String(n.unitsPhase),
    n.phase,
    n.totalUnits === null ? '' : String(n.totalUnits),
    n.street,
    n.town,
    n.eircode,
    n.county,
    n.lat === null ? '' : n.lat.toFixed(6),
    n.lon === null ? '' : n.lon.toFixed(6),
    fmtDate(n.submitted + (n.cnNumber.charCodeAt(n.cnNumber.length - 1) % 4), s),
    'Valid',
    'No',
    n.subGroup,
    n.optOut ? 'Yes' : 'No',
    n.builder,
    n.builderNum,
    n.owner,
    phone(n.r),
    ccc ? `CCC${n.cnNumber.slice(2)}` : '',
    ccc ? fmtDate(n.cccDay, s) : '',
    ccc ? n.cccType : '',
    ccc && n.unitsPhase !== null ? String(n.unitsPhase) : '',
    n.authorityName,
  ];
}

/** Damage or duplicate a notice's line as the real file sometimes has it. */
function finish(n: NoticeBase, f: string[], badKey: number): string[] {
  const rr = n.r;
  const x = rr.next();
  if (x < 0.001 || badKey % 1009 === 500) {
    const g = [...f];
    if (rr.chance(0.5)) g[0] = '';
    else g[8] = `${31}/${rr.pick(['02', '04', '06', '13'])}/${2020 + rr.int(0, 5)}`;
    return [csvLine(g)];
  }
  const line = csvLine(f);
  if (x > 0.9995 || badKey % 1013 === 700) return [line, line];
  return [line];
}

/** Trades whose small jobs are more often done by a person than by a company. */
const SMALL_TRADES = ['extension', 'roofing', 'windows', 'heat_pump', 'insulation', 'landscaping', 'agricultural'];

/** The builder of a project, as its notices name them, and the person behind the name (if one). */
interface Builder {
  builder: string;
  builderNum: string;
  person: string | null;
}

/**
 * The builder of an application's project, fixed for all its phases: the owner when they opt
 * out of a builder, else a company of the trade, or a person (now and then under a trading name).
 */
function drawBuilder(
  r0: Rng,
  seed: number,
  app: PlanningApp,
  companies: CompanyRegistry,
  optOut: boolean,
  truth: NameTruth | undefined,
): Builder {
  const dev = app.dev;
  if (optOut) {
    const builder = app.personName ?? fullName(r0);
    return { builder, builderNum: '', person: builder };
  }
  if (r0.chance(dev.oneOff ? 0.6 : SMALL_TRADES.includes(dev.cls) ? 0.75 : 0.95)) {
    const c = pickCompany(companies, r0, TRADE_NACE[dev.cls] ?? BUILDER_NACE.slice(0, 2));
    const builder = nameVariant(r0, c.name);
    const builderNum = r0.chance(0.7) ? String(c.num) : '';
    truth?.organisation(builder, 'builder');
    return { builder, builderNum, person: null };
  }
  let builder = fullName(r0);
  let person = builder;
  // the hard cases, from a stream of their own: a business-word surname, a trading name
  const hard = recordRng(seed, 'cn-builder-hard', app.slot);
  if (hard.chance(0.15)) builder = person = `${builder.split(' ')[0]} ${hard.pick(BUSINESS_WORD_SURNAMES)}`;
  if (hard.chance(0.3)) builder = `${person} ${hard.pick(SOLE_TRADES)}`;
  return { builder, builderNum: '', person };
}

/** What the notices of one application share: its builder, owner, Eircode and number of phases. */
interface NoticeProject extends Builder {
  app: PlanningApp;
  /** The application's own stream, drawn by every phase too. */
  r0: Rng;
  phases: number;
  optOut: boolean;
  owner: string;
  eircode: string;
}

/** The project name a notice gives: the new dwelling, the scheme's phase, or the works and the site. */
function noticeProjectName(app: PlanningApp, phases: number, k: number): string {
  if (app.dev.oneOff) return `New dwelling at ${app.address.split(',')[0]!.trim()}`;
  if (phases > 1) {
    return `${app.address
      .replace(/^Lands at /, '')
      .split(',')[0]!
      .trim()} Phase ${k + 1}`;
  }
  return `${app.dev.cnSubGroup} - ${app.address.split(',')[0]!.trim()}`;
}

/** The notice of phase `k` of a project, drawn from the phase's stream `r` (and the project's `r0`). */
function phaseNotice(
  p: NoticeProject,
  r: Rng,
  k: number,
  submitted: number,
  commencement: number,
  unitsPhase: number | null,
): NoticeBase {
  const { app, phases } = p;
  const dev = app.dev;
  const units = dev.units;
  const n: NoticeBase = {
    r,
    style: r.pick([0, 0, 1, 2] as const),
    cnNumber: cnNumber(app.slot, k),
    permission: permissionVariant(r, app.appNumber),
    projectName: noticeProjectName(app, phases, k),
    description: app.description.trim(),
    projectType: dev.cnProjectType,
    activity: dev.cnActivity,
    granted: app.grant,
    submitted,
    commencement,
    end: commencement + r.int(90, units !== null && units > 20 ? 900 : 540),
    unitsPhase,
    phase: phases > 1 ? `Phase ${k + 1}` : '',
    totalUnits: units,
    street: app.street,
    town: app.town,
    eircode: p.eircode && p.r0.chance(0.2) ? spacedEircode(p.eircode) : p.eircode,
    county: app.authority.county,
    lat: app.hasCoords && !r.chance(0.05) ? Math.round((app.lat + r.float(-0.0005, 0.0005)) * 1e6) / 1e6 : null,
    lon: app.hasCoords ? Math.round((app.lon + r.float(-0.0005, 0.0005)) * 1e6) / 1e6 : null,
    subGroup: dev.cnSubGroup,
    optOut: p.optOut,
    builder: p.builder,
    builderNum: p.builderNum,
    owner: p.owner,
    authorityName: app.authority.councilName,
    cccDay: r.chance(0.42) ? commencement + r.int(150, units !== null && units > 20 ? 900 : 600) : null,
    cccType:
      units !== null && units > 1 ? 'Multiple Buildings/Units' : dev.oneOff ? 'Single Dwelling' : 'Single Building',
  };
  if (n.lat === null) n.lon = null;
  return n;
}

/**
 * The notice lines of one planning application as of `asOf` (none when it was not granted, is
 * not commenced, or its notices are still in the future).
 */
export function noticeLines(
  app: PlanningApp,
  seed: number,
  companies: CompanyRegistry,
  asOf: number,
  truth?: NameTruth,
): string[] {
  if (app.grant === null || app.bad >= 0) return [];
  // works already carried out are not commenced
  if (app.dev.kind === 'retention') return [];
  const r0 = recordRng(seed, 'cn', app.slot);
  if (!r0.chance(CN_SHARE)) return [];
  const first = app.grant + Math.round(20 + Math.pow(r0.next(), 1.6) * 700);
  if (first - 28 > asOf) return [];
  const dev = app.dev;
  const units = dev.units;
  const phases = units !== null && units >= 40 && r0.chance(0.5) ? r0.int(2, Math.min(6, Math.ceil(units / 30))) : 1;
  const optOut = dev.oneOff && r0.chance(0.6);
  const builder = drawBuilder(r0, seed, app, companies, optOut, truth);
  const owner = app.personName ?? fullName(r0);
  if (builder.person !== null) truth?.individual(builder.person);
  truth?.individual(owner);
  const cnEircode = app.postcode || (r0.chance(0.45) ? eircode(r0, app.authority.routingKeys[0]!) : '');
  const project: NoticeProject = { ...builder, app, r0, phases, optOut, owner, eircode: cnEircode };
  const out: string[] = [];
  let commencement = first;
  let remaining = units ?? 0;
  for (let k = 0; k < phases; k++) {
    if (k > 0) commencement += r0.int(90, 400);
    const r = recordRng(seed, 'cn-notice', app.slot * 8 + k);
    const submitted = Math.max(app.grant + 1, commencement - r.int(14, 28));
    if (submitted > asOf) break;
    const unitsPhase = units === null ? null : k === phases - 1 ? remaining : Math.max(1, Math.round(units / phases));
    remaining -= unitsPhase ?? 0;
    const n = phaseNotice(project, r, k, submitted, commencement, unitsPhase);
    out.push(...finish(n, noticeFields(n, asOf), app.slot * 8 + k));
  }
  return out;
}

const AUTH_CUM = cumulative(AUTHORITIES.map((a) => a.weight));
const EXEMPT_PERMISSIONS = [
  'Exempt',
  'EXEMPT',
  'N/A',
  'Exempted Development',
  'Section 5 Declaration',
  'n/a',
  'Not Applicable',
];
const EXEMPT_WORKS = [
  'Internal fit-out of existing retail unit',
  'Internal alterations to existing office floor',
  'Single storey rear extension under 40 sq.m (exempted development)',
  'Conversion of attic to storage',
  'Fit-out of restaurant at ground floor',
  'Replacement of existing roof covering',
  'Internal refurbishment of existing dwelling',
];

/**
 * The line(s) of the j-th notice that names no planning application (exempt works), visible once
 * `submitted` has passed.
 */
export function exemptNoticeLines(
  seed: number,
  j: number,
  submitted: number,
  companies: CompanyRegistry,
  asOf: number,
  truth?: NameTruth,
): string[] {
  if (submitted > asOf) return [];
  const r = recordRng(seed, 'cn-exempt', j);
  const a = AUTHORITIES[r.weighted(AUTH_CUM)]!;
  const c = pickCompany(companies, r, BUILDER_NACE);
  const commencement = submitted + r.int(14, 28);
  const town = townOf(r, a);
  const n: NoticeBase = {
    r,
    style: 0,
    cnNumber: `CN9${String(j).padStart(7, '0')}`,
    permission: r.chance(0.15) ? '' : r.pick(EXEMPT_PERMISSIONS),
    projectName: `${placeName(r)} ${r.pick(['Works', 'Fit-out', 'Refurbishment'])}`,
    description: r.pick(EXEMPT_WORKS),
    projectType: r.chance(0.5) ? 'Non-Residential' : 'Residential',
    activity: 'Material Alteration',
    granted: null,
    submitted,
    commencement,
    end: commencement + r.int(30, 300),
    unitsPhase: null,
    phase: '',
    totalUnits: null,
    street: streetName(r),
    town,
    eircode: r.chance(0.5) ? eircode(r, r.pick(a.routingKeys)) : '',
    county: a.county,
    lat: null,
    lon: null,
    subGroup: 'Other',
    optOut: false,
    builder: c.name,
    builderNum: r.chance(0.7) ? String(c.num) : '',
    owner: fullName(r),
    authorityName: a.councilName,
    cccDay: r.chance(0.4) ? commencement + r.int(60, 400) : null,
    cccType: 'Single Building',
  };
  truth?.organisation(n.builder, 'builder');
  truth?.individual(n.owner);
  return [csvLine(noticeFields(n, asOf))];
}
