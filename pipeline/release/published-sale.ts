/**
 * A property sale as published in `sales.parquet`: exact decimal price, a stable id per sale,
 * no line number and no Eircode hash (that one goes to the analytics stage's private copy only).
 */
import { hash } from 'node:crypto';
import type { SaleRow } from '../types.ts';

/**
 * Returns a stateful mapper from adapter rows to published sales. The id is the sha256 of home,
 * date, price and the occurrence number of that triple, so two identical sales get two ids and
 * the same file always gives the same ids. Drop the mapper once the sales are read: its map holds
 * every sale key (~150 MB at the default scale).
 */
export function publishedSale(): (row: SaleRow) => Record<string, unknown> {
  const seen = new Map<string, number>();
  return ({ line: _l, price_cents, eircode_hash: _e, ...s }) => {
    const base = `${s.home_key}|${s.date_of_sale}|${price_cents}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const cents = String(price_cents).padStart(3, '0');
    return {
      sale_id: hash('sha256', `${base}|${n}`).slice(0, 16),
      ...s,
      price_eur: Number(`${cents.slice(0, -2)}.${cents.slice(-2)}`),
    };
  };
}
