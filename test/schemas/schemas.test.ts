import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SCHEMA_DIR, RECORD_KINDS, SCHEMA_BASE_URI } from '../../pipeline/validate.ts';
import { AUTHORITIES, COUNTIES } from '../../pipeline/reference/authorities.ts';
import { IRELAND_BOUNDS } from '../../pipeline/lib/itm.ts';
import { SOURCE_NAMES } from '../../pipeline/sources/formats.ts';
import { STATUS_OF } from '../../common/lead-lifecycle.ts';
import type {
  ApplicantType,
  InfraFragment,
  InfraProject,
  InfraVertical,
  Lead,
  LeadStatus,
  Readiness,
  RejectReason,
  Scale,
} from '../../pipeline/types.ts';

type Json = Record<string, any>;

const FILES = readdirSync(DEFAULT_SCHEMA_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const SCHEMAS = new Map<string, Json>(
  FILES.map((f) => [f, JSON.parse(readFileSync(join(DEFAULT_SCHEMA_DIR, f), 'utf8')) as Json]),
);
const schema = (name: string): Json => SCHEMAS.get(`${name}.schema.json`)!;
const sorted = (xs: Iterable<unknown>) => [...xs].map(String).sort();

/** Every (path, subschema) pair of a schema, recursively. */
function* walk(node: unknown, path: string): Generator<[string, Json]> {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const [i, x] of node.entries()) yield* walk(x, `${path}/${i}`);
    return;
  }
  yield [path, node as Json];
  for (const [k, x] of Object.entries(node)) {
    if (k === 'examples' || k === 'enum' || k === 'const' || k === 'required') continue;
    yield* walk(x, `${path}/${k}`);
  }
}

/** Every property declaration `[path, name, subschema]` at any depth. */
function* properties(s: Json, file: string): Generator<[string, string, Json]> {
  for (const [path, node] of walk(s, file)) {
    if (node.properties && typeof node.properties === 'object' && !path.endsWith('/properties')) {
      for (const [name, sub] of Object.entries(node.properties)) yield [path, name, sub as Json];
    }
  }
}

function resolveRef(ref: string, from: string): Json | undefined {
  const [file, pointer = ''] = ref.split('#');
  let node: any = file ? SCHEMAS.get(file) : SCHEMAS.get(from);
  for (const part of pointer.split('/').filter(Boolean)) node = node?.[part];
  return node;
}

/** API-only schemas (query parameters, response envelopes, a lead's history as served): not records the pipeline publishes. */
const API_ONLY = /-(query|page|meta|history)\.schema\.json$/;

test('there is exactly one schema file per record kind (plus the API-only parameter and envelope schemas)', () => {
  assert.equal(
    FILES.filter((f) => !API_ONLY.test(f)),
    sorted(RECORD_KINDS.map((k) => `${k}.schema.json`)),
  );
});

/** The only top-level properties that may be absent (all others are required; absent = null). */
const OPTIONAL: Partial<Record<string, string[]>> = {
  problem: [
    'detail',
    'instance',
    'request_id',
    'errors',
    'rows_requested',
    'rows_remaining',
    'resets_at',
    'budget_limit',
    'narrow',
  ],
  'release-manifest': ['search_index', 'geojson', 'analytics', 'sources_freshness', 'authority_freshness'],
};

test('every schema is a 2020-12 record with $id, title, description and a closed property set', () => {
  for (const kind of RECORD_KINDS) {
    const s = schema(kind);
    assert.is(s.$schema, 'https://json-schema.org/draft/2020-12/schema', kind);
    assert.is(s.$id, `${SCHEMA_BASE_URI}${kind}.schema.json`, kind);
    assert.type(s.title, 'string', kind);
    assert.type(s.description, 'string', kind);
    assert.is(s.type, 'object', kind);
    assert.is(s.additionalProperties, false, kind);
    const optional = OPTIONAL[kind] ?? [];
    assert.equal(
      sorted(s.required),
      sorted(Object.keys(s.properties).filter((p) => !optional.includes(p))),
      `${kind}: every field required (absent = null)`,
    );
  }
});

test('every property has a description (directly or through its $ref)', () => {
  for (const [file, s] of SCHEMAS) {
    for (const [path, name, sub] of properties(s, file)) {
      const target = typeof sub.$ref === 'string' ? resolveRef(sub.$ref, file) : sub;
      assert.ok(target, `${path}/${name}: unresolved $ref ${sub.$ref}`);
      assert.type(sub.description ?? target!.description, 'string', `${path}/${name} lacks a description`);
    }
  }
});

test('every $ref resolves', () => {
  for (const [file, s] of SCHEMAS) {
    for (const [path, node] of walk(s, file)) {
      if (typeof node.$ref === 'string') assert.ok(resolveRef(node.$ref, file), `${path}: ${node.$ref}`);
    }
  }
});

test("x-status-of (the status group of each lifecycle stage, for the status filter) is the pipeline's STATUS_OF", () => {
  const status = schema('leads-query').properties.status;
  assert.equal(status['x-status-of'], STATUS_OF);
  const lead = schema('lead').properties;
  assert.equal(Object.keys(STATUS_OF).sort(), [...lead.lead_readiness.enum].sort());
  assert.equal([...new Set(Object.values(STATUS_OF))].sort(), [...lead.status.enum].sort());
  assert.equal(
    [...status.items.enum].sort(),
    [...lead.status.enum, ...lead.lead_readiness.enum].sort(),
    'the status filter takes every group and every stage',
  );
});

test('schemas use only OpenAPI 3.1 friendly keywords and the 2020-12 nullable style', () => {
  const banned = [
    'nullable',
    '$dynamicRef',
    '$dynamicAnchor',
    '$recursiveRef',
    'definitions',
    'dependencies',
    'x-nullable',
  ];
  for (const [file, s] of SCHEMAS) {
    for (const [path, node] of walk(s, file)) {
      for (const key of Object.keys(node)) {
        if (path.endsWith('/properties') || path.endsWith('/$defs')) continue;
        assert.not.ok(banned.includes(key), `${path}: ${key}`);
        if (key.startsWith('x-')) {
          assert.ok(
            key === 'x-enriched' || key === 'x-unhashed' || key === 'x-status-of' || key === 'x-pattern-reason',
            `${path}: unknown extension ${key}`,
          );
          if (key === 'x-enriched' || key === 'x-unhashed') assert.is(node[key], true, `${path}: ${key} must be true`);
          // the query parser's wording of a value not matching `pattern` (api/query/parse-query.ts)
          if (key === 'x-pattern-reason')
            assert.ok(
              typeof node[key] === 'string' && typeof node.pattern === 'string',
              `${path}: x-pattern-reason needs a pattern beside it`,
            );
        }
      }
      if (Array.isArray(node.type)) {
        assert.is(node.type.length, 2, `${path}: ${node.type}`);
        assert.ok(node.type.includes('null') || sorted(node.type).join() === 'number,string', `${path}: ${node.type}`);
      }
    }
  }
});

test('no schema has a property whose name suggests personal data', () => {
  const personal = /forename|surname|applicant_name|owner|phone|e_?mail|applicant_address|first_name|last_name|mobile/i;
  for (const [file, s] of SCHEMAS) {
    for (const [path, name] of properties(s, file)) assert.not.ok(personal.test(name), `${path}/${name}`);
  }
});

// Exhaustive records: tsc fails when a union gains or loses a member, the test when the schema does.
const READINESS: Record<Readiness, 0> = {
  application: 0,
  further_information: 0,
  appealed: 0,
  granted: 0,
  commencing: 0,
  under_construction: 0,
  completed: 0,
  refused: 0,
  withdrawn: 0,
  expired: 0,
};
const STATUS: Record<LeadStatus, 0> = { planning: 0, approved: 0, active: 0, closed: 0 };
const SCALE: Record<Scale, 0> = { minor: 0, medium: 0, large: 0, major: 0 };
const APPLICANT: Record<ApplicantType, 0> = { individual: 0, organisation: 0, unknown: 0 };
const BASIS: Record<Lead['est_value_basis'], 0> = { floor_area: 0, units: 0, quantity: 0, typical: 0 };
const DECISION: Record<NonNullable<Lead['decision']>, 0> = { granted: 0, refused: 0, split: 0, invalid: 0 };
const VERTICAL: Record<InfraVertical, 0> = { data_centre: 0, wind: 0, solar: 0, battery_storage: 0, grid: 0 };
const INFRA_STATUS: Record<InfraProject['status'], 0> = {
  proposed: 0,
  in_planning: 0,
  consented: 0,
  refused: 0,
  operational: 0,
};
const ROUTE: Record<InfraProject['consenting_route'], 0> = {
  strategic_infrastructure: 0,
  local_authority: 0,
  appeal: 0,
  unknown: 0,
};
const FRAGMENT: Record<InfraFragment['kind'], 0> = { abp_case: 0, auction: 0, grid_connection: 0, data_centre: 0 };
const REASON: Record<RejectReason, 0> = {
  malformed_row: 0,
  missing_field: 0,
  invalid_date: 0,
  invalid_number: 0,
  unknown_authority: 0,
  unknown_county: 0,
  invalid_coordinates: 0,
  duplicate: 0,
  unknown_header: 0,
  unknown_category: 0,
};

test('enums match the TypeScript unions and the reference lists', () => {
  const lead = schema('lead').properties;
  const infra = schema('infrastructure-project').properties;
  const authorities = sorted(AUTHORITIES.map((a) => a.name));
  const cases: [string, unknown[], string[]][] = [
    ['lead.lead_readiness', lead.lead_readiness.enum, Object.keys(READINESS)],
    ['lead.status', lead.status.enum, Object.keys(STATUS)],
    ['lead.scale', lead.scale.enum, Object.keys(SCALE)],
    ['lead.applicant_type', lead.applicant_type.enum, Object.keys(APPLICANT)],
    ['lead.est_value_basis', lead.est_value_basis.enum, Object.keys(BASIS)],
    ['lead.decision', lead.decision.enum, [...Object.keys(DECISION), 'null']],
    ['lead.planning_authority', lead.planning_authority.enum, authorities],
    ['lead.county', lead.county.enum, [...COUNTIES]],
    ['property-sale.county', schema('property-sale').properties.county.enum, [...COUNTIES]],
    ['lead-detail area county', schema('lead-detail').$defs.area_comparables.properties.county.enum, [...COUNTIES]],
    ['infra.vertical', infra.vertical.enum, Object.keys(VERTICAL)],
    ['infra.status', infra.status.enum, Object.keys(INFRA_STATUS)],
    ['infra.consenting_route', infra.consenting_route.enum, Object.keys(ROUTE)],
    ['infra.sources', infra.sources.items.enum, Object.keys(FRAGMENT)],
    ['reject.reason', schema('reject').properties.reason.enum, Object.keys(REASON)],
    ['reject.source', schema('reject').properties.source.enum, [...SOURCE_NAMES]],
    [
      'manifest reasons',
      schema('release-manifest').$defs.source_counts.properties.reasons.propertyNames.enum,
      Object.keys(REASON),
    ],
    [
      'manifest authorities',
      schema('release-manifest').properties.counts.properties.authorities.propertyNames.enum,
      authorities,
    ],
  ];
  for (const [name, actual, expected] of cases) assert.equal(sorted(actual), sorted(expected), name);
});

test('coordinates are bounded to the island of Ireland', () => {
  for (const kind of ['lead', 'infrastructure-project']) {
    const p = schema(kind).properties;
    assert.equal([p.lat.minimum, p.lat.maximum], [IRELAND_BOUNDS.minLat, IRELAND_BOUNDS.maxLat], kind);
    assert.equal([p.lon.minimum, p.lon.maximum], [IRELAND_BOUNDS.minLon, IRELAND_BOUNDS.maxLon], kind);
  }
});

test('a leads page result = every lead property (by $ref) plus distance_m (optional: only with near)', () => {
  const result = schema('leads-page').$defs.result;
  const lead = schema('lead');
  assert.equal(Object.keys(result.properties), [...Object.keys(lead.properties), 'distance_m']);
  for (const f of Object.keys(lead.properties))
    assert.is(result.properties[f].$ref, `lead.schema.json#/properties/${f}`, f);
  assert.equal(result.required, lead.required);
  assert.is(result.additionalProperties, false);
});

test('lead detail = every lead property (by $ref) plus the sections, each section in $defs', () => {
  const detail = schema('lead-detail');
  const leadProps = Object.keys(schema('lead').properties);
  const sections = [
    'project',
    'zoning_and_appeals',
    'area_comparables',
    'suppliers',
    'main_contractor',
    'registered_company',
    'company_filings',
  ];
  assert.equal(sorted(Object.keys(detail.properties)), sorted(new Set([...leadProps, ...sections])));
  for (const f of leadProps) {
    if (f === 'main_contractor') continue; // the section object replaces the flat name in the detail
    assert.is(detail.properties[f].$ref, `lead.schema.json#/properties/${f}`, f);
  }
  for (const d of [
    'project',
    'zoning_and_appeals',
    'area_comparables',
    'main_contractor',
    'registered_company',
    'recent_sale',
    'nearby_lead',
  ]) {
    assert.is(detail.$defs[d]?.type, 'object', d);
    assert.is(detail.$defs[d].additionalProperties, false, d);
  }
  const registered = Object.keys(detail.$defs.registered_company.properties);
  assert.equal(sorted(registered), sorted([...Object.keys(schema('company').properties), 'match_confidence']));
});

test.run();
