/**
 * Child process of the `access`, `ceiling` and `compression` benches: the API server on a given
 * data folder and state store, with the access model on (default) or switched off entirely
 * (`--without-access`: no key check, no limits, no ledger — every request answered as a
 * custom-scope key). Prints `listening on <origin>/v1`; SIGTERM stops it gracefully (the ledger
 * is written).
 *
 * It serves as `node api/server.ts` does: with the serving process's memory settings
 * (api/startup/serving-process.ts) and its log (JSON lines on stderr, written asynchronously), so
 * that what these sections measure — server CPU per request, peak RSS — is the deployed server's.
 *
 *   node --import tsx bench/access-server.ts --data DIR --db URL [--without-access]
 */
import { parseArgs } from 'node:util';
import { loadApiConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { createLogger, flushLog, lineLog } from '../api/observability/log.ts';
import { withServingSettings } from '../api/startup/serving-process.ts';

withServingSettings();

const { values } = parseArgs({
  options: { data: { type: 'string' }, db: { type: 'string' }, 'without-access': { type: 'boolean', default: false } },
});
const config = loadApiConfig(
  {},
  { dataDir: values.data!, databaseUrl: values.db!, port: 0, host: '127.0.0.1', duckdbConnections: 2 },
);
const logger = createLogger(config.logLevel);
const log = lineLog(logger);
const s = await startServer(config, {
  log,
  logger,
  ...(values['without-access']
    ? {
        benchWithoutAccess: {
          id: 'key_bench',
          account_id: 0,
          account_name: 'bench',
          scope: 'custom',
          name: null,
          display_prefix: 'lk_cu_',
          status: 'active',
          created_at: new Date().toISOString(),
          revoked_at: null,
          licence_id: null,
          expires_at: null,
        },
      }
    : {}),
});
process.stderr.write(`listening on ${s.url}/v1\n`); // the line the bench waits for, as it is
process.once('SIGTERM', () => void s.close().then(() => flushLog(logger, () => process.exit(0))));
