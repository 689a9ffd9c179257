/**
 * The explorer's CSV offer is priced before the link (issue 32, item 4): within what is left of
 * today's budget it is a link with its cost; past it there is no link — it could only fail — but
 * what to do instead.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { downloadOffer } from '../../../../api/app-area/pages/explorer.ts';

const reset = Date.UTC(2026, 10, 28) / 1000;
const raw = (h: { __html: string }): string => h.__html;
const text = (h: string | { __html: string }): string => (typeof h === 'string' ? h : raw(h)).replace(/<[^>]+>/g, '');

test('within the budget: a link with its cost and what is left', () => {
  const h = raw(downloadOffer(120, { limit: 1000, remaining: 700, reset }, '/app/explorer.csv?county=Cork'));
  assert.match(h, /<a href="\/app\/explorer.csv\?county=Cork" download>Download CSV<\/a>/);
  assert.match(text(h), /counts 120 rows; 700 of your 1,000 rows left today/);
});

test('over what is left today: no link, the reset time and how to narrow', () => {
  const h = raw(downloadOffer(800, { limit: 1000, remaining: 700, reset }, '/app/explorer.csv'));
  assert.not.match(h, /<a /);
  assert.match(text(h), /more than the 700 rows left today \(1,000 a day; the count starts again at 00:00 UTC\)/);
  assert.match(text(h), /Narrow the search/);
});

test('over a whole day: no link, and no promise that waiting helps', () => {
  const h = text(downloadOffer(201_300, { limit: 5000, remaining: 5000, reset }, '/app/explorer.csv'));
  assert.match(h, /201,300 leads are more than your plan's 5,000 rows a day, so it cannot be downloaded in one go/);
  assert.not.match(h, /starts again/);
});

test('no cap: a link; nothing to download: no link', () => {
  assert.match(
    raw(downloadOffer(50_000, { limit: null, remaining: null, reset }, '/x.csv')),
    /download>Download CSV<\/a> of these 50,000 leads \(your plan has no daily row limit\)/,
  );
  assert.is(text(downloadOffer(0, { limit: 1000, remaining: 1000, reset }, '/x.csv')), 'No leads to download.');
});

test.run();
