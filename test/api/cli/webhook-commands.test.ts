/** `leads webhooks …` end to end: the CLI's commands run in process (test/helpers/cli.ts) on a tiny release and a SQLite state file. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tinyRelease } from '../../helpers/api.ts';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { leads as runLeads } from '../../helpers/cli.ts';

let dataDir: string;
let rx: Receiver;

function leads(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runLeads(args, { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
}

test.before(async () => {
  const rel = await tinyRelease();
  dataDir = tempDir('leads-webhooks-cli-');
  mkdirSync(join(dataDir, 'releases'));
  symlinkSync(rel.dir, join(dataDir, 'releases', rel.id));
  symlinkSync(`releases/${rel.id}`, join(dataDir, 'current'));
  rx = await startReceiver();
});
test.after(() => rx?.close());

test('create needs an ent_api-or-above key; prints {"id","secret"} once; list never shows the secret', async () => {
  assert.is((await leads('accounts', 'create', '--name', 'acme', '--plan', 'premium')).code, 0);
  const cw = await leads('webhooks', 'create', '--account', 'acme', '--url', rx.url('/h'), '--json');
  assert.is(cw.code, 1, cw.stderr);
  assert.match(cw.stderr, /no active key of scope ent_api, ent_feed, custom.*commonwealth cannot have webhooks/);
  assert.is((await leads('keys', 'create', '--account', 'acme', '--scope', 'commonwealth')).code, 0);
  const still = await leads(
    'webhooks',
    'create',
    '--account',
    'acme',
    '--url',
    rx.url('/h'),
    '--scope',
    'commonwealth',
  );
  assert.is(still.code, 1);
  assert.match(still.stderr, /insufficient|ent_api/);
  assert.is((await leads('keys', 'create', '--account', 'acme', '--scope', 'ent_api')).code, 0);
  const bad = await leads(
    'webhooks',
    'create',
    '--account',
    'acme',
    '--url',
    rx.url('/h'),
    '--filter',
    'vertical=moonbase',
  );
  assert.is(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /vertical: not an allowed value/);
  const ok = await leads(
    'webhooks',
    'create',
    '--account',
    'acme',
    '--url',
    rx.url('/h'),
    '--filter',
    'vertical=solar&county=cork',
    '--json',
  );
  assert.is(ok.code, 0, ok.stderr);
  const created = JSON.parse(ok.stdout) as { id: string; secret: string };
  assert.equal(Object.keys(created), ['id', 'secret']);
  assert.match(created.secret, /^whsec_/);
  const list = await leads('webhooks', 'list', '--json');
  const hooks = JSON.parse(list.stdout) as { id: string; filter: string; scope: string }[];
  assert.equal(
    hooks.map((h) => [h.id, h.filter, h.scope]),
    [[created.id, 'vertical=solar&county=Cork', 'ent_api']],
  );
  assert.not.ok(list.stdout.includes(created.secret));
  const badTypes = await leads(
    'webhooks',
    'create',
    '--account',
    'acme',
    '--url',
    rx.url('/t'),
    '--types',
    'lead.new,lead.moved',
  );
  assert.is(badTypes.code, 2, badTypes.stderr);
  assert.match(
    badTypes.stderr,
    /types: must be a non-empty list of lead\.new, lead\.updated, lead\.stage_changed, lead\.removed/,
  );
  const typed = await leads(
    'webhooks',
    'create',
    '--account',
    'acme',
    '--url',
    rx.url('/t'),
    '--types',
    'lead.stage_changed,lead.new',
    '--json',
  );
  assert.is(typed.code, 0, typed.stderr);
  const typedId = (JSON.parse(typed.stdout) as { id: string }).id;
  const both = JSON.parse((await leads('webhooks', 'list', '--json')).stdout) as { id: string; types: string[] }[];
  assert.equal(
    both.map((h) => [h.id, h.types]),
    [
      [created.id, ['lead.new']],
      [typedId, ['lead.new', 'lead.stage_changed']],
    ],
    'no --types: lead.new',
  );
  assert.is((await leads('webhooks', 'disable', typedId)).code, 0);

  const sent = await leads('webhooks', 'test', created.id);
  assert.is(sent.code, 0, sent.stderr + sent.stdout);
  assert.match(sent.stdout, /delivered, HTTP 204/);
  assert.is(rx.requests('/h').length, 1);
  const log = JSON.parse((await leads('webhooks', 'deliveries', created.id, '--json')).stdout) as {
    type: string;
    status: string;
  }[];
  assert.equal(
    log.map((d) => [d.type, d.status]),
    [['webhook.test', 'delivered']],
  );
  const rotated = await leads('webhooks', 'rotate-secret', created.id, '--json');
  assert.is.not(JSON.parse(rotated.stdout).secret, created.secret);
  assert.match((await leads('webhooks', 'disable', created.id)).stdout, /disabled/);
  assert.match((await leads('webhooks', 'replay', created.id)).stdout, /no dead letters/);
  const dispatch = await leads('webhooks', 'dispatch', '--json');
  assert.is(dispatch.code, 0, dispatch.stderr);
  assert.equal(JSON.parse(dispatch.stdout).planned.events, 0);
  assert.is((await leads('webhooks', 'test')).code, 2);
  assert.is((await leads('webhooks', 'list', '--account', 'nobody')).code, 1);
  assert.is((await leads('webhooks', 'disable', 'wh_0000000000000000')).code, 1);
});

test.run();
