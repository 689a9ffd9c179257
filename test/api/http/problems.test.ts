/**
 * Issue 31, item 17d: every problem `type` resolves. The one problem table (api/http/problems.ts)
 * declares each code; `GET /v1/problems/{code}` serves its page (HTML, or JSON with
 * `Accept: application/json`) at the URI problems carry as `type`, without a key. A scan of api/
 * checks that every code the source can emit is in the table, with the status it is thrown with.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROBLEM_CODES, PROBLEM_TYPES, isProblemCode, problemTypeUri } from '../../../api/http/problems.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api?.close();
});

/** Every `.ts` file under api/. */
function sources(dir = join(REPO_ROOT, 'api')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

/** The problem codes written in api/, with the status beside them where there is one. */
function codesInSource(): Map<string, Set<number | null>> {
  const found = new Map<string, Set<number | null>>();
  const add = (code: string, status: number | null): void =>
    void (found.get(code) ?? found.set(code, new Set()).get(code)!).add(status);
  for (const file of sources()) {
    if (file.endsWith('problems.ts')) continue; // the table itself
    const text = readFileSync(file, 'utf8');
    // new ApiError(404, 'not_found', …), new ApiError(\n 429,\n 'rate_limited', …)
    for (const m of text.matchAll(/ApiError\(\s*(\d{3}|[\w.]+),\s*'([a-z_]+)'/g))
      add(m[2]!, /^\d+$/.test(m[1]!) ? Number(m[1]) : null);
    // { status: 414, code: 'uri_too_long', … } and code: '…' alone
    for (const m of text.matchAll(/(?:status: (\d{3}), )?\bcode: '([a-z_]+)'/g)) add(m[2]!, m[1] ? Number(m[1]) : null);
    // refusal tables: [409, 'seats_exhausted', '…']
    for (const m of text.matchAll(/\[(\d{3}), '([a-z_]+)', /g)) add(m[2]!, Number(m[1]));
    // unauthorized('missing_key', …), the GIS token's 'expired_token' : 'invalid_token'
    for (const m of text.matchAll(/unauthorized\('([a-z_]+)'/g)) add(m[1]!, 401);
    for (const m of text.matchAll(/'([a-z_]+_token)' : '([a-z_]+_token)'/g)) (add(m[1]!, 401), add(m[2]!, 401));
  }
  return found;
}

test('every code written in api/ is in the problem table, with the status it is thrown with', () => {
  const found = codesInSource();
  assert.ok(found.size >= 40, `the scan finds the codes (${found.size})`);
  const missing = [...found.keys()].filter((c) => !isProblemCode(c));
  assert.equal(missing, [], 'codes without an entry in api/http/problems.ts');
  const wrong = [...found].flatMap(([code, statuses]) =>
    [...statuses]
      .filter((s) => s !== null && isProblemCode(code) && PROBLEM_TYPES[code].status !== s)
      .map((s) => `${code}: thrown with ${s}, declared ${isProblemCode(code) ? PROBLEM_TYPES[code].status : '?'}`),
  );
  assert.equal(wrong, []);
  for (const extra of ['unknown_parameter', 'invalid_parameter', 'service_degraded', 'internal_error', 'bad_request'])
    assert.ok(isProblemCode(extra), extra);
});

test('every code has a page answering 200 without a key: HTML by default, JSON on request', async () => {
  for (const code of PROBLEM_CODES) {
    const page = await api.request(`/v1/problems/${code}`, { key: null });
    assert.is(page.status, 200, code);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.ok(page.text.includes(`<code>${code}</code>`) && page.text.includes('What to do'), code);
    const json = await api.request(`/v1/problems/${code}`, { key: null, headers: { Accept: 'application/json' } });
    assert.is(json.status, 200);
    const p = PROBLEM_TYPES[code];
    assert.equal(json.body, {
      code,
      type: problemTypeUri(api.config.publicBaseUrl, code),
      status: p.status,
      title: p.title,
      description: p.description,
      action: p.action,
    });
  }
  const index = await api.request('/v1/problems', { key: null, headers: { Accept: 'application/json' } });
  assert.equal(
    index.body.problems.map((p: { code: string }) => p.code),
    PROBLEM_CODES,
  );
  const html = await api.request('/v1/problems', { key: null });
  for (const code of PROBLEM_CODES) assert.ok(html.text.includes(`href="problems/${code}"`), code);
  assertProblem(await api.request('/v1/problems/no_such_code', { key: null }), 404, 'not_found');
});

test("a problem's type is the absolute URI of its page under PUBLIC_BASE_URL, and that page answers", async () => {
  const res = await api.request('/v1/leads?bogus=1');
  assertProblem(res, 400, 'unknown_parameter');
  assert.is(res.body.type, `${api.config.publicBaseUrl}/problems/unknown_parameter`);
  assert.is(res.body.title, PROBLEM_TYPES.unknown_parameter.title, "the title is the type's");
  const path = new URL(res.body.type).pathname;
  const page = await api.request(path, { key: null });
  assert.is(page.status, 200);
  assert.ok(page.text.includes(PROBLEM_TYPES.unknown_parameter.title));
});

test.run();
