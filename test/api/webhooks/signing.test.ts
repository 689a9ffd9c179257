/**
 * Webhook signatures: the committed test vectors (docs/webhooks-test-vectors.json) hold for our
 * signer, for the independent `standardwebhooks` package, and for the Node, Python and shell
 * verification snippets of docs/webhooks.md, run exactly as the document shows them.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import {
  generateSecret,
  safeEqual,
  secretKey,
  SECRET_PATTERN,
  serviceSignature,
  signatureHeaders,
  standardSignature,
  verifyService,
  verifyStandard,
} from '../../../api/webhooks/signing.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';
import { tempDir } from '../../helpers/tmp.ts';

interface Vector {
  name: string;
  secret: string;
  now: number;
  body: string;
  headers: Record<string, string>;
  valid: boolean;
}
const file = JSON.parse(readFileSync(join(REPO_ROOT, 'docs/webhooks-test-vectors.json'), 'utf8')) as {
  vectors: Vector[];
};
const vectors = file.vectors;
const doc = readFileSync(join(REPO_ROOT, 'docs/webhooks.md'), 'utf8');

/** The first fenced block of `lang` after the heading `heading` in docs/webhooks.md. */
function snippet(heading: string, lang: string): string {
  const at = doc.indexOf(`\n### ${heading}\n`);
  assert.ok(at >= 0, `docs/webhooks.md has ### ${heading}`);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(doc.slice(at));
  assert.ok(m, `a ${lang} block under ${heading}`);
  return m![1]!;
}

const lower = (h: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
/** Whether X-Service-Signature (body only, no time) should verify for the vector. */
const serviceValid = (v: Vector): boolean => v.valid || v.name === 'stale timestamp';

test('the vectors cover valid, tampered body, stale timestamp and rotated secret', () => {
  const names = vectors.map((v) => v.name);
  for (const n of ['valid', 'tampered body', 'stale timestamp']) assert.ok(names.includes(n), n);
  assert.ok(names.filter((n) => n.startsWith('rotated secret')).length >= 2);
  assert.ok(vectors.some((v) => v.valid) && vectors.some((v) => !v.valid));
});

test('our signer reproduces the committed headers; our verifiers agree with every vector', () => {
  for (const v of vectors) {
    if (v.name === 'tampered body') continue; // signed over the original body
    const secrets = v.headers['webhook-signature']!.split(' ').length === 2 ? null : [v.secret];
    if (secrets && v.valid) {
      assert.equal(
        signatureHeaders({
          id: v.headers['webhook-id']!,
          timestamp: Number(v.headers['webhook-timestamp']),
          body: v.body,
          secrets,
        }),
        v.headers,
        v.name,
      );
    }
  }
  for (const v of vectors) {
    const h = lower(v.headers);
    assert.is(
      verifyStandard(
        v.secret,
        { id: h['webhook-id']!, timestamp: h['webhook-timestamp']!, signature: h['webhook-signature']! },
        v.body,
        v.now,
      ),
      v.valid,
      v.name,
    );
    assert.is(
      verifyService(v.secret, h['x-service-signature']!, v.body),
      serviceValid(v),
      `X-Service-Signature: ${v.name}`,
    );
  }
});

test('the independent standardwebhooks package signs and verifies the vectors the same way', () => {
  const realNow = Date.now;
  try {
    for (const v of vectors) {
      Date.now = () => v.now * 1000;
      const wh = new Webhook(v.secret);
      const h = lower(v.headers);
      const ok = (() => {
        try {
          wh.verify(v.body, h);
          return true;
        } catch {
          return false;
        }
      })();
      assert.is(ok, v.valid, v.name);
      const ours = standardSignature(v.secret, h['webhook-id']!, Number(h['webhook-timestamp']), v.body);
      assert.is(
        wh.sign(h['webhook-id']!, new Date(Number(h['webhook-timestamp']) * 1000), v.body),
        ours,
        `same signature: ${v.name}`,
      );
    }
  } finally {
    Date.now = realNow;
  }
});

test('the Node snippet of docs/webhooks.md verifies the vectors', async () => {
  const f = join(tempDir(), 'verify.mjs');
  writeFileSync(f, snippet('Node', 'js'));
  const m = (await import(pathToFileURL(f).href)) as {
    verifyWebhook: (s: string, b: Buffer, h: Record<string, string>, now: number) => boolean;
    verifyServiceSignature: (s: string, b: Buffer, h: string) => boolean;
  };
  for (const v of vectors) {
    const h = lower(v.headers);
    assert.is(m.verifyWebhook(v.secret, Buffer.from(v.body), h, v.now), v.valid, v.name);
    assert.is(
      m.verifyServiceSignature(v.secret, Buffer.from(v.body), h['x-service-signature']!),
      serviceValid(v),
      `service: ${v.name}`,
    );
  }
});

test('the Python snippet of docs/webhooks.md verifies the vectors', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'verify.py'), snippet('Python', 'python'));
  const harness = `
import json, sys
from verify import verify_webhook, verify_service_signature
out = []
for v in json.load(open(sys.argv[1]))["vectors"]:
    h = {k.lower(): x for k, x in v["headers"].items()}
    b = v["body"].encode()
    out.append([verify_webhook(v["secret"], b, h, now=v["now"]), verify_service_signature(v["secret"], b, h["x-service-signature"])])
print(json.dumps(out))`;
  writeFileSync(join(dir, 'harness.py'), harness);
  const r = spawnSync('python3', ['harness.py', join(REPO_ROOT, 'docs/webhooks-test-vectors.json')], {
    cwd: dir,
    encoding: 'utf8',
  });
  assert.is(r.status, 0, r.stderr);
  assert.equal(
    JSON.parse(r.stdout),
    vectors.map((v) => [v.valid, serviceValid(v)]),
  );
});

test('the shell snippet of docs/webhooks.md verifies the vectors', () => {
  const dir = tempDir();
  const script = join(dir, 'verify.sh');
  writeFileSync(script, snippet('Shell', 'sh'));
  for (const v of vectors) {
    const body = join(dir, 'body');
    writeFileSync(body, v.body);
    const h = lower(v.headers);
    const r = spawnSync('sh', [script, body], {
      encoding: 'utf8',
      env: {
        PATH: process.env['PATH'],
        SECRET: v.secret,
        WEBHOOK_ID: h['webhook-id'],
        WEBHOOK_TIMESTAMP: h['webhook-timestamp'],
        WEBHOOK_SIGNATURE: h['webhook-signature'],
        NOW: String(v.now),
      },
    });
    assert.is(r.status === 0, v.valid, `${v.name}: exit ${r.status} ${r.stderr}`);
  }
});

test('secrets: whsec_ + base64 of 32 random bytes; helpers', () => {
  const a = generateSecret();
  assert.match(a, SECRET_PATTERN);
  assert.is.not(a, generateSecret());
  assert.is(secretKey(a).length, 32);
  assert.throws(() => secretKey('whsec_'), /empty/);
  assert.match(serviceSignature(a, '{}'), /^sha256=[0-9a-f]{64}$/);
  assert.ok(safeEqual('abc', 'abc'));
  assert.not.ok(safeEqual('abc', 'abd'));
  assert.not.ok(safeEqual('abc', 'abcd'));
});

test.run();
