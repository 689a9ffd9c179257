/**
 * The webhook store contract on the local PostgreSQL server (schema per store, dropped at the
 * end); sibling stores are other pools on the same schema (replicas). Fails, never skips, when
 * the server is unreachable (see postgres.pg.test.ts).
 */
import { postgresBackend } from '../../helpers/store-backends.ts';
import { webhookStoreContract } from './webhooks-contract.ts';

webhookStoreContract('postgres', postgresBackend('leads_whtest'));
