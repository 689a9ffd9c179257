/**
 * `q`'s syntax on `GET /v1/leads` (and `POST /v1/leads/search`, a webhook's saved filter) over
 * real HTTP on the tiny release: every word required, "phrases" checked on the leads' text,
 * prefix*, OR; malformed `q` is a 400 naming `q` with the reason. Every answer is checked against
 * the OpenAPI document by the test client.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { foldSearchText, STOPWORDS } from '../../../common/search-text.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
let db: ApiDb;
let leadsFile: string;

test.before(async () => {
  api = await startTestApi({ config: { webhookAllowHosts: ['127.0.0.1'] } });
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  leadsFile = `read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))})`;
});
test.after(async () => {
  db.close();
  await api.close();
});

const key = () => api.keys.ent_feed; // no daily row budget
const total = async (q: string): Promise<number> => {
  const res = await api.request(`/v1/leads?q=${encodeURIComponent(q)}&page_size=1`, { key: key() });
  assert.is(res.status, 200, `${q}: ${res.text}`);
  return res.body.total;
};
/** Two frequent words of the descriptions (≥ 5 letters, not stopwords). */
async function frequentWords(n: number): Promise<string[]> {
  const rows = await db.all<{ w: string }>(
    `SELECT lower(w) AS w, count(*) AS c FROM (SELECT unnest(regexp_extract_all(description, '[A-Za-z]{5,}')) AS w FROM ${leadsFile}) GROUP BY 1 ORDER BY c DESC, w LIMIT 40`,
  );
  return rows
    .map((r) => r.w)
    .filter((w) => !STOPWORDS.has(w))
    .slice(0, n);
}

test('all words are required: "a b" matches fewer leads than a alone; with OR, inclusion-exclusion holds', async () => {
  const [a, b] = await frequentWords(2);
  const [ta, tb, both, either] = await Promise.all([total(a!), total(b!), total(`${a} ${b}`), total(`${a} OR ${b}`)]);
  assert.ok(ta > 0 && tb > 0, `${a}: ${ta}, ${b}: ${tb}`);
  assert.ok(both <= Math.min(ta, tb), `${a} ${b}: ${both}`);
  assert.ok(either >= Math.max(ta, tb));
  assert.is(both + either, ta + tb, '|A∩B| + |A∪B| = |A| + |B|');
  assert.ok(either > both, 'OR widens what AND narrows');
});

test('a quoted phrase: every lead found holds the words next to each other, in order', async () => {
  const [row] = await db.all<{ description: string }>(
    `SELECT description FROM ${leadsFile} WHERE length(description) > 40 ORDER BY id LIMIT 1`,
  );
  const words = foldSearchText(row!.description)
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 3 && !STOPWORDS.has(w));
  const phrase = `${words[0]} ${words[1]}`;
  const inText = foldSearchText(row!.description).replace(/[^a-z0-9]+/g, ' ');
  const quoted = inText.includes(` ${phrase} `) || inText.startsWith(`${phrase} `) ? phrase : words[0]!;
  const res = await api.request(`/v1/leads?q=${encodeURIComponent(`"${quoted}"`)}&page_size=100`, { key: key() });
  assert.is(res.status, 200, res.text);
  assert.ok(res.body.total > 0, `"${quoted}" finds the lead it was taken from`);
  for (const l of res.body.results) {
    const text = ` ${foldSearchText([l.description, l.address, l.planning_authority, l.application_number].filter((x) => x !== null).join(' ')).replace(/[^a-z0-9]+/g, ' ')} `;
    assert.ok(text.includes(` ${quoted} `), `lead ${l.id} holds "${quoted}"`);
  }
  assert.ok(res.body.total <= (await total(quoted)), 'a phrase narrows its words');
});

test('a prefix finds what the whole word finds ("sola" → 0, "sola*" → the solar leads)', async () => {
  const [a] = await frequentWords(1);
  const stub = a!.slice(0, 4);
  const [whole, prefixed] = await Promise.all([total(a!), total(`${stub}*`)]);
  assert.ok(prefixed >= whole && whole > 0, `${stub}*: ${prefixed}, ${a}: ${whole}`);
  assert.is(await total('zzqx*'), 0);
});

test('malformed q: 400 invalid_parameter naming q with the reason, on GET, POST /v1/leads/search and a saved filter', async () => {
  const cases: [string, RegExp][] = [
    ['"heat pump', /unbalanced quote/],
    ['solar OR', /OR without a word/],
    ['OR', /OR without a word/],
    ['*', /\* without a word/],
    ['so*', /at least 3/],
  ];
  for (const [q, reason] of cases) {
    const res = await api.request(`/v1/leads?q=${encodeURIComponent(q)}`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.equal(
      res.body.errors.map((e: { name: string }) => e.name),
      ['q'],
      q,
    );
    assert.match(res.body.errors[0].reason, reason, q);
    const post = await api.request('/v1/leads/search', { method: 'POST', body: { q } });
    assertProblem(post, 400, 'invalid_parameter');
    assert.equal(post.body.errors, res.body.errors, `${q}: POST /v1/leads/search`);
  }
  const hook = await api.request('/v1/webhooks', {
    method: 'POST',
    body: { url: 'https://127.0.0.1:9/q', filter: 'q=%22heat%20pump' },
  });
  assertProblem(hook, 400, 'invalid_parameter');
  assert.equal(
    hook.body.errors.map((e: { name: string }) => e.name),
    ['q'],
  );
});

test.run();
