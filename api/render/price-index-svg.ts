/**
 * Renderer of the price-index chart (`GET /v1/intel/analytics/price-index.svg`): the national
 * repeat-sale index and, optionally, one county's, as lines with their 95% confidence bands.
 * Pure: series in, a standalone SVG document (with <title> and <desc> for screen readers) out.
 */

export interface ChartPoint {
  quarter: string;
  period_start: string;
  index_value: number;
  ci_low: number;
  ci_high: number;
  low_sample: boolean;
}

export interface ChartSeries {
  area: string;
  points: ChartPoint[];
}

const W = 760;
const H = 380;
const M = { top: 48, right: 24, bottom: 44, left: 56 };
const COLOURS = ['#1f4e79', '#c55a11'];

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (x: number): string => (Math.round(x * 10) / 10).toString();

/** Days since 1970 of an ISO date (for the x axis). */
const day = (iso: string): number => Date.parse(`${iso}T00:00:00Z`) / 86_400_000;

/** "Nice" tick step for a range: 1, 2 or 5 × a power of ten, about `n` ticks. */
function step(range: number, n: number): number {
  const raw = range / Math.max(1, n);
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
}

/**
 * Draw the chart. `series[0]` is the national series; an empty series list draws the frame and
 * a "no data" note. `caption` is the subtitle (release, base quarter).
 */
export function priceIndexSvg(series: readonly ChartSeries[], caption: string): string {
  const pts = series.flatMap((s) => s.points);
  const title = `Repeat-sale house price index: ${series.map((s) => s.area).join(' and ') || 'no data'}`;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="t d" font-family="system-ui, sans-serif" font-size="12">`,
  );
  out.push(`<title id="t">${esc(title)}</title>`);
  const last = series.map((s) =>
    s.points.length
      ? `${s.area} ${fmt(s.points.at(-1)!.index_value)} in ${s.points.at(-1)!.quarter}`
      : `${s.area}: no data`,
  );
  out.push(
    `<desc id="d">${esc(`${caption}. Latest: ${last.join('; ') || 'none'}. Shaded bands are 95% confidence intervals.`)}</desc>`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${M.left}" y="20" font-size="15" font-weight="600" fill="#222">${esc(title)}</text>`);
  out.push(`<text x="${M.left}" y="36" fill="#555">${esc(caption)}</text>`);
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  if (pts.length === 0) {
    out.push(
      `<text x="${W / 2}" y="${H / 2}" text-anchor="middle" fill="#777">No index points in this range</text></svg>`,
    );
    return out.join('\n');
  }
  const x0 = Math.min(...pts.map((p) => day(p.period_start)));
  const x1 = Math.max(...pts.map((p) => day(p.period_start)), x0 + 1);
  let y0 = Math.min(...pts.map((p) => p.ci_low));
  let y1 = Math.max(...pts.map((p) => p.ci_high));
  const ys = step(y1 - y0 || 10, 6);
  y0 = Math.floor(y0 / ys) * ys;
  y1 = Math.ceil(y1 / ys) * ys;
  if (y1 === y0) y1 = y0 + ys;
  const X = (d: string): number => M.left + ((day(d) - x0) / (x1 - x0)) * pw;
  const Y = (v: number): number => M.top + ph - ((v - y0) / (y1 - y0)) * ph;
  // grid and axes
  out.push(`<g stroke="#e3e3e3" fill="#555">`);
  for (let v = y0; v <= y1 + 1e-9; v += ys) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${fmt(Y(v))}" y2="${fmt(Y(v))}"/>`);
    out.push(`<text x="${M.left - 6}" y="${fmt(Y(v) + 4)}" text-anchor="end" stroke="none">${fmt(v)}</text>`);
  }
  const yFirst = new Date(x0 * 86_400_000).getUTCFullYear();
  const yLast = new Date(x1 * 86_400_000).getUTCFullYear();
  const yStep = Math.max(1, Math.ceil((yLast - yFirst + 1) / 12));
  for (let y = yFirst; y <= yLast; y += yStep) {
    const d = `${y}-01-01`;
    if (day(d) < x0 || day(d) > x1) continue;
    out.push(`<line x1="${fmt(X(d))}" x2="${fmt(X(d))}" y1="${M.top}" y2="${M.top + ph}"/>`);
    out.push(`<text x="${fmt(X(d))}" y="${M.top + ph + 16}" text-anchor="middle" stroke="none">${y}</text>`);
  }
  out.push(`</g>`);
  out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${M.top + ph}" y2="${M.top + ph}" stroke="#888"/>`);
  out.push(
    `<text x="${M.left - 40}" y="${M.top + ph / 2}" transform="rotate(-90 ${M.left - 40} ${M.top + ph / 2})" text-anchor="middle" fill="#555">Index (base = 100)</text>`,
  );
  // bands, then lines, then low-sample markers
  series.forEach((s, i) => {
    if (!s.points.length) return;
    const c = COLOURS[i % COLOURS.length]!;
    const upper = s.points.map((p) => `${fmt(X(p.period_start))},${fmt(Y(p.ci_high))}`);
    const lower = s.points.map((p) => `${fmt(X(p.period_start))},${fmt(Y(p.ci_low))}`).reverse();
    out.push(
      `<polygon class="band" points="${[...upper, ...lower].join(' ')}" fill="${c}" fill-opacity="0.15" stroke="none"/>`,
    );
  });
  series.forEach((s, i) => {
    if (!s.points.length) return;
    const c = COLOURS[i % COLOURS.length]!;
    const d = s.points.map((p, k) => `${k ? 'L' : 'M'}${fmt(X(p.period_start))},${fmt(Y(p.index_value))}`).join(' ');
    out.push(
      `<path class="series" data-area="${esc(s.area)}" data-points="${s.points.length}" d="${d}" fill="none" stroke="${c}" stroke-width="2"/>`,
    );
    for (const p of s.points.filter((q) => q.low_sample)) {
      out.push(
        `<circle cx="${fmt(X(p.period_start))}" cy="${fmt(Y(p.index_value))}" r="2.5" fill="#fff" stroke="${c}"><title>${esc(`${s.area} ${p.quarter}: few pairs`)}</title></circle>`,
      );
    }
  });
  // legend
  series.forEach((s, i) => {
    const lx = W - M.right - 190;
    const ly = M.top + 12 + i * 18;
    out.push(
      `<line x1="${lx}" x2="${lx + 22}" y1="${ly - 4}" y2="${ly - 4}" stroke="${COLOURS[i % COLOURS.length]}" stroke-width="3"/>`,
    );
    out.push(`<text x="${lx + 28}" y="${ly}" fill="#222">${esc(s.area)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
