/**
 * The server's structured log: pino, one JSON object per line (`time` ISO 8601, `level` by name,
 * `pid`, `hostname`, `msg`, and the fields of the entry). The access log (one line per request,
 * api/middleware/access-log.ts) and every operational line (`deps.log(line)`: release switches,
 * ledger flush failures, a 500's stack under its request id…) go through it.
 *
 * What a line may hold is decided where it is written — never a key, an Authorization header, a
 * GIS token, a webhook secret, a cursor or a person's name — and `redactEntry` below blanks the
 * fields that would hold such a value if one were ever passed by mistake.
 */
import pino from 'pino';
import type { LogLevel } from '../config.ts';

export type Logger = pino.Logger;

/**
 * Field names blanked in every entry, at the top level and one level down (`{ webhook: { secret } }`),
 * whatever logged them (defence in depth: none is ever logged on purpose).
 */
export const REDACTED_FIELDS = [
  'authorization',
  'key',
  'api_key',
  'token',
  'access_token',
  'secret',
  'cursor',
  'password',
] as const;
const REDACTED: ReadonlySet<string> = new Set(REDACTED_FIELDS);
const CENSOR = '[redacted]';

/**
 * The entry with every `REDACTED_FIELDS` value blanked, at the top level and inside a nested object.
 * A walk of the entry's own keys, not pino's `redact` with `*.field` paths: those compile to a
 * wildcard scan costing about 20 µs on every line, the access log's included (make bench).
 */
export function redactEntry(entry: Record<string, unknown>): Record<string, unknown> {
  let out = entry;
  for (const k in entry) {
    const v = entry[k];
    let blanked: unknown = v;
    if (REDACTED.has(k)) blanked = CENSOR;
    else if (typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Error)) {
      let inner = v as Record<string, unknown>;
      for (const j in inner) {
        if (!REDACTED.has(j)) continue;
        if (inner === v) inner = { ...inner };
        inner[j] = CENSOR;
      }
      blanked = inner;
    }
    if (blanked === v) continue;
    if (out === entry) out = { ...entry };
    out[k] = blanked;
  }
  return out;
}

/** Bytes a pipe writes in one piece (POSIX's minimum, Linux's value). */
const PIPE_BUF = 4096;

/**
 * A JSON logger at `level`, writing to `destination`: a function receiving each line (without its
 * newline; tests collect them), or stderr — written asynchronously (pino's SonicBoom: what accumulates during a write goes in the next one),
 * so a request never waits for a write to the terminal or the journal. Call
 * `flushLog` before exiting (the server does on SIGTERM); `sync: true` for the few lines written
 * just before a forced exit (a configuration error); `sharedStderr: true` when other processes
 * write the same stderr (a cluster).
 *
 * @example
 *   const logger = createLogger('info');                       // JSON lines on stderr
 *   const lines: string[] = []; createLogger('info', (l) => lines.push(l));
 */
export function createLogger(
  level: LogLevel,
  destination?: (line: string) => void,
  opts: { sync?: boolean; sharedStderr?: boolean } = {},
): Logger {
  const options: pino.LoggerOptions = {
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }), log: redactEntry },
  };
  // Several processes writing one stderr (the cluster's primary and workers, api/startup/cluster.ts): each
  // write holds whole lines and at most PIPE_BUF bytes, which a pipe writes in one piece, so the
  // processes' lines never interleave within a line.
  const shared = opts.sharedStderr ? { maxWrite: PIPE_BUF } : {};
  if (!destination)
    return pino(options, pino.destination(opts.sync ? { fd: 2, sync: true } : { fd: 2, sync: false, ...shared }));
  return pino(options, { write: (chunk: string) => destination(chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk) });
}

/** Write out what the logger holds (stderr's buffer), then call `done`. */
export function flushLog(logger: Logger, done: () => void): void {
  logger.flush((e) => {
    if (e) process.stderr.write(`log flush failed: ${e.message}\n`);
    done();
  });
}

/** `deps.log(line)` over a logger: each line an `info` entry with the line as `msg`. */
export function lineLog(logger: Logger): (line: string) => void {
  return (line) => logger.info(line);
}
