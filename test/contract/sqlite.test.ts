import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { sqliteFactory } from '../helpers/store-factories.ts';
import { dlqSemanticsSuite } from './dlq-semantics.ts';
import { fifoSemanticsSuite } from './fifo-semantics.ts';
import { ROWS_BREAKING_TENANT_RULE } from './harness.ts';
import { historySemanticsSuite } from './history-semantics.ts';
import { limitsSuite } from './limits-semantics.ts';
import { mappingStoreSuite } from './mapping-store-semantics.ts';
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
const sqliteFile = () => sqliteFactory(assertTenantColumn);
sqsSemanticsSuite('SQLite', sqliteFile);
fifoSemanticsSuite('SQLite', sqliteFile);
dlqSemanticsSuite('SQLite', sqliteFile);
historySemanticsSuite('SQLite', sqliteFile);
limitsSuite('SQLite', sqliteFile);
strictReceiptSuite('SQLite', sqliteFile);
triageSemanticsSuite('SQLite', sqliteFile);
mappingStoreSuite('SQLite', sqliteFile);
