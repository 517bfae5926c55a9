import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateQueueCommand, DeleteMessageBatchCommand, type Message } from '@aws-sdk/client-sqs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type OutboxMessage, OutboxRelay, type OutboxRelayOptions, type OutboxStore } from 'sluice-client';
import { migratePostgresOutbox, PostgresOutbox } from 'sluice-client/postgres';
import { migrateSqliteOutbox, SqliteOutbox } from 'sluice-client/sqlite';
import { createTestDatabase } from '../../tools/postgres.ts';
import { startToolkitServer, type ToolkitServer } from '../helpers/client-toolkit.ts';

/** One outbox backend, driven the way an application would: business row and messages in one transaction. */
interface Backend {
  /** The store the first relay uses. */
  store: OutboxStore;
  /** A store on a connection of its own, as a second relay process would have. */
  secondStore(): OutboxStore;
  /** Inserts an order and adds `messages` in one transaction that commits. */
  commit(messages: OutboxMessage[]): Promise<void>;
  /** The same, in a transaction that fails after the adds and rolls back. */
  rollBack(messages: OutboxMessage[]): Promise<void>;
  orders(): Promise<number>;
  /** Rows by state: not yet marked sent, marked sent. */
  rows(queue: string): Promise<{ pending: number; sent: number; attempts: number }>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-outbox-'));
  const file = join(dir, 'app.db');
  const open = () => {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    return db;
  };
  const db = open();
  db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)');
  migrateSqliteOutbox(db);
  const outbox = new SqliteOutbox({ db });
  const others: Database.Database[] = [];
  const write = (messages: OutboxMessage[], fail: boolean) =>
    db.transaction(() => {
      db.prepare('INSERT INTO orders (total) VALUES (?)').run(500);
      for (const message of messages) outbox.add(db, message);
      if (fail) throw new Error('business rule failed');
    })();
  return {
    store: outbox,
    secondStore() {
      const other = open();
      others.push(other);
      return new SqliteOutbox({ db: other });
    },
    async commit(messages) {
      write(messages, false);
    },
    async rollBack(messages) {
      assert.throws(() => write(messages, true), /business rule failed/);
    },
    async orders() {
      return (db.prepare('SELECT count(*) AS n FROM orders').get() as { n: number }).n;
    },
    async rows(queue) {
      return db
        .prepare(
          `SELECT count(*) FILTER (WHERE sent_at IS NULL) AS pending, count(sent_at) AS sent,
             coalesce(sum(attempts), 0) AS attempts FROM sluice_outbox WHERE queue = ?`,
        )
        .get(queue) as { pending: number; sent: number; attempts: number };
    },
    async close() {
      for (const other of others) other.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresBackend(): Promise<Backend> {
  const database = await createTestDatabase('sluice_outbox');
  const { pool } = database;
  await pool.query('CREATE TABLE orders (id bigserial PRIMARY KEY, total integer NOT NULL)');
  await migratePostgresOutbox(pool);
  const outbox = new PostgresOutbox({ pool });
  const otherPools: pg.Pool[] = [];
  const write = async (messages: OutboxMessage[], fail: boolean) => {
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      await tx.query('INSERT INTO orders (total) VALUES (500)');
      for (const message of messages) await outbox.add(tx, message);
      if (fail) throw new Error('business rule failed');
      await tx.query('COMMIT');
    } catch (error) {
      await tx.query('ROLLBACK');
      throw error;
    } finally {
      tx.release();
    }
  };
  return {
    store: outbox,
    secondStore() {
      // A pool of its own: the second relay shares no connection with the first.
      const other = new pg.Pool(pool.options);
      otherPools.push(other);
      return new PostgresOutbox({ pool: other });
    },
    commit: (messages) => write(messages, false),
    async rollBack(messages) {
      await assert.rejects(write(messages, true), /business rule failed/);
    },
    async orders() {
      return Number((await pool.query('SELECT count(*) AS n FROM orders')).rows[0].n);
    },
    async rows(queue) {
      const { rows } = await pool.query(
        `SELECT count(*) FILTER (WHERE sent_at IS NULL) AS pending, count(sent_at) AS sent,
           coalesce(sum(attempts), 0) AS attempts FROM sluice_outbox WHERE queue = $1`,
        [queue],
      );
      return {
        pending: Number(rows[0].pending),
        sent: Number(rows[0].sent),
        attempts: Number(rows[0].attempts),
      };
    },
    async close() {
      for (const other of otherPools) {
        // As in createTestDatabase's drop: the FORCE of the drop may end a connection the pool is closing.
        other.on('error', () => {});
        await other.end();
      }
      await database.drop();
    },
  };
}

/** Receives everything on a queue (deleting it), in the order SQS hands it out. */
async function drainQueue(t: ToolkitServer, queueUrl: string): Promise<Message[]> {
  const all: Message[] = [];
  for (;;) {
    const batch = await t.receiveNow(queueUrl);
    if (batch.length === 0) return all;
    all.push(...batch);
    await t.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
}

const FIFO = { FifoQueue: 'true' };

for (const [name, makeBackend] of [
  ['SQLite file', sqliteBackend],
  ['PostgreSQL', postgresBackend],
] as const) {
  /**
   * The outbox and its relay against a really started Sluice on a FakeClock (shared with the relay, so
   * polling, leases and backoff move by advancing it) and a real database.
   */
  describe(`transactional outbox on ${name}`, { concurrency: false, timeout: 60_000 }, () => {
    let t: ToolkitServer;
    let backend: Backend;
    before(async () => {
      t = await startToolkitServer();
      backend = await makeBackend();
    });
    after(async () => {
      await backend?.close();
      await t?.close();
    });

    function relay(options: Partial<OutboxRelayOptions> = {}): OutboxRelay {
      return new OutboxRelay({
        outbox: backend.store,
        client: t.sqs,
        clock: t.clock,
        random: () => 0,
        ...options,
      });
    }

    test('a rolled-back transaction leaves neither the order nor a message', async () => {
      const queue = await t.createQueue('rollback');
      const ordersBefore = await backend.orders();
      const rowsBefore = await backend.rows(queue);
      await backend.rollBack([{ queue, body: 'never' }]);
      assert.equal(await relay().drain(), 0);
      assert.equal(await backend.orders(), ordersBefore);
      assert.deepEqual(await backend.rows(queue), rowsBefore);
      assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 });
    });

    test('a committed message is published once by the polling relay, with its attributes', async () => {
      const queue = await t.createQueue('commit');
      const r = relay({ pollIntervalMs: 1000 });
      r.start();
      await t.clock.advance(0); // the first pass, on an empty outbox
      await backend.commit([
        {
          queue,
          body: 'order 1 placed',
          attributes: { kind: { DataType: 'String', StringValue: 'order-placed' } },
        },
      ]);
      assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 }, 'not before the next poll');
      await t.clock.advance(1000);
      await t.clock.advance(1000);
      await t.clock.advance(1000); // more polls publish nothing more
      await r.stop();
      const received = await drainQueue(t, queue);
      assert.equal(received.length, 1);
      assert.equal(received[0]!.Body, 'order 1 placed');
      assert.equal(received[0]!.MessageAttributes?.kind?.StringValue, 'order-placed');
      assert.equal((await backend.rows(queue)).pending, 0);
    });

    test('rows are published in id order, in SendMessageBatch requests of 10', async () => {
      const queue = await t.createQueue('order', FIFO);
      const bodies = Array.from({ length: 25 }, (_, i) => `step ${i}`);
      await backend.commit(bodies.slice(0, 12).map((body) => ({ queue, body, groupId: 'g' })));
      await backend.commit(bodies.slice(12).map((body) => ({ queue, body, groupId: 'g' })));
      const batchesBefore = t.commands.filter((c) => c === 'SendMessageBatchCommand').length;
      assert.equal(await relay().drain(), 25);
      const batches = t.commands.filter((c) => c === 'SendMessageBatchCommand').length - batchesBefore;
      assert.equal(batches, 3);
      const received = await drainQueue(t, queue);
      assert.deepEqual(
        received.map((m) => m.Body),
        bodies,
      );
    });

    test('a queue given by name is resolved; a failed publish is retried after its backoff', async () => {
      const queueName = `later-${process.pid}-${name.length}`;
      await backend.commit([{ queue: queueName, body: 'waits for its queue' }]);
      const failures: string[] = [];
      const r = relay({ backoff: { initialMs: 1000 }, hooks: { failed: (f) => failures.push(f[0]!.error) } });
      assert.equal(await r.drain(), 0, 'the queue does not exist yet');
      assert.match(failures[0]!, /NonExistentQueue|does not exist/);
      assert.deepEqual(await backend.rows(queueName), { pending: 1, sent: 0, attempts: 1 });
      const { QueueUrl } = await t.sqs.send(new CreateQueueCommand({ QueueName: queueName }));
      await t.clock.advance(499); // random 0: the first retry waits half of 1000 ms
      assert.equal(await r.drain(), 0, 'still backing off');
      await t.clock.advance(1);
      assert.equal(await r.drain(), 1);
      const received = await drainQueue(t, QueueUrl!);
      assert.deepEqual(
        received.map((m) => m.Body),
        ['waits for its queue'],
      );
    });

    test('on a FIFO queue a refused row holds back the later rows of its group, not other groups', async () => {
      const queue = await t.createQueue('held', FIFO);
      const refused = 'bad \u0001 character'; // outside the characters SQS accepts in a body
      await backend.commit([
        { queue, body: 'g1 first', groupId: 'g1' },
        { queue, body: refused, groupId: 'g1' },
        { queue, body: 'g1 third', groupId: 'g1' },
        { queue, body: 'g2 only', groupId: 'g2' },
      ]);
      const errors: string[] = [];
      const r = relay({ batchSize: 2, hooks: { failed: (f) => errors.push(...f.map((x) => x.error)) } });
      assert.equal(await r.drain(), 2, 'g1 first and g2 only');
      assert.equal(errors.length, 1);
      assert.match(errors[0]!, /InvalidMessageContents/);
      await t.clock.advance(60_000); // the retry: the refused row is sent alone in its group, and refused again
      assert.equal(await r.drain(), 0);
      assert.equal(errors.length, 2, 'only the refused row was tried again');
      assert.deepEqual((await drainQueue(t, queue)).map((m) => m.Body).sort(), ['g1 first', 'g2 only']);
      assert.deepEqual(await backend.rows(queue), { pending: 2, sent: 2, attempts: 2 });
    });

    test('a relay killed between publish and mark re-publishes on restart: FIFO dedup absorbs it, a standard queue gets it twice', async () => {
      const fifo = await t.createQueue('crash', FIFO);
      const standard = await t.createQueue('crash-standard');
      await backend.commit([
        { queue: fifo, body: 'charge card', groupId: 'order-7' },
        { queue: standard, body: 'send receipt' },
      ]);
      const killed = relay({
        leaseMs: 30_000,
        hooks: {
          published() {
            throw new Error('killed after publish, before mark');
          },
        },
      });
      await assert.rejects(killed.drain(), /killed after publish/);
      const pending = async () => (await backend.rows(fifo)).pending + (await backend.rows(standard)).pending;
      assert.equal(await pending(), 2, 'nothing was marked sent');

      const restarted = relay({ leaseMs: 30_000 });
      assert.equal(await restarted.drain(), 0, "the dead relay's lease still holds the rows");
      await t.clock.advance(30_000);
      assert.equal(await restarted.drain(), 2, 'lease expired: both rows published again');
      assert.equal(await pending(), 0);

      // SQS drops the FIFO repeat: same MessageDeduplicationId (the row id) within 5 minutes.
      assert.deepEqual(
        (await drainQueue(t, fifo)).map((m) => m.Body),
        ['charge card'],
      );
      // A standard queue has no dedup: the consumer must be idempotent (see `idempotent` in the toolkit).
      assert.deepEqual(
        (await drainQueue(t, standard)).map((m) => m.Body),
        ['send receipt', 'send receipt'],
      );
    });

    test('two relays at once on 1,000 rows publish each row exactly once', async () => {
      const queue = await t.createQueue('two-relays');
      const messages = Array.from({ length: 1000 }, (_, i) => ({ queue, body: `row ${i}` }));
      for (let i = 0; i < messages.length; i += 250) await backend.commit(messages.slice(i, i + 250));
      const first = relay({ batchSize: 50 });
      const second = relay({ batchSize: 50, outbox: backend.secondStore() });
      const [a, b] = await Promise.all([first.drain(), second.drain()]);
      assert.equal(a + b, 1000);
      assert.ok(a > 0 && b > 0, `both relays took part (${a} + ${b})`);
      // A standard queue keeps duplicates, so the server's count shows any row published twice.
      assert.deepEqual(await t.countMessages(queue), { visible: 1000, inFlight: 0 });
      const bodies = new Set((await drainQueue(t, queue)).map((m) => m.Body));
      assert.equal(bodies.size, 1000);
      assert.equal((await backend.rows(queue)).pending, 0);
    });
  });
}
