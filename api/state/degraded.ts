/**
 * The state store when it cannot do its job. `storeUnavailable(e)` says whether an error of a
 * store call means "the store cannot read or write now" — SQLite: full disk, read-only file or
 * database, a lock held past STATE_BUSY_TIMEOUT_MS, an I/O error, a file it cannot open or that is
 * corrupt; PostgreSQL: no connection, out of resources (disk full), shutting down, read-only, a lock held
 * past the timeout —
 * as opposed to a bug or a constraint the caller handles. `degradable(store)` wraps a store so
 * such errors surface as `StoreUnavailableError` (503 `service_degraded` with `Retry-After`,
 * api/http/errors.ts) on the request path; every other error passes unchanged.
 */
import { StoreUnavailableError } from '../http/errors.ts';
import type { StateStore } from './store-interface.ts';

/** SQLite primary result codes (better-sqlite3 `SqliteError.code`, extended codes included) that mean "unavailable". */
const SQLITE_UNAVAILABLE =
  /^SQLITE_(BUSY|LOCKED|READONLY|FULL|IOERR|CANTOPEN|CORRUPT|NOTADB|PROTOCOL|NOMEM|NOLFS|PERM)(_|$)/;

/**
 * PostgreSQL SQLSTATE classes / codes that mean "unavailable": 08 connection exception,
 * 53 insufficient resources (53100 disk_full), 57P01–57P05 shutdown / cannot connect now,
 * 58 system error (I/O), 25006 read-only transaction (a standby or a read-only default),
 * 55P03 lock_not_available (`lock_timeout`) and 57014 query_canceled (`statement_timeout`): a
 * table or row another session holds past STATE_BUSY_TIMEOUT_MS.
 */
const PG_UNAVAILABLE = /^(08...|53...|57P0[1-5]|58...|25006|55P03|57014)$/;

/** Node / pg client errors of a lost or refused connection. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end)/;

/** Whether `e`, thrown by a state-store call, means the store cannot read or write right now. */
export function storeUnavailable(e: unknown): boolean {
  if (e instanceof StoreUnavailableError) return true;
  if (typeof e !== 'object' || e === null) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SQLITE_UNAVAILABLE.test(code)) return true;
    if (code.length === 5 && PG_UNAVAILABLE.test(code)) return true;
    if (CONNECTION_CODES.has(code)) return true;
  }
  const message = (e as { message?: unknown }).message;
  return typeof message === 'string' && PG_CONNECTION_MESSAGES.test(message);
}

function wrap<T extends object>(target: T): T {
  const cache = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(t, prop, receiver) {
      const v = Reflect.get(t, prop, receiver) as unknown;
      if (prop === 'ready' || prop === 'close') return v;
      if (typeof v === 'function') {
        let w = cache.get(prop);
        if (!w) {
          const fn = v as (...a: unknown[]) => unknown;
          w = (...args: unknown[]): unknown => {
            let r: unknown;
            try {
              r = fn.apply(t, args);
            } catch (e) {
              throw storeUnavailable(e) ? new StoreUnavailableError(e) : e;
            }
            if (r instanceof Promise)
              return r.catch((e: unknown) => Promise.reject(storeUnavailable(e) ? new StoreUnavailableError(e) : e));
            return r;
          };
          cache.set(prop, w);
        }
        return w;
      }
      if ((prop === 'webhooks' || prop === 'app') && typeof v === 'object' && v !== null) {
        let w = cache.get(prop);
        if (!w) cache.set(prop, (w = wrap(v)));
        return w;
      }
      return v;
    },
  });
}

/**
 * The store as the request path uses it: every call that fails because the store is unavailable
 * rejects with `StoreUnavailableError` (503 `service_degraded`), other errors unchanged.
 */
export function degradable(store: StateStore): StateStore {
  return wrap(store);
}
