/**
 * The API server for the `exports` bench section: the same `startServer` as api/server.ts,
 * started under its own script name (a bench of its own, not mistaken for a dev server).
 */
import { loadApiConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';

const s = await startServer(loadApiConfig(process.env), { log: (l) => void process.stderr.write(l + '\n') });
process.stderr.write(`exports bench API listening on ${s.url}/v1\n`);
process.once('SIGTERM', () => void s.close().then(() => process.exit(0)));
