/**
 * Issue 31, item 17a: a value of an enum-valued parameter is matched ignoring case and
 * surrounding spaces and read as its canonical code (`vertical=Solar` → `solar`), at the one
 * parser (api/query/parse-query.ts), so every endpoint and saved filters agree; a value that is no
 * code is still a 400 listing the canonical codes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { enumFolder, parseQuery, querySchema } from '../../../api/query/parse-query.ts';
import { REASONS } from '../../../api/query/query-common.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi({ config: { webhookAllowHosts: ['127.0.0.1'] } });
});
test.after(async () => {
  await api?.close();
});

test('the parser folds every string enum of the leads query to its code: lists and single values, through $refs', () => {
  const leads = querySchema('leads-query.schema.json');
  const q = parseQuery(leads, {
    vertical: 'Solar, ROOFING',
    status: ' Commencing ',
    use_class: 'Data_Centre',
    scale: ['MAJOR', 'minor'],
    sort: ' Value_Desc ',
  });
  assert.equal(q.errors, []);
  assert.equal(q.values, {
    vertical: ['solar', 'roofing'],
    status: ['commencing'],
    use_class: ['data_centre'],
    scale: ['major', 'minor'],
    sort: 'value_desc',
  });
  const events = parseQuery(querySchema('events-query.schema.json'), { vertical: 'SOLAR', types: 'Lead.Created' });
  assert.equal(
    events.values,
    { vertical: ['solar'], types: ['lead.created'] },
    'through $ref to leads-query and an own enum',
  );
  const infra = parseQuery(querySchema('infrastructure-query.schema.json'), {
    vertical: 'Wind',
    status: 'IN_PLANNING',
  });
  assert.equal(infra.errors, []);
  assert.equal(infra.values.vertical, ['wind'], 'items $ref to infrastructure-project');
  assert.equal(infra.values.status, ['in_planning']);
});

test('a value that names no code is refused with the canonical allowed list; a parameter without an enum is not folded', () => {
  const leads = querySchema('leads-query.schema.json');
  const q = parseQuery(leads, { vertical: 'Solarr' });
  assert.equal(q.errors.length, 1);
  assert.is(q.errors[0]!.reason, REASONS.notAllowed);
  assert.ok(q.errors[0]!.allowed!.includes('solar') && !q.errors[0]!.allowed!.includes('Solar'));
  assert.is(enumFolder(leads.properties.q), undefined);
  assert.is(enumFolder(leads.properties.county), undefined, 'places have their own folder');
  assert.equal(parseQuery(leads, { q: 'Solar' }).values, { q: 'Solar' });
});

test('GET /v1/leads: vertical=Solar answers what vertical=solar does', async () => {
  const lower = await api.request('/v1/leads?vertical=solar&status=active&page_size=100');
  assert.is(lower.status, 200);
  assert.ok(lower.body.total > 0, 'the tiny release has active solar leads');
  for (const q of [
    'vertical=Solar&status=Active',
    'vertical=SOLAR&status=%20active%20',
    'vertical=%20sOlAr&status=ACTIVE',
  ]) {
    const res = await api.request(`/v1/leads?${q}&page_size=100`);
    assert.is(res.status, 200, q);
    assert.equal(
      res.body.results.map((r: { id: string }) => r.id),
      lower.body.results.map((r: { id: string }) => r.id),
      q,
    );
  }
  const bad = await api.request('/v1/leads?vertical=Solarr');
  assertProblem(bad, 400, 'invalid_parameter');
  assert.equal(bad.body.errors[0].name, 'vertical');
  assert.ok(bad.body.errors[0].allowed.includes('solar'));
});

test('other endpoints through the same parser: infrastructure, events, exports', async () => {
  const infra = await api.request('/v1/infrastructure?vertical=WIND');
  assert.is(infra.status, 200, infra.text.slice(0, 300));
  assert.is(infra.body.total, (await api.request('/v1/infrastructure?vertical=wind')).body.total);
  const events = await api.request('/v1/events?types=LEAD.CREATED&vertical=Solar');
  assert.is(events.status, 200, events.text.slice(0, 300));
  const exp = await api.request('/v1/export/applications?vertical=Roofing&limit=5');
  assert.is(exp.status, 200, exp.text.slice(0, 300));
});

test('a saved filter stores the canonical code', async () => {
  const res = await api.request('/v1/webhooks', {
    method: 'POST',
    body: { url: 'http://127.0.0.1:9/hook', filter: 'vertical=Solar,ROOFING&use_class=%20House&county=cork' },
  });
  assert.is(res.status, 201, res.text.slice(0, 300));
  assert.is(res.body.filter, 'vertical=roofing,solar&county=Cork&use_class=house');
});

test.run();
