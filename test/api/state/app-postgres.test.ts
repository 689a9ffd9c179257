/**
 * The account area's store contract on the local PostgreSQL server (schema per store, dropped at
 * the end); sibling stores are other pools on the same schema (replicas). Fails, never skips,
 * when the server is unreachable (see postgres.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';
import { openPostgresStore, type PostgresStateStore } from '../../../api/state/postgres.ts';
import { appStoreContract } from './app-contract.ts';

const BASE_URL = process.env['TEST_DATABASE_URL'] ?? `postgres://${encodeURIComponent(process.env['PGUSER'] ?? userInfo().username)}@127.0.0.1:5432/test`;
const RUN = `leads_apptest_${randomBytes(4).toString('hex')}`;
let n = 0;
const urlFor = (schema: string): string => `${BASE_URL}${BASE_URL.includes('?') ? '&' : '?'}schema=${schema}`;

appStoreContract('postgres', {
  open: ({ now }) => openPostgresStore(urlFor(`${RUN}_${++n}`), { now }),
  openSibling: (store, { now }) => openPostgresStore(urlFor((store as PostgresStateStore).schema), { now }),
  async cleanup() {
    const admin = new pg.Pool({ connectionString: BASE_URL, max: 1 });
    try {
      const { rows } = await admin.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [`${RUN}_`]);
      for (const { nspname } of rows) await admin.query(`DROP SCHEMA ${pg.escapeIdentifier(nspname)} CASCADE`);
    } catch (e) {
      console.error(`app-postgres.test.ts cleanup: ${(e as Error).message}`);
    } finally {
      await admin.end();
    }
  },
});
