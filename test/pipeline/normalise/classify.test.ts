import { test } from 'uvu';
import { USE_CLASS_CODES } from '../../../common/lead-vocabulary.ts';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import {
  classifyApplication,
  classifyScale,
  classifyUseClass,
  classifyWorksKind,
  detectDemolition,
  NO_WORK_KINDS,
  RATE_PER_M2,
  REGIONAL_FACTOR,
  SCALE_THRESHOLDS,
  TYPICAL_VALUE,
  UNIT_COST,
  USE_CLASS_VERTICALS,
  VERTICALS,
  worksKindOfType,
  type ClassifyInput,
} from '../../../pipeline/normalise/classify.ts';
import { WORKS_KINDS } from '../../../pipeline/types.ts';
import { LEAD_FILTERS } from '../../../api/query/lead-filters.ts';

const row = (
  description: string,
  extra: Partial<{
    land_use_code: string | null;
    num_units: number | null;
    one_off_house: boolean;
    floor_area_m2: number | null;
  }> = {},
) => ({
  description,
  land_use_code: null,
  num_units: null,
  one_off_house: false,
  floor_area_m2: null,
  ...extra,
});

const USE_CLASS_CASES: [string, ReturnType<typeof row>, string][] = [
  [
    'one-off house',
    row(
      'Permission for construction of a two storey dwelling house, detached domestic garage, new entrance, proprietary wastewater treatment system and percolation area and all associated site works',
    ),
    'house',
  ],
  [
    'replacement dwelling',
    row('Demolition of existing derelict cottage and construction of replacement dwelling'),
    'house',
  ],
  ['one-off flag wins', row('Permission for development at site', { one_off_house: true }), 'house'],
  ['one unit, no works words', row('Permission for development at Ballyboy', { num_units: 1 }), 'house'],
  [
    'extension',
    row(
      'Permission for a single storey extension to the rear of existing dwelling and attic conversion with dormer window to rear',
    ),
    'residential_extension',
  ],
  [
    'first floor extension is not a new house',
    row('Construction of a first floor extension to dwelling'),
    'residential_extension',
  ],
  ['domestic garage', row('Erection of new domestic garage to the side of existing dwelling'), 'residential_extension'],
  [
    'domestic solar',
    row('Installation of 24 no. solar PV panels on the south facing roof of existing dwelling'),
    'residential_extension',
  ],
  [
    'LRD',
    row(
      'Large-scale Residential Development (LRD) comprising 312 no. apartments in 4 blocks ranging from 5 to 9 storeys',
    ),
    'residential_multi',
  ],
  ['two houses', row('Construction of 2 no. semi-detached houses'), 'residential_multi'],
  ['units count', row('Permission for development at Main Street', { num_units: 14 }), 'residential_multi'],
  ['mixed use', row('Mixed use development of ground floor retail units with 24 apartments over'), 'mixed_use'],
  [
    'data centre beats offices',
    row('Construction of a data centre building comprising 4 data halls and ancillary offices'),
    'data_centre',
  ],
  [
    'solar farm',
    row(
      '10 year permission for a solar farm comprising solar PV panels on ground mounted frames and a 38kV substation',
    ),
    'energy',
  ],
  ['battery storage', row('Battery energy storage system of 50 MW with associated compound'), 'energy'],
  ['wind farm', row('Wind farm of 9 wind turbines'), 'energy'],
  [
    'telecoms',
    row('Telecommunications installation comprising a 24m multi-user monopole support structure carrying antennae'),
    'telecoms',
  ],
  ['change of use', row('Change of use from retail unit to cafe'), 'change_of_use'],
  ['nursing home', row('Extension to existing nursing home comprising 40 bedrooms'), 'healthcare'],
  ['public house is hospitality', row('Construction of new public house'), 'hospitality'],
  ['hotel', row('Extension to hotel to provide 30 bedrooms'), 'hospitality'],
  ['school', row('Construction of a 3-storey primary school with 16 classrooms'), 'education'],
  [
    'slatted shed',
    row('Permission to construct a slatted cattle shed with underground slurry storage tank'),
    'agricultural',
  ],
  [
    'warehouse beats offices',
    row('Construction of warehouse / logistics unit with ancillary offices'),
    'warehouse_logistics',
  ],
  ['industrial', row('Extension to existing manufacturing facility'), 'industrial'],
  ['office', row('Construction of a 6 storey office building'), 'office'],
  ['retail', row('Alterations to existing shopfront'), 'retail'],
  ['community', row('Provision of all-weather pitch and floodlighting at GAA grounds'), 'community'],
  ['commercial', row('Installation of 8 EV charging points in existing car park'), 'commercial'],
  ['land use fallback', row('Retention of works at site', { land_use_code: 'Agricultural' }), 'agricultural'],
  [
    'what is demolished does not decide',
    row('Demolition of existing dwelling house and construction of a warehouse with ancillary offices'),
    'warehouse_logistics',
  ],
  [
    'demolished sheds do not make a school agricultural',
    row('Demolition of existing agricultural sheds and a new 13-classroom school'),
    'education',
  ],
  [
    'ESB substation in a scheme is not energy',
    row('Construction of a cold storage facility with ESB substation and all associated site works'),
    'warehouse_logistics',
  ],
  ['110kV substation is energy', row('Construction of a 110kV substation and underground grid connection'), 'energy'],
  ['straw shed on a farm', row('Construction of a loose bedded straw shed on existing farm'), 'agricultural'],
  [
    'change of use to one apartment',
    row('Change of use of first floor from retail to residential use (1 no. apartment)', { num_units: 1 }),
    'change_of_use',
  ],
  [
    'domestic works without a building noun',
    row('Permission for a dormer window extension to the rear roof'),
    'residential_extension',
  ],
  ['shopping centre', row('Alterations and extension to existing shopping centre'), 'retail'],
  ['land use code RES, one unit', row('Works at site', { land_use_code: 'RES', num_units: 1 }), 'house'],
  [
    'land use code RES',
    row('Site works to form new access road and hardstanding', { land_use_code: 'RES' }),
    'residential_extension',
  ],
  [
    'land use code COM',
    row('Illuminated fascia and projecting signs on gable wall', { land_use_code: 'COM' }),
    'commercial',
  ],
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
  for (const u of seen) assert.ok((USE_CLASS_CODES as readonly string[]).includes(u), u);
  for (const u of USE_CLASS_CODES) assert.ok(seen.has(u), `no case yields ${u}`);
});

const verticalsOf = (description: string, extra: Partial<ClassifyInput> = {}): string[] =>
  classifyApplication({ description, ...extra }).verticals;

const VERTICAL_CASES: [string, string[], string[]][] = [
  // description, must include, must exclude
  ['Installation of solar photovoltaic panels on roof of dwelling', ['solar'], ['landscaping', 'roofing']], // "on roof": where, not roofing
  ['Permission for 24 no. PV panels', ['solar'], []],
  [
    'Attic conversion with dormer and velux rooflights',
    ['roofing', 'insulation', 'electrical'],
    ['solar', 'groundworks'],
  ],
  ['New boundary wall, patio and landscaping to front garden', ['landscaping'], ['roofing']],
  ['Replacement of windows and front door', ['windows_doors'], []],
  ['Installation of an air to water heat pump', ['heat_pumps'], []],
  ['External wall insulation to existing dwelling', ['insulation'], ['glazing_facades']],
  ['Installation of EV charging points', ['ev_charging'], []],
  ['Demolition of existing shed', ['demolition'], []],
  ['Removal of existing garage and construction of garden room', ['demolition', 'groundworks', 'roofing'], []],
  ['Illuminated signage and new shopfront', ['signage_shopfronts', 'glazing_facades'], []],
  ['Telecommunications mast with antennae', ['telecoms'], ['electrical']],
  ['Construction of slatted shed and silage pit', ['agricultural_buildings', 'concrete', 'steel_structures'], []],
  [
    'Construction of a new data centre with 4 data halls',
    ['data_centre_fitout', 'electrical', 'hvac', 'security_fire', 'steel_structures', 'concrete'],
    [],
  ],
  [
    'Apartment block of 8 storeys',
    [
      'scaffolding',
      'roofing',
      'windows_doors',
      'electrical',
      'plumbing_heating',
      'insulation',
      'kitchens_interiors',
      'flooring',
      'groundworks',
      'security_fire',
    ],
    ['heat_pumps'],
  ],
  ['New kitchen and timber flooring', ['kitchens_interiors', 'flooring'], []],
  ['Foundations and drainage works', ['groundworks'], []],
  ['Installation of sprinkler system and CCTV', ['security_fire'], []],
  ['New ventilation and air conditioning plant', ['hvac'], []],
  ['Curtain wall glazing to facade', ['glazing_facades'], []],
  ['Erection of scaffolding', ['scaffolding'], []],
  ['New steel portal frame structure', ['steel_structures'], []],
  ['Precast concrete retaining wall', ['concrete', 'groundworks'], []], // retaining is not retention
  ['Rewiring and new lighting', ['electrical'], []],
  ['New bathroom and boiler', ['plumbing_heating'], []],
  ['Solar farm of 40 MW', ['solar', 'electrical'], ['agricultural_buildings']],
  ['Straw shed on existing farm', ['agricultural_buildings'], []],
  ['Uninsulated outbuilding', [], ['insulation']], // keywords match at word starts only
  // the kinds of build and what they imply (docs/data-quality.md)
  [
    'Single storey extension to rear',
    ['groundworks', 'roofing', 'windows_doors', 'electrical', 'insulation'],
    ['scaffolding', 'flooring', 'kitchens_interiors'],
  ],
  ['Construction of 2 storey extension to the rear of existing dwelling', ['groundworks', 'scaffolding'], []],
  ['Single storey extension to side and rear of two storey semi detached dwelling', ['groundworks'], ['scaffolding']],
  ['Construct first floor extension over existing extension to rear', ['roofing', 'scaffolding'], ['groundworks']],
  [
    'SHEC - two storey, detached residential unit (two bedroom)',
    ['groundworks', 'plumbing_heating', 'kitchens_interiors', 'flooring', 'scaffolding'],
    ['heat_pumps'],
  ],
  ['Change of use from retail to coffee shop/restaurant', ['kitchens_interiors', 'hvac'], ['plumbing_heating']],
  ['Change of use from restaurant to retail', ['kitchens_interiors'], ['hvac']],
  ['Permission for change of use from office to dental surgery', ['kitchens_interiors', 'plumbing_heating'], []],
  ['Widen existing vehicular access', ['groundworks', 'landscaping'], ['roofing']],
  ['Provision of off-street parking in front garden', ['groundworks', 'landscaping'], []],
  ['Replacement of existing shop signage', ['signage_shopfronts'], ['electrical', 'kitchens_interiors', 'flooring']],
  // false friends
  ['Single storey extension with lean-to roof to side', ['roofing'], ['steel_structures']],
  ['Provision of a new signage to the existing shop front', ['signage_shopfronts'], ['glazing_facades']],
  [
    '2 no. signs on glazing panels of existing entrance door',
    ['signage_shopfronts'],
    ['windows_doors', 'glazing_facades'],
  ],
  ['Change of use of existing basement to office', ['kitchens_interiors'], ['groundworks']],
  ['Conversion of attic to a store room with dormer', ['roofing'], ['signage_shopfronts']],
  ['Single storey extension to the rear at 4 Ashfield Gardens', ['groundworks'], ['landscaping']],
  [
    'Demolish lean-to kitchen to rear & construct new extension to rear',
    ['demolition', 'groundworks'],
    ['kitchens_interiors'],
  ],
  [
    'Partial demolition of front boundary wall & replace with vehicular access',
    ['groundworks', 'landscaping'],
    ['demolition'],
  ],
];

for (const [description, include, exclude] of VERTICAL_CASES) {
  test(`classifyApplication verticals: ${description}`, () => {
    const v = verticalsOf(description);
    for (const code of include) assert.ok(v.includes(code), `${code} missing from ${v.join(',')}`);
    for (const code of exclude) assert.not.ok(v.includes(code), `${code} unexpected in ${v.join(',')}`);
    assert.equal(
      v,
      VERTICALS.map((x) => x.code).filter((c) => v.includes(c)),
      'in published order, no duplicates',
    );
  });
}

test('classifyApplication: every vertical is produced by at least one description case', () => {
  const seen = new Set(VERTICAL_CASES.flatMap(([d]) => verticalsOf(d)));
  for (const v of VERTICALS) assert.ok(seen.has(v.code), v.code);
});

test('classifyApplication: a description with no trade and no build has no vertical (no fallback)', () => {
  assert.equal(verticalsOf('Cleaning works throughout'), []);
  assert.equal(verticalsOf('Erection of commemorative plaque at street level'), []);
});

test("classifyApplication: the explicit verticals are the published keyword regexes' matches", () => {
  const samples = VERTICAL_CASES.map(([d]) => d).concat(USE_CLASS_CASES.map(([, r]) => r.description));
  for (const d of samples) {
    const c = classifyApplication({ description: d });
    if (c.works_kind !== 'new_works' || /demoli|remov|knock/i.test(d)) continue; // what comes down is not scanned for trades
    const fromKeywords = VERTICALS.filter((v) => v.keywords.test(d)).map((v) => v.code);
    assert.equal(c.explicit_verticals, fromKeywords, d);
  }
});

const WORKS_KIND_CASES: [string, Partial<ClassifyInput>, string][] = [
  ['Single storey extension to rear', {}, 'new_works'],
  ['RETENTION - 1.875m high metal post and glazed wind break', {}, 'retention'],
  ['PROTECTED STRUCTURE-RETENTION of new extension & other works', {}, 'retention'],
  ['Continuance of 3000mm high palisade fence previously granted', {}, 'retention'],
  ['Permission for single storey extension & Retention for existing utility room', {}, 'new_works'],
  ['RETENTION & PERMISSION - Retain existing shed & create utility room', {}, 'new_works'],
  ['Permanent retention permission for 1 no. 48 sheet advertising sign', {}, 'retention'],
  ['Extension of Duration-Complete 2 storey extension to the side', {}, 'extension_of_duration'],
  ['Construction of 4 storey apartment building', { application_number: '5641/05/x1' }, 'extension_of_duration'],
  ['Amendments to previously approved planning application No:4109/08', {}, 'amendment'],
  ['Single storey extension (revisions to previously approved plans, plan no 3303/09', {}, 'amendment'],
  ['Alteration to condition no. 2 to permission ref. no. 4052/10', {}, 'amendment'],
  ['Amendments and alterations to the existing facades to include insulation', {}, 'new_works'],
  ['EXPP: Single storey extension across the rear of existing house.', {}, 'declaration'],
  ['Section 57 Declaration', {}, 'declaration'],
  ['Outline permission for a dwelling house', {}, 'outline'],
  ['Construction of a dwelling house', { application_type: 'OUTLINE PERMISSION' }, 'outline'],
  ['Single storey extension to rear', { application_type: 'RETENTION' }, 'retention'],
  ['Single storey extension to rear', { application_type: 'EXTENSION OF DURATION' }, 'extension_of_duration'],
  [
    'Retention of extension and permission for new porch',
    { application_type: 'PERMISSION AND RETENTION' },
    'new_works',
  ],
];
for (const [description, extra, kind] of WORKS_KIND_CASES) {
  test(`classifyWorksKind: ${description} → ${kind}`, () => {
    assert.is(classifyWorksKind({ description, ...extra }), kind);
    assert.is(classifyApplication({ description, ...extra }).works_kind, kind);
  });
}

test('worksKindOfType: states a kind, or nothing for a plain permission', () => {
  assert.is(worksKindOfType('RETENTION'), 'retention');
  assert.is(worksKindOfType('Permission for Retention'), 'retention');
  assert.is(worksKindOfType('OUTLINE PERMISSION'), 'outline');
  assert.is(worksKindOfType('Extension of Duration'), 'extension_of_duration');
  assert.is(worksKindOfType('PERMISSION'), null);
  assert.is(worksKindOfType(null), null);
  for (const k of [worksKindOfType('RETENTION'), 'new_works'])
    assert.ok((WORKS_KINDS as readonly string[]).includes(k!));
});

test('classifyApplication: no work to sell (retention, amendment, declaration) publishes no verticals, whatever the text names', () => {
  for (const d of [
    'RETENTION - Single storey sunroom with rooflights',
    'EXPP: Construction of a single storey extension to the rear',
    'Amendments to previously approved two storey extension',
  ]) {
    const c = classifyApplication({ description: d });
    assert.ok(NO_WORK_KINDS.has(c.works_kind), d);
    assert.equal([c.verticals, c.explicit_verticals, c.vertical_evidence], [[], [], []], d);
  }
  // an extension of duration keeps the permitted works' verticals
  assert.ok(verticalsOf('Extension of Duration-Complete 2 storey extension to the side').includes('scaffolding'));
});

test('classifyApplication: evidence per vertical — the matched trade words, or what implies it', () => {
  const c = classifyApplication({ description: 'Single storey extension to rear with 2 no. velux rooflights' });
  assert.equal(c.vertical_evidence.length, c.verticals.length);
  c.verticals.forEach((v, i) => assert.ok(c.vertical_evidence[i]!.startsWith(`${v}: `), c.vertical_evidence[i]));
  assert.ok(c.vertical_evidence.includes('groundworks: implied by extension'), c.vertical_evidence.join(' | '));
  const roofing = c.vertical_evidence.find((e) => e.startsWith('roofing: '))!;
  assert.match(roofing, /^roofing: (?:velux|roof)/);
  assert.equal(c.explicit_verticals, ['roofing']);
  for (const e of c.vertical_evidence) {
    if (e.includes('implied by')) continue;
    for (const w of e.slice(e.indexOf(': ') + 2).split(', '))
      for (const part of w.split(' … '))
        assert.ok('single storey extension to rear with 2 no. velux rooflights'.includes(part), part);
  }
});

test('classifyApplication: a person named in the description never reaches the output, nor classifies it', () => {
  for (const d of [
    'I, Mary Glass, intend to apply for permission for a single storey extension to rear of 12 Main Street',
    'We, John Roofe and Ann Roofe, intend to apply to Dublin City Council for permission for a dormer window to rear',
    'Mary Glass intends to apply for permission for new vehicular entrance',
    'I, Mary Glass, of 12 Main Street, Glasnevin, intend to apply for permission for a two storey extension to rear',
  ]) {
    const c = classifyApplication({ description: d });
    const out = JSON.stringify(c).toLowerCase();
    for (const name of ['mary', 'glass', 'john', 'ann ', 'roofe'])
      assert.not.ok(out.includes(name), `${name} in ${out}`);
    assert.not.ok(c.verticals.includes('glazing_facades'), d);
    assert.ok(c.verticals.length > 0, d);
  }
});

test('the vertical filter and explicit_vertical filter accept exactly the VERTICALS codes', () => {
  for (const name of ['vertical', 'explicit_vertical']) {
    const f = LEAD_FILTERS.find((x) => x.name === name) as { values: readonly string[] };
    assert.equal(
      [...f.values],
      VERTICALS.map((v) => v.code),
      name,
    );
  }
  const wk = LEAD_FILTERS.find((x) => x.name === 'works_kind') as { values: readonly string[] };
  assert.equal([...wk.values], [...WORKS_KINDS]);
});

test('vertical tables are consistent', () => {
  const codes: readonly string[] = VERTICALS.map((v) => v.code);
  assert.equal(codes, [...codes].sort(), 'VERTICALS sorted by code');
  for (const v of VERTICALS) {
    assert.match(v.code, /^[a-z_]+$/);
    assert.ok(v.nace.length > 0, `${v.code} has NACE codes`);
    for (const n of v.nace) assert.match(n, /^\d{4}$/);
    // The scanner runs on lower-cased text, so patterns must not contain upper-case literals.
    assert.not.match(v.keywords.source.replace(/\\./g, ''), /[A-Z]/, v.code);
  }
  for (const [u, list] of Object.entries(USE_CLASS_VERTICALS)) {
    assert.ok((USE_CLASS_CODES as readonly string[]).includes(u), u);
    for (const code of list) assert.ok(codes.includes(code), `${u} → ${code}`);
  }
  for (const u of USE_CLASS_CODES) {
    assert.ok(RATE_PER_M2[u] !== undefined, `rate for ${u}`);
    assert.ok(TYPICAL_VALUE[u] !== undefined, `typical value for ${u}`);
  }
  const brief: Record<string, string> = {
    roofing: '4391',
    electrical: '4321',
    plumbing_heating: '4322',
    landscaping: '8130',
    windows_doors: '4332',
    groundworks: '4312',
    demolition: '4311',
    insulation: '4329',
    flooring: '4333',
    solar: '3511',
  };
  for (const [code, nace] of Object.entries(brief))
    assert.ok(VERTICALS.find((v) => v.code === code)!.nace.includes(nace), code);
});

const DEMOLITION_CASES: [string, boolean][] = [
  ['Demolition of existing garage', true],
  ['Partial demolition of rear wall', false], // a wall is not a building (docs/data-quality.md)
  ['Demolish rear extension & shed & construct new 2 storey extension', true],
  ['Remove garage & construct kitchen extension to side', true],
  ['Part demolition to allow vehicular access to side', false],
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

test('estimateValue tables: brief rates and factors', () => {
  assert.equal(
    [
      RATE_PER_M2.house,
      RATE_PER_M2.residential_multi,
      RATE_PER_M2.office,
      RATE_PER_M2.data_centre,
      RATE_PER_M2.warehouse_logistics,
      RATE_PER_M2.agricultural,
      RATE_PER_M2.residential_extension,
    ],
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
  for (const u of USE_CLASS_CODES) assert.ok(doc.includes(`\`${u}\``), `use class ${u}`);
  for (const s of ['minor', 'medium', 'large', 'major']) assert.ok(doc.includes(`\`${s}\``), `scale ${s}`);
});

test.run();
