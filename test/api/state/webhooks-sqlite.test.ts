/** The webhook store contract on real SQLite files; sibling stores open the same file (another process). */
import { sqliteBackend } from '../../helpers/store-backends.ts';
import { webhookStoreContract } from './webhooks-contract.ts';

webhookStoreContract('sqlite', sqliteBackend());
