/**
 * The Python client (clients/python/leads_client.py, standard library only) against a real server
 * on port 0, run by Debian's python3 as it is: paging to the end, detail, a problem with its code,
 * the budget headers, an export to a file, a real 429 retried after its reset, a real signed
 * webhook delivery verified, and the SQLite sync. Skipped with its reason where python3 is absent.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { freshKey, MovableClock, spendHourlyLimit } from '../helpers/clients.ts';
import { skipFile } from '../helpers/skip.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { tempDir } from '../helpers/tmp.ts';

const CLIENT_DIR = join(import.meta.dirname, '..', '..', 'clients', 'python');

function havePython(): string | null {
  try {
    execFileSync('python3', ['--version'], { stdio: 'pipe' });
    return null;
  } catch {
    return 'python3 is not installed (Debian: apt-get install python3)';
  }
}

/**
 * Run Python `code` with leads_client importable, `client` a LeadsClient for `key`, and `out(x)`
 * printing x as JSON; resolves with what it printed (parsed) or rejects with its stderr.
 */
function py(api: TestApi, key: string, code: string, env: Record<string, string> = {}): Promise<any> {
  const prelude = [
    'import json, os, sys',
    'from leads_client import *',
    'client = LeadsClient(os.environ["LEADS_API_KEY"], os.environ["LEADS_BASE_URL"])',
    'def out(x): print(json.dumps(x))',
  ].join('\n');
  return new Promise((resolve, reject) => {
    execFile(
      'python3',
      ['-c', `${prelude}\n${code}`],
      {
        env: {
          ...process.env,
          PYTHONPATH: CLIENT_DIR,
          PYTHONDONTWRITEBYTECODE: '1',
          LEADS_API_KEY: key,
          LEADS_BASE_URL: `${api.baseUrl}/v1`,
          ...env,
        },
      },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`python3 failed: ${stderr || err.message}`))
          : resolve(JSON.parse(stdout.trim().split('\n').pop()!)),
    );
  });
}

const reason = havePython();
if (reason) {
  skipFile(test, 'python.test.ts', reason);
} else {
  const clock = new MovableClock();
  let api: TestApi;
  let rx: Receiver;

  test.before(async () => {
    api = await startTestApi({ clock: clock.now, config: { webhookAllowHosts: ['127.0.0.1'] } });
    rx = await startReceiver();
  });
  test.after(async () => {
    await rx?.close();
    await api?.close();
  });

  test('paginate pages a filter to the end (= the total of /v1/leads); get reads a detail and the limits', async () => {
    const total = (await api.request('/v1/leads?county=Cork,Dublin&page_size=1')).body.total as number;
    const r = await py(
      api,
      api.keys.ent_api,
      `
ids = [lead["id"] for lead in client.paginate("/leads", {"county": ["Cork", "Dublin"], "page_size": 40})]
pages = sum(1 for _ in client.pages("/leads", {"county": ["Cork", "Dublin"], "page_size": 40}))
detail = client.get("/leads/{id}", {"id": ids[0]})
exported = [lead["id"] for lead in client.paginate("/export/applications", {"county": ["Cork", "Dublin"], "limit": 30})]
out({"ids": ids, "pages": pages, "detail": detail.data["id"], "limits": detail.limits, "exported": sorted(exported)})`,
    );
    assert.is(r.ids.length, total);
    assert.is(new Set(r.ids).size, total);
    assert.is(r.pages, Math.ceil(total / 40));
    assert.is(r.detail, r.ids[0]);
    assert.is(r.limits.rate_limit.limit, 5000);
    assert.is(r.limits.budget.limit, 5000);
    assert.equal(
      r.exported,
      [...r.ids].sort((a: number, b: number) => a - b),
    );
  });

  test('a problem is raised as LeadsProblem with its status, code, errors and request id', async () => {
    const r = await py(
      api,
      api.keys.ent_api,
      `
try:
    client.get("/leads", {"page_size": 0})
    out(None)
except LeadsProblem as e:
    out({"status": e.status, "code": e.code, "detail": e.detail, "errors": e.errors, "request_id": e.request_id})`,
    );
    assert.equal([r.status, r.code, r.errors[0].name], [400, 'invalid_parameter', 'page_size']);
    assert.match(r.detail, /page_size/);
    assert.ok(r.request_id);
  });

  test('budget headers and a quote for a commonwealth key; enriched fields masked', async () => {
    const key = await freshKey(api, 'commonwealth');
    const r = await py(
      api,
      key,
      `
q = client.quote("/leads", {"page_size": 10})
page = client.get("/leads", {"page_size": 10})
out({"quote": q.data, "budget": page.limits["budget"], "orgs": [l["applicant_org"] for l in page.data["results"]]})`,
    );
    assert.equal([r.quote.dry_run, r.quote.rows, r.quote.budget_remaining], [true, 10, 1000]);
    assert.equal([r.budget.limit, r.budget.remaining], [1000, 990]);
    assert.ok(r.orgs.length === 10 && r.orgs.every((o: unknown) => o === null));
  });

  test('export_to_file streams the CSV of a filter to a file', async () => {
    const dir = tempDir('py-export-');
    const file = join(dir, 'cork.jsonl');
    const total = (await api.request('/v1/leads?county=Cork&page_size=1')).body.total as number;
    const r = await py(
      api,
      api.keys.ent_api,
      `out(client.export_to_file("jsonl", ${JSON.stringify(file)}, {"county": "Cork"}))`,
    );
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.is(lines.length, total);
    assert.is(r.bytes, readFileSync(file).length);
    assert.match(r.filename, /^applications-.*\.jsonl$/);
  });

  test('a 429 is retried after its Retry-After, across the real reset of the hourly window', async () => {
    const key = await freshKey(api, 'commonwealth');
    await spendHourlyLimit(api, key, clock, 5000); // python3's start fits well inside the 5 s left
    const r = await py(
      api,
      key,
      `
import time
waits = []
client.sleep = lambda s: (waits.append(s), time.sleep(s))
a = client.get("/meta")
out({"status": a.status, "waits": waits, "remaining": a.limits["rate_limit"]["remaining"]})`,
    );
    assert.is(r.status, 200);
    assert.is(r.waits.length, 1);
    assert.ok(r.waits[0] >= 1 && r.waits[0] <= 5, `waited Retry-After (${r.waits[0]} s)`);
    assert.is(r.remaining, 599);
    clock.runFrom(Date.now());
  });

  test('verify_webhook: a real signed delivery verifies; tampered, another secret or stale do not', async () => {
    const made = await api.request('/v1/webhooks', {
      method: 'POST',
      body: { url: rx.url('/py'), filter: 'county=Cork' },
    });
    assert.is(made.status, 201, made.text);
    assert.is((await api.request(`/v1/webhooks/${made.body.id}/test`, { method: 'POST' })).status, 200);
    const [d] = rx.requests('/py');
    const dir = tempDir('py-hook-');
    writeFileSync(join(dir, 'body'), d!.body);
    writeFileSync(join(dir, 'headers.json'), JSON.stringify(d!.headers));
    const r = await py(
      api,
      api.keys.ent_api,
      `
body = open(${JSON.stringify(join(dir, 'body'))}, "rb").read()
headers = json.load(open(${JSON.stringify(join(dir, 'headers.json'))}))
secret = ${JSON.stringify(made.body.secret)}
now = int(headers["webhook-timestamp"])
other = "whsec_" + __import__("base64").b64encode(bytes(32)).decode()
out([verify_webhook(secret, body, headers, now), verify_webhook(secret, body + b" ", headers, now), verify_webhook(other, body, headers, now), verify_webhook(secret, body, headers, now + 301)])`,
    );
    assert.equal(r, [true, false, false, false]);
  });

  test('sync_to_sqlite: a full export of a filter into SQLite, the release recorded; a second run reads the events feed (or, without one, exports again)', async () => {
    const db = join(tempDir('py-sync-'), 'leads.sqlite');
    const total = (await api.request('/v1/leads?county=Cork&page_size=1')).body.total as number;
    const r = await py(
      api,
      api.keys.ent_api,
      `out([sync_to_sqlite(client, ${JSON.stringify(db)}, {"county": ["Cork"]}, page_size=25), sync_to_sqlite(client, ${JSON.stringify(db)}, {"county": ["Cork"]})])`,
    );
    const hasEvents = Boolean((await api.request('/v1/openapi.json')).body.paths['/events']?.get);
    assert.equal(r[0], { mode: 'full', leads: total, release: api.release(), events: null });
    // the same release: no event after it (with the feed), or the same full export (without)
    assert.equal(
      r[1],
      hasEvents ? { mode: 'events', leads: total, release: api.release(), events: 0 } : r[0],
      'the events feed once the server has one',
    );
    const sql = new Database(db, { readonly: true });
    const rows = sql.prepare('SELECT id, county, record FROM leads ORDER BY id').all() as {
      id: number;
      county: string;
      record: string;
    }[];
    sql.close();
    assert.is(rows.length, total);
    assert.ok(rows.every((x) => x.county === 'Cork' && JSON.parse(x.record).id === x.id));
  });
}

test.run();
