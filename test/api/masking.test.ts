import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { enrichedFields, enrichedReason, maskedFor, maskRecord, responseMeta, unionMasked } from '../../api/masking.ts';
import { ATTRIBUTION, SCOPES } from '../../api/scopes.ts';
import { REPO_ROOT } from '../helpers/tmp.ts';

const schema = (kind: string) => JSON.parse(readFileSync(`${REPO_ROOT}schemas/${kind}.schema.json`, 'utf8'));

test('enriched fields come from the schemas (x-enriched, directly or through $ref)', () => {
  assert.equal([...enrichedFields('lead')], ['applicant_org', 'applicant_org_evidence', 'applicant_company_number', 'applicant_match_confidence', 'main_contractor', 'main_contractor_evidence', 'main_contractor_company_number']);
  assert.equal([...enrichedFields('infrastructure-project')], ['applicant', 'applicant_evidence', 'applicant_company_number']);
  const detail = enrichedFields('lead-detail');
  for (const f of ['applicant_org', 'applicant_org_evidence', 'applicant_company_number', 'applicant_match_confidence', 'main_contractor', 'main_contractor_evidence', 'main_contractor_company_number', 'suppliers', 'registered_company', 'company_filings']) {
    assert.ok(detail.includes(f), f);
  }
  // every field the lead schema marks enriched, and nothing else
  const props = schema('lead').properties as Record<string, { 'x-enriched'?: boolean }>;
  assert.equal([...enrichedFields('lead')].sort(), Object.keys(props).filter((k) => props[k]!['x-enriched']).sort());
});

const lead = {
  id: 1, description: 'x', applicant_org: 'Acme Ltd', applicant_org_evidence: 'legal_form', applicant_company_number: '123', applicant_match_confidence: 1,
  main_contractor: 'Build Ltd', main_contractor_evidence: 'legal_form', main_contractor_company_number: '9',
};

test('commonwealth: enriched fields set to null, never dropped, and listed with the reason', () => {
  const { record, masked } = maskRecord('lead', lead, 'commonwealth');
  assert.equal(Object.keys(record).sort(), Object.keys(lead).sort());
  for (const f of enrichedFields('lead')) assert.is((record as Record<string, unknown>)[f], null, f);
  assert.is(record.description, 'x');
  assert.equal(masked.map((m) => m.field), [...enrichedFields('lead')]);
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
  const detail = { ...lead, main_contractor: { name: 'Build Ltd', company_number: '9', company: null }, suppliers: [{}], registered_company: {}, company_filings: [{}], project: { a: 1 } };
  const { record } = maskRecord('lead-detail', detail, 'commonwealth');
  for (const f of ['main_contractor', 'suppliers', 'registered_company', 'company_filings']) assert.is((record as Record<string, unknown>)[f], null, f);
  assert.equal(record.project, { a: 1 });
});

test('maskedFor equals what maskRecord reports; unionMasked de-duplicates', () => {
  for (const scope of SCOPES) assert.equal(maskedFor('lead', scope), maskRecord('lead', lead, scope).masked, scope);
  const a = maskRecord('lead', lead, 'commonwealth').masked;
  assert.equal(unionMasked([a, a, []]), a);
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
