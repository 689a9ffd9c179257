/**
 * Where a request's time goes, for the `ceiling` section (bench/ceiling.ts): loaded into the API
 * process before the app (`node --import tsx --import ./bench/request-parts.ts bench/access-server.ts …`),
 * it times, per request,
 *   - every middleware the app mounts, exclusive of the middleware after it (wall time; the chain
 *     runs without real waits at this load: the store is SQLite, synchronous), named after the
 *     call in api/app.ts that mounted it (`app.use(authMiddleware(…))` → `authMiddleware`);
 *   - the leads engine's two steps (`LeadsEngine.page`: choose the page; its `json`: write the
 *     page's bytes), inside the /v1 router's time;
 *   - `res.end` (the status line and headers, and the socket write) and the response's `finish`
 *     and `close` listeners (the access log line and the request metrics are written on `close`);
 * and on SIGTERM writes `{ "<part>": { "calls": n, "us": total µs } }` to `REQUEST_PARTS_FILE`.
 * It adds ~20 promises and ~60 clock reads a request: its figures are shares of an instrumented
 * run, printed beside the uninstrumented CPU per request. Benchmarks only.
 */
import Koa from 'koa';
import http from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { LeadsEngine } from '../api/engine/leads-engine.ts';

const out = process.env['REQUEST_PARTS_FILE'];
if (!out) throw new Error('bench/request-parts.ts needs REQUEST_PARTS_FILE');

const clock = process.hrtime.bigint;
const parts = new Map<string, { calls: number; ns: bigint }>();
const add = (part: string, ns: bigint): void => {
  const p = parts.get(part);
  if (p) ((p.calls += 1), (p.ns += ns));
  else parts.set(part, { calls: 1, ns });
};

/** The name of what `app.use(…)` mounted, read from the line of api/app.ts that called it. */
const appLines = readFileSync(new URL('../api/app.ts', import.meta.url), 'utf8').split('\n');
function mountedAt(stack: string): string {
  const m = /api\/app\.ts:(\d+):/.exec(stack);
  const line = m ? appLines[Number(m[1]) - 1] : undefined;
  const at = m ? `api/app.ts:${m[1]}` : 'api/app.ts';
  const call = line && /app\.use\(\s*([A-Za-z0-9_.]+)(?:\(([A-Za-z0-9_]+))?/.exec(line);
  if (!call) return `${line?.includes('=>') ? 'inline middleware' : 'middleware'} at ${at}`;
  const [, fn, arg] = call as unknown as [string, string, string | undefined];
  if (fn === 'routesOf') return arg && arg !== 'new' ? `routesOf(${arg})` : `routesOf(…) at ${at}`;
  return fn.replace(/\.routes$/, ' router');
}

const use = Koa.prototype.use;
Koa.prototype.use = function (this: Koa, fn: Koa.Middleware) {
  const name = `middleware: ${mountedAt(new Error().stack ?? '')}`;
  const timed: Koa.Middleware = async (ctx, next) => {
    let inner = 0n;
    const t0 = clock();
    try {
      return await fn(ctx, async () => {
        const t1 = clock();
        try {
          return await next();
        } finally {
          inner += clock() - t1;
        }
      });
    } finally {
      add(name, clock() - t0 - inner);
    }
  };
  if ('router' in fn) Object.assign(timed, { router: fn.router }); // (tests read a router's routes from it)
  return use.call(this, timed) as Koa;
};

const page = LeadsEngine.prototype.page;
LeadsEngine.prototype.page = function (this: LeadsEngine, ...a: Parameters<LeadsEngine['page']>) {
  const t0 = clock();
  const p = page.apply(this, a);
  add('engine: choose the page (filters, order, total)', clock() - t0);
  const json = p.json;
  p.json = (head) => {
    const t1 = clock();
    try {
      return json(head);
    } finally {
      add("engine: write the page's bytes", clock() - t1);
    }
  };
  return p;
};

const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (this: http.ServerResponse, ...a: unknown[]) {
  const t0 = clock();
  try {
    return (end as (...x: unknown[]) => http.ServerResponse).apply(this, a);
  } finally {
    add('res.end: status line, headers, socket write', clock() - t0);
  }
} as typeof end;

const emit = http.ServerResponse.prototype.emit;
http.ServerResponse.prototype.emit = function (this: http.ServerResponse, event: string | symbol, ...a: unknown[]) {
  if (event !== 'close' && event !== 'finish') return emit.call(this, event, ...a);
  const t0 = clock();
  try {
    return emit.call(this, event, ...a);
  } finally {
    add(event === 'close' ? "response 'close': access log, metrics" : "response 'finish' listeners", clock() - t0);
  }
} as typeof emit;

process.once('SIGTERM', () => {
  const json: Record<string, { calls: number; us: number }> = {};
  for (const [k, p] of parts) json[k] = { calls: p.calls, us: Number(p.ns) / 1000 };
  writeFileSync(out, JSON.stringify(json));
});
