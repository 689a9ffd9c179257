/**
 * Await a condition instead of sleeping for a guessed time: `waitUntil` checks `condition` at once
 * and then every `intervalMs`, and resolves as soon as it holds; after `attempts` checks it
 * rejects with `what`, so a condition that never comes fails the test instead of hanging it or
 * passing by luck.
 *
 * @example
 *   await waitUntil('the ledger rows hold 131 requests', () => requestsInStore() === 131);
 */
export async function waitUntil(
  what: string,
  condition: () => boolean | Promise<boolean>,
  opts: { attempts?: number; intervalMs?: number } = {},
): Promise<void> {
  const attempts = opts.attempts ?? 200;
  const intervalMs = opts.intervalMs ?? 25;
  for (let i = 0; i < attempts; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`gave up after ${attempts} checks ${intervalMs} ms apart waiting until ${what}`);
}
