import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { OutboxMessage } from 'sluice-client';
import {
  migratePostgresOutbox,
  PostgresCdcRelay,
  type PostgresCdcRelayOptions,
  PostgresOutbox,
} from 'sluice-client/postgres';
import { type LogicalPostgres, logicalPostgres } from '../../tools/logical-postgres.ts';
import { eventually, startToolkitServer, type ToolkitServer } from '../helpers/client-toolkit.ts';

/**
 * The CDC relay on a PostgreSQL with wal_level=logical (a throwaway instance when the shared server is not
 * configured for it). The FakeClock is never advanced in the first tests, so the catch-up poll never runs:
 * whatever arrives came through NOTIFY and the replication slot.
 */
describe('transactional outbox: CDC relay on PostgreSQL', { concurrency: false, timeout: 60_000 }, () => {
  let t: ToolkitServer;
  let db: LogicalPostgres;
  let outbox: PostgresOutbox;
  const relays: PostgresCdcRelay[] = [];
  before(async () => {
    t = await startToolkitServer();
    db = await logicalPostgres('sluice_outbox_cdc');
    await migratePostgresOutbox(db.pool);
    outbox = new PostgresOutbox({ pool: db.pool });
  });
  after(async () => {
    for (const relay of relays) await relay.stop();
    await relays[0]?.dropSlot();
    await db?.close();
    await t?.close();
  });

  async function started(options: Partial<PostgresCdcRelayOptions> = {}): Promise<PostgresCdcRelay> {
    const relay = new PostgresCdcRelay({
      outbox,
      client: t.sqs,
      connection: db.connection,
      clock: t.clock,
      ...options,
    });
    relays.push(relay);
    await relay.start();
    return relay;
  }

  async function transaction(messages: OutboxMessage[], commit: boolean): Promise<void> {
    const tx = await db.pool.connect();
    try {
      await tx.query('BEGIN');
      for (const message of messages) await outbox.add(tx, message);
      await tx.query(commit ? 'COMMIT' : 'ROLLBACK');
    } finally {
      tx.release();
    }
  }

  test('a commit is published from the slot, with no poll; a rollback never is', async () => {
    const queue = await t.createQueue('cdc');
    const relay = await started();
    await transaction([{ queue, body: 'rolled back' }], false);
    await transaction(
      [
        { queue, body: 'first' },
        { queue, body: 'second' },
      ],
      true,
    );
    await eventually(
      async () => (await t.countMessages(queue)).visible === 2,
      'both committed rows published',
    );
    const bodies = (await t.receiveNow(queue)).map((m) => m.Body).sort();
    assert.deepEqual(bodies, ['first', 'second']);
    // The rows are marked sent just after the publish the count above saw.
    await eventually(async () => {
      const { rows } = await db.pool.query(
        'SELECT count(*)::int AS n FROM sluice_outbox WHERE sent_at IS NULL',
      );
      return rows[0].n === 0;
    }, 'both rows marked sent');
    await relay.stop();
  });

  test('a relay killed after reading the slot leaves the rows to the catch-up pass of the next one', async () => {
    const queue = await t.createQueue('cdc-crash', { FifoQueue: 'true' });
    let killed = 0;
    const dying = await started({
      leaseMs: 30_000,
      hooks: {
        published() {
          killed++;
          throw new Error('killed after publish, before mark');
        },
      },
    });
    await transaction([{ queue, body: 'charge card', groupId: 'order-9' }], true);
    await eventually(() => killed === 1, 'the first relay published and died');
    await dying.stop();

    await started({ leaseMs: 30_000 });
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS n FROM sluice_outbox WHERE sent_at IS NULL',
    );
    assert.equal(rows[0].n, 1, 'the slot was consumed, the row is still unsent');
    await t.clock.advance(30_000); // lease expires; the catch-up pass (every 5 s) re-publishes
    await eventually(async () => {
      const pending = await db.pool.query(
        'SELECT count(*)::int AS n FROM sluice_outbox WHERE sent_at IS NULL',
      );
      return pending.rows[0].n === 0;
    }, 'row marked sent');
    // Published twice, delivered once: the row id is the FIFO MessageDeduplicationId.
    assert.deepEqual(await t.countMessages(queue), { visible: 1, inFlight: 0 });
  });

  test('a dropped slot connection is reopened, and follows the slot again', async () => {
    const queue = await t.createQueue('cdc-reconnect');
    await started({ reconnectMs: 1000 });
    const slotReader = async () => {
      const { rows } = await db.pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND query LIKE '%pg_logical_slot_get_changes%'
           AND pid <> pg_backend_pid()`,
      );
      return rows[0]?.pid;
    };
    await eventually(async () => (await slotReader()) !== undefined, 'the relay read the slot');
    const first = await slotReader();
    const timers = t.clock.pendingTimers();
    await db.pool.query('SELECT pg_terminate_backend($1)', [first]);
    await eventually(() => t.clock.pendingTimers() > timers, 'the relay saw its connection drop');
    await t.clock.advance(1000); // the reconnect timer (the catch-up pass is not due until 5 s)
    await eventually(async () => {
      const pid = await slotReader();
      return pid !== undefined && pid !== first;
    }, 'a new connection reads the slot');
    await transaction([{ queue, body: 'after the reconnect' }], true);
    await eventually(async () => (await t.countMessages(queue)).visible === 1, 'published from the slot');
  });
});
