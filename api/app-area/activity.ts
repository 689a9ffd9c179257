/**
 * The account activity log's writer: `activityRecorder(store)` is the contract's
 * `RecordActivity` (the pages log keys and webhooks through it; the session layer logs sign-ins,
 * failures, sign-outs, credential changes and invitations through `logActivity`). Each entry
 * carries the session's public id and the client address; details never hold a password, a
 * token, a raw key, an e-mail address or a person's name. The owner reads the log on the
 * activity page (`store.app.listActivity`).
 */
import type { AppStore } from '../state/app-store.ts';
import type { AppAreaContext, RecordActivity } from './contract.ts';

/** The session layer's own events. */
export const SESSION_EVENTS = {
  invitationIssued: 'invitation_issued',
  credentialSet: 'credential_set',
  signedIn: 'signed_in',
  signInFailed: 'sign_in_failed',
  signInThrottled: 'sign_in_throttled',
  signedOut: 'signed_out',
} as const;

export function activityRecorder(store: Pick<AppStore, 'recordActivity'>): RecordActivity {
  return async (ctx, event, details = {}) => {
    const s = ctx.state.app;
    await store.recordActivity({
      account_id: s.account.id,
      event,
      session_id: s.id,
      address: ctx.ip || null,
      details: { ...details },
    });
  };
}

/** Log an event of an account outside a signed-in request (sign-in, invitation acceptance). */
export async function logActivity(
  store: Pick<AppStore, 'recordActivity'>,
  ctx: AppAreaContext | null,
  accountId: number,
  event: string,
  details: Record<string, string | number | null> = {},
  sessionId: string | null = null,
): Promise<void> {
  await store.recordActivity({
    account_id: accountId,
    event,
    session_id: sessionId,
    address: ctx?.ip || null,
    details,
  });
}
