/**
 * The state store: accounts and API keys (later also limits, the usage ledger and webhooks).
 * One interface, several backends (SQLite file by default; PostgreSQL for replicas), chosen by
 * `DATABASE_URL`. Keys are stored only as SHA-256 hashes; the raw key exists once, in the
 * response to its creation.
 */
import type { Plan, Scope } from '../scopes.ts';
import type { WebhookStore } from './webhooks.ts';

export interface Account {
  id: number;
  name: string;
  plan: Plan;
  created_at: string;
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

export interface ApiKey {
  id: string; // public key id, e.g. "key_3f9a…" (safe to log and show)
  account_id: number;
  account_name: string;
  scope: Scope;
  name: string | null;
  /** First characters of the raw key (prefix + 4), for recognising it in lists. */
  display_prefix: string;
  status: KeyStatus;
  created_at: string;
  revoked_at: string | null;
}

/** A key as read for authentication: with its stored hash (never put on ctx.state, never logged). */
export type StoredKey = ApiKey & { key_hash: string };

export interface StateStore {
  createAccount(name: string, plan: Plan): Promise<Account>;
  getAccountByName(name: string): Promise<Account | null>;
  /** Store a key by its SHA-256 hash (hex). */
  insertKey(k: { id: string; account_id: number; scope: Scope; name: string | null; display_prefix: string; hash: string }): Promise<ApiKey>;
  /** Find a key by the SHA-256 hash of the presented secret (any status), with its stored hash. */
  findKeyByHash(hash: string): Promise<StoredKey | null>;
  listKeys(accountId?: number): Promise<ApiKey[]>;
  revokeKey(id: string): Promise<ApiKey | null>;
  /** Webhooks and their delivery queue (api/state/webhooks.ts). */
  readonly webhooks: WebhookStore;
  /** Settles when the store can answer: migrations applied, or rejects with why not. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}
