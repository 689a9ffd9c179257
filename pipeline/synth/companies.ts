/**
 * Synthetic CRO companies (construction trades, developers, energy and data-centre operators)
 * and their filings. The registry is built first and kept in memory (about 12,000 small objects
 * at default scale) because the other sources name these companies as applicants, builders,
 * auction winners and operators.
 */
import type { Authority } from '../reference/authorities.ts';
import { AUTHORITIES } from '../reference/authorities.ts';
import { csvLine } from '../lib/csv.ts';
import { CRO_COMPANY_COLUMNS, CRO_FILING_COLUMNS } from '../sources/formats.ts';
import { FileSink, dayToIso, isoToDay, type FileStats } from './output.ts';
import { Rng, Table, cumulative, evenlySpread, recordRng } from './rng.ts';
import {
  FORENAMES,
  PLACE_PREFIXES,
  SURNAMES,
  TOWNS,
  eircode,
  joinPlace,
  placeName,
  streetName,
  townOf,
} from './vocab.ts';

/** One generated company (static facts; week-dependent fields are derived when writing). */
export interface Company {
  index: number;
  num: number;
  name: string;
  nace: string;
  typeCode: string;
  type: string;
  status: 'Normal' | 'Dissolved' | 'Liquidation' | 'Strike Off Listed';
  regDay: number;
  statusDay: number;
  authority: Authority;
  address: [string, string, string, string];
  eircode: string;
}

/** The companies, with indexes by NACE code for drawing applicants and builders. */
export interface CompanyRegistry {
  companies: Company[];
  byNace: Map<string, Company[]>;
}

/** Default-scale number of companies. */
export const COMPANIES_DEFAULT = 12_000;

const NACE = new Table<string>([
  ['4120', 20],
  ['4211', 3],
  ['4311', 1.5],
  ['4312', 4],
  ['4321', 10],
  ['4322', 9],
  ['4329', 3],
  ['4332', 5],
  ['4333', 3],
  ['4391', 5],
  ['4399', 5],
  ['8130', 5],
  ['7111', 6],
  ['6810', 9],
  ['3511', 3.5],
  ['6311', 1.5],
  ['5510', 1.5],
  ['7112', 2.5],
  ['4110', 2],
  ['4673', 1],
]);

/** Construction-trade NACE codes (main contractors and subcontractors). */
export const BUILDER_NACE = [
  '4120',
  '4110',
  '4211',
  '4312',
  '4321',
  '4322',
  '4329',
  '4332',
  '4333',
  '4391',
  '4399',
  '4311',
];

const STATUS = new Table<Company['status']>([
  ['Normal', 80],
  ['Dissolved', 12],
  ['Strike Off Listed', 5],
  ['Liquidation', 3],
]);
const STATUS_CODE: Record<Company['status'], string> = {
  Normal: '1',
  Liquidation: '4',
  'Strike Off Listed': '7',
  Dissolved: '10',
};

const TYPES = new Table<[string, string, string]>([
  [['1', 'Private Company Limited by Shares', 'Limited'], 78],
  [['1', 'Private Company Limited by Shares', 'Ltd'], 4],
  [['7', 'Designated Activity Company', 'DAC'], 10],
  [['8', 'Company Limited by Guarantee', 'CLG'], 3],
  [['3', 'Public Limited Company', 'plc'], 1],
  [['11', 'Unlimited Company', 'Unlimited Company'], 2],
  [['7', 'Designated Activity Company', 'Designated Activity Company'], 2],
]);

const ADJ = [
  'Atlantic',
  'Greenfield',
  'Emerald',
  'Celtic',
  'Western',
  'Midland',
  'Northern',
  'Southern',
  'Eastern',
  'Summit',
  'Keystone',
  'Harbour',
  'Shannon',
  'Liffey',
  'Boyne',
  'Corrib',
  'Premier',
  'Apex',
  'Oakwood',
  'Silverline',
  'Clearwater',
  'Bluestone',
  'Redrock',
  'Granite',
  'Evergreen',
  'Brightwater',
  'Highfield',
  'Riverside',
];

/** Name stems per NACE; `S` = surname, `P` = place, `A` = adjective. */
const NAME_PATTERNS: Record<string, readonly string[]> = {
  '4120': [
    'S Construction',
    'S Builders',
    'S & Sons Building Contractors',
    'P Homes',
    'S Building Contractors',
    'A Construction',
    'S Brothers Construction',
    'P Building Services',
  ],
  '4110': ['P Developments', 'A Homes', 'S Developments', 'P Residential Developments'],
  '4211': ['S Civil Engineering', 'P Road Surfacing', 'A Civil Contractors', 'S Groundworks & Civils'],
  '4311': ['S Demolition', 'A Demolition & Dismantling', 'P Site Clearance'],
  '4312': ['S Plant Hire & Groundworks', 'P Excavations', 'S Site Development', 'A Earthworks'],
  '4321': [
    'S Electrical Contractors',
    'P Electrical Services',
    'A Solar Ireland',
    'S Electrical',
    'A EV Charging Solutions',
    'P Solar Installations',
  ],
  '4322': [
    'S Plumbing & Heating',
    'P Heat Pumps',
    'A Heating Solutions',
    'S Mechanical Services',
    'A Renewable Heating',
  ],
  '4329': ['S Insulation', 'P External Wall Insulation', 'A Insulation Services', 'A Energy Upgrades'],
  '4332': ['S Windows & Doors', 'P Joinery', 'A Glazing Systems', 'S Carpentry & Joinery'],
  '4333': ['S Flooring', 'P Tiling & Flooring', 'A Floor Solutions'],
  '4391': ['S Roofing', 'P Roofing & Cladding', 'A Roofing Contractors', 'S Slating & Roofing'],
  '4399': ['S Scaffolding', 'A Specialist Contracting', 'P Steel Erectors', 'S Concrete Pumping'],
  '8130': ['S Landscaping', 'P Garden Design', 'A Landscapes', 'S Paving & Landscaping'],
  '7111': ['S Architects', 'S S Architects', 'P Design Partnership', 'A Architecture'],
  '7112': ['S Consulting Engineers', 'A Engineering Consultants', 'P Engineering'],
  '6810': [
    'P Property Developments',
    'S Developments',
    'A Property Holdings',
    'P Estates',
    'A Real Estate Investments',
  ],
  '3511': [
    'P Wind Farm',
    'A Solar',
    'A Renewables',
    'P Energy Storage',
    'P Solar Farm',
    'A Wind Energy',
    'A Power Ireland',
  ],
  '6311': [
    'A Data Centres Ireland',
    'A Hosting Ireland',
    'A Cloud Services Ireland',
    'P Data Campus',
    'A Digital Infrastructure Ireland',
  ],
  '5510': ['P Hotel', 'P House Hotel', 'A Hospitality', 'P Lodge & Spa'],
  '4673': ['S Builders Providers', 'P Timber & Hardware', 'A Building Supplies'],
};

/** Trades of the companies that may carry their founder's full name. */
const FORENAME_TRADES: Record<string, readonly string[]> = {
  '4120': ['Construction', 'Builders', 'Building Contractors'],
  '4110': ['Developments', 'Homes'],
  '4391': ['Roofing'],
  '4321': ['Electrical Contractors'],
  '4322': ['Plumbing & Heating'],
  '8130': ['Landscaping'],
};

function buildName(r: Rng, nace: string, suffix: string, used: Set<string>): string {
  const patterns = NAME_PATTERNS[nace]!;
  for (let attempt = 0; attempt < 12; attempt++) {
    const pat = r.pick(patterns);
    let stem = pat
      .replace(/\bA\b/g, () => r.pick(ADJ))
      .replace(/\bP\b/g, () => (r.chance(0.6) ? placeName(r) : r.pick(Object.values(TOWNS).flat())));
    stem = stem.replace(/\bS\b/g, () => r.pick(SURNAMES));
    if (attempt >= 6) stem = `${stem} ${r.pick(['(Ireland)', 'Services', 'Group', `(${r.pick(Object.keys(TOWNS))})`])}`;
    if (attempt === 11) stem = `${stem} ${r.int(2, 99)}`;
    if (r.chance(0.06)) stem = `The ${stem}`;
    const name = `${stem} ${suffix}`;
    const key = name.toLowerCase();
    if (!used.has(key)) {
      used.add(key);
      return name;
    }
  }
  // practically unreachable: make it unique by construction
  let n = 2;
  const base = `${r.pick(SURNAMES)} ${joinPlace(r.pick(PLACE_PREFIXES), 'more')}`;
  while (used.has(`${base} ${n} ${suffix}`.toLowerCase())) n++;
  used.add(`${base} ${n} ${suffix}`.toLowerCase());
  return `${base} ${n} ${suffix}`;
}

const AUTH_CUM = cumulative(AUTHORITIES.map((a) => a.weight));
const REG_FIRST = isoToDay('1964-01-01');
const REG_LAST = isoToDay('2026-09-30');

/**
 * Build the company registry for a scale. Company numbers grow with registration date, as the
 * CRO issues them; every NACE code of the table is present even at the smallest scale.
 */
export function buildCompanies(seed: number, scale: number): CompanyRegistry {
  const n = Math.max(NACE.values.length + 20, Math.round(COMPANIES_DEFAULT * scale));
  const used = new Set<string>();
  const companies: Company[] = [];
  const byNace = new Map<string, Company[]>();
  for (let i = 0; i < n; i++) {
    const r = recordRng(seed, 'company', i);
    const nace = i < NACE.values.length ? NACE.values[i]! : NACE.draw(r);
    const [typeCode, type, suffix0] = TYPES.draw(r);
    const suffix = nace === '3511' && r.chance(0.5) ? 'DAC' : suffix0;
    // a company whose name holds a forename ("Seán Murphy Construction Limited"): a hard case of
    // the name rule, drawn from a stream of its own
    const hard = recordRng(seed, 'company-forename', i);
    const trades = FORENAME_TRADES[nace];
    const forenamed =
      trades && hard.chance(0.08)
        ? `${hard.pick(FORENAMES)} ${hard.pick(SURNAMES)} ${hard.pick(trades)} ${suffix}`
        : null;
    const name =
      forenamed && !used.has(forenamed.toLowerCase())
        ? (used.add(forenamed.toLowerCase()), forenamed)
        : buildName(r, nace, suffix, used);
    // registration skewed recent: sqrt spreads more companies into later years
    const t = Math.sqrt((i + r.next()) / n);
    const regDay = Math.round(REG_FIRST + t * (REG_LAST - REG_FIRST));
    const num = 10_000 + Math.floor(((i + 0.5) / n) * 770_000) + r.int(0, Math.max(0, Math.floor(770_000 / n) - 1));
    const status = STATUS.draw(r);
    const statusDay = status === 'Normal' ? regDay : r.int(Math.min(regDay + 400, REG_LAST), REG_LAST);
    const authority = AUTHORITIES[r.weighted(AUTH_CUM)]!;
    const town = townOf(r, authority);
    const line1 = r.chance(0.4)
      ? `Unit ${r.int(1, 40)}`
      : r.chance(0.5)
        ? `${r.int(1, 120)} ${streetName(r)}`
        : `${placeName(r)} House`;
    const line2 = r.chance(0.5) ? `${placeName(r)} Business Park` : streetName(r);
    const co =
      authority.county === 'Dublin' ? (r.chance(0.5) ? 'Dublin' : `Dublin ${r.int(1, 24)}`) : `Co. ${authority.county}`;
    const c: Company = {
      index: i,
      num,
      name,
      nace,
      typeCode,
      type,
      status,
      regDay,
      statusDay,
      authority,
      address: [line1, line2, town, co],
      eircode: r.chance(0.7) ? eircode(r, r.pick(authority.routingKeys)) : '',
    };
    companies.push(c);
    let list = byNace.get(nace);
    if (!list) byNace.set(nace, (list = []));
    list.push(c);
  }
  return { companies, byNace };
}

/** Draw a company with one of the NACE codes (falls back to any company). */
export function pickCompany(reg: CompanyRegistry, r: Rng, naces: readonly string[]): Company {
  const lists = naces.map((c) => reg.byNace.get(c)).filter((l): l is Company[] => !!l && l.length > 0);
  if (lists.length === 0) return r.pick(reg.companies);
  let total = 0;
  for (const l of lists) total += l.length;
  let k = Math.floor(r.next() * total);
  for (const l of lists) {
    if (k < l.length) return l[k]!;
    k -= l.length;
  }
  return lists[0]![0]!;
}

/**
 * Write a company name the way other publishers retype it: `Ltd` for `Limited`, upper case,
 * `The` dropped, doubled spaces. Returns the name unchanged most of the time.
 */
export function nameVariant(r: Rng, name: string): string {
  const x = r.next();
  if (x < 0.6) return name;
  if (x < 0.72) return name.replace(/\bLimited$/, 'Ltd').replace(/\bLtd$/, 'Ltd.');
  if (x < 0.84) return name.toUpperCase();
  if (x < 0.92) return name.replace(/^The /, '').replace(/ Limited$/, ' Ltd');
  return name.replace(' ', '  ');
}

interface Filing {
  type: string;
  desc: string;
  received: number;
  effective: number;
}

const OTHER_FILINGS: readonly [string, string][] = [
  ['B10', 'Change in Directors or Secretary or in their Particulars'],
  ['B2', 'Change of Registered Office Address'],
  ['G1', 'Special Resolution'],
  ['B1C', 'Annual Return with Change of Annual Return Date'],
  ['B73', 'Notification of Change of Registered Office Address'],
  ['E1', 'Notice of Appointment of Liquidator'],
];

/** The filings of a company, all dates (future ones included; the writer filters). */
function companyFilings(seed: number, c: Company): Filing[] {
  const r = recordRng(seed, 'filings', c.index);
  const out: Filing[] = [];
  const endDay = c.status === 'Normal' ? Number.MAX_SAFE_INTEGER : c.statusDay;
  if (c.regDay >= isoToDay('2016-01-01')) {
    out.push({
      type: 'A1',
      desc: 'Incorporation of a Company',
      received: c.regDay - r.int(3, 20),
      effective: c.regDay,
    });
  }
  // annual returns each year on the anniversary (ARD), for the last few years and the next ones
  const ardOffset = ((c.regDay % 365) + 365) % 365;
  for (let y = 2021; y <= 2029; y++) {
    const ard = isoToDay(`${y}-01-01`) + ardOffset;
    if (ard < c.regDay + 180 || ard >= endDay) continue;
    if (!r.chance(0.92)) continue;
    out.push({ type: 'B1', desc: 'Annual Return', received: ard + r.int(0, 56), effective: ard });
  }
  const others = r.int(0, 2);
  for (let k = 0; k < others; k++) {
    const [type, desc] = r.pick(OTHER_FILINGS.slice(0, 4));
    const d = r.int(Math.max(c.regDay, isoToDay('2015-01-01')), isoToDay('2028-12-31'));
    if (d >= endDay) continue;
    out.push({ type, desc, received: d + r.int(0, 14), effective: d });
  }
  if (c.status === 'Liquidation')
    out.push({ type: 'E1', desc: OTHER_FILINGS[5]![1], received: c.statusDay + 3, effective: c.statusDay });
  if (c.status === 'Strike Off Listed' || c.status === 'Dissolved') {
    out.push({
      type: 'H15',
      desc: 'Notice of Intention to Strike Off',
      received: c.statusDay - 90,
      effective: c.statusDay - 90,
    });
  }
  return out;
}

/** Write `companies/cro-companies.csv` and `companies/cro-filings.csv` as of `asOfDay`. */
export function writeCompanies(reg: CompanyRegistry, seed: number, asOfDay: number, outDir: string): FileStats[] {
  const comp = new FileSink(`${outDir}/companies/cro-companies.csv`, { encoding: 'utf-8', eol: '\n' });
  const fil = new FileSink(`${outDir}/companies/cro-filings.csv`, { encoding: 'utf-8', eol: '\n' });
  comp.header(csvLine(CRO_COMPANY_COLUMNS));
  fil.header(csvLine(CRO_FILING_COLUMNS));
  for (const c of reg.companies) {
    if (c.regDay > asOfDay) continue;
    const filings = companyFilings(seed, c)
      .filter((f) => f.received <= asOfDay)
      .sort((a, b) => a.received - b.received);
    const r = recordRng(seed, 'company-row', c.index);
    let lastAr: number | null = null;
    for (const f of filings) if (f.type === 'B1' || f.type === 'B1C') lastAr = f.effective;
    const nard = c.status === 'Normal' ? (lastAr === null ? c.regDay + 182 : lastAr + 365) : null;
    const lastAccounts = lastAr === null ? null : lastAr - r.int(150, 270);
    const nameEff = r.chance(0.1) ? c.regDay + r.int(100, 3000) : c.regDay;
    const row = [
      String(c.num),
      c.name,
      STATUS_CODE[c.status],
      `${c.status} `,
      c.typeCode,
      c.type,
      dayToIso(c.regDay),
      lastAr === null ? '' : dayToIso(lastAr),
      ...c.address,
      c.status === 'Dissolved' ? dayToIso(c.statusDay) : '',
      nard === null ? '' : dayToIso(nard),
      lastAccounts === null ? '' : dayToIso(lastAccounts),
      dayToIso(c.statusDay),
      `${c.nace}.0`,
      c.eircode,
      dayToIso(Math.min(nameEff, asOfDay)),
      dayToIso(c.regDay),
      r.chance(0.3) ? c.nace : '',
    ];
    comp.row(csvLine(row));
    if (evenlySpread(c.index, 0.001)) {
      // a damaged extra row: missing number, impossible date or non-numeric NACE
      const bad = [...row];
      const kind = r.int(0, 2);
      if (kind === 0) bad[0] = '';
      else if (kind === 1) {
        bad[0] = String(c.num + 1_000_000);
        bad[6] = '2019-02-30';
      } else {
        bad[0] = String(c.num + 1_000_000);
        bad[16] = 'n/a';
      }
      comp.row(csvLine(bad));
    }
    filings.forEach((f, k) => {
      fil.row(
        csvLine([
          String(c.num),
          `${c.num}${String(k).padStart(3, '0')}`,
          f.type,
          f.desc,
          dayToIso(f.received),
          dayToIso(f.effective),
        ]),
      );
    });
    if (evenlySpread(c.index, 0.005, 97) && filings.length > 0) {
      const f = filings[0]!;
      fil.row(
        csvLine(
          r.chance(0.5)
            ? ['', `${c.num}999`, f.type, f.desc, dayToIso(f.received), dayToIso(f.effective)]
            : [String(c.num), `${c.num}998`, f.type, f.desc, '31/31/2024', dayToIso(f.effective)],
        ),
      );
    }
  }
  return [comp.close(), fil.close()];
}
