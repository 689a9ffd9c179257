/**
 * Synthetic CSO building-material wholesale price index in the PxStat WPM28 CSV layout
 * (`materials/WPM28.csv`): for every material and month from January 2015 to the last month
 * that ended before the snapshot, the index (base 2015 = 100) and its percentage change over
 * 12 months, as the table carries both statistics. Each material follows a drift of its own plus
 * the 2021–2022 surge (steel and timber most), with a little monthly noise; "All materials" is
 * the geometric mean of the others. The table's size does not depend on the scale.
 */
import { MATERIAL_COLUMNS } from '../sources/formats.ts';
import { FileSink, type FileStats } from './output.ts';
import { recordRng } from './rng.ts';

/** Material, PxStat code, yearly drift, height of the 2021–2022 surge. */
export const MATERIALS: readonly [string, string, number, number][] = [
  ['Stone, sand and gravel', '601', 0.035, 0.1],
  ['Cement', '611', 0.015, 0.25],
  ['Ready mixed mortar and concrete', '612', 0.025, 0.18],
  ['Concrete blocks and bricks', '613', 0.02, 0.15],
  ['Other concrete products including precast', '614', 0.02, 0.15],
  ['Structural steel', '621', 0.01, 0.55],
  ['Fabricated structural steel', '622', 0.012, 0.45],
  ['Reinforcing metal', '623', 0.01, 0.6],
  ['Rough timber (including plain sawn)', '631', 0.015, 0.5],
  ['Plywood', '632', 0.02, 0.45],
  ['Insulating materials', '641', 0.02, 0.3],
  ['Plumbing materials', '651', 0.02, 0.2],
  ['Electrical fittings', '652', 0.025, 0.15],
  ['Paint, varnish and similar coatings', '661', 0.02, 0.12],
  ['Glass', '671', 0.015, 0.2],
  ['Bituminous felt', '681', 0.02, 0.3],
];

/** Noise-free index of material `i` in month `t` (months since 2015-01). */
export function materialLevel(i: number, t: number): number {
  const [, , drift, surge] = MATERIALS[i]!;
  const years = (t - 5.5) / 12; // 2015 averages 100
  const peak = (t - (2022 - 2015) * 12 - 6) / 9; // centred on mid-2022, ~9 months wide, part of it stays
  const bump = surge * (Math.exp(-peak * peak) * 0.6 + 0.4 / (1 + Math.exp(-peak * 2)));
  return 100 * Math.exp(drift * years) * (1 + bump);
}

const q = (s: string): string => `"${s}"`;

/** Write `materials/WPM28.csv` (UTF-8 with BOM, CRLF, every field quoted). */
export function writeMaterials(seed: number, asOf: string, outDir: string): FileStats {
  const sink = new FileSink(`${outDir}/materials/WPM28.csv`, { encoding: 'utf-8', bom: true, eol: '\r\n' });
  sink.header(MATERIAL_COLUMNS.map(q).join(','));
  const [ay, am] = asOf.split('-').map(Number) as [number, number];
  const months = (ay - 2015) * 12 + (am - 1); // months that ended before the snapshot's month
  const names = [
    'January',
    'February',
    'March',
    'April',
    'May',
    'June',
    'July',
    'August',
    'September',
    'October',
    'November',
    'December',
  ];
  const series: number[][] = MATERIALS.map((_m, i) =>
    Array.from(
      { length: months },
      (_x, t) => materialLevel(i, t) * Math.exp(recordRng(seed, 'material', i * 10_000 + t).normal() * 0.004),
    ),
  );
  const all = Array.from({ length: months }, (_x, t) =>
    Math.exp(series.reduce((s, v) => s + Math.log(v[t]!), 0) / series.length),
  );
  const rows: [string, string, number[]][] = [
    ['All materials', '-', all],
    ...MATERIALS.map(([name, code], i): [string, string, number[]] => [name, code, series[i]!]),
  ];
  let n = 0;
  for (const [stat, label, unit] of [
    ['WPM28C01', 'Wholesale Price Index (Excl VAT) for Building and Construction Materials', 'Base 2015=100'],
    [
      'WPM28C02',
      'Percentage Change over 12 months for Wholesale Price Index (Excl VAT) for Building and Construction Materials',
      '%',
    ],
  ] as const) {
    for (let t = 0; t < months; t++) {
      const y = 2015 + Math.floor(t / 12);
      const m = (t % 12) + 1;
      for (const [name, code, values] of rows) {
        const r = recordRng(seed, 'material-row', n++);
        let value =
          stat === 'WPM28C01'
            ? values[t]!.toFixed(1)
            : t >= 12
              ? ((Number(values[t]!.toFixed(1)) / Number(values[t - 12]!.toFixed(1)) - 1) * 100).toFixed(1)
              : '';
        if (stat === 'WPM28C01' && r.chance(0.0008)) value = 'n.a.'; // a damaged cell: the adapter rejects it
        sink.row(
          [
            q(stat),
            q(label),
            q(`${y}${String(m).padStart(2, '0')}`),
            q(`${y} ${names[m - 1]}`),
            q(code),
            q(name),
            q(unit),
            q(value),
          ].join(','),
        );
      }
    }
  }
  return sink.close();
}
