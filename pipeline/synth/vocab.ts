/**
 * Vocabulary of the generator: Irish personal names, towns by county, street and estate names,
 * townland syllables, and helpers that build addresses and Eircodes from them. All synthetic:
 * any resemblance of a generated person to a real one is chance.
 */
import type { Authority } from '../reference/authorities.ts';
import { LAND_GRID, authorityLand, cellCorner, cellOf, landIndex, onAuthorityLand } from '../reference/land.ts';
import type { Rng } from './rng.ts';

export const FORENAMES = [
  'John',
  'Mary',
  'Patrick',
  'Margaret',
  'Michael',
  'Bridget',
  'Seán',
  'Catherine',
  'James',
  'Anne',
  'Thomas',
  'Siobhán',
  'Declan',
  'Aoife',
  'Ciarán',
  'Niamh',
  'Conor',
  'Sinéad',
  'Brian',
  'Orla',
  'Eoin',
  'Gráinne',
  'Liam',
  'Róisín',
  'Kevin',
  'Emma',
  'David',
  'Sarah',
  'Paul',
  'Ciara',
  'Mark',
  'Deirdre',
  'Darragh',
  'Aisling',
  'Cathal',
  'Máire',
  'Colm',
  'Laura',
  'Donal',
  'Fiona',
  'Tadhg',
  'Éabha',
  'Pádraig',
  'Clodagh',
  'Fergal',
  'Emer',
  'Noel',
  'Helen',
  'Gerard',
  'Maeve',
  'Dermot',
  'Una',
  'Barry',
  'Louise',
  'Shane',
  'Rachel',
  'Niall',
  'Caoimhe',
  'Oisín',
  'Méabh',
  'Kieran',
  'Lisa',
  'Peter',
  'Julie',
  'Joseph',
  'Karen',
  'Eamon',
  'Noreen',
  'Brendan',
  'Nuala',
  'Aidan',
  'Sharon',
  'Cillian',
  'Áine',
  'Rory',
  'Fionnuala',
  'Diarmuid',
  'Eileen',
  'Jack',
  'Grace',
];

export const SURNAMES = [
  'Murphy',
  'Kelly',
  "O'Sullivan",
  'Walsh',
  'Smith',
  "O'Brien",
  'Byrne',
  'Ryan',
  "O'Connor",
  "O'Neill",
  "O'Reilly",
  'Doyle',
  'McCarthy',
  'Gallagher',
  'Doherty',
  'Kennedy',
  'Lynch',
  'Murray',
  'Quinn',
  'Moore',
  'McLoughlin',
  "O'Carroll",
  'Connolly',
  'Daly',
  "O'Connell",
  'Wilson',
  'Dunne',
  'Brennan',
  'Burke',
  'Collins',
  'Campbell',
  'Clarke',
  'Johnston',
  'Hughes',
  "O'Farrell",
  'Fitzgerald',
  'Brown',
  'Martin',
  'Maguire',
  'Nolan',
  'Flynn',
  'Thompson',
  "O'Callaghan",
  "O'Donnell",
  'Duffy',
  'Mahony',
  'Boyle',
  'Healy',
  "O'Shea",
  'White',
  'Sweeney',
  'Hayes',
  'Kavanagh',
  'Power',
  'McGrath',
  'Moran',
  'Brady',
  'Stewart',
  'Casey',
  'Foley',
  'Fitzpatrick',
  "O'Leary",
  'McDonnell',
  'McMahon',
  'Donnelly',
  'Regan',
  'Donovan',
  'Burns',
  'Flanagan',
  'Mullan',
  'Barry',
  'Kane',
  'Robinson',
  'Cunningham',
  'Griffin',
  'Kenny',
  'Sheehan',
  'Ward',
  'Whelan',
  'Lyons',
  'Ó Súilleabháin',
  'Ní Bhriain',
  'Mac Mathúna',
  'Tierney',
  'Cullen',
  'Fahy',
  'Keane',
  'Hegarty',
  'Cronin',
  'Coughlan',
];

/**
 * Irish surnames that are also business words: the hard cases of the name rule (a homeowner
 * called Power or Church is still a person).
 */
export const BUSINESS_WORD_SURNAMES = [
  'Power',
  'Church',
  'Bank',
  'Ireland',
  'Irish',
  'Hall',
  'Mills',
  'Stone',
  'Mason',
];

/** Trades an individual trades under with their own name and no legal form ("Rory Power Roofing"). */
export const SOLE_TRADES = [
  'Building Services',
  'Plant Hire',
  'Roofing',
  'Landscaping',
  'Electrical',
  'Plumbing & Heating',
  'Construction',
  'Builders',
];

/**
 * Public bodies that apply for planning permission without a legal form in their name (besides
 * the councils of the authorities table): written by the generator as organisations.
 */
export const PUBLIC_APPLICANTS = [
  'Uisce Éireann',
  'Health Service Executive',
  'Office of Public Works',
  'Transport Infrastructure Ireland',
  'Clúid Housing',
  'Respond',
  'Tuath Housing',
  'Peter McVerry Trust',
  'Land Development Agency',
  'Coillte',
];

/** Towns by county (canonical county names from the authorities table). */
export const TOWNS: Record<string, readonly string[]> = {
  Carlow: ['Carlow', 'Tullow', 'Bagenalstown', 'Hacketstown', 'Borris', 'Leighlinbridge'],
  Cavan: ['Cavan', 'Bailieborough', 'Cootehill', 'Virginia', 'Belturbet', 'Kingscourt', 'Ballyjamesduff'],
  Clare: ['Ennis', 'Shannon', 'Kilrush', 'Kilkee', 'Ennistymon', 'Sixmilebridge', 'Newmarket-on-Fergus', 'Lahinch'],
  Cork: [
    'Cork',
    'Ballincollig',
    'Carrigaline',
    'Cobh',
    'Midleton',
    'Mallow',
    'Youghal',
    'Bandon',
    'Fermoy',
    'Kinsale',
    'Skibbereen',
    'Clonakilty',
    'Macroom',
    'Charleville',
    'Bantry',
    'Glanmire',
    'Passage West',
  ],
  Donegal: [
    'Letterkenny',
    'Buncrana',
    'Ballyshannon',
    'Donegal',
    'Bundoran',
    'Carndonagh',
    'Dungloe',
    'Newtowncunningham',
    'Lifford',
    'Killybegs',
  ],
  Dublin: [
    'Dublin',
    'Swords',
    'Malahide',
    'Balbriggan',
    'Skerries',
    'Lucan',
    'Clondalkin',
    'Tallaght',
    'Dún Laoghaire',
    'Blackrock',
    'Dundrum',
    'Stillorgan',
    'Rathfarnham',
    'Blanchardstown',
    'Castleknock',
    'Donabate',
    'Rush',
    'Saggart',
  ],
  Galway: [
    'Galway',
    'Tuam',
    'Ballinasloe',
    'Loughrea',
    'Oranmore',
    'Athenry',
    'Gort',
    'Clifden',
    'Oughterard',
    'Moycullen',
    'Headford',
  ],
  Kerry: [
    'Tralee',
    'Killarney',
    'Listowel',
    'Kenmare',
    'Dingle',
    'Castleisland',
    'Cahersiveen',
    'Killorglin',
    'Ballybunion',
  ],
  Kildare: [
    'Naas',
    'Newbridge',
    'Celbridge',
    'Maynooth',
    'Leixlip',
    'Athy',
    'Kildare',
    'Clane',
    'Kilcock',
    'Monasterevin',
    'Sallins',
  ],
  Kilkenny: ['Kilkenny', 'Callan', 'Castlecomer', 'Thomastown', 'Graiguenamanagh', 'Ferrybank', 'Urlingford'],
  Laois: ['Portlaoise', 'Portarlington', 'Mountmellick', 'Abbeyleix', 'Stradbally', 'Rathdowney', 'Mountrath'],
  Leitrim: ['Carrick-on-Shannon', 'Manorhamilton', 'Mohill', 'Ballinamore', 'Drumshanbo', 'Dromahair'],
  Limerick: [
    'Limerick',
    'Newcastle West',
    'Abbeyfeale',
    'Kilmallock',
    'Castleconnell',
    'Adare',
    'Rathkeale',
    'Patrickswell',
    'Annacotty',
  ],
  Longford: ['Longford', 'Granard', 'Edgeworthstown', 'Ballymahon', 'Lanesborough'],
  Louth: ['Drogheda', 'Dundalk', 'Ardee', 'Dunleer', 'Carlingford', 'Termonfeckin', 'Blackrock'],
  Mayo: [
    'Castlebar',
    'Ballina',
    'Westport',
    'Claremorris',
    'Ballinrobe',
    'Swinford',
    'Belmullet',
    'Ballyhaunis',
    'Knock',
  ],
  Meath: [
    'Navan',
    'Ashbourne',
    'Trim',
    'Kells',
    'Dunboyne',
    'Ratoath',
    'Laytown',
    'Dunshaughlin',
    'Enfield',
    'Stamullen',
  ],
  Monaghan: ['Monaghan', 'Carrickmacross', 'Castleblayney', 'Clones', 'Ballybay'],
  Offaly: ['Tullamore', 'Birr', 'Edenderry', 'Clara', 'Banagher', 'Ferbane', 'Daingean'],
  Roscommon: ['Roscommon', 'Boyle', 'Castlerea', 'Ballaghaderreen', 'Strokestown', 'Monksland', 'Elphin'],
  Sligo: ['Sligo', 'Tubbercurry', 'Ballymote', 'Enniscrone', 'Strandhill', 'Collooney', 'Grange'],
  Tipperary: [
    'Clonmel',
    'Nenagh',
    'Thurles',
    'Roscrea',
    'Tipperary',
    'Carrick-on-Suir',
    'Cashel',
    'Cahir',
    'Templemore',
    'Ballina',
  ],
  Waterford: ['Waterford', 'Dungarvan', 'Tramore', 'Lismore', 'Dunmore East', 'Cappoquin', 'Tallow', 'Portlaw'],
  Westmeath: ['Athlone', 'Mullingar', 'Moate', 'Kinnegad', 'Castlepollard', 'Kilbeggan'],
  Wexford: ['Wexford', 'Enniscorthy', 'Gorey', 'New Ross', 'Bunclody', 'Rosslare', 'Courtown', 'Ferns'],
  Wicklow: [
    'Bray',
    'Greystones',
    'Wicklow',
    'Arklow',
    'Blessington',
    'Newtownmountkennedy',
    'Rathdrum',
    'Baltinglass',
    'Enniskerry',
  ],
};

const STREET_ROOTS = [
  'Main',
  'Church',
  'Chapel',
  'Bridge',
  'Mill',
  'Green',
  'Castle',
  'Market',
  'Abbey',
  'Convent',
  'Station',
  'New',
  'Old',
  'Fair',
  'Pearse',
  'Connolly',
  'Davitt',
  'Parnell',
  "O'Connell",
  'Emmet',
  'Barrack',
  'Court',
  'Friary',
  'Sarsfield',
  'Patrick',
  'Bóthar na Trá',
  'Quay',
  'Dublin',
  'Cork',
  'Galway',
  'Sligo',
];
const STREET_KINDS = ['Street', 'Road', 'Lane', 'Avenue', 'Terrace', 'Place', 'Hill', 'Row'];

const ESTATE_ROOTS = [
  'Oak',
  'Ash',
  'Beech',
  'Hazel',
  'Willow',
  'Rowan',
  'Elm',
  'Holly',
  'Cherry',
  'Maple',
  'Hawthorn',
  'Birch',
  'Castle',
  'River',
  'Meadow',
  'Mill',
  'Abbey',
  'Glen',
  'Lake',
  'Brook',
  'Bally',
  'Red',
  'Fern',
  'Lark',
  'Heather',
  'Ard',
  'Cois',
  'Páirc',
  'Clover',
  'Sycamore',
  'Woodland',
  'Fairways',
  'Kings',
  'Earls',
];
const ESTATE_KINDS = [
  'Park',
  'Grove',
  'Drive',
  'Court',
  'Close',
  'Lawn',
  'Heights',
  'Crescent',
  'View',
  'Way',
  'Downs',
  'Hill',
  'Green',
  'Rise',
  'Walk',
  'Manor',
  'Meadows',
  'Wood',
  'Gardens',
  'Square',
];
const ESTATE_JOIN: Record<string, string> = { Cois: 'Cois ', Páirc: 'Páirc ', Bally: 'Bally', Ard: 'Ard ' };

/** Townland-style name syllables ("Knock" + "anore"). */
export const PLACE_PREFIXES = [
  'Bally',
  'Knock',
  'Kil',
  'Tulla',
  'Drum',
  'Derry',
  'Glen',
  'Carrig',
  'Clon',
  'Rath',
  'Lis',
  'Cappa',
  'Shan',
  'Mone',
  'Cloon',
  'Gort',
  'Inch',
  'Ard',
  'Bun',
  'Dun',
  'Kill',
  'Moy',
  'Ross',
  'Cahir',
  'Lough',
  'Tober',
  'Corra',
  'Slieve',
  'Mullagh',
  'Clogh',
  'Dromin',
  'Gar',
  'Lack',
  'Coolna',
  'Tully',
  'Bawn',
  'Curra',
  'Graigue',
  'Ahan',
  'Boola',
  'Dero',
  'Feagh',
  'Garry',
  'Kilna',
  'Letter',
  'Maghera',
  'Oul',
  'Sheskin',
];
export const PLACE_SUFFIXES = [
  'more',
  'beg',
  'anore',
  'agh',
  'ane',
  'een',
  'ard',
  'duff',
  'roe',
  'keel',
  'nagh',
  'cullen',
  'gorm',
  'owen',
  'brack',
  'dara',
  'lough',
  'mona',
  'shee',
  'tra',
  'garriff',
  'cashel',
  'fin',
  'nabrone',
  'clare',
  'moyle',
  'kerrin',
  'rahan',
  'dooney',
  'glass',
  'bane',
  'corrig',
  'leam',
  'meelagh',
  'ogue',
  'patrick',
  'rinka',
  'scart',
  'tane',
  'vickane',
  'well',
  'ycarney',
  'anure',
  'illa',
];

/** A townland-like name such as `Knockanore`. */
export function placeName(r: Rng): string {
  return joinPlace(r.pick(PLACE_PREFIXES), r.pick(PLACE_SUFFIXES));
}

/** Join a prefix and a suffix, avoiding triple letters ("Kill" + "lough" → "Killough"). */
export function joinPlace(prefix: string, suffix: string): string {
  let p = prefix;
  while (p.length > 1 && suffix.length > 0 && p[p.length - 1] === suffix[0] && p[p.length - 2] === suffix[0]) {
    p = p.slice(0, -1);
  }
  return p + suffix;
}

/** A housing-estate name such as `Hawthorn Grove`. */
export function estateName(r: Rng): string {
  const root = r.pick(ESTATE_ROOTS);
  const kind = r.pick(ESTATE_KINDS);
  const join = ESTATE_JOIN[root];
  if (join === 'Bally') return `Bally${kind.toLowerCase()}`;
  return join ? `${join}${kind === 'Park' ? 'na Coille' : kind}` : `${root}${r.chance(0.3) ? 'field' : ''} ${kind}`;
}

/** A street name such as `Church Street`. */
export function streetName(r: Rng): string {
  const root = r.pick(STREET_ROOTS);
  return root.includes(' ') ? root : `${root} ${r.pick(STREET_KINDS)}`;
}

/** A town of the authority's county. */
export function townOf(r: Rng, a: Authority): string {
  if (a.name === 'Dublin City') return 'Dublin';
  if (a.name === 'Cork City') return 'Cork';
  if (a.name === 'Galway City') return 'Galway';
  const towns = TOWNS[a.county] ?? [a.county];
  if (a.name === 'Cork County' || a.name === 'Galway County') return r.pick(towns.slice(1));
  return r.pick(towns);
}

/** A person's name `{ forename, surname }`. */
export function personName(r: Rng): { forename: string; surname: string } {
  return { forename: r.pick(FORENAMES), surname: r.pick(SURNAMES) };
}

const EIRCODE_CHARS = '0123456789ACDEFHKNPRTVWXY';

/** A well-formed Eircode with the given routing key: `D04X2Y3`. */
export function eircode(r: Rng, routingKey: string): string {
  let s = routingKey;
  // first character of the unique identifier is a letter in most codes
  s += r.pick(['A', 'C', 'D', 'E', 'F', 'H', 'K', 'N', 'P', 'R', 'T', 'V', 'W', 'X', 'Y']);
  for (let i = 0; i < 3; i++) s += EIRCODE_CHARS[r.int(0, EIRCODE_CHARS.length - 1)];
  return s;
}

/** `D04X2Y3` → `D04 X2Y3`. */
export function spacedEircode(code: string): string {
  return `${code.slice(0, 3)} ${code.slice(3)}`;
}

/** The Dublin postal district of a routing key (`D04` → `Dublin 4`, `D6W` → `Dublin 6w`), else null. */
export function postalDistrict(routingKey: string): string | null {
  if (routingKey === 'D6W') return 'Dublin 6w';
  const m = /^D(\d\d)$/.exec(routingKey);
  return m ? `Dublin ${Number(m[1])}` : null;
}

/**
 * A point on the authority's land around its centre (roughly normal, `spreadKm` ≈ 1 σ), WGS84:
 * draws that fall in the sea, in another authority or near a coast or border are drawn again
 * (at most 24 times, then a land cell of the authority is taken at random). The point is kept at
 * least 2 % of a cell away from its cell's edges, so rounding (ITM to 0.1 m and back) never moves
 * it off the cell.
 */
export function pointNear(r: Rng, a: Authority, spreadScale = 1): { lat: number; lon: number } {
  const { owner, cells } = authorityLand();
  const own = landIndex(a.name);
  const km = a.spreadKm * spreadScale;
  for (let i = 0; i < 24; i++) {
    const lat = a.lat + (r.normal() * km * 0.6) / 111.2;
    const lon = a.lon + (r.normal() * km * 0.6) / (111.2 * Math.cos((a.lat * Math.PI) / 180));
    const cell = cellOf(lat, lon);
    if (cell >= 0 && owner[cell] === own) return insideCell(cell, lat, lon);
  }
  const mine = cells.get(a.name)!;
  const cell = mine[r.int(0, mine.length - 1)]!;
  const c = cellCorner(cell);
  return insideCell(cell, c.lat + r.next() * LAND_GRID.dLat, c.lon + r.next() * LAND_GRID.dLon);
}

/** (lat, lon) moved, if need be, to at least 2 % of a cell inside the cell's edges. */
function insideCell(cell: number, lat: number, lon: number): { lat: number; lon: number } {
  const c = cellCorner(cell);
  const clamp = (x: number, lo: number, d: number): number => Math.min(lo + 0.98 * d, Math.max(lo + 0.02 * d, x));
  return { lat: clamp(lat, c.lat, LAND_GRID.dLat), lon: clamp(lon, c.lon, LAND_GRID.dLon) };
}

/**
 * The point `p` moved about 3 km (4 cells north or south, 5 cells east or west: the same place
 * within its cell), to where it is still on the authority's land; null when no such move is.
 */
export function misplaced(a: Authority, p: { lat: number; lon: number }): { lat: number; lon: number } | null {
  for (const [dy, dx] of [
    [4, -5],
    [-4, 5],
    [4, 5],
    [-4, -5],
  ] as const) {
    const q = { lat: p.lat + dy * LAND_GRID.dLat, lon: p.lon + dx * LAND_GRID.dLon };
    if (onAuthorityLand(a.name, q.lat, q.lon)) return q;
  }
  return null;
}

/** Add stray whitespace the way hand-keyed systems do (leading, trailing or doubled spaces). */
export function strayWhitespace(r: Rng, s: string): string {
  switch (r.int(0, 3)) {
    case 0:
      return ` ${s}`;
    case 1:
      return `${s}  `;
    case 2:
      return s.replace(' ', '  ');
    default:
      return `  ${s} `;
  }
}
