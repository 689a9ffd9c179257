/**
 * The ceiling of the `ceiling` bench section (bench/ceiling.ts): a bare Koa process answering each
 * recorded `GET` path with the bytes the API gave for it (status 200, the API's content type) and
 * nothing else — no key, no limits, no ledger, no query. What any Koa server on this box could do
 * with the same responses: the API's list page is measured as a share of it.
 *
 *   node --import tsx bench/ceiling-server.ts <payloads.json>
 *
 * `payloads.json`: `{ "<path>": { "type": "…", "body": "<base64>" } }`. Prints `listening on <origin>/v1`.
 */
import Koa from 'koa';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

const file = process.argv[2];
if (!file) throw new Error('usage: ceiling-server.ts <payloads.json>');
const recorded = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { type: string; body: string }>;
const payloads = new Map(
  Object.entries(recorded).map(([path, p]) => [path, { type: p.type, body: Buffer.from(p.body, 'base64') }]),
);

const app = new Koa();
app.use((ctx) => {
  const p = payloads.get(ctx.url);
  if (!p) {
    ctx.status = 404;
    return;
  }
  ctx.type = p.type;
  ctx.body = p.body;
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stderr.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/v1\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
