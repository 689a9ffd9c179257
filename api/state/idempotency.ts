/**
 * Idempotency keys (`Idempotency-Key` on `POST /v1/webhooks`, as Stripe takes it), written once
 * over any `Backend` and exposed as `store.idempotency`. A key is remembered per account with the
 * fingerprint of the request that first used it and, once that request has succeeded, its
 * answer (status, JSON body, `Location`), until `expires_at` (24 h by default): a retry with the
 * same key and the same request gets the same answer without doing the work again.
 *
 * A key is claimed in one `atomic` operation that inserts its row `ON CONFLICT DO NOTHING`, so of
 * two requests racing with one key (two processes on the SQLite file, two replicas on
 * PostgreSQL) exactly one runs; the other reads the row and is told the key is in use. Expired
 * rows are removed by the claims that pass them (an index on `expires_at`). Migration 23.
 */
import { rows, template, type Backend } from './backend.ts';

/** An answer remembered for a key. */
export interface StoredResponse {
  status: number;
  /** The JSON body as sent. */
  body: string;
  location: string | null;
}

/** What a claim found. */
export type IdempotencyClaim =
  /** The key is new (or its earlier use expired, or was abandoned): the caller runs the request and then `complete`s or `release`s it. */
  | { state: 'claimed' }
  /** A request with this key is running now. */
  | { state: 'in_progress' }
  /** The key was used with another request (another body, path or scope). */
  | { state: 'mismatch' }
  /** The key's request succeeded: here is its answer. */
  | { state: 'done'; response: StoredResponse };

export interface IdempotencyStore {
  /**
   * Claim `key` of `accountId` for a request with `fingerprint` at `now`, to be remembered until
   * `now + ttlMs`. A claim still running after `staleMs` (its process died) is taken over.
   */
  claim(o: {
    accountId: number;
    key: string;
    fingerprint: string;
    now: Date;
    ttlMs: number;
    staleMs: number;
  }): Promise<IdempotencyClaim>;
  /** Remember the answer of a claimed key's request. */
  complete(accountId: number, key: string, response: StoredResponse): Promise<void>;
  /** Forget a claimed key whose request failed (a retry with it runs again). */
  release(accountId: number, key: string): Promise<void>;
}

function idempotencyQueries(b: Backend) {
  const { db, dialect: d } = b;
  return {
    prune: template((now: string) => db.deleteFrom('idempotency_keys').where('expires_at', '<=', now)),
    dropStale: template((accountId: number, key: string, before: string) =>
      db
        .deleteFrom('idempotency_keys')
        .where('account_id', '=', accountId)
        .where('idem_key', '=', key)
        .where('status_code', 'is', null)
        .where('started_at', '<=', before),
    ),
    insert: template((accountId: number, key: string, fingerprint: string, at: string, expiresAt: string) =>
      db
        .insertInto('idempotency_keys')
        .values({ account_id: accountId, idem_key: key, fingerprint, started_at: at, expires_at: expiresAt })
        .onConflict((oc) => oc.columns(['account_id', 'idem_key']).doNothing())
        .returning('idem_key'),
    ),
    get: template((accountId: number, key: string) =>
      d.lockRows(
        db
          .selectFrom('idempotency_keys')
          .select(['fingerprint', 'status_code', 'response_body', 'location'])
          .where('account_id', '=', accountId)
          .where('idem_key', '=', key),
      ),
    ),
    complete: template((status: number, body: string, location: string | null, accountId: number, key: string) =>
      db
        .updateTable('idempotency_keys')
        .set({ status_code: status, response_body: body, location })
        .where('account_id', '=', accountId)
        .where('idem_key', '=', key),
    ),
    release: template((accountId: number, key: string) =>
      db
        .deleteFrom('idempotency_keys')
        .where('account_id', '=', accountId)
        .where('idem_key', '=', key)
        .where('status_code', 'is', null),
    ),
  };
}

/** The idempotency-key store on `b`. */
export function idempotencyStore(b: Backend): IdempotencyStore {
  const q = idempotencyQueries(b);
  return {
    claim(o) {
      return b.run('atomic', function* (): Generator<any, IdempotencyClaim, any> {
        const now = o.now.toISOString();
        yield q.prune(now);
        yield q.dropStale(o.accountId, o.key, new Date(o.now.getTime() - o.staleMs).toISOString());
        const inserted = yield q.insert(
          o.accountId,
          o.key,
          o.fingerprint,
          now,
          new Date(o.now.getTime() + o.ttlMs).toISOString(),
        );
        if (inserted.length === 1) return { state: 'claimed' };
        const [r] = yield q.get(o.accountId, o.key);
        if (!r) return { state: 'in_progress' }; // gone between the two statements: another request released it just now
        if (r['fingerprint'] !== o.fingerprint) return { state: 'mismatch' };
        if (r['status_code'] === null || r['status_code'] === undefined) return { state: 'in_progress' };
        return {
          state: 'done',
          response: { status: Number(r['status_code']), body: r['response_body'], location: r['location'] },
        };
      });
    },
    async complete(accountId, key, response) {
      await b.run('plain', () => rows(q.complete(response.status, response.body, response.location, accountId, key)));
    },
    async release(accountId, key) {
      await b.run('plain', () => rows(q.release(accountId, key)));
    },
  };
}
