/**
 * Use classes of planning applications and their description templates: one-off houses,
 * extensions (the bulk), housing schemes, apartments, large-scale residential, commercial,
 * industrial, data centres, agricultural, hotels, schools, healthcare, community, change of use
 * and the trades suppliers buy leads for (solar PV, roofing, landscaping, windows, heat pumps,
 * insulation, EV chargers, shopfronts, signage, telecom masts).
 */
import type { Rng } from './rng.ts';
import { Table } from './rng.ts';

export type UseClassKey =
  | 'extension'
  | 'one_off'
  | 'housing'
  | 'apartments'
  | 'lrd'
  | 'commercial'
  | 'industrial'
  | 'data_centre'
  | 'agricultural'
  | 'hotel'
  | 'school'
  | 'healthcare'
  | 'community'
  | 'change_of_use'
  | 'solar'
  | 'roofing'
  | 'landscaping'
  | 'windows'
  | 'heat_pump'
  | 'insulation'
  | 'ev_charger'
  | 'shopfront'
  | 'signage'
  | 'telecom';

/** What a description template produces besides the text. */
export interface Development {
  cls: UseClassKey;
  description: string;
  /** The national export's ApplicationType, consistent with the text and `kind`. */
  appType: string;
  /** What kind of application it is (ground truth, see `WorksKind`). */
  kind: WorksKind;
  landUse: string;
  units: number | null;
  floorM2: number | null;
  siteHa: number;
  oneOff: boolean;
  /** Probability that the applicant is an organisation, and which NACE codes to draw from. */
  orgShare: number;
  orgNace: readonly string[];
  /** Non-CRO organisation applicants (schools, HSE …) used instead of a company when set. */
  publicBody: string | null;
  demolition: boolean;
  /** BCMS classification used by commencement notices. */
  cnProjectType: string;
  cnActivity: string;
  cnSubGroup: string;
}

/**
 * The kind of application: new works (permission, or permission and retention together),
 * retention of works already carried out, extension of the duration of an earlier permission,
 * amendments to a permitted development, outline permission, or a section 5 declaration of
 * exempted development (Dublin City's `EXPP`). Only new works and outline permissions have work
 * still to sell.
 */
export type WorksKind = 'new_works' | 'retention' | 'extension_of_duration' | 'amendment' | 'outline' | 'declaration';

/** Share of applications by use class at default settings (sums to 100). */
export const USE_CLASSES = new Table<UseClassKey>([
  ['extension', 40.13],
  ['one_off', 13],
  ['housing', 4.3],
  ['apartments', 1.6],
  ['lrd', 0.35],
  ['commercial', 4.5],
  ['industrial', 2.5],
  ['data_centre', 0.12],
  ['agricultural', 5.5],
  ['hotel', 0.4],
  ['school', 0.6],
  ['healthcare', 0.5],
  ['community', 0.7],
  ['change_of_use', 2.8],
  ['solar', 4.2],
  ['roofing', 3.2],
  ['landscaping', 4.5],
  ['windows', 2.4],
  ['heat_pump', 1.6],
  ['insulation', 1.8],
  ['ev_charger', 0.8],
  ['shopfront', 1.6],
  ['signage', 2.0],
  ['telecom', 0.9],
]);

interface Ctx {
  r: Rng;
  town: string;
  place: string;
  estate: string;
  street: string;
  /** The planning authority's name: its register's phrasing (`phrasingOf`) and urban or rural one-off houses. */
  authority: string;
}

const pick = <T>(r: Rng, xs: readonly T[]): T => r.pick(xs);
const opt = (r: Rng, p: number, s: string): string => (r.chance(p) ? s : '');

function base(cls: UseClassKey, description: string, o: Partial<Development>): Development {
  return {
    cls,
    description,
    appType: 'PERMISSION',
    kind: 'new_works',
    landUse: 'RES',
    units: null,
    floorM2: null,
    siteHa: 0.05,
    oneOff: false,
    orgShare: 0.12,
    orgNace: ['6810', '4120'],
    publicBody: null,
    demolition: /\bdemoli/i.test(description),
    cnProjectType: 'Residential',
    cnActivity: 'Extension',
    cnSubGroup: 'Extension',
    ...o,
  };
}

/** Authorities whose one-off houses are infill and mews houses on serviced sites. */
const URBAN = new Set(['Dublin City', 'Dún Laoghaire-Rathdown', 'Cork City', 'Galway City']);

const round1 = (x: number): number => Math.round(x * 10) / 10;
const roundHa = (x: number): number => Math.round(x * 10000) / 10000;

function extension(c: Ctx): Development {
  const r = c.r;
  const storey = pick(r, [
    'single storey',
    'two storey',
    'part single storey, part two storey',
    'single-storey',
    'first floor',
  ]);
  const where = pick(r, ['rear', 'side', 'front', 'rear and side']);
  const floor = round1(r.float(12, 95));
  const x = r.next();
  let d: string;
  let appType = 'PERMISSION';
  if (x < 0.42) {
    d = `Permission for ${storey} extension to the ${where} of existing dwelling${pick(r, [
      ', together with internal alterations',
      ' and associated site works',
      ' including new rooflights',
      ', attic conversion with dormer window to rear',
      ' and all associated site works',
      ' with kitchen/dining area',
      ', widening of vehicular entrance',
      '',
    ])}${opt(r, 0.4, ' and all ancillary site works')}`;
  } else if (x < 0.48) {
    d = `Permission to demolish existing ${pick(r, ['conservatory', 'single storey rear extension', 'garage', 'lean-to structure', 'outbuilding'])} and construct a ${storey} extension to ${where} with ${pick(r, ['kitchen/dining room', 'family room', 'bedroom and en-suite', 'utility and WC', 'sunroom'])}, ${pick(r, ['internal modifications', 'elevational changes', 'new rooflights'])} and associated site works`;
  } else if (x < 0.7) {
    appType = 'RETENTION';
    d = `Retention permission for ${pick(r, ['garden room', 'single storey extension', 'domestic shed', 'front porch', 'decking area', 'converted garage', 'home office'])} to ${where} of dwelling${opt(r, 0.5, ' and permission for ' + pick(r, ['alterations to front elevation', 'a new porch', 'a single storey rear extension']))}`;
  } else if (x < 0.85) {
    d = `Permission for renovation and refurbishment of existing dwelling including ${pick(r, ['new windows', 're-roofing', 'internal alterations', 'replacement of front door', 'new septic tank'])} and ${pick(r, ['a single storey extension to rear', 'a new porch', 'a two storey extension to side', 'conversion of attached garage to living space'])}`;
  } else {
    d = `Permission for a new kitchen extension to the ${where} of the existing ${pick(r, ['semi-detached', 'terraced', 'detached', 'end of terrace'])} house, ${pick(r, ['rooflights', 'a new patio door', 'alterations to rear elevation'])} and associated site works`;
  }
  if (/retention permission for .* and permission/i.test(d)) appType = 'PERMISSION AND RETENTION';
  return base('extension', d, { appType, floorM2: floor, siteHa: roundHa(r.float(0.02, 0.2)), units: null });
}

function oneOff(c: Ctx): Development {
  const r = c.r;
  const x = r.next();
  let d: string;
  let appType = 'PERMISSION';
  const style = pick(r, [
    'single storey',
    'dormer style',
    'two storey',
    'storey and a half',
    'split-level',
    'part single, part two storey',
  ]);
  const wwt = pick(r, [
    'proprietary wastewater treatment system and percolation area',
    'connection to public sewer',
    'wastewater treatment system and polishing filter',
    'packaged wastewater treatment plant and soil polishing filter',
  ]);
  if (URBAN.has(c.authority)) {
    d = `Permission for ${pick(r, [
      `construction of a ${pick(r, ['2-storey', 'two storey', '3 storey'])}, ${pick(r, ['2', '3'])} bedroom mews dwelling to rear with access from rear lane`,
      `a detached ${pick(r, ['dormer bungalow', 'two storey dwelling', 'single storey dwelling'])} to side of existing house with new vehicular entrance`,
      `subdivision of site and construction of a ${pick(r, ['2 storey', 'single storey'])} infill dwelling with off-street parking`,
      `demolition of existing garage and construction of a ${pick(r, ['2 storey', '3 storey'])} end of terrace house`,
    ])}${opt(r, 0.5, ', boundary walls and all associated site works')}`;
  } else if (x < 0.6) {
    d = `Permission for construction of a ${style} dwelling house, ${opt(r, 0.6, 'detached domestic garage, ')}${opt(r, 0.7, 'new vehicular entrance, ')}${wwt} and all associated site works`;
  } else if (x < 0.75) {
    d = `Permission to construct a new ${style} dwelling, domestic garage and ${wwt}, together with landscaping and all ancillary site works`;
  } else if (x < 0.92) {
    appType = 'OUTLINE PERMISSION';
    d = `Outline permission for a ${style} dwelling house, ${wwt}, new entrance and all associated site works`;
  } else {
    d = `Permission to demolish existing ${pick(r, ['derelict cottage', 'single storey dwelling', 'farmhouse'])} and construct a replacement ${style} dwelling house with ${wwt} and associated site works`;
  }
  const floor = round1(URBAN.has(c.authority) ? r.float(85, 190) : r.float(130, 330));
  return base('one_off', d, {
    appType,
    floorM2: floor,
    siteHa: roundHa(r.float(0.2, 1.4)),
    units: 1,
    oneOff: true,
    orgShare: 0.03,
    orgNace: ['4120'],
    cnActivity: 'New Build',
    cnSubGroup: 'Single Dwelling',
  });
}

function housing(c: Ctx): Development {
  const r = c.r;
  const n = r.chance(0.7) ? r.int(3, 30) : r.int(31, 99);
  const a = Math.max(1, Math.round(n * r.float(0.3, 0.7)));
  const b = n - a;
  const d = `Permission for a residential development of ${n} no. dwellings at ${c.estate} comprising ${a} no. ${pick(r, ['3', '4', '3 and 4'])}-bed semi-detached houses${b > 0 ? `, ${b} no. ${pick(r, ['2', '3'])}-bed terraced houses` : ''}, new vehicular access from ${c.street}, public open space, landscaping, boundary treatments, SuDS drainage and all associated site development works`;
  return base('housing', d, {
    units: n,
    floorM2: round1(n * r.float(95, 130)),
    siteHa: roundHa(n * r.float(0.025, 0.05)),
    orgShare: 0.88,
    orgNace: ['6810', '4110', '4120'],
    cnActivity: 'New Build',
    cnSubGroup: 'Multiple Dwellings',
  });
}

function apartments(c: Ctx): Development {
  const r = c.r;
  const n = r.int(6, 99);
  const one = Math.round(n * r.float(0.1, 0.4));
  const three = Math.round(n * r.float(0, 0.15));
  const two = n - one - three;
  const d = `Permission for the construction of a ${r.int(3, 7)}-storey apartment building comprising ${n} no. apartments (${one} no. 1-bed, ${two} no. 2-bed, ${three} no. 3-bed) with ground floor ${pick(r, ['retail unit', 'creche', 'residential amenity space', 'café'])}, ${pick(r, ['basement car parking', 'surface car parking', 'undercroft parking'])}, bicycle storage, bin stores, landscaping and all associated site works`;
  return base('apartments', d, {
    units: n,
    floorM2: round1(n * r.float(65, 90)),
    siteHa: roundHa(n * r.float(0.006, 0.015)),
    orgShare: 0.92,
    orgNace: ['6810', '4110', '4120'],
    cnActivity: 'New Build',
    cnSubGroup: 'Apartments',
    landUse: 'RES',
  });
}

function lrd(c: Ctx): Development {
  const r = c.r;
  const n = r.chance(0.8) ? r.int(100, 320) : r.int(321, 650);
  const houses = r.chance(0.5) ? Math.round(n * r.float(0.2, 0.6)) : 0;
  const apts = n - houses;
  const blocks = Math.max(1, Math.round(apts / r.int(40, 90)));
  const lo = r.int(3, 5);
  const d = `Large-scale Residential Development (LRD) at ${c.estate}, ${c.town}: construction of ${n} no. residential units${houses > 0 ? ` (comprising ${houses} no. houses and ${apts} no. apartments in ${blocks} no. blocks ranging from ${lo} to ${lo + r.int(1, 6)} storeys)` : ` in ${blocks} no. apartment blocks ranging from ${lo} to ${lo + r.int(1, 8)} storeys`}, creche, residential amenity facilities, ${r.int(n / 2, n)} no. car parking spaces, ${n * 2} no. bicycle spaces, public open space and all associated site and infrastructural works`;
  return base('lrd', d, {
    appType: 'LARGE-SCALE RESIDENTIAL DEVELOPMENT',
    units: n,
    floorM2: round1(n * r.float(75, 100)),
    siteHa: roundHa(n * r.float(0.004, 0.02)),
    orgShare: 1,
    orgNace: ['6810', '4110'],
    cnActivity: 'New Build',
    cnSubGroup: 'Multiple Dwellings',
  });
}

function commercial(c: Ctx): Development {
  const r = c.r;
  const floor = round1(r.chance(0.8) ? r.float(150, 2500) : r.float(2500, 25000));
  const x = r.next();
  let d: string;
  if (x < 0.3)
    d = `Permission for construction of a ${r.int(2, 8)}-storey office building (${Math.round(floor)} sq.m gross floor area) with ${r.int(10, 200)} no. car parking spaces, bicycle parking, landscaping and associated site works`;
  else if (x < 0.5)
    d = `Permission for a discount foodstore (${Math.round(floor)} sq.m gross floor area, ${Math.round(floor * 0.65)} sq.m net retail area) including off-licence sales area, signage, ${r.int(60, 160)} no. car parking spaces and all associated site works`;
  else if (x < 0.62)
    d = `Permission for a petrol filling station with convenience shop (${Math.round(floor)} sq.m), deli, canopy, forecourt, underground fuel tanks and associated site works`;
  else if (x < 0.8)
    d = `Permission for alterations and extension to existing ${pick(r, ['retail unit', 'supermarket', 'shopping centre', 'office building', 'car showroom'])} (${Math.round(floor)} sq.m) including new entrance and associated works`;
  else
    d = `Permission for a ${pick(r, ['mixed-use development', 'neighbourhood centre'])} comprising ${r.int(2, 8)} no. retail/commercial units, ${r.int(2, 20)} no. apartments at upper floors, car parking and associated site works`;
  const mixed = /apartments/.test(d);
  return base('commercial', d, {
    landUse: mixed ? 'MIX' : 'COM',
    floorM2: floor,
    siteHa: roundHa(floor / r.float(3000, 9000)),
    orgShare: 0.85,
    orgNace: ['6810', '4110', '4120', '4673'],
    units: mixed ? Number(/(\d+) no\. apartments/.exec(d)![1]) : null,
    cnProjectType: mixed ? 'Mixed Use' : 'Non-Residential',
    cnActivity: x < 0.62 ? 'New Build' : 'Extension',
    cnSubGroup: 'Commercial',
  });
}

function industrial(c: Ctx): Development {
  const r = c.r;
  const floor = round1(r.chance(0.75) ? r.float(300, 6000) : r.float(6000, 60000));
  const kind = pick(r, [
    'logistics warehouse',
    'light industrial unit',
    'manufacturing facility',
    'distribution centre',
    'warehouse and ancillary office',
    'cold storage facility',
    'enterprise units',
  ]);
  const d = `Permission for construction of a ${kind} (${Math.round(floor)} sq.m) with ancillary offices, ${r.int(2, 40)} no. HGV loading docks, yard, ${r.int(20, 300)} no. car parking spaces, ${pick(r, ['roof-mounted solar PV panels', 'sprinkler tank and pump house', 'ESB substation', 'boundary fencing'])} and all associated site works${opt(r, 0.15, ` at ${c.place} Business Park`)}`;
  return base('industrial', d, {
    landUse: 'IND',
    floorM2: floor,
    siteHa: roundHa(floor / r.float(3000, 6000)),
    orgShare: 0.95,
    orgNace: ['6810', '4120', '4110', '4673'],
    cnProjectType: 'Non-Residential',
    cnActivity: 'New Build',
    cnSubGroup: 'Industrial',
  });
}

function dataCentre(c: Ctx): Development {
  const r = c.r;
  const k = r.int(1, 4);
  const floor = round1(k * r.float(8000, 25000));
  const mw = round1(k * r.float(12, 40));
  const d = `Permission for a 10-year planning permission for the construction of a data centre ${k > 1 ? 'campus ' : ''}comprising ${k} no. ${pick(r, ['two-storey', 'three-storey'])} data centre building${k > 1 ? 's' : ''} (total ${Math.round(floor)} sq.m) with a total IT load of ${mw} MW, ${pick(r, ['110kV substation', 'gas-fired generation plant', '38kV substation', 'on-site energy centre'])}, ${r.int(8, 60)} no. backup diesel generators with flues, water storage tanks, security hut and all associated site works`;
  return base('data_centre', d, {
    landUse: 'IND',
    floorM2: floor,
    siteHa: roundHa(r.float(4, 40)),
    orgShare: 1,
    orgNace: ['6311'],
    cnProjectType: 'Non-Residential',
    cnActivity: 'New Build',
    cnSubGroup: 'Data Centre',
  });
}

function agricultural(c: Ctx): Development {
  const r = c.r;
  const kind = pick(r, [
    'slatted cattle shed',
    'loose bedded straw shed',
    'general purpose agricultural store',
    'calf shed',
    'dairy parlour and collecting yard',
    'machinery shed',
    'sheep handling shed',
    'silage pit',
  ]);
  const floor = round1(r.float(120, 1400));
  const d = `Permission for construction of a ${kind}${opt(r, 0.5, ' with underground slurry storage tank')}${opt(r, 0.3, ', soiled water tank')} and all associated site works on existing farm${opt(r, 0.2, ` at ${c.place}`)}`;
  return base('agricultural', d, {
    landUse: 'AGR',
    floorM2: floor,
    siteHa: roundHa(r.float(0.1, 2)),
    orgShare: 0.04,
    orgNace: ['6810'],
    cnProjectType: 'Non-Residential',
    cnActivity: 'New Build',
    cnSubGroup: 'Agricultural',
  });
}

function hotel(c: Ctx): Development {
  const r = c.r;
  const beds = r.int(30, 220);
  const d = r.chance(0.6)
    ? `Permission for a ${r.int(3, 7)}-storey ${beds}-bedroom hotel with bar, restaurant, function room, ${pick(r, ['leisure centre', 'spa', 'conference facilities'])}, car parking and associated site works`
    : `Permission for extension to existing ${c.place} Hotel comprising ${r.int(10, 60)} no. additional bedrooms, extended function room and associated site works`;
  return base('hotel', d, {
    landUse: 'COM',
    floorM2: round1(beds * r.float(40, 70)),
    siteHa: roundHa(r.float(0.3, 4)),
    orgShare: 1,
    orgNace: ['5510', '6810'],
    cnProjectType: 'Non-Residential',
    cnActivity: /extension/.test(d) ? 'Extension' : 'New Build',
    cnSubGroup: 'Hotel',
  });
}

function school(c: Ctx): Development {
  const r = c.r;
  const level = pick(r, ['primary', 'post-primary', 'special']);
  const d = r.chance(0.55)
    ? `Permission for a new ${r.int(8, 32)}-classroom ${level} school with ${pick(r, ['general purpose hall', 'PE hall', 'special education needs base'])}, ball courts, car and bicycle parking and all associated site works`
    : `Permission for ${r.int(2, 8)} no. additional classrooms, ${pick(r, ['special education needs unit', 'new staff room', 'extended PE hall'])} and associated site works at existing school`;
  return base('school', d, {
    landUse: 'EDU',
    floorM2: round1(r.float(300, 9000)),
    siteHa: roundHa(r.float(0.5, 6)),
    orgShare: 1,
    orgNace: [],
    publicBody: r.chance(0.5)
      ? 'The Minister for Education'
      : `Board of Management of Scoil ${pick(r, ['Mhuire', 'Bhríde', 'Naomh Pádraig', 'Eoin', 'Chiaráin'])}`,
    cnProjectType: 'Non-Residential',
    cnActivity: /additional/.test(d) ? 'Extension' : 'New Build',
    cnSubGroup: 'Education',
  });
}

function healthcare(c: Ctx): Development {
  const r = c.r;
  const d = pick(r, [
    `Permission for a two storey primary care centre with GP surgeries, pharmacy, physiotherapy rooms, car parking and associated site works`,
    `Permission for a ${r.int(40, 140)}-bed nursing home with associated day care facilities, car parking and site works`,
    `Permission for extension to existing nursing home comprising ${r.int(10, 50)} no. additional bedrooms and associated works`,
    `Permission for change of use of ground floor to medical centre and pharmacy with associated signage`,
  ]);
  return base('healthcare', d, {
    landUse: 'HLT',
    floorM2: round1(r.float(250, 6000)),
    siteHa: roundHa(r.float(0.2, 3)),
    orgShare: 0.95,
    orgNace: ['6810', '4110'],
    publicBody: r.chance(0.3) ? 'Health Service Executive' : null,
    cnProjectType: 'Non-Residential',
    cnActivity: 'New Build',
    cnSubGroup: 'Healthcare',
  });
}

function community(c: Ctx): Development {
  const r = c.r;
  const club = `${c.place} ${pick(r, ['GAA Club', 'AFC', 'Rugby Football Club', 'Community Council', 'Tidy Towns Association'])}`;
  const d = pick(r, [
    `Permission for a new clubhouse with changing rooms, meeting room, gym and ${pick(r, ['floodlighting to pitch', 'ball wall', 'walking track'])} and associated site works`,
    `Permission for a community centre with multi-purpose hall, kitchen, meeting rooms, car parking and associated site works`,
    `Permission for extension to existing parish church and new car park`,
    `Permission for a public playground, skate park and associated landscaping`,
  ]);
  return base('community', d, {
    landUse: 'CMY',
    floorM2: round1(r.float(80, 1500)),
    siteHa: roundHa(r.float(0.1, 3)),
    orgShare: 1,
    orgNace: [],
    publicBody: club,
    cnProjectType: 'Non-Residential',
    cnActivity: 'New Build',
    cnSubGroup: 'Community',
  });
}

function changeOfUse(c: Ctx): Development {
  const r = c.r;
  const from = pick(r, ['retail', 'office', 'bank', 'public house', 'commercial', 'storage']);
  const toRes = r.chance(0.5);
  const n = toRes ? r.int(1, 12) : null;
  const to = toRes
    ? `residential use (${n} no. apartment${n === 1 ? '' : 's'})`
    : pick(
        r,
        ['café', 'medical practice', 'creche', 'office', 'gym', 'restaurant and takeaway'].filter((t) => t !== from),
      );
  const d = `Permission for change of use of ${pick(r, ['ground floor', 'first and second floors', 'existing building', 'vacant premises'])} from ${from} to ${to}, ${pick(r, ['internal alterations', 'new shopfront', 'elevational changes', 'new rear access'])} and associated works${opt(r, 0.2, ` at ${r.int(1, 80)} ${c.street}`)}`;
  return base('change_of_use', d, {
    landUse: toRes ? 'RES' : 'COM',
    units: n,
    floorM2: round1(r.float(50, 900)),
    siteHa: roundHa(r.float(0.01, 0.2)),
    orgShare: 0.55,
    orgNace: ['6810', '4110'],
    cnProjectType: toRes ? 'Residential' : 'Non-Residential',
    cnActivity: 'Material Change of Use',
    cnSubGroup: toRes ? 'Apartments' : 'Commercial',
  });
}

/**
 * The works of a small trade job: the description and, where it is not a domestic alteration
 * (20 % organisations, residential, material alteration), who applies and how BCMS files it.
 */
interface TradeWorks {
  d: string;
  orgShare?: number;
  orgNace?: readonly string[];
  landUse?: string;
  floor?: number | null;
  projectType?: string;
  activity?: string;
}

/** Solar panels: on a house roof (60 %), on a commercial roof, or ground-mounted on a farm. */
function solarWorks(r: Rng): TradeWorks {
  // sizes vary: panels (0.4–0.45 kWp each), kWp, array area
  const x = r.next();
  if (x < 0.6) {
    const n = r.int(6, 30);
    const kwp = round1(n * r.float(0.4, 0.45));
    return {
      d: `Permission for installation of ${r.chance(0.55) ? `${n} no. solar PV panels` : r.chance(0.5) ? `a ${kwp}kWp solar PV array (${n} no. panels)` : 'solar PV panels'} on the ${pick(r, ['south-facing', 'rear', 'front', 'side'])} roof of existing dwelling${opt(r, 0.3, ' and ground-mounted array in rear garden')}`,
    };
  }
  if (x < 0.84) {
    const m2 = r.chance(0.75) ? Math.round(Math.exp(r.float(Math.log(150), Math.log(8000)))) : null;
    const kwp = m2 === null ? Math.round(r.float(30, 990)) : Math.round(m2 * r.float(0.18, 0.22));
    return {
      d: `Permission for a roof-mounted solar PV array (${m2 !== null && r.chance(0.6) ? `approx. ${m2} sq.m` : `${kwp} kWp`}) on existing ${pick(r, ['warehouse', 'factory', 'agricultural shed', 'school building', 'retail unit'])} with associated inverters and cabling`,
      orgShare: 0.7,
      orgNace: ['6810', '3511', '4120'],
      landUse: 'COM',
      projectType: 'Non-Residential',
    };
  }
  const n = Math.round(Math.exp(r.float(Math.log(50), Math.log(4000))));
  return {
    d: `Permission for a ground-mounted solar PV array of ${n} no. panels${opt(r, 0.4, ` (${round1((n * 0.45) / 1000)} MWp)`)} on ${pick(r, ['farm', 'lands'])} with inverter station and security fencing`,
    orgShare: 0.3,
    orgNace: ['3511'],
    landUse: 'UTL',
    projectType: 'Non-Residential',
  };
}

/** The works of each small trade (telecom masts for any class not listed). */
const TRADE_WORKS: Partial<Record<UseClassKey, (c: Ctx) => TradeWorks>> = {
  solar: (c) => solarWorks(c.r),
  roofing: ({ r }) => ({
    d: `Permission for ${pick(r, [
      're-roofing of existing dwelling and raising of roof ridge height',
      'replacement of existing flat roof with pitched roof',
      'a dormer window extension to the rear roof',
      'new roof to existing farmhouse and conversion of attic',
      'alterations to roof profile including dormer windows to front and rear',
      'replacement of existing roof covering with natural slate',
    ])}${opt(r, 0.4, ' and associated internal alterations')}`,
    floor: round1(r.float(8, 60)),
  }),
  landscaping: ({ r }) => ({
    d: `Permission for ${pick(r, [
      'new boundary wall and piers with automated gates',
      'widening of existing vehicular entrance and new boundary treatment',
      'landscaping works including patio, retaining walls and steps',
      'site works to form new access road and hardstanding',
      'removal of front boundary wall to provide off-street parking',
      'new entrance, boundary walls and landscaping to front garden',
    ])}${opt(r, 0.3, ' and all associated site works')}`,
  }),
  windows: ({ r }) => ({
    d: `Permission to replace ${r.chance(0.4) ? `${r.int(2, 18)} no. ` : ''}existing ${pick(r, ['timber sash windows', 'windows and front door', 'single glazed windows', 'shopfront windows'])} ${pick(r, ['with uPVC double glazed units', 'with double glazed timber windows', 'with aluclad windows and composite doors'])}${opt(r, 0.35, ' at this protected structure')}`,
  }),
  heat_pump: ({ r }) => ({
    d: `Permission for installation of an ${pick(r, ['air-to-water heat pump unit', 'air source heat pump', 'external heat pump and hot water cylinder enclosure'])}${opt(r, 0.45, ` (${pick(r, ['5', '6', '8', '9', '11', '12', '14', '16'])}kW)`)} to ${pick(r, ['side', 'rear'])} of dwelling${opt(r, 0.3, ' together with solar PV panels on roof')}`,
  }),
  insulation: ({ r }) => ({
    d: `Permission for external wall insulation to ${pick(r, ['all elevations', 'front and side elevations', 'rear and side elevations'])} of existing dwelling with new render finish${opt(r, 0.4, ', replacement windows and new front door')}`,
  }),
  ev_charger: ({ r }) => ({
    d: `Permission for installation of ${r.int(2, 24)} no. EV charging points with ${pick(r, ['ESB kiosk', 'associated substation', 'canopy and signage'])} at existing ${pick(r, ['car park', 'service station', 'hotel car park', 'retail park'])}`,
    orgShare: 0.9,
    orgNace: ['4321', '6810', '3511'],
    landUse: 'UTL',
    projectType: 'Non-Residential',
  }),
  shopfront: ({ r, street }) => ({
    d: `Permission for ${pick(r, ['new shopfront', 'alterations to existing shopfront', 'replacement shopfront and signage'])}${opt(r, 0.5, ` (${(r.int(35, 140) / 10).toFixed(1)}m ${r.chance(0.5) ? 'frontage' : 'wide'})`)} at ${r.int(1, 120)} ${street}${opt(r, 0.3, ', a protected structure')}`,
    orgShare: 0.6,
    orgNace: ['6810', '4673'],
    landUse: 'COM',
    projectType: 'Non-Residential',
  }),
  signage: ({ r }) => ({
    d: `Permission for ${opt(r, 0.6, `${r.int(2, 6)} no. `)}${pick(r, ['illuminated', 'non-illuminated', 'internally illuminated', 'externally lit'])} ${pick(r, ['fascia sign', 'projecting sign', 'totem sign', 'fascia and projecting signs', 'digital advertising display'])} ${pick(r, ['to front elevation', 'at entrance', 'on gable wall'])}`,
    orgShare: 0.75,
    orgNace: ['6810', '5510', '4673'],
    landUse: 'COM',
    projectType: 'Non-Residential',
  }),
};

/** A telecommunications mast: always an operator, new build. */
function telecomWorks({ r }: Ctx): TradeWorks {
  return {
    d: `Permission for a ${r.chance(0.3) ? (r.int(150, 360) / 10).toFixed(1) : r.int(15, 36)}m ${pick(r, ['monopole', 'lattice tower', 'multi-user monopole'])} telecommunications support structure with antennae, dishes, ground-based equipment cabinets and security fencing`,
    orgShare: 1,
    orgNace: ['4321', '4399'],
    landUse: 'UTL',
    projectType: 'Non-Residential',
    activity: 'New Build',
  };
}

/** A small trade job: a domestic alteration unless its works say otherwise. */
function trade(cls: UseClassKey, c: Ctx): Development {
  const w = (TRADE_WORKS[cls] ?? telecomWorks)(c);
  const projectType = w.projectType ?? 'Residential';
  return base(cls, w.d, {
    landUse: w.landUse ?? 'RES',
    floorM2: w.floor ?? null,
    siteHa: roundHa(c.r.float(0.01, 0.3)),
    orgShare: w.orgShare ?? 0.2,
    orgNace: w.orgNace ?? ['6810'],
    cnProjectType: projectType,
    cnActivity: w.activity ?? 'Material Alteration',
    cnSubGroup: projectType === 'Residential' ? 'Alteration' : 'Other',
  });
}

/** Generate the development of one application (description, sizes, classification). */
export function describeDevelopment(cls: UseClassKey, c: Ctx): Development {
  let dev: Development;
  switch (cls) {
    case 'extension':
      dev = extension(c);
      break;
    case 'one_off':
      dev = oneOff(c);
      break;
    case 'housing':
      dev = housing(c);
      break;
    case 'apartments':
      dev = apartments(c);
      break;
    case 'lrd':
      dev = lrd(c);
      break;
    case 'commercial':
      dev = commercial(c);
      break;
    case 'industrial':
      dev = industrial(c);
      break;
    case 'data_centre':
      dev = dataCentre(c);
      break;
    case 'agricultural':
      dev = agricultural(c);
      break;
    case 'hotel':
      dev = hotel(c);
      break;
    case 'school':
      dev = school(c);
      break;
    case 'healthcare':
      dev = healthcare(c);
      break;
    case 'community':
      dev = community(c);
      break;
    case 'change_of_use':
      dev = changeOfUse(c);
      break;
    default:
      dev = trade(cls, c);
  }
  // demolition of something existing, prefixed to the works (about 6 % of all descriptions)
  const demolishable = [
    'housing',
    'apartments',
    'commercial',
    'industrial',
    'hotel',
    'school',
    'healthcare',
    'community',
    'lrd',
    'agricultural',
  ];
  if (!dev.demolition && demolishable.includes(cls) && c.r.chance(0.14)) {
    const what = c.r.pick([
      'outbuildings',
      'dwelling house',
      'agricultural sheds',
      'commercial building',
      'single storey structures',
      'warehouse',
    ]);
    dev.description = `Demolition of existing ${what} and ${dev.description.replace(/^Permission for (the )?/, '').replace(/^Large-scale/, 'large-scale')}`;
    dev.demolition = true;
  }
  return dev;
}

export type { Ctx as DescribeContext };
