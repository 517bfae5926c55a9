import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { dlqSemanticsSuite } from './dlq-semantics.ts';
import { fifoSemanticsSuite } from './fifo-semantics.ts';
import type { StoreFactory } from './harness.ts';
import { historySemanticsSuite } from './history-semantics.ts';
import { limitsSuite } from './limits-semantics.ts';
import { sqsSemanticsSuite } from './sqs-semantics.ts';
import { strictReceiptSuite } from './strict-receipt-semantics.ts';
import { triageSemanticsSuite } from './triage-semantics.ts';

// A real SQLite file in a temp directory, as users run it.
const sqliteFile = (): StoreFactory => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-contract-'));
  return {
    open: async () => new SqliteStore({ dataDir: dir, durability: 'durable' }),
    destroy: async () => rmSync(dir, { recursive: true, force: true }),
  };
};
sqsSemanticsSuite('SQLite', sqliteFile);
fifoSemanticsSuite('SQLite', sqliteFile);
dlqSemanticsSuite('SQLite', sqliteFile);
historySemanticsSuite('SQLite', sqliteFile);
limitsSuite('SQLite', sqliteFile);
strictReceiptSuite('SQLite', sqliteFile);
triageSemanticsSuite('SQLite', sqliteFile);
