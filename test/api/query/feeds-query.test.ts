/**
 * The GIS parameters (api/query/feeds-query.ts): the feeds and OGC items parsed by `parseQuery`
 * against schemas/gis-feed-query.schema.json and schemas/ogc-items-query.schema.json, with
 * `bbox` and `datetime` read by their typed post-parsers, and `near` / `radius_m` / `polygon` by
 * the lead filters' (the same values and the same 400 problems as `GET /v1/leads`); on the leads
 * layer every other lead filter of the table too (`GIS_LEAD_FILTERS`), parsed by `leadFiltersOf`.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ApiError } from '../../../api/http/errors.ts';
import {
  FEED_PAGE_SIZE_DEFAULT,
  GIS_AREA_FILTERS,
  GIS_AREA_PARAMS,
  GIS_LEAD_FILTERS,
  GIS_LEAD_PARAMS,
  GIS_PAGE_MAX,
  GIS_TOKEN_TTL,
  gisQuerySchema,
  OGC_LIMIT_DEFAULT,
  parseDatetime,
  parseGisQuery,
  parseGisTokenQuery,
  parseOgcMetaQuery,
} from '../../../api/query/feeds-query.ts';
import { GIS_TOKEN_TTL_DEFAULT_S, GIS_TOKEN_TTL_MAX_S } from '../../../api/gis/token.ts';
import { REASONS } from '../../../api/query/query-common.ts';
import { FILTERS, filtersOfKind } from '../../../api/query/lead-filters.ts';
import { normalisedFilters } from '../../../api/query/leads-query.ts';
import { parseLeadsQuery, placeNames } from '../../../api/query/leads-params.ts';
import { GEOMETRY_REASONS, RADIUS_M } from '../../../api/gis/geometry.ts';
import { parseBBox } from '../../../api/gis/geometry.ts';

const secrets = { cursorSecret: 'x', cursorSecretsPrevious: [] };
const errorsOf = (raw: Record<string, string | string[]>, layer: 'leads' | 'infrastructure', kind: 'feed' | 'ogc') => {
  try {
    parseGisQuery(raw, layer, kind, secrets);
  } catch (e) {
    return (e as ApiError).errors!;
  }
  throw new Error('no error');
};

test('defaults and limits come from the schemas', () => {
  assert.is(FEED_PAGE_SIZE_DEFAULT, 1000);
  assert.is(OGC_LIMIT_DEFAULT, 100);
  assert.is(GIS_PAGE_MAX, 10000);
  assert.is(parseGisQuery({}, 'leads', 'feed', secrets).limit, FEED_PAGE_SIZE_DEFAULT);
  assert.is(parseGisQuery({ limit: '7' }, 'infrastructure', 'ogc', secrets).limit, 7);
  for (const bad of ['0', '10001', 'abc', '1.5']) {
    assert.equal(
      errorsOf({ limit: bad }, 'leads', 'ogc'),
      [{ name: 'limit', reason: REASONS.wholeNumberFrom(1, 10000) }],
      bad,
    );
  }
});

test('feed filters: bbox, authority (folded, canonical, sorted), dates, infrastructure-only vertical and min_mw', () => {
  const r = parseGisQuery(
    {
      bbox: '-6.4, 53.2,-6.1,53.45',
      authority: 'kerry,cork  COUNTY',
      since: '2025-01-01',
      vertical: ['wind', 'solar,wind'],
      min_mw: '5',
    },
    'infrastructure',
    'feed',
    secrets,
  );
  assert.equal(r.filters, {
    bbox: [-6.4, 53.2, -6.1, 53.45],
    authority: ['Cork County', 'Kerry'],
    since: '2025-01-01',
    vertical: ['solar', 'wind'],
    min_mw: 5,
  });
  // on the leads feed `vertical` is the lead filter (trade verticals): `wind` is not one of them; `min_mw` is unknown
  const leads = errorsOf({ vertical: 'wind', min_mw: '1' }, 'leads', 'feed');
  assert.equal(
    leads.map((e) => [e.name, e.reason]),
    [
      ['min_mw', REASONS.unknownParameter],
      ['vertical', REASONS.notAllowed],
    ],
  );
  assert.equal(leads[0]!.allowed, Object.keys(gisQuerySchema('feed', 'leads').properties));
  assert.equal(parseGisQuery({ vertical: 'solar' }, 'leads', 'feed', secrets).filters, {
    lead: { vertical: ['solar'] },
  });
  assert.equal(
    errorsOf({ authority: 'Atlantis' }, 'leads', 'feed')[0]!.reason,
    REASONS.unknownValues('authority', ['Atlantis']),
  );
  assert.equal(errorsOf({ authority: ',' }, 'leads', 'feed'), [{ name: 'authority', reason: REASONS.empty }]);
  assert.equal(errorsOf({ since: '2025-02-30' }, 'leads', 'feed'), [{ name: 'since', reason: REASONS.notADate }]);
  assert.equal(errorsOf({ min_mw: '-1' }, 'infrastructure', 'feed'), [{ name: 'min_mw', reason: REASONS.notNegative }]);
  assert.equal(errorsOf({ vertical: 'steam' }, 'infrastructure', 'feed')[0]!.reason, REASONS.notAllowed);
  assert.equal(errorsOf({ since: ['2025-01-01', '2025-01-02'] }, 'leads', 'feed'), [
    { name: 'since', reason: REASONS.repeated },
  ]);
});

test('bbox and datetime: the post-parser decides (exponents and spaces read; ranges checked)', () => {
  assert.equal(parseBBox('1e0,2,3,4', false), [1, 2, 3, 4]);
  assert.equal(parseGisQuery({ bbox: '1e0,2,3,4' }, 'leads', 'feed', secrets).filters.bbox, [1, 2, 3, 4]);
  assert.equal(
    errorsOf({ bbox: '1,2,3' }, 'leads', 'feed')[0]!.reason,
    (parseBBox('1,2,3', false) as { reason: string }).reason,
  );
  assert.equal(errorsOf({ bbox: '0,95,1,96' }, 'leads', 'feed'), [
    { name: 'bbox', reason: 'latitudes must be between -90 and 90' },
  ]);
  assert.equal(
    parseGisQuery({ bbox: '1,2,0,3,4,9' }, 'leads', 'ogc', secrets).filters.bbox,
    [1, 2, 3, 4],
    'heights ignored on OGC',
  );
  assert.equal(parseGisQuery({ datetime: '2025-01-01/..', f: 'geojson' }, 'leads', 'ogc', secrets).filters, {
    datetime: { from: '2025-01-01', to: null },
  });
  assert.equal(parseDatetime('2025-03-01/2025-01-01'), {
    name: 'datetime',
    reason: 'the interval start is after its end',
  });
  assert.equal(errorsOf({ datetime: '../..' }, 'leads', 'ogc')[0]!.name, 'datetime');
  assert.equal(errorsOf({ f: 'html' }, 'leads', 'ogc'), [
    { name: 'f', reason: REASONS.notAllowed, allowed: ['json', 'geojson'] },
  ]);
});

test("near (+ radius_m) and polygon: the filter table's geometry filters but bbox, each a $ref to its leads declaration in both schemas", () => {
  assert.equal(
    GIS_AREA_FILTERS.map((f) => f.name),
    filtersOfKind('geometry')
      .filter((f) => f.shape !== 'bbox')
      .map((f) => f.name),
  );
  assert.equal(GIS_AREA_PARAMS, ['near', 'radius_m', 'polygon']);
  for (const [kind, layer] of [
    ['feed', 'leads'],
    ['feed', 'infrastructure'],
    ['ogc', 'leads'],
  ] as const) {
    const props = gisQuerySchema(kind, layer).properties;
    for (const name of GIS_AREA_PARAMS)
      assert.is(props[name]?.$ref, `leads-query.schema.json#/properties/${name}`, `${kind} ${layer} ${name}`);
  }
});

test('near (+ radius_m) and polygon: parsed as on /v1/leads, with the same 400 problems', () => {
  const square =
    '{"type":"Polygon","coordinates":[[[-6.3,53.33],[-6.22,53.33],[-6.22,53.37],[-6.3,53.37],[-6.3,53.33]]]}';
  for (const [kind, layer] of [
    ['feed', 'leads'],
    ['feed', 'infrastructure'],
    ['ogc', 'leads'],
  ] as const) {
    const r = parseGisQuery(
      { near: '53.35,-6.26', radius_m: '2500', polygon: square, bbox: '-7,53,-6,54' },
      layer,
      kind,
      secrets,
    );
    assert.equal(r.filters.near, { lat: 53.35, lon: -6.26, radius_m: 2500 });
    assert.equal(r.filters.polygon, JSON.parse(square));
    assert.equal(r.filters.bbox, [-7, 53, -6, 54]);
    assert.is(parseGisQuery({ near: '53.35,-6.26' }, layer, kind, secrets).filters.near!.radius_m, RADIUS_M.default);
  }
  assert.not.equal(
    parseGisQuery({ near: '53.35,-6.26' }, 'leads', 'feed', secrets).hash,
    parseGisQuery({ near: '53.35,-6.27' }, 'leads', 'feed', secrets).hash,
    'cursors bound to the area',
  );
  // every mistake answered exactly as GET /v1/leads answers it
  const places = placeNames([]);
  const leadsErrors = (raw: Record<string, string>) => {
    try {
      parseLeadsQuery(raw, { pageSizeDefault: 25, pageSizeMax: 100, pageMax: 100, ...secrets }, places, 'r');
    } catch (e) {
      return (e as ApiError).errors!;
    }
    throw new Error('no error');
  };
  const bad: Record<string, string>[] = [
    { near: '-6.26,53.35' },
    { near: 'dublin' },
    { near: '53.35,-6.26', radius_m: '50001' },
    { near: '53.35,-6.26', radius_m: '0' },
    { radius_m: '500' },
    { polygon: '{"type":"Point","coordinates":[-6.2,53.3]}' },
    { polygon: '{"type":"Polygon","coordinates":[[[-6.3,53.33],[-6.22,53.33],[-6.22,53.37],[-6.3,53.37]]]}' },
    {
      polygon:
        '{"type":"Polygon","coordinates":[[[-6.3,53.33],[-6.22,53.37],[-6.22,53.33],[-6.3,53.37],[-6.3,53.33]]]}',
    },
    { polygon: '{"type":"Polygon","coordinates":[[[53.33,-6.3],[53.33,-6.22],[53.37,-6.22],[53.33,-6.3]]]}' },
    { polygon: 'not json' },
  ];
  for (const raw of bad) {
    const want = leadsErrors(raw);
    assert.ok(want.length > 0);
    assert.equal(errorsOf(raw, 'leads', 'feed'), want, JSON.stringify(raw));
    assert.equal(errorsOf(raw, 'infrastructure', 'ogc'), want, JSON.stringify(raw));
  }
  assert.equal(errorsOf({ radius_m: '500' }, 'leads', 'ogc'), [
    { name: 'radius_m', reason: GEOMETRY_REASONS.radiusWithoutNear },
  ]);
});

test("unknown OGC parameters name the accepted ones in the schema's (and the document's) order; the lead filters are the leads collection's only", () => {
  const core = [
    'limit',
    'bbox',
    'near',
    'radius_m',
    'polygon',
    'datetime',
    'changed_since',
    'created_since',
    'updated_since',
    'since',
    'f',
  ];
  const tail = ['cursor', 'access_token', 'crs', 'bbox-crs'];
  assert.equal(errorsOf({ q: 'x' }, 'infrastructure', 'ogc'), [
    { name: 'q', reason: REASONS.unknownParameter, allowed: [...core, ...tail] },
  ]);
  assert.equal(errorsOf({ nope: 'x' }, 'leads', 'ogc'), [
    { name: 'nope', reason: REASONS.unknownParameter, allowed: [...core, ...GIS_LEAD_PARAMS, ...tail] },
  ]);
});

test("the lead filters on the leads layer: every filter of the table but the GIS's own forms, each a $ref to its leads declaration, parsed as /v1/leads parses them", () => {
  const own = ['authority', 'changed_since', 'created_since', 'bbox', 'near', 'polygon'];
  assert.equal(
    GIS_LEAD_FILTERS.map((f) => f.name),
    FILTERS.map((f) => f.name).filter((n) => !own.includes(n)),
  );
  assert.ok(
    GIS_LEAD_PARAMS.includes('q') && GIS_LEAD_PARAMS.includes('min_value') && GIS_LEAD_PARAMS.includes('status'),
  );
  for (const [kind, layer] of [
    ['feed', 'leads'],
    ['ogc', 'leads'],
  ] as const) {
    const props = gisQuerySchema(kind, layer).properties;
    for (const name of GIS_LEAD_PARAMS)
      assert.is(props[name]?.$ref, `leads-query.schema.json#/properties/${name}`, `${kind} ${name}`);
  }
  for (const name of GIS_LEAD_PARAMS.filter((n) => n !== 'vertical'))
    assert.is(gisQuerySchema('feed', 'infrastructure').properties[name], undefined, name);
  const places = placeNames([{ planning_authority: 'Cork County', county: 'Cork', application_type: 'PERMISSION' }]);
  const raw = {
    vertical: 'solar,roofing',
    status: 'commencing',
    county: 'co. cork',
    min_value: '250000.5',
    has_contact: '1',
    q: 'solar panels',
    received_from: '2025-01-01',
    application_type: 'permission',
  };
  const leadsWant = parseLeadsQuery(
    raw,
    { pageSizeDefault: 25, pageSizeMax: 100, pageMax: 100, ...secrets },
    places,
    'r',
  ).filters;
  for (const kind of ['feed', 'ogc'] as const) {
    const r = parseGisQuery({ ...raw, bbox: '-9,51,-8,52' }, 'leads', kind, secrets, places);
    assert.equal(r.filters.lead, normalisedFilters(leadsWant), kind);
    assert.equal(r.filters.lead!.readiness, ['commencing'], 'status=commencing is the stage, as on /v1/leads');
    assert.equal(r.filters.bbox, [-9, 51, -8, 52]);
    assert.not.equal(
      r.hash,
      parseGisQuery({ ...raw, min_value: '250001' }, 'leads', kind, secrets, places).hash,
      'cursors bound to the lead filters',
    );
  }
  // the same 400 problems as /v1/leads, each naming its parameter
  const leadsErrors = (q: Record<string, string>) => {
    try {
      parseLeadsQuery(q, { pageSizeDefault: 25, pageSizeMax: 100, pageMax: 100, ...secrets }, places, 'r');
    } catch (e) {
      return (e as ApiError).errors!;
    }
    throw new Error('no error');
  };
  const errorsWith = (q: Record<string, string>, kind: 'feed' | 'ogc') => {
    try {
      parseGisQuery(q, 'leads', kind, secrets, places);
    } catch (e) {
      return (e as ApiError).errors!;
    }
    throw new Error('no error');
  };
  for (const bad of [
    { vertical: 'wind' },
    { status: 'someday' },
    { use_class: 'castle' },
    { min_value: '-1' },
    { min_value: 'lots' },
    { county: 'Atlantis' },
    { has_contact: 'maybe' },
    { received_from: '2025-03-01', received_to: '2025-01-01' },
  ] as Record<string, string>[]) {
    const want = leadsErrors(bad);
    assert.ok(want.length > 0 && want.every((e) => Object.keys(bad).includes(e.name)), JSON.stringify(want));
    for (const kind of ['feed', 'ogc'] as const)
      assert.equal(errorsWith(bad, kind), want, `${kind} ${JSON.stringify(bad)}`);
  }
});

test("OGC metadata resources take f=json, access_token and crs; /feeds/token takes ttl within the schema's bounds", () => {
  const thrown = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return (e as ApiError).errors!;
    }
    throw new Error('no error');
  };
  parseOgcMetaQuery({ f: 'json', access_token: 'gt_abc' });
  assert.equal(
    thrown(() => parseOgcMetaQuery({ f: 'html' })),
    [{ name: 'f', reason: REASONS.notAllowed, allowed: ['json'] }],
  );
  assert.equal(
    thrown(() => parseOgcMetaQuery({ limit: '1' })),
    [{ name: 'limit', reason: REASONS.unknownParameter, allowed: ['f', 'access_token', 'crs'] }],
  );
  assert.equal(
    GIS_TOKEN_TTL,
    { default: GIS_TOKEN_TTL_DEFAULT_S, min: 60, max: GIS_TOKEN_TTL_MAX_S },
    'the token module agrees with the schema',
  );
  assert.equal(parseGisTokenQuery({}), { ttl: GIS_TOKEN_TTL_DEFAULT_S });
  assert.equal(parseGisTokenQuery({ ttl: '600' }), { ttl: 600 });
  assert.equal(
    thrown(() => parseGisTokenQuery({ ttl: '59' })),
    [{ name: 'ttl', reason: REASONS.wholeNumberFrom(60, GIS_TOKEN_TTL_MAX_S) }],
  );
  assert.equal(
    thrown(() => parseGisTokenQuery({ x: '1' })),
    [{ name: 'x', reason: REASONS.unknownParameter, allowed: ['ttl'] }],
  );
});

test.run();
