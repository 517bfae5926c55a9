import assert from 'node:assert/strict';
import pg from 'pg';
import { postgresFactory } from '../helpers/postgres.ts';
import { dlqSemanticsSuite } from './dlq-semantics.ts';
import { fifoSemanticsSuite } from './fifo-semantics.ts';
import { historySemanticsSuite } from './history-semantics.ts';
import { limitsSuite } from './limits-semantics.ts';
import { sqsSemanticsSuite } from './sqs-semantics.ts';
import { strictReceiptSuite } from './strict-receipt-semantics.ts';
import { triageSemanticsSuite } from './triage-semantics.ts';

/**
 * The rows a suite left keep the tenant column's rule, whichever path put them where they are (sends, DLQ moves,
 * move tasks, replays): a row of a standard queue has its group id as tenant, a FIFO queue's row has none.
 */
async function assertTenantColumn(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT m.seq, q.fifo, m.group_id, m.tenant FROM messages m JOIN queues q ON q.id = m.queue_id
       WHERE m.tenant IS DISTINCT FROM (CASE WHEN q.fifo THEN NULL ELSE m.group_id END)`,
    );
    assert.deepEqual(rows, []);
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
