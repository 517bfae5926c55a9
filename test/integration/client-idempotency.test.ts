import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Message } from '@aws-sdk/client-sqs';
import Database from 'better-sqlite3';
import { Consumer, IdempotencyInProgressError, type IdempotencyStore, idempotent } from 'sluice-client';
import { PostgresIdempotencyStore } from 'sluice-client/postgres';
import { SqliteIdempotencyStore } from 'sluice-client/sqlite';
import { createTestDatabase } from '../../tools/postgres.ts';
import { eventually, gate, startToolkitServer, type ToolkitServer } from '../helpers/client-toolkit.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/** A real table of balances, and the idempotency store kept in the same database. */
interface Ledger {
  store: IdempotencyStore;
  credit(account: string, amount: number): Promise<void>;
  balance(account: string): Promise<number>;
  close(): Promise<void>;
}

function sqliteLedger(): Ledger {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ledger-'));
  const db = new Database(join(dir, 'bank.db'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL)');
  const credit = db.prepare(
    'INSERT INTO accounts (id, balance) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET balance = balance + excluded.balance',
  );
  const read = db.prepare<[string], { balance: number }>('SELECT balance FROM accounts WHERE id = ?');
  return {
    store: new SqliteIdempotencyStore(db),
    async credit(account, amount) {
      credit.run(account, amount);
    },
    async balance(account) {
      return read.get(account)?.balance ?? 0;
    },
    async close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresLedger(): Promise<Ledger> {
  const database = await createTestDatabase('sluice_ledger');
  await database.pool.query('CREATE TABLE accounts (id TEXT PRIMARY KEY, balance BIGINT NOT NULL)');
  return {
    store: new PostgresIdempotencyStore(database.pool),
    async credit(account, amount) {
      await database.pool.query(
        'INSERT INTO accounts (id, balance) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET balance = accounts.balance + EXCLUDED.balance',
        [account, amount],
      );
    },
    async balance(account) {
      const { rows } = await database.pool.query<{ balance: string }>(
        'SELECT balance FROM accounts WHERE id = $1',
        [account],
      );
      return Number(rows[0]?.balance ?? 0);
    },
    close: () => database.drop(),
  };
}

type Repeat = 'visibility-expires-while-processing' | 'crash-after-work-before-delete';

/**
 * The test that matters: a handler that credits 500, run by the Consumer against a real server over the
 * SDK, while SQS delivers the message again. With `idempotent` the balance ends exactly +500; without it,
 * the same deliveries make +1000 (so these tests can fail).
 */
describe('idempotent handler under repeated deliveries', { concurrency: false, timeout: 120_000 }, () => {
  let t: ToolkitServer;
  const ledgers: Ledger[] = [];
  before(async () => {
    t = await startToolkitServer();
  });
  after(async () => {
    for (const ledger of ledgers) await ledger.close();
    await t?.close();
  });

  /** Moves the FakeClock a second at a time, leaving real time for HTTP between steps, until `check` holds. */
  async function advanceUntil(check: () => boolean | Promise<boolean>, what: string, maxSeconds = 120) {
    for (let s = 0; s < maxSeconds; s++) {
      if (await check()) return;
      await t.clock.advance(1000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.fail(`not reached in ${maxSeconds} s of clock time: ${what}`);
  }

  /** Runs the scenario once; returns how much the account gained. */
  async function creditWithRepeats(ledger: Ledger, repeat: Repeat, guarded: boolean): Promise<number> {
    const queue = await t.createQueue('idem', { VisibilityTimeout: '30' });
    const account = `acct-${queue.split('-').pop()}`;
    // The consumer's own client: commands named in `dropped` fail before leaving the process.
    const dropped = new Set<string>();
    const sqs = sqsClient(t.sluice.endpoint);
    sqs.middlewareStack.add(
      (next, context) => (args) => {
        if (dropped.has(context.commandName ?? ''))
          throw new Error(`${context.commandName} dropped by the test`);
        return next(args);
      },
      { step: 'initialize', name: 'dropCommands' },
    );
    let runs = 0;
    const firstRun = gate();
    const creditFromMessage = async (message: Message) => {
      runs++;
      if (repeat === 'visibility-expires-while-processing' && runs === 1) await firstRun.promise;
      const order = JSON.parse(message.Body!) as { account: string; amount: number };
      await ledger.credit(order.account, order.amount);
      return { credited: order.amount };
    };
    const handler = guarded
      ? idempotent(creditFromMessage, {
          store: ledger.store,
          key: (message) => message.MessageId!,
          clock: t.clock,
        })
      : creditFromMessage;
    const consumer = new Consumer({
      sqs,
      queueUrl: queue,
      clock: t.clock,
      stopOnSignals: [],
      concurrency: 2,
      handler,
    });
    let processed = 0;
    let deleteFailures = 0;
    const failures: unknown[] = [];
    consumer.on('processed', () => processed++);
    consumer.on('deleteFailed', () => deleteFailures++);
    consumer.on('failed', (_message, error) => failures.push(error));
    const queueEmpty = async () => {
      const n = await t.countMessages(queue);
      return n.visible + n.inFlight === 0;
    };
    // Visibility: no heartbeat, so the 30-second lease lapses while the first run is held and SQS delivers
    // again. Crash: the work is done, then the process "dies" before its delete reaches SQS.
    dropped.add(
      repeat === 'visibility-expires-while-processing'
        ? 'ChangeMessageVisibilityBatchCommand'
        : 'DeleteMessageBatchCommand',
    );
    await consumer.start();
    await t.send(queue, JSON.stringify({ account, amount: 500 }));

    if (repeat === 'visibility-expires-while-processing') {
      await eventually(() => runs === 1, 'first run started');
      if (guarded) {
        await advanceUntil(() => failures.length === 1, 'the second delivery refused');
        assert.ok(failures[0] instanceof IdempotencyInProgressError, 'refused as in progress');
        assert.equal(runs, 1, 'the duplicate did not run the work');
      } else {
        await advanceUntil(() => runs === 2, 'the second delivery ran');
      }
      firstRun.open();
    } else {
      await eventually(() => deleteFailures === 1, 'delete lost');
      assert.equal(await ledger.balance(account), 500);
      dropped.delete('DeleteMessageBatchCommand');
      await advanceUntil(() => processed === 2, 'redelivered after the visibility timeout');
    }
    await advanceUntil(queueEmpty, 'message deleted');
    // Nothing comes back later either.
    for (let s = 0; s < 40; s++) await t.clock.advance(1000);
    assert.ok(await queueEmpty());
    const stopped = consumer.stop();
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    await advanceUntil(() => done, 'consumer stopped');
    sqs.destroy();
    assert.equal(runs, guarded ? 1 : 2, 'handler runs');
    return ledger.balance(account);
  }

  const repeats: Repeat[] = ['visibility-expires-while-processing', 'crash-after-work-before-delete'];
  const backends: Array<[string, () => Promise<Ledger>]> = [
    ['SQLite', async () => sqliteLedger()],
    ['PostgreSQL', postgresLedger],
  ];
  for (const [backend, open] of backends) {
    for (const repeat of repeats) {
      test(`${backend}: ${repeat} still credits exactly +500`, async () => {
        const ledger = await open();
        ledgers.push(ledger);
        assert.equal(await creditWithRepeats(ledger, repeat, true), 500);
      });
    }
  }
  for (const repeat of repeats) {
    test(`without idempotent, ${repeat} credits +1000`, async () => {
      const ledger = sqliteLedger();
      ledgers.push(ledger);
      assert.equal(await creditWithRepeats(ledger, repeat, false), 1000);
    });
  }
});
