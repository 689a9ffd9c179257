/**
 * What the query parsers share (api/query/query-common.ts): the place-name folder every county and
 * authority parameter uses, and the one Ajv instance.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { placeNames } from '../../../api/query/leads-params.ts';
import { parseInfrastructureQuery } from '../../../api/query/infrastructure-query.ts';
import { parseIntelQuery } from '../../../api/query/intel-query.ts';
import { parseGisQuery } from '../../../api/query/feeds-query.ts';
import { foldPlace, queryAjv } from '../../../api/query/query-common.ts';
import { parseSavedFilter } from '../../../api/webhooks/saved-filter.ts';

test('foldPlace: "Co. Cork", "county cork", "CORK", accents and spacing fold alike; names are otherwise kept', () => {
  for (const s of ['Cork', 'CORK', 'cork', 'Co. Cork', 'co cork', 'County Cork', 'county  cork', ' Co.  CORK '])
    assert.is(foldPlace(s), 'cork', s);
  assert.is(foldPlace('Dún  Laoghaire-Rathdown'), 'dun laoghaire-rathdown');
  assert.is(foldPlace('Cork County'), 'cork county');
  assert.is(foldPlace('County'), 'county', 'a lone word is not a prefix');
});

test('every parameter taking a county or an authority accepts the folded forms', () => {
  const places = placeNames([{ planning_authority: 'Cork County', county: 'Cork' }]);
  assert.equal(parseSavedFilter('county=Co.%20Cork,county%20cork&authority=cork%20COUNTY', places).filters, {
    authority: ['Cork County'],
    county: ['Cork'],
  });
  const opts = { pageSizeDefault: 25, pageSizeMax: 100, pageMax: 100 };
  assert.equal(parseIntelQuery({ section: 'yields', county: 'Co. Cork,county kerry' }, opts).counties, [
    'Cork',
    'Kerry',
  ]);
  assert.equal(
    parseInfrastructureQuery({ county: 'Co. Cork', authority: 'CORK COUNTY' }, { ...opts, renewables: false }).filters,
    { county: ['Cork'], authority: ['Cork County'] },
  );
  const secrets = { cursorSecret: 'x', cursorSecretsPrevious: [] };
  assert.equal(parseGisQuery({ authority: 'Co. Kerry,cork county' }, 'leads', 'feed', secrets).filters.authority, [
    'Cork County',
    'Kerry',
  ]);
});

test('one Ajv instance for query parsing', () => {
  assert.is(queryAjv(), queryAjv());
});

test.run();
