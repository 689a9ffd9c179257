/**
 * Ports checked before the slow start (api/startup/port-check.ts, issue 31 fault 9): a PORT or
 * METRICS_PORT another process holds fails `startServer` at once, naming the variable, before
 * the release is loaded (nothing of it logged, no index built).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadApiConfig } from '../../../api/config.ts';
import { checkPortFree, PortUnavailableError } from '../../../api/startup/port-check.ts';
import { startServer } from '../../../api/server.ts';
import { tinyDataDir, tinyRelease } from '../../helpers/api.ts';

/** A port held by another listener until `close()`. */
async function heldPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { port: (s.address() as AddressInfo).port, close: () => new Promise((r) => s.close(() => r())) };
}

test('checkPortFree: a held port is refused with its variable named; a free one and port 0 pass', async () => {
  const held = await heldPort();
  try {
    await rejects(
      checkPortFree('METRICS_PORT', held.port, '127.0.0.1'),
      (e: unknown) =>
        e instanceof PortUnavailableError &&
        e.code === 'EADDRINUSE' &&
        e.message ===
          `METRICS_PORT=${held.port} cannot be listened on at 127.0.0.1: another process is listening on it`,
    );
  } finally {
    await held.close();
  }
  await checkPortFree('PORT', held.port, '127.0.0.1'); // free again
  await checkPortFree('PORT', 0, '127.0.0.1');
});

for (const variable of ['PORT', 'METRICS_PORT'] as const) {
  test(`a ${variable} in use fails the start before the release is loaded`, async () => {
    const { id } = await tinyRelease();
    const dataDir = await tinyDataDir();
    const held = await heldPort();
    const logs: string[] = [];
    try {
      const config = loadApiConfig(
        {},
        {
          dataDir,
          host: '127.0.0.1',
          duckdbConnections: 1,
          duckdbThreads: 1,
          metricsHost: '127.0.0.1',
          port: variable === 'PORT' ? held.port : 0,
          metricsPort: variable === 'METRICS_PORT' ? held.port : null,
        },
      );
      const t0 = performance.now();
      await rejects(
        startServer(config, { log: (l) => void logs.push(l) }),
        (e: unknown) => e instanceof PortUnavailableError && e.variable === variable,
      );
      const ms = performance.now() - t0;
      assert.not.ok(
        logs.some((l) => l.includes(id)),
        `nothing of the release was loaded: ${logs.join(' | ')}`,
      );
      console.log(`  ${variable} taken: refused after ${Math.round(ms)} ms`);
    } finally {
      await held.close();
    }
  });
}

test.run();
