/** The webhook store contract on real SQLite files; sibling stores open the same file (another process). */
import { join } from 'node:path';
import { openSqliteStore } from '../../../api/state/sqlite.ts';
import type { StateStore } from '../../../api/state/store.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { webhookStoreContract } from './webhooks-contract.ts';

const files = new WeakMap<StateStore, string>();
webhookStoreContract('sqlite', {
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
