/** The account area's store contract on real SQLite files; sibling stores open the same file (another process). */
import { join } from 'node:path';
import { openSqliteStore } from '../../../api/state/sqlite.ts';
import type { StateStore } from '../../../api/state/store.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { appStoreContract } from './app-contract.ts';

const files = new WeakMap<StateStore, string>();
appStoreContract('sqlite', {
  async open({ now }) {
    const file = join(tempDir(), 'state.sqlite');
    const store = openSqliteStore(file, { now });
    files.set(store, file);
    return store;
  },
  async openSibling(store, { now }) {
    return openSqliteStore(files.get(store)!, { now });
  },
  async cleanup() {},
});
