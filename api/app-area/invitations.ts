/**
 * Invitations to the account area (`leads accounts invite`). Like a licence claim link, an
 * invitation is `<app>/invite#<token>`: the token sits in the URL fragment, which browsers never
 * send to a server (nor in `Referer`), so it reaches no access log; the page posts it in a JSON
 * body. Only its SHA-256 hash is stored; it works once, until `INVITE_TTL_HOURS` (72) have
 * passed, and a newer invitation of the same account replaces it. Accepting it sets the
 * account's credential (a passkey or a password), replacing any earlier one and ending every
 * session of the account: a new invitation is how a lost credential is recovered.
 *
 * With `SMTP_URL` set the link is also e-mailed (nodemailer); the address is used to send and
 * never stored or logged. Without it, printing the link for the operator to pass on is the way.
 */
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { ApiConfig } from '../config.ts';
import { hashToken } from '../access/licences.ts';
import type { Account, StateStore } from '../state/store-interface.ts';
import { logActivity, SESSION_EVENTS } from './activity.ts';

/** Invitation tokens: 32 random bytes, base64url (43 characters). */
export const INVITATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The account area's base URL: PUBLIC_BASE_URL without its /v1, plus /app. */
export const appBaseUrl = (publicBaseUrl: string): string =>
  `${publicBaseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/app`;

/** The invitation link of `token`. */
export const invitationLink = (publicBaseUrl: string, token: string): string =>
  `${appBaseUrl(publicBaseUrl)}/invite#${token}`;

export interface IssuedInvitation {
  url: string;
  expires_at: string;
  emailed: boolean;
}

/**
 * Issue an invitation for `account` (earlier unused ones stop working) and, when `email` is given
 * and SMTP_URL set, e-mail it. Logged in the account's activity (without the address).
 */
export async function issueInvitation(
  store: Pick<StateStore, 'app'>,
  config: Pick<ApiConfig, 'publicBaseUrl' | 'inviteTtlHours' | 'smtpUrl' | 'smtpFrom'>,
  account: Pick<Account, 'id' | 'name'>,
  opts: { now: Date; email?: string | null },
): Promise<IssuedInvitation> {
  const token = randomBytes(32).toString('base64url');
  const expires = new Date(opts.now.getTime() + config.inviteTtlHours * 3_600_000).toISOString();
  const inv = await store.app.createInvitation({
    token_hash: hashToken(token),
    account_id: account.id,
    expires_at: expires,
  });
  const url = invitationLink(config.publicBaseUrl, token);
  let emailed = false;
  if (opts.email && config.smtpUrl) {
    await sendInvitationMail(config, opts.email, account.name, url, inv.expires_at);
    emailed = true;
  }
  await logActivity(store.app, null, account.id, SESSION_EVENTS.invitationIssued, {
    expires_at: inv.expires_at,
    emailed: emailed ? 1 : 0,
  });
  return { url, expires_at: inv.expires_at, emailed };
}

/** The sender of invitation e-mails (SMTP_FROM, or no-reply@ the public host). */
export const mailFrom = (config: Pick<ApiConfig, 'smtpFrom' | 'publicBaseUrl'>): string =>
  config.smtpFrom || `no-reply@${new URL(config.publicBaseUrl).hostname}`;

/** E-mail an invitation link through SMTP_URL (plain text; the link is the only secret in it). */
export async function sendInvitationMail(
  config: Pick<ApiConfig, 'smtpUrl' | 'smtpFrom' | 'publicBaseUrl'>,
  to: string,
  accountName: string,
  url: string,
  expiresAt: string,
): Promise<void> {
  const transport = nodemailer.createTransport(config.smtpUrl);
  try {
    await transport.sendMail({
      from: mailFrom(config),
      to,
      subject: `Your invitation to the ${accountName} account`,
      text: [
        `You have been invited to the account area of ${accountName} (Irish construction leads).`,
        '',
        'Open this link to set your passkey or password and sign in:',
        url,
        '',
        `The link works once and until ${expiresAt}. If you did not expect it, ignore this message.`,
      ].join('\n'),
    });
  } finally {
    transport.close();
  }
}
