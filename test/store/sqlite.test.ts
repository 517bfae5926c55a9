import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { storeContractSuite } from './store-contract.ts';

storeContractSuite('SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-store-'));
  return {
    open: async () => new SqliteStore({ dataDir: dir, durability: 'durable' }),
    destroy: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
storeContractSuite('SQLite in memory', () => ({
  open: async () => new SqliteStore({ dataDir: ':memory:' }),
  destroy: async () => {},
}));
