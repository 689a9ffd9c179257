/**
 * `make bench ARGS="--only webhooks"`: dispatch of the new leads of a small release (~10,000
 * leads, the generator's `small` scale, built once under data/bench-webhooks) to 100 webhooks on
 * a local receiver, through the real path: WebhookStore on a SQLite file, DuckDB over the
 * release's Parquet, plan → signed POSTs → recorded outcomes. Each webhook filters on one county
 * (so a lead goes to the webhooks of its county) and starts with watermark 0, so every lead of
 * the release is new. Reports plan time, delivery time and deliveries/s.
 */
import http from 'node:http';
import { existsSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadApiConfig } from '../api/config.ts';
import { generateKey } from '../api/access/keys.ts';
import { openSqliteStore } from '../api/state/sqlite.ts';
import { createDispatcher } from '../api/webhooks/dispatcher.ts';
import { dataDirLeadReader } from '../api/webhooks/lead-reader.ts';
import { parseSavedFilter } from '../api/webhooks/saved-filter.ts';
import { generateSecret } from '../api/webhooks/signing.ts';
import { loadPipelineConfig } from '../pipeline/config.ts';
import { runPipeline } from '../pipeline/run.ts';
import { generateRaw, SCALES } from '../pipeline/synth/generate.ts';
import type { BenchRow as Row } from './api.ts';

export async function webhooksBench(o: { root: string; webhooks?: number }): Promise<Row[]> {
  const dir = join(o.root, 'data', 'bench-webhooks');
  if (!existsSync(join(dir, 'current', 'manifest.json'))) {
    const raw = join(dir, 'raw');
    await generateRaw({ outDir: raw, scale: SCALES.small, seed: 1, week: 1 });
    const s = await runPipeline(loadPipelineConfig({}, { dataDir: dir, rawDir: raw, progress: false }), {
      now: () => new Date('2026-11-09T06:00:00Z'),
      log: () => {},
    });
    if (s.status !== 'published') throw new Error(`bench release not published: ${s.message}`);
  }
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const stateFile = join(dir, `state-${Date.now()}.sqlite`);
  const store = openSqliteStore(stateFile);
  const leads = dataDirLeadReader(dir);
  const config = loadApiConfig({}, { dataDir: dir, webhookAllowHosts: ['127.0.0.1'], webhookConcurrency: 16 });
  const dispatcher = createDispatcher({
    store: store.webhooks,
    accounts: store,
    leads,
    config,
    clock: () => new Date(),
  });
  try {
    const snap = (await leads.snapshot())!;
    const counties = [...snap.places.counties.values()].sort();
    const account = await store.createAccount('bench', 'premium');
    const key = generateKey('ent_api'); // webhooks send only while the account holds a key that may receive them
    await store.insertKey({
      id: key.id,
      account_id: account.id,
      scope: 'ent_api',
      name: 'bench',
      display_prefix: key.displayPrefix,
      hash: key.hash,
    });
    const n = o.webhooks ?? 100;
    for (let i = 0; i < n; i++) {
      const f = parseSavedFilter(`county=${encodeURIComponent(counties[i % counties.length]!)}`, snap.places);
      await store.webhooks.createWebhook({
        id: `wh_${i.toString(16).padStart(16, '0')}`,
        account_id: account.id,
        scope: 'ent_api',
        url,
        filter: f.filter,
        filters: f.filters as Record<string, unknown>,
        description: null,
        secret: generateSecret(),
        watermark_lead_id: 0,
        watermark_release: null,
      });
    }
    const t0 = performance.now();
    const plan = await dispatcher.plan();
    const t1 = performance.now();
    const sent = await dispatcher.deliverDue();
    const t2 = performance.now();
    if (sent.delivered !== plan.events || received !== plan.events)
      throw new Error(`delivered ${sent.delivered} / received ${received} of ${plan.events} events`);
    const sendS = (t2 - t1) / 1000;
    return [
      { metric: 'new leads in the release', value: snap.maxLeadId, unit: 'leads' },
      { metric: 'webhooks', value: n, unit: '' },
      { metric: 'lead payloads (lead × matching webhook)', value: plan.leads, unit: 'leads' },
      { metric: 'deliveries (≤ 100 leads each)', value: plan.events, unit: '' },
      { metric: 'plan (query, event bodies, queue)', value: (t1 - t0) / 1000, unit: 's' },
      { metric: 'send (access, mask, sign, POST, record)', value: sendS, unit: 's' },
      { metric: 'total dispatch time', value: (t2 - t0) / 1000, unit: 's' },
      { metric: 'deliveries/s (send)', value: plan.events / sendS, unit: '/s' },
      { metric: 'leads delivered/s (end to end)', value: plan.leads / ((t2 - t0) / 1000), unit: '/s' },
    ];
  } finally {
    dispatcher.close();
    await leads.close();
    await store.close();
    for (const f of [stateFile, `${stateFile}-wal`, `${stateFile}-shm`]) rmSync(f, { force: true });
    server.close();
  }
}
