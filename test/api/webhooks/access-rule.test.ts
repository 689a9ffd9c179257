/** The rule deciding the scope a webhook sends with (api/webhooks/send-access.ts), case by case. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { planAllowsScope } from '../../../api/access/licences.ts';
import { webhookAccess } from '../../../api/webhooks/send-access.ts';
import { apiKey as key } from '../../helpers/api-key.ts';

const NOW = new Date('2026-11-20T10:00:00Z');
const premium = { plan: 'premium' as const };

test("the lower of the webhook's scope and the best key the account holds now", () => {
  assert.is(webhookAccess('ent_api', premium, [key('ent_api')], NOW).scope, 'ent_api');
  assert.is(
    webhookAccess('ent_api', premium, [key('ent_api'), key('custom')], NOW).scope,
    'ent_api',
    'never more than it was created with',
  );
  assert.is(
    webhookAccess('custom', premium, [key('ent_api'), key('commonwealth')], NOW).scope,
    'ent_api',
    'less when less is left',
  );
  assert.is(
    webhookAccess(
      'ent_feed',
      { plan: 'basic' },
      [key('ent_feed', { licence_id: 'lic_1', expires_at: '2026-12-01T00:00:00.000Z' })],
      NOW,
    ).scope,
    'ent_feed',
  );
});

test('no key that may receive webhooks: suspended, saying what happened to each key', () => {
  const revoked = key('ent_api', { status: 'revoked', revoked_at: '2026-11-19T09:00:00.000Z' });
  const expired = key('ent_feed', { licence_id: 'lic_9', expires_at: '2026-11-20T00:00:00.000Z' }); // still 'active' on read: the clock decides
  const a = webhookAccess('ent_api', premium, [key('commonwealth'), revoked, expired], NOW);
  assert.equal([a.scope, a.reason], [null, 'no_active_key']);
  assert.match(a.detail!, /^the account holds no active ent_api, ent_feed or custom key/);
  assert.match(a.detail!, new RegExp(`${revoked.id} \\(ent_api\\) was revoked at 2026-11-19T09:00:00.000Z`));
  assert.match(
    a.detail!,
    new RegExp(`${expired.id} \\(ent_feed\\) expired with licence lic_9 at 2026-11-20T00:00:00.000Z`),
  );
  assert.not.match(a.detail!, /commonwealth\)/, 'commonwealth keys are not listed: they never count');
  assert.is(webhookAccess('ent_api', premium, [], NOW).scope, null);
  assert.is(webhookAccess('ent_api', null, [key('ent_api')], NOW).scope, null, 'no account, no access');
});

test('plan: ent_api keys count only on premium; licensed scopes on any plan', () => {
  const ent = key('ent_api');
  for (const plan of ['basic', 'pro'] as const) {
    const a = webhookAccess('ent_api', { plan }, [ent], NOW);
    assert.is(a.scope, null, plan);
    assert.match(a.detail!, new RegExp(`${ent.id} \\(ent_api\\) needs the premium plan and the account is on ${plan}`));
    assert.not.ok(planAllowsScope(plan, 'ent_api'));
    for (const s of ['commonwealth', 'ent_feed', 'custom'] as const)
      assert.ok(planAllowsScope(plan, s), `${s} on ${plan}`);
  }
  assert.is(
    webhookAccess('ent_api', { plan: 'pro' }, [ent, key('custom')], NOW).scope,
    'ent_api',
    'a custom licence still carries an ent_api webhook',
  );
});

test.run();
