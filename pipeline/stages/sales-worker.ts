/**
 * The entry of the worker thread that reads the PPR files (`readSalesInWorker`,
 * pipeline/stages/sales.ts): runs `readSales` on its `workerData` and posts the result, or the
 * error, to the refresh's thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readSales } from './sales.ts';

const { files, dir } = workerData as { files: string[]; dir: string };
readSales(files, dir).then(
  (ok) => parentPort!.postMessage({ ok }),
  (e: unknown) => parentPort!.postMessage({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
);
