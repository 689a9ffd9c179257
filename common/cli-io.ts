/**
 * What a `leads` command reads and writes: its environment, its standard input and two line
 * writers. `bin/leads.js` passes the process's (`processIo`); tests pass their own and run a
 * command in process (`main(argv, io)` of api/cli/main.ts and pipeline/cli.ts returns the exit
 * code, nothing calls `process.exit`; test/helpers/cli.ts).
 */
export interface CliIo {
  /** The environment the command reads (DATA_DIR, DATABASE_URL, …). */
  env: Readonly<Record<string, string | undefined>>;
  /** Standard input (`leads classify` reads it). */
  stdin: AsyncIterable<string | Buffer>;
  /** Write one line (a newline is added when missing) to standard output / standard error. */
  out(line: string): void;
  err(line: string): void;
}

const line = (s: string): string => (s.endsWith('\n') ? s : s + '\n');

/** The process's own environment, stdin, stdout and stderr. */
export function processIo(): CliIo {
  return {
    env: process.env,
    stdin: process.stdin,
    out: (s) => void process.stdout.write(line(s)),
    err: (s) => void process.stderr.write(line(s)),
  };
}
