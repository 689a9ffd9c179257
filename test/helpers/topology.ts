/**
 * Real processes for the deployment tests (test/deploy/): API replicas as child processes of
 * `api/server.ts`, Debian's nginx run from a config of our own (never the system service), and
 * free ports. Every process started here is stopped by its pid, never by name.
 *
 * @example
 *   const a = await startReplica({ DATA_DIR, DATABASE_URL, PORT: '0' });
 *   const nginx = await startNginx(dir, siteConf);
 *   await a.stop('SIGTERM');   // resolves with the exit code / signal
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { loaderArgs } from '../../api/startup/loader-args.ts';
import { REPO_ROOT } from './tmp.ts';
import { waitUntil } from './wait.ts';
import { enginePackPreload } from './engine-pack-preload.ts';

/** Path of an executable on PATH (plus the sbin folders, where Debian puts nginx), or null. */
export function which(cmd: string): string | null {
  for (const dir of [...(process.env['PATH'] ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/local/sbin']) {
    const p = join(dir, cmd);
    if (dir !== '' && existsSync(p)) return p;
  }
  return null;
}

/** A port free right now on 127.0.0.1 (the OS picks it; another process could take it before use). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Replica {
  readonly port: number;
  readonly pid: number;
  readonly origin: string;
  /** The last lines the replica wrote to stderr (its JSON log), for failure messages. */
  tail(): string;
  /** Send `signal` and wait for the process to exit. */
  stop(signal: NodeJS.Signals): Promise<Exit>;
  readonly exited: Promise<Exit>;
}

const LISTENING = /leads API listening on http:\/\/127\.0\.0\.1:(\d+)\/v1/;

/**
 * Start `node api/server.ts` with `env` (on top of PATH/HOME/TZ only: nothing else of the test's
 * environment leaks in), with the test process's loader flags (api/startup/loader-args.ts:
 * `--import tsx` under `make test-deploy`, as the systemd unit runs it; none in the test runner's
 * workers, which strip the types themselves). Resolves when the server logged its listening line, with
 * the port it listens on (PORT=0 picks one); rejects with the log's tail if it exits first.
 * `onLine` sees every line of its stderr (the tail keeps the last 200). `enginePacks`: its (and its
 * workers') indexes from the tests' packs (test/helpers/engine-pack-preload.ts).
 */
export async function startReplica(
  env: Record<string, string>,
  opts: { onLine?: (line: string) => void; enginePacks?: boolean } = {},
): Promise<Replica> {
  const node = [...loaderArgs(), ...(opts.enginePacks ? enginePackPreload() : [])];
  const child: ChildProcess = spawn(process.execPath, [...node, 'api/server.ts'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: process.env['HOME'] ?? '/tmp',
      TZ: 'UTC',
      HOST: '127.0.0.1',
      // the test runner's compile cache (test/runner/main.ts): where the code is loaded from, not how it behaves
      ...(process.env['NODE_COMPILE_CACHE'] ? { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] } : {}),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: string[] = [];
  let rest = '';
  let onPort: (port: number) => void = () => {};
  const port = new Promise<number>((resolve) => (onPort = resolve));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    for (const l of parts) {
      opts.onLine?.(l);
      lines.push(l);
      if (lines.length > 200) lines.shift();
      const m = LISTENING.exec(l);
      if (m) onPort(Number(m[1]));
    }
  });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const tail = (): string => lines.slice(-30).join('\n');
  const first = await Promise.race([port, exited.then((e) => e)]);
  if (typeof first !== 'number')
    throw new Error(`replica exited before listening (${JSON.stringify(first)}):\n${tail()}`);
  return {
    port: first,
    pid: child.pid!,
    origin: `http://127.0.0.1:${first}`,
    tail,
    exited,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface Nginx {
  readonly port: number;
  readonly accessLog: string;
  stop(): Promise<Exit>;
}

/**
 * The site file `deploy/nginx.conf` made runnable here: its upstream `server` lines point at
 * `replicaPorts`, it listens on 127.0.0.1:`port`, and its access log goes to `accessLog`.
 * Everything else (retries, keep-alive, headers) is the example's own text.
 */
export function localSite(
  example: string,
  o: { port: number; replicaPorts: readonly number[]; accessLog: string },
): string {
  const servers = /^(\s*)server 127\.0\.0\.1:\d+( [^;]*)?;\n/gm;
  const found = [...example.matchAll(servers)];
  if (found.length < 2)
    throw new Error('deploy/nginx.conf: expected an upstream with two `server 127.0.0.1:PORT …;` lines');
  let i = 0;
  const site = example
    .replace(servers, (_m, indent: string, params: string | undefined) =>
      i < o.replicaPorts.length ? `${indent}server 127.0.0.1:${o.replicaPorts[i++]}${params ?? ''};\n` : '',
    )
    .replace(/^(\s*)listen 80;/m, `$1listen 127.0.0.1:${o.port};`)
    .replace(/access_log \/var\/log\/nginx\/leads-access\.log/, `access_log ${o.accessLog}`);
  if (!site.includes(`listen 127.0.0.1:${o.port};`) || !site.includes(o.accessLog))
    throw new Error('deploy/nginx.conf: `listen 80;` or its access_log line changed; update localSite');
  return site;
}

/** The main nginx.conf around a site file: foreground, pid, logs and temp paths under `dir`. */
export function mainConf(dir: string, siteFile: string): string {
  for (const t of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, t), { recursive: true });
  return [
    'daemon off;',
    'worker_processes 1;',
    // as root the workers would run as nobody and could not write the temp folders under `dir`
    ...(process.getuid?.() === 0 ? ['user root root;'] : []),
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    'events { worker_connections 512; }',
    'http {',
    `  client_body_temp_path ${join(dir, 'body')};`,
    `  proxy_temp_path ${join(dir, 'proxy')};`,
    `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
    `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
    `  scgi_temp_path ${join(dir, 'scgi')};`,
    `  include ${siteFile};`,
    '}',
    '',
  ].join('\n');
}

/** `nginx -t` on a config: null when it is valid, else nginx's message. */
export function nginxConfigError(nginx: string, dir: string, conf: string): string | null {
  const r = spawnSync(nginx, ['-t', '-q', '-p', dir, '-c', conf], { encoding: 'utf8' });
  return r.status === 0 ? null : `${r.stderr}${r.stdout}`.trim();
}

/** Start nginx in the foreground on `conf` (see `mainConf`); resolves once `port` accepts connections. */
export async function startNginx(
  nginx: string,
  dir: string,
  conf: string,
  port: number,
  accessLog: string,
): Promise<Nginx> {
  const err = nginxConfigError(nginx, dir, conf);
  if (err) throw new Error(`nginx -t refused the config: ${err}`);
  const child = spawn(nginx, ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let dead = false;
  void exited.then(() => (dead = true));
  await waitUntil(`nginx accepts connections on 127.0.0.1:${port}`, async () => {
    if (dead) throw new Error(`nginx exited: ${stderr}`);
    return new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
  });
  return {
    port,
    accessLog,
    async stop() {
      // SIGQUIT: graceful shutdown of the master and its worker
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      return exited;
    },
  };
}

/** Write `text` to `dir/name` and return the path. */
export function writeIn(dir: string, name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}
