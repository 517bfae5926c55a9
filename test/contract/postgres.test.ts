import assert from 'node:assert/strict';
import pg from 'pg';
import { postgresFactory } from '../helpers/store-factories.ts';
import { dlqSemanticsSuite } from './dlq-semantics.ts';
import { fifoSemanticsSuite } from './fifo-semantics.ts';
import { ROWS_BREAKING_TENANT_RULE } from './harness.ts';
import { historySemanticsSuite } from './history-semantics.ts';
import { limitsSuite } from './limits-semantics.ts';
import { mappingStoreSuite } from './mapping-store-semantics.ts';
import { sqsSemanticsSuite } from './sqs-semantics.ts';
import { strictReceiptSuite } from './strict-receipt-semantics.ts';
import { triageSemanticsSuite } from './triage-semantics.ts';

async function assertTenantColumn(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    assert.deepEqual((await client.query(ROWS_BREAKING_TENANT_RULE)).rows, []);
  } finally {
    await client.end();
  }
}

// A real PostgreSQL (127.0.0.1:5432): each suite on its own fresh database, checked and dropped afterwards.
const postgres = () => postgresFactory(assertTenantColumn);
sqsSemanticsSuite('PostgreSQL', postgres);
fifoSemanticsSuite('PostgreSQL', postgres);
dlqSemanticsSuite('PostgreSQL', postgres);
historySemanticsSuite('PostgreSQL', postgres);
limitsSuite('PostgreSQL', postgres);
strictReceiptSuite('PostgreSQL', postgres);
triageSemanticsSuite('PostgreSQL', postgres);
mappingStoreSuite('PostgreSQL', postgres);
