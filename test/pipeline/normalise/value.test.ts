/** The valuation a lead publishes (pipeline/normalise/value.ts): floor area, units, a stated quantity, then a typical value. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TYPICAL_VALUE } from '../../../pipeline/normalise/classify.ts';
import { estimateValue } from '../../../pipeline/normalise/value.ts';

const ext = (description: string) => ({
  useClass: 'residential_extension',
  floorAreaM2: null,
  units: null,
  county: 'Clare',
  description,
});

const CASES: [string, Parameters<typeof estimateValue>[0], number, string][] = [
  [
    'house by floor area, Dublin factor',
    { useClass: 'house', floorAreaM2: 200, units: 1, county: 'Dublin', description: '' },
    552_000,
    'floor_area',
  ],
  [
    'floor area before a stated quantity',
    {
      useClass: 'industrial',
      floorAreaM2: 1000,
      units: null,
      county: 'Laois',
      description: 'warehouse with 400 kWp solar PV',
    },
    1_300_000,
    'floor_area',
  ],
  [
    'multi by units',
    { useClass: 'residential_multi', floorAreaM2: null, units: 20, county: 'Kerry', description: '' },
    6_400_000,
    'units',
  ],
  [
    'solar: panels (0.42 kW each, €1,500/kW + €1,500)',
    ext('Installation of 12 no. solar PV panels on roof of dwelling'),
    9_000,
    'quantity',
  ],
  [
    'solar: twice the panels, a higher value',
    ext('Installation of 24 no. solar PV panels on roof of dwelling'),
    17_000,
    'quantity',
  ],
  ['solar: stated kWp', ext('Installation of a 6.3kWp solar PV array on the rear roof'), 11_000, 'quantity'],
  [
    'solar: a commercial roof by area (0.2 kWp/m², €1,000/kW + €10,000)',
    {
      useClass: 'industrial',
      floorAreaM2: null,
      units: null,
      county: 'Meath',
      description: 'Roof-mounted solar PV array (approx. 2000 sq.m) on existing warehouse',
    },
    410_000,
    'quantity',
  ],
  ['solar without a size → typical', ext('Installation of solar PV panels on roof'), 12_000, 'typical'],
  ['heat pump kW', ext('Installation of an air source heat pump (8kW) to side of dwelling'), 14_000, 'quantity'],
  [
    'heat pump without kW → typical',
    ext('Installation of an air source heat pump to side of dwelling'),
    15_000,
    'typical',
  ],
  [
    'EV charging points',
    {
      useClass: 'commercial',
      floorAreaM2: null,
      units: null,
      county: 'Clare',
      description: 'Installation of 10 no. EV charging points at existing car park',
    },
    65_000,
    'quantity',
  ],
  [
    'windows counted',
    ext('Permission to replace 8 no. existing timber sash windows with double glazed units'),
    10_000,
    'quantity',
  ],
  [
    'signs counted',
    {
      useClass: 'retail',
      floorAreaM2: null,
      units: null,
      county: 'Clare',
      description: '3 no. illuminated fascia signs to front elevation',
    },
    10_000,
    'quantity',
  ],
  [
    'a mast by its height',
    {
      useClass: 'telecoms',
      floorAreaM2: null,
      units: null,
      county: 'Clare',
      description: 'Permission for a 24m monopole telecommunications support structure with antennae',
    },
    80_000,
    'quantity',
  ],
  [
    'signs counted, five words between',
    {
      useClass: 'commercial',
      floorAreaM2: null,
      units: null,
      county: 'Clare',
      description: 'Retention of 4 no. externally lit fascia and projecting signs',
    },
    13_000,
    'quantity',
  ],
  [
    'a shopfront by its width',
    {
      useClass: 'retail',
      floorAreaM2: null,
      units: null,
      county: 'Clare',
      description: 'New shopfront (6.5m frontage) at 85 Main Street',
    },
    32_000,
    'quantity',
  ],
  [
    'signage typical',
    { useClass: 'retail', floorAreaM2: null, units: null, county: 'Clare', description: 'Retention of signage' },
    8_000,
    'typical',
  ],
  [
    'energy per MW',
    { useClass: 'energy', floorAreaM2: null, units: null, county: 'Offaly', description: 'Solar farm of 45.5 MW' },
    45_500_000,
    'quantity',
  ],
  [
    'energy: a solar array by its panels',
    {
      useClass: 'energy',
      floorAreaM2: null,
      units: null,
      county: 'Offaly',
      description: 'Ground-mounted solar PV array of 2000 no. panels',
    },
    840_000,
    'quantity',
  ],
  [
    'energy typical',
    { useClass: 'energy', floorAreaM2: null, units: null, county: 'Offaly', description: 'Substation' },
    TYPICAL_VALUE.energy!,
    'typical',
  ],
  [
    'an extension naming panels is valued as the extension',
    ext('Single storey extension to rear with 6 no. solar panels'),
    TYPICAL_VALUE.residential_extension!,
    'typical',
  ],
  [
    'house by floor area, Cork factor',
    { useClass: 'house', floorAreaM2: 200, units: 1, county: 'Cork', description: '' },
    504_000,
    'floor_area',
  ],
  [
    'house by floor area, no factor',
    { useClass: 'house', floorAreaM2: 200, units: 1, county: 'Mayo', description: '' },
    480_000,
    'floor_area',
  ],
  [
    'data centre by floor area',
    { useClass: 'data_centre', floorAreaM2: 10_000, units: null, county: 'Meath', description: '' },
    126_000_000,
    'floor_area',
  ],
  [
    'warehouse rounded to 1,000',
    { useClass: 'warehouse_logistics', floorAreaM2: 1_234.5, units: null, county: 'Laois', description: '' },
    1_358_000,
    'floor_area',
  ],
  [
    'multi by units, Dublin',
    { useClass: 'residential_multi', floorAreaM2: 0, units: 10, county: 'Dublin', description: '' },
    3_680_000,
    'units',
  ],
  [
    'office units ignored → typical',
    { useClass: 'office', floorAreaM2: null, units: 3, county: 'Mayo', description: '' },
    1_500_000,
    'typical',
  ],
  [
    'extension typical',
    {
      useClass: 'residential_extension',
      floorAreaM2: null,
      units: null,
      county: 'Dublin',
      description: 'Extension to rear',
    },
    60_000,
    'typical',
  ],
  [
    'house typical',
    { useClass: 'house', floorAreaM2: null, units: null, county: 'Clare', description: 'New dwelling' },
    380_000,
    'typical',
  ],
  [
    'data centre typical',
    { useClass: 'data_centre', floorAreaM2: null, units: null, county: 'Dublin', description: 'Data centre' },
    80_000_000,
    'typical',
  ],
  [
    'unknown use class → other',
    { useClass: 'nope', floorAreaM2: 100, units: null, county: 'Cork', description: '' },
    158_000,
    'floor_area',
  ],
];
for (const [name, input, value, basis] of CASES) {
  test(`estimateValue: ${name}`, () => {
    assert.equal(estimateValue(input), { est_value: value, est_value_basis: basis });
  });
}

test.run();
