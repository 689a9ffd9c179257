/**
 * `leads accounts invite` end to end: the command prints a one-time link under PUBLIC_BASE_URL,
 * and with SMTP_URL it also e-mails it — received here by a real SMTP server (smtp-server on port
 * 0, a local sink). The address is never stored; without SMTP_URL the operator is told to pass
 * the link on. The link opens the account (password set through the invitation page's calls).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Database from 'better-sqlite3';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { AppAgent } from './agent.ts';
import { leads as runLeads } from '../../helpers/cli.ts';

let api: TestApi;
const mails: { from: string; to: string[]; data: string }[] = [];
let smtp: SMTPServer;
let smtpPort = 0;

test.before(async () => {
  api = await startTestApi();
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString('utf8'),
        });
        done();
      });
    },
  });
  smtp.listen(0, '127.0.0.1');
  await once(smtp.server, 'listening');
  smtpPort = (smtp.server.address() as AddressInfo).port;
});
test.after(async () => {
  if (smtp) await new Promise<void>((r) => smtp.close(() => r()));
  await api?.close();
});

function leads(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runLeads(args, {
    ...process.env,
    DATA_DIR: api.dataDir,
    DATABASE_URL: '',
    PUBLIC_BASE_URL: api.baseUrl + '/v1',
    SMTP_URL: '',
    ...env,
  });
}

test('accounts invite prints a one-time link; with SMTP_URL it is e-mailed too; the address is never kept', async () => {
  assert.is((await leads(['accounts', 'create', '--name', 'kerry-builders', '--plan', 'pro'])).code, 0);
  const plain = await leads(['accounts', 'invite', '--account', 'kerry-builders']);
  assert.is(plain.code, 0, plain.stderr);
  assert.match(plain.stdout.trim(), new RegExp(`^${api.baseUrl}/app/invite#[A-Za-z0-9_-]{43}$`));
  assert.match(plain.stderr, /valid once until/);
  const noSmtp = await leads([
    'accounts',
    'invite',
    '--account',
    'kerry-builders',
    '--email',
    'owner@kerry.example',
    '--json',
  ]);
  assert.is(noSmtp.code, 0);
  assert.is(JSON.parse(noSmtp.stdout).emailed, false);
  assert.match(noSmtp.stderr, /SMTP_URL is not set: the invitation was NOT e-mailed/);
  const sent = await leads(
    ['accounts', 'invite', '--account', 'kerry-builders', '--email', 'owner@kerry.example', '--json'],
    { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, SMTP_FROM: 'invites@leads.example' },
  );
  assert.is(sent.code, 0, sent.stderr);
  const out = JSON.parse(sent.stdout) as { account: string; url: string; expires_at: string; emailed: boolean };
  assert.equal([out.account, out.emailed], ['kerry-builders', true]);
  assert.is(mails.length, 1);
  assert.equal([mails[0]!.from, mails[0]!.to], ['invites@leads.example', ['owner@kerry.example']]);
  const body = mails[0]!.data.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  assert.ok(body.includes(out.url), 'the link is in the e-mail');
  // only the newest link works; it opens the account
  const agent = new AppAgent(api.baseUrl);
  assert.is((await agent.acceptWithPassword(plain.stdout.trim(), 'first link passphrase')).status, 410);
  assert.is((await agent.acceptWithPassword(out.url, 'newest link passphrase')).status, 200);
  // the address went nowhere: not in any table, not in the activity log
  const db = new Database(join(api.dataDir, 'state.sqlite'), { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    const dump = JSON.stringify(tables.map((x) => db.prepare(`SELECT * FROM "${x.name}"`).all()));
    assert.not.match(dump, 'owner@kerry.example');
    assert.not.match(dump, out.url.split('#')[1]!);
  } finally {
    db.close();
  }
  const a = (await api.store.getAccountByName('kerry-builders'))!;
  const issued = (await api.store.app.listActivity(a.id)).filter((e) => e.event === 'invitation_issued');
  assert.equal(
    issued.map((e) => e.details['emailed']),
    [1, 0, 0],
  );
});

test('accounts invite: unknown account, missing --account, bad --email', async () => {
  const unknown = await leads(['accounts', 'invite', '--account', 'nobody']);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /no account named 'nobody'/);
  assert.is((await leads(['accounts', 'invite'])).code, 2);
  assert.is((await leads(['accounts', 'invite', '--account', 'x', '--email', 'not-an-address'])).code, 2);
  assert.match((await leads(['help'])).stdout, /accounts invite --account N/);
});

test.run();
