/**
 * The \`leads\` CLI run in process: \`leads(args, env)\` calls the same \`main\` bin/leads.js calls
 * (api/cli/main.ts for accounts, keys, licences, usage, webhooks, alerts; pipeline/cli.ts for the rest)
 * with an in-memory io, and resolves to its exit code and output. One test runs the real binary
 * (test/api/cli/main.test.ts); the others need no process of their own.
 *
 * @example const r = await leads(['keys', 'list', '--json'], { DATA_DIR: dir }); assert.is(r.code, 0, r.stderr);
 */
import type { CliIo } from '../../common/cli-io.ts';
import { main as apiMain } from '../../api/cli/main.ts';
import { main as pipelineMain } from '../../pipeline/cli.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const line = (s: string): string => (s.endsWith('\n') ? s : s + '\n');

/** An io whose output is kept in memory (tests), with `env` and optional `stdin` text. */
export function bufferIo(
  env: Readonly<Record<string, string | undefined>>,
  stdin = '',
): CliIo & { stdout(): string; stderr(): string } {
  let o = '';
  let e = '';
  return {
    env,
    stdin: (async function* () {
      if (stdin) yield stdin;
    })(),
    out: (s) => void (o += line(s)),
    err: (s) => void (e += line(s)),
    stdout: () => o,
    stderr: () => e,
  };
}

const API_COMMANDS = ['accounts', 'keys', 'licences', 'usage', 'webhooks', 'alerts'];

/** Run a \`leads\` command line in this process, as bin/leads.js dispatches it. */
export async function leads(
  args: string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
  stdin = '',
): Promise<CliResult> {
  const io = bufferIo(env, stdin);
  const api = API_COMMANDS.includes(args[0]!);
  const code = api ? await apiMain(args, io) : await pipelineMain(args, io);
  if (!api && (args.length === 0 || ['help', '--help', '-h'].includes(args[0]!))) await apiMain(['help'], io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}
