/**
 * State-store latency, measured at one place: `timedStore(store, observe)` wraps the store (and
 * its `webhooks` store) so every method call — one operation: its queries, in its transaction —
 * reports its name (`hitRateLimit`, `webhooks.claimDue`), its outcome and its duration. The
 * store itself (api/state/) is not touched; the server hands the wrapped store to everything
 * that uses it (request path, usage ledger, webhook dispatcher).
 */
import type { StateStore } from '../state/store-interface.ts';

/** Receives one finished store operation. */
export type StoreObserver = (operation: string, outcome: 'ok' | 'error', seconds: number) => void;

/**
 * Calls that are not operations: `keyChangeStamp` is a number read twice per request without a
 * query (api/state/revocations.ts); timing it would cost more than it reads.
 */
const UNTIMED: ReadonlySet<string> = new Set(['ready', 'close', 'keyChangeStamp']);

function wrap<T extends object>(target: T, prefix: string, observe: StoreObserver): T {
  const cache = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(t, prop, receiver) {
      const v = Reflect.get(t, prop, receiver) as unknown;
      if (typeof prop !== 'string' || UNTIMED.has(prop)) return v;
      let w = cache.get(prop);
      if (w) return w;
      if (typeof v === 'function') {
        const fn = v as (...a: unknown[]) => unknown;
        const name = prefix + prop;
        w = (...args: unknown[]): unknown => {
          const started = process.hrtime.bigint();
          const done = (outcome: 'ok' | 'error'): void =>
            observe(name, outcome, Number(process.hrtime.bigint() - started) / 1e9);
          let r: unknown;
          try {
            r = fn.apply(t, args);
          } catch (e) {
            done('error');
            throw e;
          }
          if (r instanceof Promise)
            return r.then(
              (x) => (done('ok'), x),
              (e: unknown) => (done('error'), Promise.reject(e)),
            );
          done('ok');
          return r;
        };
      } else if (prop === 'webhooks' && typeof v === 'object' && v !== null) {
        w = wrap(v, 'webhooks.', observe);
      } else return v;
      cache.set(prop, w);
      return w;
    },
  });
}

/** The store, every operation of which (and of its webhook store) is reported to `observe`. */
export function timedStore(store: StateStore, observe: StoreObserver): StateStore {
  return wrap(store, '', observe);
}
