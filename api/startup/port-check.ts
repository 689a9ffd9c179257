/**
 * Ports checked before the slow part of a start (the release's index build: ~140 s on a loaded
 * box at full scale), so a PORT or METRICS_PORT another process holds fails the start at once
 * with the port named, not minutes later (issue 31).
 */
import net from 'node:net';

/** A port the server cannot listen on; `code` is the system's (EADDRINUSE, EACCES, …). */
export class PortUnavailableError extends Error {
  readonly variable: string;
  readonly port: number;
  readonly host: string;
  readonly code: string;
  constructor(variable: string, port: number, host: string, code: string) {
    super(
      `${variable}=${port} cannot be listened on at ${host}: ${code === 'EADDRINUSE' ? 'another process is listening on it' : code}`,
    );
    this.variable = variable;
    this.port = port;
    this.host = host;
    this.code = code;
    this.name = 'PortUnavailableError';
  }
}

/**
 * Resolve when `port` on `host` can be listened on now (it is bound and let go at once); reject
 * with PortUnavailableError naming `variable` otherwise. Port 0 (any free port) always can.
 */
export async function checkPortFree(variable: string, port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (e: NodeJS.ErrnoException) =>
      reject(new PortUnavailableError(variable, port, host, e.code ?? e.message)),
    );
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
