/**
 * The 31 local planning authorities of Ireland, with the reference facts the pipeline and the
 * generator share: county, relative weight of planning activity (roughly population-shaped),
 * an approximate WGS84 centre and spread used by the generator, and the Eircode routing keys
 * that fall mostly inside the authority.
 *
 * Authority names are the canonical short names published in every release
 * (`planning_authority`); `resolveAuthority` maps the many spellings found in source files
 * ("Dun Laoghaire Rathdown County Council", "LIMERICK CITY AND COUNTY COUNCIL", …) onto them.
 */

import { foldSearchText } from '../../common/search-text.ts';

export interface Authority {
  readonly name: string;
  readonly slug: string;
  readonly county: string;
  /** Name as the national planning export spells it. */
  readonly councilName: string;
  readonly weight: number;
  readonly lat: number;
  readonly lon: number;
  readonly spreadKm: number;
  readonly routingKeys: readonly string[];
}

const A = (
  name: string,
  county: string,
  councilName: string,
  weight: number,
  lat: number,
  lon: number,
  spreadKm: number,
  routingKeys: string[],
): Authority => ({
  name,
  slug: foldText(name).replace(/[^a-z0-9]+/g, '-'),
  county,
  councilName,
  weight,
  lat,
  lon,
  spreadKm,
  routingKeys,
});

export const AUTHORITIES: readonly Authority[] = [
  A('Carlow', 'Carlow', 'Carlow County Council', 1.3, 52.72, -6.84, 14, ['R93', 'R21']),
  A('Cavan', 'Cavan', 'Cavan County Council', 1.9, 53.99, -7.36, 22, ['H12', 'H14', 'H16']),
  A('Clare', 'Clare', 'Clare County Council', 3.0, 52.86, -8.98, 28, ['V95', 'V14', 'V15']),
  A('Cork City', 'Cork', 'Cork City Council', 3.0, 51.897, -8.47, 5, ['T12', 'T23']),
  A('Cork County', 'Cork', 'Cork County Council', 9.0, 51.98, -8.75, 40, [
    'P14',
    'P17',
    'P24',
    'P25',
    'P31',
    'P32',
    'P36',
    'P43',
    'P47',
    'P51',
    'P56',
    'P61',
    'P67',
    'P72',
    'P75',
    'P81',
    'P85',
    'T34',
    'T45',
    'T56',
  ]),
  A('Donegal', 'Donegal', 'Donegal County Council', 4.5, 54.92, -7.95, 35, ['F92', 'F93', 'F94']),
  A('Dublin City', 'Dublin', 'Dublin City Council', 7.0, 53.35, -6.26, 4.5, [
    'D01',
    'D02',
    'D03',
    'D04',
    'D05',
    'D06',
    'D07',
    'D08',
    'D09',
    'D11',
    'D12',
    'D13',
    'D15',
    'D17',
  ]),
  A('Dún Laoghaire-Rathdown', 'Dublin', 'Dun Laoghaire Rathdown County Council', 4.0, 53.27, -6.17, 5, [
    'A94',
    'A96',
    'D14',
    'D16',
    'D18',
  ]),
  A('Fingal', 'Dublin', 'Fingal County Council', 6.0, 53.47, -6.22, 10, [
    'K32',
    'K34',
    'K36',
    'K45',
    'K56',
    'K67',
    'D15',
  ]),
  A('South Dublin', 'Dublin', 'South Dublin County Council', 5.0, 53.29, -6.39, 6, ['D6W', 'D12', 'D22', 'D24', 'K78']),
  A('Galway City', 'Galway', 'Galway City Council', 1.5, 53.275, -9.05, 3.5, ['H91']),
  A('Galway County', 'Galway', 'Galway County Council', 5.0, 53.35, -8.7, 32, ['H53', 'H54', 'H62', 'H65']),
  A('Kerry', 'Kerry', 'Kerry County Council', 4.0, 52.15, -9.6, 32, ['V92', 'V93', 'V23', 'V31']),
  A('Kildare', 'Kildare', 'Kildare County Council', 5.0, 53.2, -6.8, 18, ['W91', 'W23', 'W12', 'R51', 'R56', 'W34']),
  A('Kilkenny', 'Kilkenny', 'Kilkenny County Council', 2.2, 52.58, -7.2, 20, ['R95']),
  A('Laois', 'Laois', 'Laois County Council', 1.8, 52.99, -7.33, 18, ['R32', 'R14']),
  A('Leitrim', 'Leitrim', 'Leitrim County Council', 0.8, 54.13, -8.0, 18, ['N41']),
  A('Limerick', 'Limerick', 'Limerick City and County Council', 4.0, 52.55, -8.75, 24, ['V94', 'V35', 'V42']),
  A('Longford', 'Longford', 'Longford County Council', 0.9, 53.73, -7.8, 14, ['N39']),
  A('Louth', 'Louth', 'Louth County Council', 2.8, 53.92, -6.48, 11, ['A91', 'A92']),
  A('Mayo', 'Mayo', 'Mayo County Council', 3.5, 53.85, -9.3, 32, ['F12', 'F23', 'F26', 'F28', 'F31', 'F35']),
  A('Meath', 'Meath', 'Meath County Council', 4.5, 53.6, -6.65, 20, ['C15', 'A82', 'A84', 'A85', 'A86']),
  A('Monaghan', 'Monaghan', 'Monaghan County Council', 1.5, 54.15, -6.95, 14, ['H18', 'H23']),
  A('Offaly', 'Offaly', 'Offaly County Council', 1.7, 53.2, -7.6, 18, ['R35', 'R42']),
  A('Roscommon', 'Roscommon', 'Roscommon County Council', 1.6, 53.75, -8.25, 22, ['F42', 'F45']),
  A('Sligo', 'Sligo', 'Sligo County Council', 1.4, 54.2, -8.55, 16, ['F91', 'F56']),
  A('Tipperary', 'Tipperary', 'Tipperary County Council', 4.0, 52.6, -7.9, 32, [
    'E21',
    'E25',
    'E32',
    'E34',
    'E41',
    'E45',
    'E53',
  ]),
  A('Waterford', 'Waterford', 'Waterford City and County Council', 2.8, 52.2, -7.6, 22, ['X91', 'X35', 'X42']),
  A('Westmeath', 'Westmeath', 'Westmeath County Council', 2.0, 53.53, -7.4, 18, ['N91', 'N37']),
  A('Wexford', 'Wexford', 'Wexford County Council', 4.0, 52.45, -6.55, 22, ['Y35', 'Y25', 'Y21', 'Y34']),
  A('Wicklow', 'Wicklow', 'Wicklow County Council', 3.5, 53.0, -6.35, 18, ['A98', 'A63', 'A67']),
];

/** The 26 counties of the Republic, as published in `county`. */
export const COUNTIES: readonly string[] = [...new Set(AUTHORITIES.map((a) => a.county))].sort();

/**
 * Lower-case, strip accents (Dún → dun, Ó → o) and collapse punctuation and spaces.
 * Used for every case- and accent-insensitive comparison of names.
 */
export function foldText(s: string): string {
  return foldSearchText(s)
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

const byFolded = new Map<string, Authority>();
for (const a of AUTHORITIES) {
  const base = foldText(a.name);
  const variants = [
    a.name,
    a.councilName,
    `${a.name} County Council`,
    `${a.name} City Council`,
    `${a.name} City and County Council`,
    `${a.name} Co Co`,
  ];
  for (const v of variants) byFolded.set(foldText(v), a);
  byFolded.set(base, a);
}
// Authorities merged in 2014 still appear under their old names in older records.
for (const [old, now] of [
  ['Limerick City Council', 'Limerick'],
  ['Limerick County Council', 'Limerick'],
  ['Waterford City Council', 'Waterford'],
  ['Waterford County Council', 'Waterford'],
  ['North Tipperary County Council', 'Tipperary'],
  ['South Tipperary County Council', 'Tipperary'],
  ['Dun Laoghaire', 'Dún Laoghaire-Rathdown'],
  ['DLR', 'Dún Laoghaire-Rathdown'],
  ['Cork Co Co', 'Cork County'],
  ['Dublin Corporation', 'Dublin City'],
] as const) {
  byFolded.set(
    foldText(old),
    AUTHORITIES.find((a) => a.name === now)!,
  );
}

/** Map any spelling of a planning authority to its canonical record, or null when unknown. */
export function resolveAuthority(raw: string | null | undefined): Authority | null {
  if (!raw) return null;
  return byFolded.get(foldText(raw)) ?? null;
}

const countyByFolded = new Map<string, string>();
for (const c of COUNTIES) {
  countyByFolded.set(foldText(c), c);
  countyByFolded.set(foldText(`Co. ${c}`), c);
  countyByFolded.set(foldText(`County ${c}`), c);
}
for (const [alias, county] of [
  ['Co Dublin', 'Dublin'],
  ['Dublin City', 'Dublin'],
  ['Cork City', 'Cork'],
  ['Galway City', 'Galway'],
  ['North Tipperary', 'Tipperary'],
  ['South Tipperary', 'Tipperary'],
  ['Tipperary North', 'Tipperary'],
  ['Tipperary South', 'Tipperary'],
  ['Limerick City', 'Limerick'],
  ['Waterford City', 'Waterford'],
] as const) {
  countyByFolded.set(foldText(alias), county);
}

/** Map a county spelling ("Co. Cork", "CORK", "cork ") to its canonical name, or null. */
export function resolveCounty(raw: string | null | undefined): string | null {
  if (!raw) return null;
  return countyByFolded.get(foldText(raw)) ?? null;
}
