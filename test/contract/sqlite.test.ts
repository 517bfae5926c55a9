import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { dlqSemanticsSuite } from './dlq-semantics.ts';
import { fifoSemanticsSuite } from './fifo-semantics.ts';
import { ROWS_BREAKING_TENANT_RULE, type StoreFactory } from './harness.ts';
import { historySemanticsSuite } from './history-semantics.ts';
import { limitsSuite } from './limits-semantics.ts';
import { sqsSemanticsSuite } from './sqs-semantics.ts';
import { strictReceiptSuite } from './strict-receipt-semantics.ts';
import { triageSemanticsSuite } from './triage-semantics.ts';

function assertTenantColumn(file: string): void {
  const db = new Database(file, { readonly: true });
  try {
    assert.deepEqual(db.prepare(ROWS_BREAKING_TENANT_RULE).all(), []);
  } finally {
    db.close();
  }
}

// A real SQLite file in a temp directory, as users run it.
const sqliteFile = (): StoreFactory => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-contract-'));
  return {
    open: async () => new SqliteStore({ dataDir: dir, durability: 'durable' }),
    destroy: async () => {
      try {
        assertTenantColumn(join(dir, 'sluice.db'));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
};
sqsSemanticsSuite('SQLite', sqliteFile);
fifoSemanticsSuite('SQLite', sqliteFile);
dlqSemanticsSuite('SQLite', sqliteFile);
historySemanticsSuite('SQLite', sqliteFile);
limitsSuite('SQLite', sqliteFile);
strictReceiptSuite('SQLite', sqliteFile);
triageSemanticsSuite('SQLite', sqliteFile);
