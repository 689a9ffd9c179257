/**
 * Synthetic strategic-infrastructure and energy projects (wind, solar, battery storage, grid,
 * data centres) and the four files that describe them: consenting-body cases, RESS auction
 * results, grid connections and the data-centre register. A project's name is the same in every
 * file it appears in (up to letter case and surrounding whitespace). Each project carries its own
 * timeline (lodged, decided, connected); a snapshot shows what happened by its date.
 */
import type { Authority } from '../reference/authorities.ts';
import { AUTHORITIES } from '../reference/authorities.ts';
import { csvLine } from '../lib/csv.ts';
import { ABP_CASE_COLUMNS, AUCTION_COLUMNS, DATA_CENTRE_COLUMNS, GRID_CONNECTION_COLUMNS } from '../sources/formats.ts';
import { type CompanyRegistry, nameVariant, pickCompany } from './companies.ts';
import { FileSink, type FileStats, dayToIso, isoToDay } from './output.ts';
import { type Rng, cumulative, recordRng } from './rng.ts';
import { PLACE_PREFIXES, PLACE_SUFFIXES, joinPlace, placeName, pointNear } from './vocab.ts';

export type Vertical = 'wind' | 'solar' | 'battery' | 'grid' | 'data_centre';

/** Default-scale number of projects per vertical (1,543 in all). */
export const INFRA_DEFAULT: Record<Vertical, number> = {
  wind: 521,
  solar: 481,
  battery: 251,
  grid: 130,
  data_centre: 160,
};
/** New projects per week at default scale. */
export const INFRA_WEEKLY = 3;

const VERTICALS: readonly Vertical[] = ['wind', 'solar', 'battery', 'grid', 'data_centre'];
const RENEWABLE_CUTOFF = isoToDay('2025-01-01');

const AUCTIONS: readonly [string, number][] = [
  ['RESS 1', isoToDay('2020-09-10')],
  ['RESS 2', isoToDay('2022-09-08')],
  ['RESS 3', isoToDay('2023-09-14')],
  ['RESS 4', isoToDay('2024-09-12')],
  ['RESS 5', isoToDay('2025-09-11')],
];

/** One project with its whole timeline (day numbers; null = never). */
export interface Project {
  vertical: Vertical;
  index: number;
  name: string;
  authority: Authority;
  lat: number;
  lon: number;
  capacityMw: number;
  turbines: number;
  developer: string;
  lodged: number;
  decision: number | null;
  granted: boolean;
  connected: number | null;
  hasCase: boolean;
  caseNo: number;
  auction: [string, number] | null;
  voltageKv: number | null;
  /** Seed of the project's row-level draws (name spelling, optional columns). */
  rowSeed: number;
}

function authorityWeights(v: Vertical): number[] {
  return AUTHORITIES.map((a) => {
    const rural = a.spreadKm > 15;
    const dublin = a.county === 'Dublin';
    switch (v) {
      case 'wind':
        return dublin ? 0.02 : rural ? a.weight * 2 : a.weight * 0.3;
      case 'solar':
        return dublin ? 0.1 : a.lat < 53.2 ? a.weight * 1.8 : a.weight;
      case 'battery':
      case 'grid':
        return dublin ? a.weight * 0.6 : a.weight;
      default:
        return ['Fingal', 'South Dublin', 'Dublin City'].includes(a.name)
          ? 30
          : ['Meath', 'Kildare'].includes(a.name)
            ? 8
            : ['Cork County', 'Clare', 'Galway County', 'Offaly', 'Louth'].includes(a.name)
              ? 2
              : 0.1;
    }
  });
}
const AUTH_CUM: Record<Vertical, number[]> = Object.fromEntries(
  VERTICALS.map((v) => [v, cumulative(authorityWeights(v))]),
) as Record<Vertical, number[]>;

const DC_WORDS = [
  'Atlantic',
  'Liffey',
  'Emerald',
  'Celtic',
  'Boyne',
  'Shannon',
  'Northern',
  'Harbour',
  'Midland',
  'Corrib',
  'Granite',
  'Summit',
  'Keystone',
  'Apex',
  'Clearwater',
  'Silverline',
];
const DC_KINDS = ['Hub', 'Campus', 'Park', 'Gateway', 'Point', 'Cloud', 'Digital', 'Central'];

/** The name pool of a vertical: a seeded shuffle of place names (or data-centre names). */
function namePool(seed: number, v: Vertical): string[] {
  const bases: string[] = [];
  if (v === 'data_centre') {
    for (const w of DC_WORDS) for (const k of DC_KINDS) bases.push(`${w} ${k}`);
    for (const p of PLACE_PREFIXES) for (const s of PLACE_SUFFIXES.slice(0, 8)) bases.push(joinPlace(p, s));
  } else {
    for (const p of PLACE_PREFIXES) for (const s of PLACE_SUFFIXES) bases.push(joinPlace(p, s));
  }
  const unique = [...new Set(bases)];
  const r = recordRng(seed, `infra-names-${v}`, 0);
  for (let i = unique.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [unique[i], unique[j]] = [unique[j]!, unique[i]!];
  }
  return unique;
}

const SUFFIX: Record<Vertical, (r: Rng) => string> = {
  wind: (r) => (r.chance(0.1) ? 'Wind Energy Development' : 'Wind Farm'),
  solar: (r) => (r.chance(0.15) ? 'Solar PV Farm' : 'Solar Farm'),
  battery: (r) => (r.chance(0.3) ? 'Battery Energy Storage System' : 'Battery Storage'),
  grid: (r) =>
    r.pick([
      'Substation',
      'Substation',
      '110 kV Substation',
      '220 kV Substation',
      'Grid Connection',
      '400 kV Line Uprate',
    ]),
  data_centre: () => 'Data Centre',
};

function projectName(pool: string[], v: Vertical, i: number, r: Rng): string {
  const base = pool[i % pool.length]!;
  const round = Math.floor(i / pool.length);
  const ext =
    round === 0
      ? ''
      : ` ${['II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX', 'X', 'XI', 'XII'][round - 1] ?? String(round + 1)}`;
  return `${base}${ext} ${SUFFIX[v](r)}`;
}

/** A project's size: its capacity in MW and, for a wind farm, its number of turbines. */
function drawCapacity(r: Rng, v: Vertical): Pick<Project, 'turbines' | 'capacityMw'> {
  switch (v) {
    case 'wind': {
      const turbines = r.int(3, 40);
      return { turbines, capacityMw: Math.round(turbines * r.float(2.3, 6.6) * 10) / 10 };
    }
    case 'solar':
      return { turbines: 0, capacityMw: Math.round((r.chance(0.7) ? r.float(4, 60) : r.float(60, 220)) * 10) / 10 };
    case 'battery':
      return { turbines: 0, capacityMw: Math.round(r.float(8, 200) * 10) / 10 };
    case 'grid':
      return { turbines: 0, capacityMw: r.chance(0.8) ? Math.round(r.float(30, 500)) : r.pick([500, 700]) };
    default:
      return { turbines: 0, capacityMw: Math.round(r.float(15, 300)) };
  }
}

/** Who develops a project: an energy or data company from the register, or a grid operator. */
function drawDeveloper(r: Rng, reg: CompanyRegistry, v: Vertical): string {
  if (v !== 'grid') return pickCompany(reg, r, v === 'data_centre' ? ['6311'] : ['3511']).name;
  return r.chance(0.5) ? pickCompany(reg, r, ['3511']).name : r.pick(['EirGrid plc', 'ESB Networks DAC']);
}

const OPERATING_SHARE: Record<Vertical, number> = {
  wind: 0.74,
  solar: 0.5,
  battery: 0.55,
  grid: 0.8,
  data_centre: 0.55,
};
const FIRST_CONNECTION: Record<Vertical, string> = {
  wind: '1997-01-01',
  solar: '2019-06-01',
  battery: '2020-01-01',
  grid: '2001-01-01',
  data_centre: '2008-01-01',
};

/**
 * A project's consent and connection dates: an operating project is connected before
 * `snapshot1` and was lodged years earlier; the others are lodged since 2019 (or on
 * `lodgedOverride`) and some are granted and connected later.
 */
function drawMilestones(
  r: Rng,
  v: Vertical,
  snapshot1: number,
  lodgedOverride: number | null,
): Pick<Project, 'lodged' | 'decision' | 'granted' | 'connected'> {
  let lodged: number;
  let decision: number | null;
  let granted: boolean;
  let connected: number | null = null;
  if (lodgedOverride === null && r.chance(OPERATING_SHARE[v])) {
    const c0 = isoToDay(FIRST_CONNECTION[v]);
    const span = snapshot1 - 30 - c0;
    connected = c0 + Math.round(Math.sqrt(r.next()) * span);
    lodged = connected - r.int(900, 3200);
    decision = lodged + r.int(120, 420);
    granted = true;
  } else {
    const l0 = isoToDay('2019-01-01');
    lodged = lodgedOverride ?? l0 + Math.round(Math.pow(r.next(), 0.8) * (snapshot1 - 1 - l0));
    granted = r.chance(0.78);
    decision = r.chance(0.9) ? lodged + r.int(120, 560) : null;
    if (granted && decision !== null && r.chance(0.5)) connected = decision + r.int(700, 1800);
  }
  if (!granted) connected = null;
  return { lodged, decision, granted, connected };
}

/** The RESS auction a granted wind or solar project won (a round after its decision, before its connection), if any. */
function drawAuction(
  r: Rng,
  v: Vertical,
  m: Pick<Project, 'decision' | 'granted' | 'connected'>,
): [string, number] | null {
  const { decision, connected } = m;
  if ((v === 'wind' || v === 'solar') && m.granted && decision !== null && r.chance(0.64)) {
    const eligible = AUCTIONS.filter(([, d]) => d > decision + 60 && (connected === null || d < connected));
    if (eligible.length > 0) return r.pick(eligible);
  }
  return null;
}

/** The connection voltages a project draws from (kV; a repeat makes that voltage likelier). */
const VOLTAGES: Record<Vertical, number[]> = {
  wind: [38, 110, 220, 110],
  solar: [38, 110, 38],
  battery: [38, 110, 220, 110],
  grid: [110, 220, 400, 220],
  data_centre: [110, 220, 110],
};

/** Build project `i` of vertical `v`, a pure function of (seed, vertical, index). */
function buildProject(
  seed: number,
  reg: CompanyRegistry,
  pool: string[],
  v: Vertical,
  i: number,
  snapshot1: number,
  lodgedOverride: number | null,
): Project {
  const r = recordRng(seed, `infra-${v}`, i);
  const name = projectName(pool, v, i, r);
  const a = AUTHORITIES[r.weighted(AUTH_CUM[v])]!;
  const { lat, lon } = pointNear(r, a, v === 'data_centre' ? 0.5 : 1);
  const { turbines, capacityMw } = drawCapacity(r, v);
  const developer = drawDeveloper(r, reg, v);
  const m = drawMilestones(r, v, snapshot1, lodgedOverride);
  const renewable = v === 'wind' || v === 'solar' || v === 'battery';
  // every project shows up somewhere: not yet connected ones through their consenting case
  const notConnected = v !== 'data_centre' && (m.connected === null || m.connected > snapshot1);
  const hasCase =
    notConnected ||
    (renewable && m.lodged >= RENEWABLE_CUTOFF) ||
    r.chance(v === 'grid' ? 0.4 : v === 'data_centre' ? 0.3 : 0.19);
  const auction = drawAuction(r, v, m);
  return {
    vertical: v,
    index: i,
    name,
    authority: a,
    lat,
    lon,
    capacityMw,
    turbines,
    developer,
    lodged: m.lodged,
    decision: m.decision,
    granted: m.granted,
    connected: m.connected,
    hasCase,
    caseNo: 200_000 + VERTICALS.indexOf(v) * 1 + i * 5 * 7 + (i % 7),
    auction,
    voltageKv: r.pick(VOLTAGES[v]),
    rowSeed: r.u32(),
  };
}

/** All projects visible or planned by `asOf` (base projects plus those added week by week). */
export function buildProjects(
  seed: number,
  scale: number,
  snapshot1: number,
  asOf: number,
  reg: CompanyRegistry,
): Project[] {
  const out: Project[] = [];
  const base = new Map<Vertical, number>();
  for (const v of VERTICALS) {
    const pool = namePool(seed, v);
    const n = Math.max(1, Math.round(INFRA_DEFAULT[v] * scale));
    base.set(v, n);
    for (let i = 0; i < n; i++) out.push(buildProject(seed, reg, pool, v, i, snapshot1, null));
  }
  // projects lodged after week 1: INFRA_WEEKLY × scale per week, cycling over the renewables
  const weeksAfter = Math.floor((asOf - snapshot1) / 7);
  const perWeek = INFRA_WEEKLY * scale;
  const total = Math.floor(perWeek * Math.max(0, weeksAfter) + 1e-9);
  const cycle: Vertical[] = ['wind', 'solar', 'battery'];
  const pools = new Map(cycle.map((v) => [v, namePool(seed, v)]));
  for (let k = 0; k < total; k++) {
    const v = cycle[k % 3]!;
    const week = Math.floor(k / perWeek) + 2;
    const r = recordRng(seed, 'infra-new', k);
    const lodged = snapshot1 + 7 * (week - 1) - r.int(1, 7);
    out.push(buildProject(seed, reg, pools.get(v)!, v, base.get(v)! + Math.floor(k / 3), snapshot1, lodged));
  }
  return out;
}

const TECH: Record<Vertical, string> = {
  wind: 'Wind',
  solar: 'Solar',
  battery: 'Battery',
  grid: 'Grid',
  data_centre: 'Data Centre',
};
const fmt = (d: number | null): string => (d === null ? '' : dayToIso(d));

function description(p: Project): string {
  const r = recordRng(p.rowSeed, 'infra-desc', p.index);
  const mw = p.capacityMw.toFixed(1);
  switch (p.vertical) {
    case 'wind':
      return `${p.name}: 10-year permission for a wind farm of ${p.turbines} no. wind turbines with a tip height of up to ${r.int(150, 200)} m (up to ${mw} MW), ${r.pick(['a 110 kV substation', 'a 38 kV substation', 'a 220 kV substation'])}, meteorological mast, internal access tracks, grid connection and all associated works`;
    case 'solar':
      return `${p.name}: solar farm with a total area of ${Math.round(p.capacityMw * r.float(1.4, 2))} ha comprising photovoltaic panels on ground-mounted frames (up to ${mw} MW), inverter stations, ${r.pick(['38 kV', '110 kV'])} substation, security fencing, CCTV and underground grid connection`;
    case 'battery':
      return `${p.name}: battery energy storage system (up to ${mw} MW / ${(p.capacityMw * r.pick([1, 2, 4])).toFixed(0)} MWh) comprising containerised battery units, inverters, transformers, ${r.pick(['110 kV', '38 kV', '220 kV'])} substation and grid connection`;
    case 'grid':
      return `${p.name}: ${r.pick(['new 220 kV GIS substation', 'new 110 kV substation and loop-in of existing overhead line', 'uprate of existing 400 kV overhead line', 'underground cable connection between substations'])} (transfer capacity ${p.capacityMw} MW) and associated works`;
    default:
      return `${p.name}: data centre ${r.chance(0.5) ? 'campus ' : ''}of ${r.int(1, 4)} no. buildings (up to ${p.capacityMw} MW IT load), ${r.pick(['110 kV substation', 'on-site gas-fired power plant', '220 kV substation'])}, backup generators and associated works`;
  }
}

function caseId(p: Project): string {
  const yy = dayToIso(p.lodged).slice(2, 4);
  if (p.lodged < isoToDay('2018-01-01'))
    return `PL${String((p.authority.councilName.length % 30) + 1).padStart(2, '0')}.${p.caseNo}`;
  return `ABP-${p.caseNo}-${yy}`;
}

function caseCategory(p: Project): string {
  if (p.vertical === 'grid') return 'Section 182A Electricity Transmission';
  if (p.vertical === 'data_centre')
    return p.capacityMw > 150 ? 'Strategic Infrastructure Development' : 'Normal Planning Appeal';
  if (
    (p.vertical === 'wind' && (p.turbines > 25 || p.capacityMw > 50)) ||
    p.capacityMw > 80 ||
    p.lodged >= RENEWABLE_CUTOFF
  ) {
    return 'Strategic Infrastructure Development';
  }
  return 'Normal Planning Appeal';
}

function nameAsWritten(r: Rng, name: string): string {
  const x = r.next();
  if (x < 0.1) return name.toUpperCase();
  if (x < 0.15) return ` ${name} `;
  if (x < 0.2) return name.toLowerCase();
  return name;
}

/** Insert ⌊rows × 0.2 %⌉ damaged rows at even positions (none in tiny files). */
function withBadRows(rows: string[][], damage: (row: string[], k: number) => string[]): string[][] {
  const n = Math.round(rows.length * 0.002);
  if (n === 0) return rows;
  const out = [...rows];
  for (let k = n - 1; k >= 0; k--) {
    const at = Math.floor(((k + 0.5) * rows.length) / n);
    out.splice(at + 1, 0, damage(rows[at]!, k));
  }
  return out;
}

/** The row of a project's An Bord Pleanála case, as the case list shows it on `asOf`. */
function abpCaseRow(p: Project, r: Rng, asOf: number): string[] {
  const decided = p.decision !== null && p.decision <= asOf;
  return [
    caseId(p),
    description(p),
    `Townlands of ${p.name.split(' ')[0]}, ${placeName(r)} and ${placeName(r)}, Co. ${p.authority.county}`,
    fmt(p.lodged),
    decided ? (p.granted ? 'Grant' : 'Refuse') : 'Undecided',
    decided ? fmt(p.decision) : '',
    `https://www.pleanala.ie/en-ie/case/${p.caseNo}`,
    p.authority.councilName,
    caseCategory(p),
  ];
}

/** The row of a project in the results of the RESS round it won (held on `day`). */
function auctionRow(p: Project, r: Rng, round: string, day: number): string[] {
  return [
    round,
    `${round.replace('RESS ', 'R')}-${String(p.index).padStart(3, '0')}${p.vertical === 'wind' ? 'W' : 'S'}`,
    nameAsWritten(r, p.name),
    p.vertical === 'wind' ? 'Onshore Wind' : 'Solar',
    p.capacityMw.toFixed(2),
    nameVariant(r, p.developer),
    p.authority.county,
    r.chance(0.1) ? 'Yes' : 'No',
    (r.float(70, 125) * (day > isoToDay('2023-01-01') ? 1.05 : 1)).toFixed(2),
  ];
}

/** The row of a connected project in the grid operator's list of connections. */
function gridConnectionRow(p: Project, r: Rng): string[] {
  return [
    nameAsWritten(r, p.name),
    String(p.capacityMw),
    r.chance(0.3) ? `${fmt(p.connected)} 00:00:00` : fmt(p.connected),
    p.authority.county,
    'ROI',
    p.lat.toFixed(6),
    p.lon.toFixed(6),
    r.chance(0.78) ? String(p.voltageKv) : '',
    p.authority.county,
    TECH[p.vertical],
  ];
}

/** The row of a data centre in the tracker, its status as of `asOf`. */
function dataCentreRow(p: Project, r: Rng, asOf: number): string[] {
  const granted = p.granted && p.decision !== null && p.decision <= asOf;
  const status =
    p.connected !== null && p.connected <= asOf
      ? 'Operational'
      : granted && p.decision! + 200 <= asOf
        ? 'Under construction'
        : granted
          ? 'Planning granted'
          : 'In planning';
  const yy = dayToIso(p.lodged).slice(2, 4);
  return [
    nameAsWritten(r, p.name),
    nameVariant(r, p.developer),
    p.authority.councilName,
    `${yy}/${1000 + (p.caseNo % 9000)}`,
    p.authority.county,
    p.lat.toFixed(5),
    p.lon.toFixed(5),
    String(p.capacityMw),
    status,
    fmt(p.lodged),
    r.chance(0.7) ? String(p.voltageKv) : '',
    p.lodged >= isoToDay('2022-01-01') ? 'Yes' : 'No',
  ];
}

/** The rows of the four files, in file order, for the projects visible on `asOf`. */
interface InfraRows {
  abp: string[][];
  auction: string[][];
  grid: string[][];
  dc: string[][];
}

/** Each project's rows in the files it appears in on `asOf`, from one row-level stream per project. */
function infrastructureRows(projects: Project[], asOf: number): InfraRows {
  const visible = projects.filter((p) => p.lodged <= asOf || (p.connected !== null && p.connected <= asOf));
  const rows: InfraRows = { abp: [], auction: [], grid: [], dc: [] };
  for (const p of visible) {
    const r = recordRng(p.rowSeed, 'infra-row', p.index);
    if (p.hasCase && p.lodged <= asOf) rows.abp.push(abpCaseRow(p, r, asOf));
    if (p.auction && p.auction[1] <= asOf) rows.auction.push(auctionRow(p, r, p.auction[0], p.auction[1]));
    if (p.vertical !== 'data_centre' && p.connected !== null && p.connected <= asOf) {
      rows.grid.push(gridConnectionRow(p, r));
    }
    if (p.vertical === 'data_centre' && p.lodged <= asOf) rows.dc.push(dataCentreRow(p, r, asOf));
  }
  return rows;
}

/** One infrastructure file: its name, header, which rows it holds and how a damaged row of it looks. */
const INFRA_FILES: [string, readonly string[], keyof InfraRows, (row: string[], k: number) => string[]][] = [
  [
    'abp-cases.csv',
    ABP_CASE_COLUMNS,
    'abp',
    (row, k) => {
      const g = [...row];
      g[3] = k % 2 ? '2021-02-30' : 'TBC';
      return g;
    },
  ],
  [
    'ress-auction-results.csv',
    AUCTION_COLUMNS,
    'auction',
    (row) => {
      const g = [...row];
      g[2] = '';
      return g;
    },
  ],
  [
    'grid-connections.csv',
    GRID_CONNECTION_COLUMNS,
    'grid',
    (row, k) => {
      const g = [...row];
      if (k % 2) g[2] = '2019-13-01';
      else g[5] = 'n/a';
      return g;
    },
  ],
  [
    'data-centres.csv',
    DATA_CENTRE_COLUMNS,
    'dc',
    (row) => {
      const g = [...row];
      g[7] = 'tbc';
      return g;
    },
  ],
];

/** Write the four infrastructure files as of `asOf`. */
export function writeInfrastructure(projects: Project[], asOf: number, outDir: string): FileStats[] {
  const rows = infrastructureRows(projects, asOf);
  return INFRA_FILES.map(([file, header, key, damage]) => {
    const sink = new FileSink(`${outDir}/infrastructure/${file}`, { encoding: 'utf-8', eol: '\n' });
    sink.header(csvLine(header));
    for (const row of withBadRows(rows[key], damage)) sink.row(csvLine(row));
    return sink.close();
  });
}
