import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import {
  columnMask,
  enrichedFields,
  enrichedReason,
  maskedFor,
  maskingFor,
  maskPlan,
  maskRecord,
  masksField,
  projectSchemas,
  responseMeta,
  unionMasked,
  type JsonSchema,
} from '../../../api/access/masking.ts';
import { LEAD_COLUMNS } from '../../../api/query/leads-query.ts';
import { ATTRIBUTION, SCOPES } from '../../../api/access/scopes.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';

const schema = (kind: string) => JSON.parse(readFileSync(`${REPO_ROOT}schemas/${kind}.schema.json`, 'utf8'));

test('enriched fields come from the schemas (x-enriched, directly or through $ref)', () => {
  assert.equal(
    [...enrichedFields('lead')],
    [
      'applicant_org',
      'applicant_org_evidence',
      'applicant_company_number',
      'applicant_match_confidence',
      'main_contractor',
      'main_contractor_evidence',
      'main_contractor_company_number',
    ],
  );
  assert.equal(
    [...enrichedFields('infrastructure-project')],
    ['applicant', 'applicant_evidence', 'applicant_company_number'],
  );
  const detail = enrichedFields('lead-detail');
  for (const f of [
    'applicant_org',
    'applicant_org_evidence',
    'applicant_company_number',
    'applicant_match_confidence',
    'main_contractor',
    'main_contractor_evidence',
    'main_contractor_company_number',
    'suppliers',
    'registered_company',
    'company_filings',
  ]) {
    assert.ok(detail.includes(f), f);
  }
  // every field the lead schema marks enriched, and nothing else
  const props = schema('lead').properties as Record<string, { 'x-enriched'?: boolean }>;
  assert.equal(
    [...enrichedFields('lead')].sort(),
    Object.keys(props)
      .filter((k) => props[k]!['x-enriched'])
      .sort(),
  );
});

const lead = {
  id: 1,
  description: 'x',
  applicant_org: 'Acme Ltd',
  applicant_org_evidence: 'legal_form',
  applicant_company_number: '123',
  applicant_match_confidence: 1,
  main_contractor: 'Build Ltd',
  main_contractor_evidence: 'legal_form',
  main_contractor_company_number: '9',
};

test('commonwealth: enriched fields set to null, never dropped, and listed with the reason', () => {
  const { record, masked } = maskRecord('lead', lead, 'commonwealth');
  assert.equal(Object.keys(record).sort(), Object.keys(lead).sort());
  for (const f of enrichedFields('lead')) assert.is((record as Record<string, unknown>)[f], null, f);
  assert.is(record.description, 'x');
  assert.equal(
    masked.map((m) => m.field),
    [...enrichedFields('lead')],
  );
  assert.is(masked[0]!.reason, 'scope commonwealth does not include enriched data (needs ent_api, ent_feed or custom)');
  assert.is(lead.applicant_org, 'Acme Ltd', 'input not modified');
});

test('enriched scopes see everything and nothing is masked', () => {
  for (const scope of ['ent_api', 'ent_feed', 'custom'] as const) {
    const { record, masked } = maskRecord('lead', lead, scope);
    assert.equal(record, lead, scope);
    assert.equal(masked, [], scope);
    assert.equal(maskedFor('lead', scope), [], scope);
  }
});

test('lead detail: enriched sections become null for commonwealth', () => {
  const detail = {
    ...lead,
    main_contractor: { name: 'Build Ltd', company_number: '9', company: null },
    suppliers: [{}],
    registered_company: {},
    company_filings: [{}],
    project: { a: 1 },
  };
  const { record } = maskRecord('lead-detail', detail, 'commonwealth');
  for (const f of ['main_contractor', 'suppliers', 'registered_company', 'company_filings'])
    assert.is((record as Record<string, unknown>)[f], null, f);
  assert.equal(record.project, { a: 1 });
});

test('maskedFor equals what maskRecord reports; unionMasked de-duplicates', () => {
  for (const scope of SCOPES) assert.equal(maskedFor('lead', scope), maskRecord('lead', lead, scope).masked, scope);
  const a = maskRecord('lead', lead, 'commonwealth').masked;
  assert.equal(unionMasked([a, a, []]), a);
});

test('lead detail: the masked fields, in schema order (what _meta.masked lists)', () => {
  assert.equal(
    [...enrichedFields('lead-detail')],
    [
      'applicant_org',
      'applicant_org_evidence',
      'applicant_company_number',
      'applicant_match_confidence',
      'main_contractor',
      'main_contractor_evidence',
      'main_contractor_company_number',
      'suppliers',
      'registered_company',
      'company_filings',
    ],
  );
  assert.equal(
    maskedFor('lead-detail', 'commonwealth').map((m) => m.field),
    [...enrichedFields('lead-detail')],
  );
  assert.ok(masksField('lead-detail', 'suppliers', maskingFor('commonwealth')));
  assert.not.ok(masksField('lead-detail', 'suppliers', maskingFor('ent_api')));
  assert.not.ok(masksField('lead-detail', 'project', maskingFor('commonwealth')));
});

/** The project's schemas with `x-enriched` set on the nodes at these `file#/pointer`s. */
function marked(...ids: string[]): Map<string, JsonSchema> {
  const set = new Map([...projectSchemas()].map(([f, s]) => [f, structuredClone(s)]));
  for (const id of ids) {
    const [file, pointer] = id.split('#');
    let node: any = set.get(file!);
    for (const part of pointer!.split('/').filter(Boolean)) node = node[part];
    node['x-enriched'] = true;
  }
  return set;
}

test('a field marked enriched is masked at every depth: sections, list items, through $ref', () => {
  const set = marked(
    'lead.schema.json#/properties/est_value',
    'lead-detail.schema.json#/$defs/recent_sale/properties/price_eur',
  );
  const detail = {
    id: 1,
    est_value: 5,
    applicant_org: 'Acme Ltd',
    main_contractor: null,
    suppliers: [],
    project: { description: 'x', est_value: 5 },
    area_comparables: {
      county: 'Cork',
      recent_sales: [{ price_eur: 1 }, { price_eur: 2 }],
      nearby_leads: [
        { id: 2, est_value: 7 },
        { id: 3, est_value: null },
      ],
    },
  };
  const { record, masked } = maskRecord('lead-detail', detail, 'commonwealth', set);
  assert.equal(record, {
    id: 1,
    est_value: null,
    applicant_org: null,
    main_contractor: null,
    suppliers: null,
    project: { description: 'x', est_value: null },
    area_comparables: {
      county: 'Cork',
      recent_sales: [{ price_eur: null }, { price_eur: null }],
      nearby_leads: [
        { id: 2, est_value: null },
        { id: 3, est_value: null },
      ],
    },
    applicant_org_evidence: null,
    applicant_company_number: null,
    applicant_match_confidence: null,
    main_contractor_evidence: null,
    main_contractor_company_number: null,
    registered_company: null,
    company_filings: null,
  });
  assert.is(detail.project.est_value, 5, 'input not modified');
  assert.is(detail.area_comparables.nearby_leads[0]!.est_value, 7, 'input not modified');
  const fields = masked.map((m) => m.field);
  // each once, depth first in schema order: the existing ones keep their order
  assert.equal(
    fields.filter((f) => enrichedFields('lead-detail').includes(f)),
    [...enrichedFields('lead-detail')],
  );
  for (const f of [
    'est_value',
    'project.est_value',
    'area_comparables.recent_sales[].price_eur',
    'area_comparables.nearby_leads[].est_value',
  ])
    assert.ok(fields.includes(f), f);
  assert.is(new Set(fields).size, fields.length);
  assert.ok(fields.indexOf('est_value') < fields.indexOf('applicant_org'), 'schema order');
  // enriched scopes: nothing
  assert.equal(maskRecord('lead-detail', detail, 'ent_api', set), { record: detail, masked: [] });
  // the real schemas do not touch the sections
  assert.equal(maskRecord('lead-detail', detail, 'commonwealth').record.project, detail.project);
});

test("columnMask: the plan's top-level fields as a column mask; incomplete when a field sits inside a column", () => {
  const cw = columnMask('lead', LEAD_COLUMNS, maskingFor('commonwealth'));
  assert.ok(cw.complete);
  assert.equal(
    LEAD_COLUMNS.filter((_, i) => cw.nulled![i] === 1),
    [...enrichedFields('lead')],
  );
  assert.equal(columnMask('lead', LEAD_COLUMNS, maskingFor('custom')), { nulled: null, complete: true });
  const set = marked();
  (set.get('lead.schema.json')!.properties as Record<string, JsonSchema>)['verticals']!['items'] = {
    type: 'object',
    properties: { x: { 'x-enriched': true } },
  };
  const nested = columnMask('lead', LEAD_COLUMNS, maskingFor('commonwealth', set));
  assert.not.ok(nested.complete);
  assert.ok(maskPlan('lead', set).fields.includes('verticals[].x'));
});

test('responseMeta: attribution only for commonwealth, same keys otherwise', () => {
  const cw = responseMeta('r1', 'commonwealth', maskedFor('lead', 'commonwealth'));
  assert.is(cw.attribution, ATTRIBUTION);
  assert.is(cw.release, 'r1');
  for (const scope of ['ent_api', 'ent_feed', 'custom'] as const) {
    const m = responseMeta('r1', scope, []);
    assert.equal(Object.keys(m).sort(), ['masked', 'release', 'scope']);
  }
  assert.match(enrichedReason('commonwealth'), /needs ent_api, ent_feed or custom/);
});

test.run();
