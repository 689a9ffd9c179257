/**
 * Saved filters (api/webhooks/saved-filter.ts): the canonical string lists every filter of the
 * table in table order, and parsing the canonical string gives it back (a round trip), for every
 * kind, the received_date range and application_type included.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { placeNames } from '../../../api/query/leads-params.ts';
import { FILTERS } from '../../../api/query/lead-filters.ts';
import { filterString, parseSavedFilter } from '../../../api/webhooks/saved-filter.ts';
import { ApiError } from '../../../api/http/errors.ts';

const places = placeNames([
  { planning_authority: 'Dún Laoghaire-Rathdown', county: 'Dublin', application_type: 'PERMISSION AND RETENTION' },
  { planning_authority: 'Cork County', county: 'Cork', application_type: 'RETENTION' },
  { planning_authority: 'Cork County', county: 'Cork', application_type: null },
]);

test('every filter of the table: canonical order, canonical values, and the canonical string parses to itself', () => {
  const given =
    'received_to=2025-12-31&updated_since=2026-11-16&created_since=2026-11-09&demolition=0&application_type=retention,Permission%20and%20Retention&received_from=2025-01-01&has_contact=true' +
    '&min_units=3&min_value=1000.5&scale=major&use_class=house&status=active&readiness=commencing&county=cork&authority=dun%20laoghaire-rathdown' +
    '&vertical=solar,roofing&works_kind=retention,new_works&explicit_vertical=roofing&q=roof&polygon=' +
    encodeURIComponent(
      '{"type":"Polygon","coordinates":[[[-6.3,53.3],[-6.2,53.3],[-6.2,53.4],[-6.3,53.3]]],"bbox":[1,2,3,4]}',
    ) +
    '&radius_m=250&bbox=-6.5,53.2,-6.0,53.5&near=53.35,-6.26&application_number=%2026%2F02170%20';
  const { filters, filter } = parseSavedFilter(given, places);
  assert.is(
    filter,
    'q=roof&vertical=roofing,solar&explicit_vertical=roofing&authority=D%C3%BAn%20Laoghaire-Rathdown&county=Cork&readiness=commencing&status=active&use_class=house&works_kind=new_works,retention&scale=major' +
      '&application_type=PERMISSION%20AND%20RETENTION,RETENTION&min_value=1000.5&min_units=3&has_contact=true&demolition=false&received_from=2025-01-01&received_to=2025-12-31' +
      '&changed_since=2026-11-16&created_since=2026-11-09&application_number=%2026%2F02170%20&near=53.35,-6.26&radius_m=250&bbox=-6.5,53.2,-6,53.5' +
      '&polygon=%7B%22type%22%3A%22Polygon%22,%22coordinates%22%3A%5B%5B%5B-6.3,53.3%5D,%5B-6.2,53.3%5D,%5B-6.2,53.4%5D,%5B-6.3,53.3%5D%5D%5D%7D',
  );
  assert.equal(filters.near, { lat: 53.35, lon: -6.26, radius_m: 250 });
  assert.equal(filters.bbox, [-6.5, 53.2, -6, 53.5], 'a bbox keeps its order');
  assert.equal(Object.keys(filters).sort(), FILTERS.map((f) => f.name).sort(), 'every filter is part of the test');
  const again = parseSavedFilter(filter, places);
  assert.is(again.filter, filter);
  assert.equal(again.filters, filters);
  assert.is(filterString(filters), filter);
});

test('bad dates and unknown application types are refused naming the parameter', () => {
  for (const [q, name] of [
    ['received_from=2025-02-30', 'received_from'],
    ['received_from=2025-03-01&received_to=2025-02-28', 'received_to'],
    ['application_type=outline', 'application_type'],
  ] as const) {
    assert.throws(
      () => parseSavedFilter(q, places),
      (e: unknown) => e instanceof ApiError && e.status === 400 && e.errors?.[0]?.name === name,
      q,
    );
  }
});

test.run();
