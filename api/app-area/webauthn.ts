/**
 * Passkeys (WebAuthn) through SimpleWebAuthn (@simplewebauthn/server; the browser half,
 * @simplewebauthn/browser, is served from node_modules at /app/assets/webauthn-browser.js).
 *
 * - Relying party: id `WEBAUTHN_RP_ID`, default the host name of PUBLIC_BASE_URL; expected origin
 *   the origin of PUBLIC_BASE_URL. A passkey made for one RP id works only there.
 * - Registration (on the invitation page) asks for a discoverable credential (resident key), so
 *   sign-in needs no account name: the browser offers the passkeys it holds for this site and the
 *   credential id says whose it is. Attestation `none` (no device data is collected).
 * - Every challenge is random, kept in the state store until it is used once or expires
 *   (5 minutes): a ceremony can finish on another replica, and a response cannot be replayed.
 */
import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { ApiConfig } from '../config.ts';
import type { AppStore, PasskeyCredential } from '../state/app-store.ts';

export const RP_NAME = 'Irish construction leads';
/** How long a WebAuthn ceremony may take. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

export interface RelyingParty {
  id: string;
  origin: string;
}

export const relyingParty = (config: Pick<ApiConfig, 'publicBaseUrl' | 'webauthnRpId'>): RelyingParty => {
  const u = new URL(config.publicBaseUrl);
  return { id: config.webauthnRpId || u.hostname, origin: u.origin };
};

/** Options for creating a passkey for `accountName`, with the challenge kept for this invitation. */
export async function registrationOptions(
  store: AppStore,
  rp: RelyingParty,
  accountName: string,
  invitationHash: string,
  now: number,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: accountName,
    userDisplayName: accountName,
    userID: new Uint8Array(randomBytes(16)),
    attestationType: 'none',
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    timeout: CHALLENGE_TTL_MS,
  });
  await store.createChallenge({
    challenge: options.challenge,
    purpose: 'register',
    invitation_hash: invitationHash,
    expires_at: new Date(now + CHALLENGE_TTL_MS).toISOString(),
  });
  return options;
}

/** The verified new passkey, or null when the response does not verify (or its challenge was not ours, used or expired). */
export async function verifyRegistration(
  store: AppStore,
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  invitationHash: string,
): Promise<{ passkey_id: string; public_key: string; counter: number; transports: string[] } | null> {
  try {
    const v = await verifyRegistrationResponse({
      response,
      expectedChallenge: (c) => store.takeChallenge(c, 'register', invitationHash),
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
    if (!v.verified) return null;
    const c = v.registrationInfo.credential;
    return {
      passkey_id: c.id,
      public_key: Buffer.from(c.publicKey).toString('base64url'),
      counter: c.counter,
      transports: c.transports ?? response.response.transports ?? [],
    };
  } catch {
    return null;
  }
}

/** Options for signing in with any passkey of this site (discoverable credentials). */
export async function authenticationOptions(
  store: AppStore,
  rp: RelyingParty,
  now: number,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'preferred',
    timeout: CHALLENGE_TTL_MS,
  });
  await store.createChallenge({
    challenge: options.challenge,
    purpose: 'authenticate',
    invitation_hash: null,
    expires_at: new Date(now + CHALLENGE_TTL_MS).toISOString(),
  });
  return options;
}

/** Verify a sign-in assertion against the stored passkey; the new signature counter, or null. */
export async function verifyAuthentication(
  store: AppStore,
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  passkey: PasskeyCredential,
): Promise<number | null> {
  try {
    const v = await verifyAuthenticationResponse({
      response,
      expectedChallenge: (c) => store.takeChallenge(c, 'authenticate', null),
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: passkey.passkey_id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports as AuthenticatorTransportFuture[],
      },
      requireUserVerification: false,
    });
    return v.verified ? v.authenticationInfo.newCounter : null;
  } catch {
    return null;
  }
}

/** A WebAuthn response as posted by the page: an object with a string `id` (the library checks the rest). */
export function isCredentialResponse(
  v: unknown,
): v is { id: string; rawId: string; type: string; response: Record<string, unknown> } {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { id?: unknown }).id === 'string' &&
    typeof (v as { response?: unknown }).response === 'object'
  );
}
