import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { dlqSemanticsSuite } from './dlq-semantics.ts';
import { fifoSemanticsSuite } from './fifo-semantics.ts';
import type { StoreFactory } from './harness.ts';
import { historySemanticsSuite } from './history-semantics.ts';
import { limitsSuite } from './limits-semantics.ts';
import { sqsSemanticsSuite } from './sqs-semantics.ts';
import { strictReceiptSuite } from './strict-receipt-semantics.ts';
import { triageSemanticsSuite } from './triage-semantics.ts';

// SQLite in memory, as `sluice serve --in-memory` runs it: the same semantics, nothing kept once closed.
const sqliteInMemory = (): StoreFactory => ({
  open: async () => new SqliteStore({ dataDir: ':memory:' }),
  destroy: async () => {},
});
const inMemory = { persistent: false };
sqsSemanticsSuite('SQLite in memory', sqliteInMemory);
fifoSemanticsSuite('SQLite in memory', sqliteInMemory);
dlqSemanticsSuite('SQLite in memory', sqliteInMemory, inMemory);
historySemanticsSuite('SQLite in memory', sqliteInMemory, inMemory);
limitsSuite('SQLite in memory', sqliteInMemory);
strictReceiptSuite('SQLite in memory', sqliteInMemory);
triageSemanticsSuite('SQLite in memory', sqliteInMemory);
