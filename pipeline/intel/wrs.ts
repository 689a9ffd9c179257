/**
 * Weighted repeat-sales regression (Case & Shiller 1987, the three-stage "WRS"), from pair cells.
 *
 * A pair of sales of one home, bought in quarter a and sold in quarter b, says
 * ln(P_b / P_a) = β_b − β_a + ε, where β is the log price index (β_base = 0). Every pair of a
 * cell (a, b) has the same regressors, so the whole regression needs only each cell's count n,
 * Σy and Σy² (y = ln P_b/P_a), which DuckDB aggregates from the pairs (pipeline/intel/pairs.ts):
 *
 *   1. OLS of y on the period dummies (−1 at a, +1 at b) → β¹;
 *   2. the squared residuals regressed on (1, b − a): the error variance grows with the time
 *      between the sales, var(ε) = A + B·(b − a) (floored at a share of the mean, so it stays > 0);
 *   3. WLS with weights 1 / var(ε) → β, Var(β) = s² (X'WX)⁻¹ with s² the weighted residual variance.
 *
 * The normal equations have one row per quarter (~70), so they are solved here by Cholesky.
 * Pure: no I/O.
 */

/** All pairs bought in period `a` and sold in period `b` (a < b): count, Σy, Σy². */
export interface PairCell {
  a: number;
  b: number;
  n: number;
  sy: number;
  syy: number;
}

export interface IndexPoint {
  period: number;
  /** β: log of the index relative to the base period. */
  log_index: number;
  /** Standard error of β. */
  std_error: number;
  /** Pairs with a sale in this period. */
  pairs: number;
}

export interface WrsResult {
  base: number;
  points: IndexPoint[];
  /** Stage-2 error variance model var(ε) = A + B·gap (gap in periods). */
  variance: { a: number; b: number };
  /** Weighted residual variance of stage 3. */
  sigma2: number;
  pairs: number;
  /** Periods left out because their pairs do not connect them to the base period. */
  disconnected: number[];
}

export interface WrsOptions {
  /** Lower bound of the stage-2 variance, as a share of the mean squared stage-1 residual. */
  minVarianceShare?: number;
}

/** The regression's design: the cells and periods of the base's group, each period's column. */
interface Design {
  cells: PairCell[];
  /** The periods of the group, earliest (the base) first. */
  periods: number[];
  base: number;
  /** Column of each period but the base in the normal equations. */
  col: Map<number, number>;
  /** Number of columns (periods − 1). */
  k: number;
}

/**
 * The connected groups of periods (union-find): the design of the group with the most pairs,
 * and the periods of the other groups.
 */
function largestGroup(all: readonly PairCell[]): { design: Design; disconnected: number[] } {
  const parent = new Map<number, number>();
  const find = (x: number): number => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    while (parent.get(x) !== r) {
      const nx = parent.get(x)!;
      parent.set(x, r);
      x = nx;
    }
    return r;
  };
  for (const c of all) {
    if (!parent.has(c.a)) parent.set(c.a, c.a);
    if (!parent.has(c.b)) parent.set(c.b, c.b);
    const ra = find(c.a);
    const rb = find(c.b);
    if (ra !== rb) parent.set(ra, rb);
  }
  const weight = new Map<number, number>();
  for (const c of all) weight.set(find(c.a), (weight.get(find(c.a)) ?? 0) + c.n);
  const root = [...weight.entries()].sort((x, y) => y[1] - x[1] || x[0] - y[0])[0]![0];
  const cells = all.filter((c) => find(c.a) === root);
  const periods = [...parent.keys()].filter((p) => find(p) === root).sort((x, y) => x - y);
  const disconnected = [...parent.keys()].filter((p) => find(p) !== root).sort((x, y) => x - y);
  const base = periods[0]!;
  const col = new Map<number, number>(periods.slice(1).map((p, i) => [p, i]));
  return { design: { cells, periods, base, col, k: periods.length - 1 }, disconnected };
}

/** Solve the normal equations with weight `w` per cell: β and the Cholesky factor of X'WX. */
function solveWeighted(d: Design, w: (c: PairCell) => number): { beta: Float64Array; m: Float64Array } {
  const { cells, col, k } = d;
  const m = new Float64Array(k * k);
  const v = new Float64Array(k);
  for (const c of cells) {
    const wt = w(c);
    const ia = col.get(c.a);
    const ib = col.get(c.b);
    if (ia !== undefined) {
      m[ia * k + ia] += wt * c.n;
      v[ia] -= wt * c.sy;
    }
    if (ib !== undefined) {
      m[ib * k + ib] += wt * c.n;
      v[ib] += wt * c.sy;
    }
    if (ia !== undefined && ib !== undefined) {
      m[ia * k + ib] -= wt * c.n;
      m[ib * k + ia] -= wt * c.n;
    }
  }
  const l = cholesky(m, k);
  return { beta: cholSolve(l, k, v), m: l };
}

/** β of period `p` (0 at the base). */
function betaOf(d: Design, beta: Float64Array, p: number): number {
  return p === d.base ? 0 : beta[d.col.get(p)!]!;
}

/** Sum of the squared residuals of a cell's pairs under `beta`. */
function cellSse(d: Design, beta: Float64Array, c: PairCell): number {
  const diff = betaOf(d, beta, c.b) - betaOf(d, beta, c.a);
  return Math.max(0, c.syy - 2 * diff * c.sy + c.n * diff * diff);
}

/**
 * Stage 2: the stage-1 squared residuals regressed on (1, gap), var(ε) = a + b·gap, and the
 * floor the variance is kept above (`minShare` of the mean squared residual).
 */
function varianceModel(
  d: Design,
  beta: Float64Array,
  nTotal: number,
  minShare: number,
): { a: number; b: number; floor: number } {
  let sg = 0;
  let sgg = 0;
  let se2 = 0;
  let sge2 = 0;
  for (const c of d.cells) {
    const g = c.b - c.a;
    const e2 = cellSse(d, beta, c);
    sg += c.n * g;
    sgg += c.n * g * g;
    se2 += e2;
    sge2 += g * e2;
  }
  const det = nTotal * sgg - sg * sg;
  let a = se2 / nTotal;
  let b = 0;
  if (nTotal > 2 && det > 1e-9 * nTotal * sgg) {
    a = (sgg * se2 - sg * sge2) / det;
    b = (nTotal * sge2 - sg * se2) / det;
  }
  return { a, b, floor: Math.max(minShare * (se2 / nTotal), 1e-12) };
}

/**
 * Estimate the index. Periods are any integers (e.g. year·4 + quarter − 1); the base is the
 * earliest period of the largest connected group of periods (by pairs), so a period no pair
 * links to it is reported in `disconnected` instead of making the system singular. Returns null
 * when there are no pairs.
 *
 * @example
 *   const r = repeatSalesIndex([{ a: 0, b: 1, n: 2, sy: 0.2, syy: 0.0202 }]);
 *   // r.points[1].log_index ≈ 0.1
 */
export function repeatSalesIndex(input: readonly PairCell[], opts: WrsOptions = {}): WrsResult | null {
  const minShare = opts.minVarianceShare ?? 0.1;
  const all = input
    .filter((c) => c.n > 0 && c.a !== c.b)
    .map((c) => (c.a < c.b ? c : { a: c.b, b: c.a, n: c.n, sy: -c.sy, syy: c.syy }));
  if (all.length === 0) return null;

  // connected groups of periods; keep the group with the most pairs
  const { design: d, disconnected } = largestGroup(all);
  const { cells, periods, base, col, k } = d;

  const pairsAt = new Map<number, number>();
  let nTotal = 0;
  for (const c of cells) {
    pairsAt.set(c.a, (pairsAt.get(c.a) ?? 0) + c.n);
    pairsAt.set(c.b, (pairsAt.get(c.b) ?? 0) + c.n);
    nTotal += c.n;
  }

  if (k === 0) {
    return {
      base,
      points: [{ period: base, log_index: 0, std_error: 0, pairs: pairsAt.get(base) ?? 0 }],
      variance: { a: 0, b: 0 },
      sigma2: 0,
      pairs: nTotal,
      disconnected,
    };
  }

  // stage 1: OLS
  const s1 = solveWeighted(d, () => 1);
  // stage 2: squared residuals on (1, gap)
  const { a: va, b: vb, floor } = varianceModel(d, s1.beta, nTotal, minShare);
  const variance = (g: number): number => Math.max(va + vb * g, floor);
  // stage 3: WLS
  const s3 = solveWeighted(d, (c) => 1 / variance(c.b - c.a));
  let wsse = 0;
  for (const c of cells) wsse += cellSse(d, s3.beta, c) / variance(c.b - c.a);
  const sigma2 = nTotal > k ? wsse / (nTotal - k) : 1;
  const diag = cholInverseDiagonal(s3.m, k);
  const points: IndexPoint[] = periods.map((p) => ({
    period: p,
    log_index: betaOf(d, s3.beta, p),
    std_error: p === base ? 0 : Math.sqrt(Math.max(0, sigma2 * diag[col.get(p)!]!)),
    pairs: pairsAt.get(p) ?? 0,
  }));
  return { base, points, variance: { a: va, b: vb }, sigma2, pairs: nTotal, disconnected };
}

/** Lower-triangular Cholesky factor of a k×k symmetric positive-definite matrix (row-major). */
export function cholesky(m: Float64Array, k: number): Float64Array {
  const l = new Float64Array(k * k);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j <= i; j++) {
      let s = m[i * k + j]!;
      for (let t = 0; t < j; t++) s -= l[i * k + t]! * l[j * k + t]!;
      if (i === j) {
        if (!(s > 0)) throw new Error(`normal equations are not positive definite (pivot ${i})`);
        l[i * k + i] = Math.sqrt(s);
      } else l[i * k + j] = s / l[j * k + j]!;
    }
  }
  return l;
}

/** Solve L Lᵀ x = v. */
export function cholSolve(l: Float64Array, k: number, v: Float64Array): Float64Array {
  const y = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    let s = v[i]!;
    for (let t = 0; t < i; t++) s -= l[i * k + t]! * y[t]!;
    y[i] = s / l[i * k + i]!;
  }
  const x = new Float64Array(k);
  for (let i = k - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let t = i + 1; t < k; t++) s -= l[t * k + i]! * x[t]!;
    x[i] = s / l[i * k + i]!;
  }
  return x;
}

/** Diagonal of (L Lᵀ)⁻¹ = Σ over rows of L⁻¹ squared, by columns. */
function cholInverseDiagonal(l: Float64Array, k: number): Float64Array {
  // invert L (lower triangular) column by column, then diag(M⁻¹)_i = Σ_t (L⁻¹)_{t,i}²
  const inv = new Float64Array(k * k);
  for (let j = 0; j < k; j++) {
    inv[j * k + j] = 1 / l[j * k + j]!;
    for (let i = j + 1; i < k; i++) {
      let s = 0;
      for (let t = j; t < i; t++) s -= l[i * k + t]! * inv[t * k + j]!;
      inv[i * k + j] = s / l[i * k + i]!;
    }
  }
  const d = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    let s = 0;
    for (let t = i; t < k; t++) s += inv[t * k + i]! ** 2;
    d[i] = s;
  }
  return d;
}
