import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import {
  classifyScale,
  classifyUseClass,
  classifyVerticals,
  detectDemolition,
  estimateValue,
  FALLBACK_VERTICAL,
  RATE_PER_M2,
  REGIONAL_FACTOR,
  SCALE_THRESHOLDS,
  TYPICAL_VALUE,
  UNIT_COST,
  USE_CLASS_VERTICALS,
  USE_CLASSES,
  VERTICALS,
} from '../../../pipeline/normalise/classify.ts';

const row = (description: string, extra: Partial<{ land_use_code: string | null; num_units: number | null; one_off_house: boolean; floor_area_m2: number | null }> = {}) => ({
  description,
  land_use_code: null,
  num_units: null,
  one_off_house: false,
  floor_area_m2: null,
  ...extra,
});

const USE_CLASS_CASES: [string, ReturnType<typeof row>, string][] = [
  ['one-off house', row('Permission for construction of a two storey dwelling house, detached domestic garage, new entrance, proprietary wastewater treatment system and percolation area and all associated site works'), 'house'],
  ['replacement dwelling', row('Demolition of existing derelict cottage and construction of replacement dwelling'), 'house'],
  ['one-off flag wins', row('Permission for development at site', { one_off_house: true }), 'house'],
  ['one unit, no works words', row('Permission for development at Ballyboy', { num_units: 1 }), 'house'],
  ['extension', row('Permission for a single storey extension to the rear of existing dwelling and attic conversion with dormer window to rear'), 'residential_extension'],
  ['first floor extension is not a new house', row('Construction of a first floor extension to dwelling'), 'residential_extension'],
  ['domestic garage', row('Erection of new domestic garage to the side of existing dwelling'), 'residential_extension'],
  ['domestic solar', row('Installation of 24 no. solar PV panels on the south facing roof of existing dwelling'), 'residential_extension'],
  ['LRD', row('Large-scale Residential Development (LRD) comprising 312 no. apartments in 4 blocks ranging from 5 to 9 storeys'), 'residential_multi'],
  ['two houses', row('Construction of 2 no. semi-detached houses'), 'residential_multi'],
  ['units count', row('Permission for development at Main Street', { num_units: 14 }), 'residential_multi'],
  ['mixed use', row('Mixed use development of ground floor retail units with 24 apartments over'), 'mixed_use'],
  ['data centre beats offices', row('Construction of a data centre building comprising 4 data halls and ancillary offices'), 'data_centre'],
  ['solar farm', row('10 year permission for a solar farm comprising solar PV panels on ground mounted frames and a 38kV substation'), 'energy'],
  ['battery storage', row('Battery energy storage system of 50 MW with associated compound'), 'energy'],
  ['wind farm', row('Wind farm of 9 wind turbines'), 'energy'],
  ['telecoms', row('Telecommunications installation comprising a 24m multi-user monopole support structure carrying antennae'), 'telecoms'],
  ['change of use', row('Change of use from retail unit to cafe'), 'change_of_use'],
  ['nursing home', row('Extension to existing nursing home comprising 40 bedrooms'), 'healthcare'],
  ['public house is hospitality', row('Construction of new public house'), 'hospitality'],
  ['hotel', row('Extension to hotel to provide 30 bedrooms'), 'hospitality'],
  ['school', row('Construction of a 3-storey primary school with 16 classrooms'), 'education'],
  ['slatted shed', row('Permission to construct a slatted cattle shed with underground slurry storage tank'), 'agricultural'],
  ['warehouse beats offices', row('Construction of warehouse / logistics unit with ancillary offices'), 'warehouse_logistics'],
  ['industrial', row('Extension to existing manufacturing facility'), 'industrial'],
  ['office', row('Construction of a 6 storey office building'), 'office'],
  ['retail', row('Alterations to existing shopfront'), 'retail'],
  ['community', row('Provision of all-weather pitch and floodlighting at GAA grounds'), 'community'],
  ['commercial', row('Installation of 8 EV charging points in existing car park'), 'commercial'],
  ['land use fallback', row('Retention of works at site', { land_use_code: 'Agricultural' }), 'agricultural'],
  ['what is demolished does not decide', row('Demolition of existing dwelling house and construction of a warehouse with ancillary offices'), 'warehouse_logistics'],
  ['demolished sheds do not make a school agricultural', row('Demolition of existing agricultural sheds and a new 13-classroom school'), 'education'],
  ['ESB substation in a scheme is not energy', row('Construction of a cold storage facility with ESB substation and all associated site works'), 'warehouse_logistics'],
  ['110kV substation is energy', row('Construction of a 110kV substation and underground grid connection'), 'energy'],
  ['straw shed on a farm', row('Construction of a loose bedded straw shed on existing farm'), 'agricultural'],
  ['change of use to one apartment', row('Change of use of first floor from retail to residential use (1 no. apartment)', { num_units: 1 }), 'change_of_use'],
  ['domestic works without a building noun', row('Permission for a dormer window extension to the rear roof'), 'residential_extension'],
  ['shopping centre', row('Alterations and extension to existing shopping centre'), 'retail'],
  ['land use code RES, one unit', row('Works at site', { land_use_code: 'RES', num_units: 1 }), 'house'],
  ['land use code RES', row('Site works to form new access road and hardstanding', { land_use_code: 'RES' }), 'residential_extension'],
  ['land use code COM', row('Illuminated fascia and projecting signs on gable wall', { land_use_code: 'COM' }), 'commercial'],
  ['land use code CMY', row('Works at site', { land_use_code: 'CMY' }), 'community'],
  ['land use code HLT', row('Works at site', { land_use_code: 'HLT' }), 'healthcare'],
  ['other', row('Retention of existing timber shed'), 'other'],
];

for (const [name, input, expected] of USE_CLASS_CASES) {
  test(`classifyUseClass: ${name} → ${expected}`, () => {
    assert.is(classifyUseClass(input), expected);
  });
}

test('classifyUseClass only returns listed use classes, and every listed class is reachable by a case', () => {
  const seen = new Set(USE_CLASS_CASES.map(([, r]) => classifyUseClass(r)));
  for (const u of seen) assert.ok(USE_CLASSES.includes(u), u);
  for (const u of USE_CLASSES) assert.ok(seen.has(u), `no case yields ${u}`);
});

const VERTICAL_CASES: [string, string, string[], string[]][] = [
  // description, use class, must include, must exclude
  ['Installation of solar photovoltaic panels on roof of dwelling', 'residential_extension', ['solar', 'roofing'], ['landscaping']],
  ['Permission for 24 no. PV panels', 'other', ['solar'], []],
  ['Attic conversion with dormer and velux rooflights', 'residential_extension', ['roofing'], ['solar']],
  ['New boundary wall, patio and landscaping to front garden', 'residential_extension', ['landscaping'], ['roofing']],
  ['Replacement of windows and front door', 'residential_extension', ['windows_doors'], []],
  ['Installation of an air to water heat pump', 'residential_extension', ['heat_pumps'], []],
  ['External wall insulation to existing dwelling', 'residential_extension', ['insulation'], []],
  ['Installation of EV charging points', 'commercial', ['ev_charging', 'electrical'], []],
  ['Demolition of existing shed', 'other', ['demolition'], []],
  ['Removal of existing garage and construction of garden room', 'residential_extension', ['demolition', 'landscaping'], []],
  ['Illuminated signage and new shopfront', 'retail', ['signage_shopfronts', 'glazing_facades'], []],
  ['Telecommunications mast with antennae', 'telecoms', ['telecoms'], ['electrical']],
  ['Construction of slatted shed and silage pit', 'agricultural', ['agricultural_buildings', 'concrete', 'steel_structures'], []],
  ['New data centre with 4 data halls', 'data_centre', ['data_centre_fitout', 'electrical', 'hvac', 'security_fire', 'steel_structures', 'concrete'], []],
  ['Apartment block of 8 storeys', 'residential_multi', ['scaffolding', 'roofing', 'windows_doors', 'electrical', 'plumbing_heating', 'insulation', 'kitchens_interiors', 'flooring', 'groundworks'], []],
  ['New kitchen and timber flooring', 'residential_extension', ['kitchens_interiors', 'flooring'], []],
  ['Foundations and drainage works', 'other', ['groundworks'], []],
  ['Installation of sprinkler system and CCTV', 'commercial', ['security_fire'], []],
  ['New ventilation and air conditioning plant', 'office', ['hvac'], []],
  ['Curtain wall glazing to facade', 'office', ['glazing_facades'], []],
  ['Erection of scaffolding', 'other', ['scaffolding'], []],
  ['New steel portal frame structure', 'industrial', ['steel_structures'], []],
  ['Precast concrete retaining wall', 'other', ['concrete', 'groundworks'], []],
  ['Rewiring and new lighting', 'other', ['electrical'], []],
  ['New bathroom and boiler', 'residential_extension', ['plumbing_heating'], []],
  ['Solar farm of 40 MW', 'energy', ['solar', 'electrical'], ['agricultural_buildings']],
  ['Straw shed on existing farm', 'agricultural', ['agricultural_buildings'], []],
  ['Uninsulated outbuilding retained', 'other', [], ['insulation']], // keywords match at word starts only
];

for (const [description, useClass, include, exclude] of VERTICAL_CASES) {
  test(`classifyVerticals: ${description}`, () => {
    const v = classifyVerticals(description, useClass);
    for (const code of include) assert.ok(v.includes(code), `${code} missing from ${v.join(',')}`);
    for (const code of exclude) assert.not.ok(v.includes(code), `${code} unexpected in ${v.join(',')}`);
    assert.equal(v, [...new Set(v)].sort(), 'sorted and deduplicated');
  });
}

test('classifyVerticals: every vertical is produced by at least one description case', () => {
  const seen = new Set(VERTICAL_CASES.flatMap(([d, u]) => classifyVerticals(d, u)));
  for (const v of VERTICALS) assert.ok(seen.has(v.code), v.code);
});

test('classifyVerticals: never empty (fallback vertical)', () => {
  assert.equal(classifyVerticals('Retention of works', 'other'), [FALLBACK_VERTICAL]);
  for (const u of USE_CLASSES) assert.ok(classifyVerticals('', u).length >= 1, u);
});

test('classifyVerticals: matches the published keyword regexes exactly', () => {
  const samples = VERTICAL_CASES.map(([d]) => d).concat(USE_CLASS_CASES.map(([, r]) => r.description));
  for (const d of samples) {
    const fromKeywords = VERTICALS.filter((v) => v.keywords.test(d)).map((v) => v.code);
    const got = classifyVerticals(d, 'other');
    for (const code of fromKeywords) assert.ok(got.includes(code), `${code} for "${d}"`);
    for (const code of got) {
      if (code === FALLBACK_VERTICAL || code === 'demolition') continue;
      assert.ok(fromKeywords.includes(code), `${code} for "${d}" not from keywords`);
    }
  }
});

test('vertical tables are consistent', () => {
  const codes = VERTICALS.map((v) => v.code);
  assert.equal(codes, [...codes].sort(), 'VERTICALS sorted by code');
  for (const v of VERTICALS) {
    assert.match(v.code, /^[a-z_]+$/);
    assert.ok(v.nace.length > 0, `${v.code} has NACE codes`);
    for (const n of v.nace) assert.match(n, /^\d{4}$/);
    // The scanner runs on lower-cased text, so patterns must not contain upper-case literals.
    assert.not.match(v.keywords.source.replace(/\\./g, ''), /[A-Z]/, v.code);
  }
  for (const [u, list] of Object.entries(USE_CLASS_VERTICALS)) {
    assert.ok(USE_CLASSES.includes(u), u);
    for (const code of list) assert.ok(codes.includes(code), `${u} → ${code}`);
  }
  for (const u of USE_CLASSES) {
    assert.ok(RATE_PER_M2[u] !== undefined, `rate for ${u}`);
    assert.ok(TYPICAL_VALUE[u] !== undefined, `typical value for ${u}`);
  }
  const brief: Record<string, string> = { roofing: '4391', electrical: '4321', plumbing_heating: '4322', landscaping: '8130', windows_doors: '4332', groundworks: '4312', demolition: '4311', insulation: '4329', flooring: '4333', solar: '3511' };
  for (const [code, nace] of Object.entries(brief)) assert.ok(VERTICALS.find((v) => v.code === code)!.nace.includes(nace), code);
});

const DEMOLITION_CASES: [string, boolean][] = [
  ['Demolition of existing garage', true],
  ['Partial demolition of rear wall', true],
  ['Demolish existing single storey extension', true],
  ['Knock down existing shed', true],
  ['Removal of existing outbuildings and construction of dwelling', true],
  ['No demolition is proposed', false],
  ['Removal of existing windows', false],
  ['Single storey extension to rear', false],
];
for (const [d, expected] of DEMOLITION_CASES) {
  test(`detectDemolition: ${d} → ${expected}`, () => assert.is(detectDemolition(d), expected));
}

const VALUE_CASES: [string, Parameters<typeof estimateValue>[0], number, string][] = [
  ['house by floor area, Dublin factor', { useClass: 'house', floorAreaM2: 200, units: 1, county: 'Dublin', description: '' }, 552_000, 'floor_area'],
  ['house by floor area, Cork factor', { useClass: 'house', floorAreaM2: 200, units: 1, county: 'Cork', description: '' }, 504_000, 'floor_area'],
  ['house by floor area, no factor', { useClass: 'house', floorAreaM2: 200, units: 1, county: 'Mayo', description: '' }, 480_000, 'floor_area'],
  ['data centre by floor area', { useClass: 'data_centre', floorAreaM2: 10_000, units: null, county: 'Meath', description: '' }, 126_000_000, 'floor_area'],
  ['warehouse rounded to 1,000', { useClass: 'warehouse_logistics', floorAreaM2: 1_234.5, units: null, county: 'Laois', description: '' }, 1_358_000, 'floor_area'],
  ['multi by units', { useClass: 'residential_multi', floorAreaM2: null, units: 20, county: 'Kerry', description: '' }, 6_400_000, 'units'],
  ['multi by units, Dublin', { useClass: 'residential_multi', floorAreaM2: 0, units: 10, county: 'Dublin', description: '' }, 3_680_000, 'units'],
  ['office units ignored → typical', { useClass: 'office', floorAreaM2: null, units: 3, county: 'Mayo', description: '' }, 1_500_000, 'typical'],
  ['extension typical', { useClass: 'residential_extension', floorAreaM2: null, units: null, county: 'Dublin', description: 'Extension to rear' }, 60_000, 'typical'],
  ['house typical', { useClass: 'house', floorAreaM2: null, units: null, county: 'Clare', description: 'New dwelling' }, 380_000, 'typical'],
  ['solar retrofit typical', { useClass: 'residential_extension', floorAreaM2: null, units: null, county: 'Clare', description: 'Installation of solar PV panels on roof' }, 12_000, 'typical'],
  ['signage typical', { useClass: 'retail', floorAreaM2: null, units: null, county: 'Clare', description: 'Retention of signage' }, 8_000, 'typical'],
  ['data centre typical', { useClass: 'data_centre', floorAreaM2: null, units: null, county: 'Dublin', description: 'Data centre' }, 80_000_000, 'typical'],
  ['energy per MW', { useClass: 'energy', floorAreaM2: null, units: null, county: 'Offaly', description: 'Solar farm of 45.5 MW' }, 45_500_000, 'typical'],
  ['energy typical', { useClass: 'energy', floorAreaM2: null, units: null, county: 'Offaly', description: 'Substation' }, TYPICAL_VALUE.energy!, 'typical'],
  ['unknown use class → other', { useClass: 'nope', floorAreaM2: 100, units: null, county: 'Cork', description: '' }, 158_000, 'floor_area'],
];
for (const [name, input, value, basis] of VALUE_CASES) {
  test(`estimateValue: ${name}`, () => {
    assert.equal(estimateValue(input), { est_value: value, est_value_basis: basis });
  });
}

test('estimateValue tables: brief rates and factors', () => {
  assert.equal(
    [RATE_PER_M2.house, RATE_PER_M2.residential_multi, RATE_PER_M2.office, RATE_PER_M2.data_centre, RATE_PER_M2.warehouse_logistics, RATE_PER_M2.agricultural, RATE_PER_M2.residential_extension],
    [2_400, 2_900, 3_200, 12_000, 1_100, 450, 2_200],
  );
  assert.equal([UNIT_COST.house, UNIT_COST.residential_multi], [320_000, 320_000]);
  assert.equal(REGIONAL_FACTOR, { Dublin: 1.15, Cork: 1.05, Galway: 1.05, Kildare: 1.05, Meath: 1.05, Wicklow: 1.05 });
});

const S = SCALE_THRESHOLDS;
const scale = (units: number | null, floorAreaM2: number | null, estValue: number, siteAreaHa: number | null = null) =>
  classifyScale({ units, floorAreaM2, siteAreaHa, estValue });
const SCALE_CASES: [string, ReturnType<typeof scale>, string][] = [
  ['nothing', scale(null, null, 0), 'minor'],
  ['just below medium', scale(1, 199.9, 249_999), 'minor'],
  ['medium by units', scale(S.medium.units, null, 0), 'medium'],
  ['medium by floor', scale(null, S.medium.floorM2, 0), 'medium'],
  ['medium by value', scale(null, null, S.medium.value), 'medium'],
  ['just below large', scale(9, 999, 1_999_999), 'medium'],
  ['large by units', scale(S.large.units, null, 0), 'large'],
  ['large by floor', scale(null, S.large.floorM2, 0), 'large'],
  ['large by value', scale(null, null, S.large.value), 'large'],
  ['large by site area', scale(null, null, 0, 5), 'large'],
  ['site just below 5 ha', scale(null, null, 0, 4.99), 'minor'],
  ['just below major', scale(49, 4_999, 9_999_999, 100), 'large'],
  ['major by units', scale(S.major.units, null, 0), 'major'],
  ['major by floor', scale(null, S.major.floorM2, 0), 'major'],
  ['major by value', scale(null, null, S.major.value), 'major'],
];
for (const [name, got, expected] of SCALE_CASES) {
  test(`classifyScale: ${name} → ${expected}`, () => assert.is(got, expected));
}

test('SCALE_THRESHOLDS are the brief values', () => {
  assert.equal(SCALE_THRESHOLDS, {
    major: { units: 50, floorM2: 5_000, value: 10_000_000 },
    large: { units: 10, floorM2: 1_000, value: 2_000_000 },
    medium: { units: 2, floorM2: 200, value: 250_000 },
  });
});

test('docs/data-model.md lists every vertical, use class and scale', () => {
  const doc = readFileSync(new URL('../../../docs/data-model.md', import.meta.url), 'utf8');
  for (const v of VERTICALS) assert.ok(doc.includes(`\`${v.code}\``), `vertical ${v.code}`);
  for (const u of USE_CLASSES) assert.ok(doc.includes(`\`${u}\``), `use class ${u}`);
  for (const s of ['minor', 'medium', 'large', 'major']) assert.ok(doc.includes(`\`${s}\``), `scale ${s}`);
});

test.run();
