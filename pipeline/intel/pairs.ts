/**
 * The repeat-sale pair matcher, as pure SQL builders (DuckDB does the work; nothing here sees a
 * connection). Input: a relation of sales with `INTEL_SALE_COLUMNS` (pipeline/intel/sales-input.ts).
 * Every rule is listed in `PAIR_RULES` and documented in docs/intel.md:
 *
 *   sales   — only full-market-price, second-hand (not new, not VAT-exclusive) sales of at least
 *             €10,000 with an address take part;
 *   homes   — same county and normalised address (pipeline/intel/address.ts); when one address has
 *             sales under two different Eircodes (or Eircode routing keys / Dublin postal
 *             districts) it is several homes: sales with the code go to that home, sales without
 *             one cannot be placed and are left out (`ambiguous_home`);
 *   pairs   — each sale of a home with the home's previous sale; a pair in one calendar quarter is
 *             a flip (`same_quarter`); a price that more than triples or falls below a third, or
 *             doubles / halves faster than once a year, is `implausible` (a site sold on as a
 *             finished house, a share of a home, a typo).
 */

/** The thresholds of the matching rules (also in docs/intel.md). */
export const PAIR_RULES = {
  /** Sales below this many cents are not market sales of a dwelling. */
  minPriceCents: 1_000_000,
  /** A pair whose price ratio is above this (or below its inverse) is implausible. */
  maxRatio: 3,
  /** Largest plausible |ln(P2/P1)| per year held (ln 2: doubling or halving); holds under a year count as one year. */
  maxLogChangePerYear: Math.log(2),
} as const;

/** Why a pair was left out of the index (null: used). */
export type PairExclusion = 'same_quarter' | 'implausible';

/** Absolute quarter number of a DATE expression: year·4 + quarter − 1 (2010Q1 = 8040). */
export const quarterOf = (expr: string): string => `(year(${expr}) * 4 + quarter(${expr}) - 1)`;

/**
 * SQL creating temp table `intel_pairs` from the sales relation `sales`: one row per consecutive
 * pair of sales of a home, with `reason` null for pairs used by the index.
 * Columns: home, county, d1, d2, p1, p2 (cents), q1, q2 (absolute quarters), y = ln(p2/p1), reason.
 */
export function pairsSql(sales: string): string {
  const r = PAIR_RULES;
  return `CREATE OR REPLACE TEMP TABLE intel_pairs AS
WITH eligible AS (
  SELECT *, row_number() OVER () AS sale_ix FROM ${sales}
  WHERE market AND second_hand AND price_cents >= ${r.minPriceCents} AND address_key IS NOT NULL
),
addresses AS (
  SELECT county, address_key, count(DISTINCT eircode_hash) AS codes, count(DISTINCT routing_key) AS districts
  FROM eligible GROUP BY county, address_key HAVING count(*) > 1
),
placed AS (
  SELECT e.*,
    concat_ws('|', e.county, e.address_key,
      CASE WHEN a.codes > 1 THEN e.eircode_hash END,
      CASE WHEN a.districts > 1 THEN e.routing_key END) AS home
  FROM eligible e JOIN addresses a USING (county, address_key)
  WHERE NOT ((a.codes > 1 AND e.eircode_hash IS NULL) OR (a.districts > 1 AND e.routing_key IS NULL))
),
seq AS (
  SELECT home, county, date_of_sale AS d2, price_cents AS p2,
    lag(date_of_sale) OVER w AS d1, lag(price_cents) OVER w AS p1
  FROM placed
  WINDOW w AS (PARTITION BY home ORDER BY date_of_sale, price_cents, sale_ix)
),
p AS (
  SELECT home, county, d1, d2, p1, p2, ${quarterOf('d1')} AS q1, ${quarterOf('d2')} AS q2,
    ln(p2::DOUBLE / p1) AS y, greatest(datediff('day', d1, d2) / 365.25, 1.0) AS years
  FROM seq WHERE d1 IS NOT NULL
)
SELECT home, county, d1, d2, p1, p2, q1, q2, y,
  CASE
    WHEN q1 = q2 THEN 'same_quarter'
    WHEN abs(y) > ln(${r.maxRatio}) OR abs(y) > ${r.maxLogChangePerYear} * years THEN 'implausible'
  END AS reason
FROM p`;
}

/**
 * SQL counting what happened to the sales on the way to the pairs (one row): sales read, left out
 * by each sale rule, placed in a home with another sale, ambiguous.
 */
export function salesFunnelSql(sales: string): string {
  const r = PAIR_RULES;
  return `WITH s AS (SELECT * FROM ${sales}),
eligible AS (SELECT * FROM s WHERE market AND second_hand AND price_cents >= ${r.minPriceCents} AND address_key IS NOT NULL),
addresses AS (
  SELECT county, address_key, count(*) AS n, count(DISTINCT eircode_hash) AS codes, count(DISTINCT routing_key) AS districts
  FROM eligible GROUP BY county, address_key
)
SELECT
  (SELECT count(*) FROM s)::BIGINT AS sales,
  (SELECT count(*) FILTER (WHERE NOT market) FROM s)::BIGINT AS not_full_market_price,
  (SELECT count(*) FILTER (WHERE market AND NOT second_hand) FROM s)::BIGINT AS new_dwelling,
  (SELECT count(*) FILTER (WHERE market AND second_hand AND price_cents < ${r.minPriceCents}) FROM s)::BIGINT AS below_minimum_price,
  (SELECT count(*) FILTER (WHERE market AND second_hand AND price_cents >= ${r.minPriceCents} AND address_key IS NULL) FROM s)::BIGINT AS no_address,
  (SELECT count(*) FROM eligible)::BIGINT AS eligible,
  (SELECT count(*) FROM eligible e JOIN addresses a USING (county, address_key)
     WHERE a.n > 1 AND ((a.codes > 1 AND e.eircode_hash IS NULL) OR (a.districts > 1 AND e.routing_key IS NULL)))::BIGINT AS ambiguous_home`;
}

/** SQL counting the pairs by outcome: `used`, `same_quarter`, `implausible`, and the homes behind used pairs. */
export function pairCountsSql(): string {
  return `SELECT coalesce(reason, 'used') AS outcome, count(*)::BIGINT AS pairs, count(DISTINCT home)::BIGINT AS homes
FROM intel_pairs GROUP BY ALL ORDER BY outcome`;
}

/**
 * SQL aggregating the used pairs into regression cells (see pipeline/intel/wrs.ts): per county
 * and nationally (county NULL), per (q1, q2): n, Σy, Σy².
 */
export function pairCellsSql(): string {
  return `SELECT county, q1 AS a, q2 AS b, count(*)::BIGINT AS n, sum(y) AS sy, sum(y * y) AS syy
FROM intel_pairs WHERE reason IS NULL
GROUP BY GROUPING SETS ((county, q1, q2), (q1, q2))`;
}
