/** The account area's store contract on real SQLite files; sibling stores open the same file (another process). */
import { sqliteBackend } from '../../helpers/store-backends.ts';
import { appStoreContract } from './app-contract.ts';

appStoreContract('sqlite', sqliteBackend());
