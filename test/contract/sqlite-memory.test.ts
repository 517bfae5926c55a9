import { sqliteInMemoryFactory } from '../helpers/store-factories.ts';
import { dlqSemanticsSuite } from './dlq-semantics.ts';
import { fifoSemanticsSuite } from './fifo-semantics.ts';
import { historySemanticsSuite } from './history-semantics.ts';
import { limitsSuite } from './limits-semantics.ts';
import { mappingStoreSuite } from './mapping-store-semantics.ts';
import { sqsSemanticsSuite } from './sqs-semantics.ts';
import { strictReceiptSuite } from './strict-receipt-semantics.ts';
import { triageSemanticsSuite } from './triage-semantics.ts';

// SQLite in memory, as `sluice serve --in-memory` runs it: its restart tests are skipped.
const inMemory = { persistent: false };
sqsSemanticsSuite('SQLite in memory', sqliteInMemoryFactory);
fifoSemanticsSuite('SQLite in memory', sqliteInMemoryFactory);
dlqSemanticsSuite('SQLite in memory', sqliteInMemoryFactory, inMemory);
historySemanticsSuite('SQLite in memory', sqliteInMemoryFactory, inMemory);
limitsSuite('SQLite in memory', sqliteInMemoryFactory);
strictReceiptSuite('SQLite in memory', sqliteInMemoryFactory);
triageSemanticsSuite('SQLite in memory', sqliteInMemoryFactory);
mappingStoreSuite('SQLite in memory', sqliteInMemoryFactory, inMemory);
