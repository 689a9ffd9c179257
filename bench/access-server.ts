/**
 * Child process of the `access` bench: the API server on a given data folder and state store,
 * with the access model on (default) or switched off entirely (`--without-access`: no key
 * check, no limits, no ledger — every request answered as a custom-scope key). Prints
 * `listening on <origin>/v1`; SIGTERM stops it gracefully (the ledger is written).
 *
 *   node --import tsx bench/access-server.ts --data DIR --db URL [--without-access]
 */
import { parseArgs } from 'node:util';
import { loadApiConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';

const { values } = parseArgs({
  options: { data: { type: 'string' }, db: { type: 'string' }, 'without-access': { type: 'boolean', default: false } },
});
const config = loadApiConfig(
  {},
  { dataDir: values.data!, databaseUrl: values.db!, port: 0, host: '127.0.0.1', duckdbConnections: 2 },
);
const log = (l: string): void => void process.stderr.write(l + '\n');
const s = await startServer(config, {
  log,
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
log(`listening on ${s.url}/v1`);
process.once('SIGTERM', () => void s.close().then(() => process.exit(0)));
