/** nosniff and no-referrer always; HSTS only over HTTPS or a trusted proxy saying https. (Own TLS: server.test.ts.) */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HSTS } from '../../../api/middleware/security-headers.ts';
import { startTestApi } from '../../helpers/api.ts';

test('plain HTTP: no HSTS, and X-Forwarded-Proto is ignored without TRUST_PROXY', async () => {
  const api = await startTestApi();
  try {
    for (const res of [await api.request('/v1/meta'), await api.request('/v1/meta', { key: null })]) {
      assert.is(res.headers.get('x-content-type-options'), 'nosniff');
      assert.is(res.headers.get('referrer-policy'), 'no-referrer');
      assert.is(res.headers.get('strict-transport-security'), null);
    }
    const spoofed = await api.request('/v1/meta', { headers: { 'X-Forwarded-Proto': 'https' } });
    assert.is(spoofed.headers.get('strict-transport-security'), null);
  } finally {
    await api.close();
  }
});

test('TRUST_PROXY: HSTS when the proxy says https, not when it says http', async () => {
  const api = await startTestApi({ config: { trustProxy: true } });
  try {
    assert.is(
      (await api.request('/v1/meta', { headers: { 'X-Forwarded-Proto': 'https' } })).headers.get(
        'strict-transport-security',
      ),
      HSTS,
    );
    assert.is(
      (await api.request('/v1/meta', { key: null, headers: { 'X-Forwarded-Proto': 'https' } })).headers.get(
        'strict-transport-security',
      ),
      HSTS,
    );
    assert.is(
      (await api.request('/v1/meta', { headers: { 'X-Forwarded-Proto': 'http' } })).headers.get(
        'strict-transport-security',
      ),
      null,
    );
    assert.is((await api.request('/v1/meta')).headers.get('strict-transport-security'), null);
  } finally {
    await api.close();
  }
});

test.run();
