/** Sales as published: decimal prices, stable ids that tell identical sales apart, no internals. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishedSale } from '../../../pipeline/release/published-sale.ts';
import type { SaleRow } from '../../../pipeline/types.ts';

const sale = (over: Partial<SaleRow> = {}): SaleRow => ({
  date_of_sale: '2026-03-01',
  address: '1 Main Street, Ennis',
  county: 'Clare',
  eircode_routing_key: 'V95',
  home_key: 'h1',
  eircode_hash: '0123456789abcdef',
  price_cents: 32_500_050,
  not_full_market_price: false,
  vat_exclusive: false,
  description: 'Second-Hand Dwelling house /Apartment',
  is_new_dwelling: false,
  property_size: null,
  line: 12,
  ...over,
});

test('price in euro with the cents exact, no line number or Eircode hash, id first', () => {
  const s = publishedSale()(sale());
  assert.is(s['price_eur'], 325000.5);
  assert.is(Object.keys(s)[0], 'sale_id');
  assert.match(String(s['sale_id']), /^[0-9a-f]{16}$/);
  for (const k of ['line', 'eircode_hash', 'price_cents']) assert.not.ok(k in s, k);
  assert.is(publishedSale()(sale({ price_cents: 5 }))['price_eur'], 0.05);
});

test('ids: the same sale gets the same id in every run; a second identical sale in one run gets another', () => {
  const a = publishedSale();
  const b = publishedSale();
  const first = a(sale())['sale_id'];
  assert.is(b(sale({ line: 99 }))['sale_id'], first, 'line numbers do not change the id');
  const twin = a(sale())['sale_id'];
  assert.is.not(twin, first);
  assert.is(b(sale())['sale_id'], twin);
  assert.is.not(publishedSale()(sale({ price_cents: 32_500_051 }))['sale_id'], first);
});

test.run();
