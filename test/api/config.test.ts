/**
 * loadApiConfig(env, overrides): defaults, parsing, overrides and the fail-fast checks, each
 * error naming its environment variable; one case per rule of api/config.ts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolve } from 'node:path';
import { API_DEFAULTS, ApiConfigError, loadApiConfig, type ApiConfig } from '../../api/config.ts';

const S32 = 'x'.repeat(32);

test('no environment: every key has its documented default (paths resolved, a random cursor secret)', () => {
  const c = loadApiConfig({});
  assert.ok(Object.isFrozen(c));
  assert.equal(Object.keys(c).sort(), Object.keys(API_DEFAULTS).sort(), 'every key of API_DEFAULTS, no other');
  const derived: (keyof ApiConfig)[] = ['dataDir', 'databaseUrl', 'exportTempDir', 'cursorSecret'];
  for (const [k, d] of Object.entries(API_DEFAULTS) as [keyof ApiConfig, { value: unknown }][]) {
    if (!derived.includes(k)) assert.equal(c[k], d.value, k);
  }
  assert.is(c.dataDir, resolve('data'));
  assert.is(c.databaseUrl, `file:${resolve('data', 'state.sqlite')}`);
  assert.is(c.exportTempDir, resolve('data', 'export-tmp'));
  assert.match(c.cursorSecret, /^[0-9a-f]{64}$/);
  assert.is.not(loadApiConfig({}).cursorSecret, c.cursorSecret);
});

test('values are read from their variables; an empty variable is unset', () => {
  const c = loadApiConfig({
    DATA_DIR: '/srv/leads',
    PORT: '9000',
    PAGE_SIZE_MAX: '50',
    PAGE_SIZE_DEFAULT: '',
    PUBLIC_BASE_URL: 'https://api.example.ie/v1///',
    ACCESS_LIMITS: 'OFF',
    TRUST_PROXY: 'yes',
    WEBHOOK_ALLOW_HOSTS: ' a.example , ,127.0.0.1',
    CURSOR_SECRET: S32,
    CURSOR_SECRETS_PREVIOUS: `${S32}1, ${S32}2`,
    METRICS_PORT: '9464',
    COMPRESS_MIN_BYTES: 'off',
    WEBAUTHN_RP_ID: 'Example.ie',
  });
  assert.is(c.dataDir, '/srv/leads');
  assert.is(c.databaseUrl, 'file:/srv/leads/state.sqlite');
  assert.is(c.exportTempDir, '/srv/leads/export-tmp');
  assert.is(c.port, 9000);
  assert.is(c.pageSizeMax, 50);
  assert.is(c.pageSizeDefault, 25);
  assert.is(c.publicBaseUrl, 'https://api.example.ie/v1');
  assert.is(c.accessLimits, false);
  assert.is(c.trustProxy, true);
  assert.equal(c.webhookAllowHosts, ['a.example', '127.0.0.1']);
  assert.ok(Object.isFrozen(c.webhookAllowHosts));
  assert.is(c.cursorSecret, S32);
  assert.equal(c.cursorSecretsPrevious, [`${S32}1`, `${S32}2`]);
  assert.is(c.metricsPort, 9464);
  assert.is(c.compressMinBytes, null);
});

test('overrides win over the environment and skip its parsing', () => {
  const c = loadApiConfig(
    { PORT: 'nonsense', ACCESS_LIMITS: 'off', METRICS_PORT: '9464', WEBHOOK_ALLOW_HOSTS: 'a', COMPRESS_MIN_BYTES: 'x' },
    { port: 0, accessLimits: true, metricsPort: null, webhookAllowHosts: ['b'], compressMinBytes: 10, apiWorkers: 3 },
  );
  assert.is(c.port, 0);
  assert.is(c.accessLimits, true);
  assert.is(c.metricsPort, null);
  assert.equal(c.webhookAllowHosts, ['b']);
  assert.is(c.compressMinBytes, 10);
  assert.is(c.apiWorkers, 3);
});

test('bad values fail fast with an ApiConfigError naming the variable', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: '65536' }, /^PORT must be an integer between 0 and 65535, got 65536$/],
    [{ PAGE_SIZE_MAX: '20', PAGE_SIZE_DEFAULT: '21' }, /^PAGE_SIZE_DEFAULT must be an integer between 1 and 20/],
    [{ RELEASE_POLL_MS: '1.5' }, /^RELEASE_POLL_MS must be an integer/],
    [{ ACCESS_LIMITS: 'maybe' }, /^ACCESS_LIMITS must be on or off, got maybe$/],
    [{ DATABASE_URL: 'mysql://h/db' }, /^DATABASE_URL must start with file: or postgres:\/\//],
    [{ TLS_CERT_FILE: 'c.pem' }, /^TLS_CERT_FILE and TLS_KEY_FILE must be set together$/],
    [{ API_WORKERS: '65' }, /^API_WORKERS must be a whole number between 1 and 64 or auto/],
    [{ TRUSTED_PROXIES: 'bad/99' }, /^TRUSTED_PROXIES: /],
    [{ CORS_ALLOW_ORIGINS: 'https://a.example/path' }, /^CORS_ALLOW_ORIGINS must be \*, none or comma-separated/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of trace, debug/],
    [{ METRICS_TOKEN: 'short' }, /^METRICS_TOKEN must be at least 32 characters$/],
    [{ SMTP_URL: 'http://u:secret@h' }, /^SMTP_URL must start with smtp:\/\/ or smtps:\/\/, got http:\/\/…@h$/],
    [{ PUBLIC_BASE_URL: 'not a url' }, /^PUBLIC_BASE_URL must be an absolute URL/],
    [
      { PUBLIC_BASE_URL: 'https://api.example.ie/v1', WEBAUTHN_RP_ID: 'other.ie' },
      /^WEBAUTHN_RP_ID must be the host name of PUBLIC_BASE_URL \(api\.example\.ie\)/,
    ],
    [{ GIS_TOKEN_SECRET: 'short' }, /^GIS_TOKEN_SECRET must be at least 32 characters$/],
    [{ CURSOR_SECRET: 'short' }, /^CURSOR_SECRET must hold secrets of at least 32 characters$/],
    [{ GIS_TOKEN_SECRETS_PREVIOUS: `${S32},short` }, /^GIS_TOKEN_SECRETS_PREVIOUS must hold secrets/],
  ];
  for (const [env, message] of cases) {
    assert.throws(
      () => loadApiConfig(env),
      (e: unknown) => e instanceof ApiConfigError && message.test(e.message),
      JSON.stringify(env),
    );
  }
});

test('checks run in a fixed order: the store and TLS first, then PAGE_SIZE_MAX, then the fields in order', () => {
  const first = (env: Record<string, string>): string => {
    try {
      loadApiConfig(env);
    } catch (e) {
      return (e as Error).message.split(' ')[0]!;
    }
    return 'none';
  };
  assert.is(first({ PORT: 'x', DATABASE_URL: 'mysql://h' }), 'DATABASE_URL');
  assert.is(first({ PORT: 'x', PAGE_SIZE_MAX: '0' }), 'PAGE_SIZE_MAX');
  assert.is(first({ LOG_LEVEL: 'x', PORT: 'x' }), 'PORT');
  assert.is(first({ METRICS_TOKEN: 'x', INVITE_TTL_HOURS: '0' }), 'INVITE_TTL_HOURS');
  assert.is(first({ GIS_TOKEN_SECRET: 'x', METRICS_TOKEN: 'x' }), 'METRICS_TOKEN');
});

test.run();
