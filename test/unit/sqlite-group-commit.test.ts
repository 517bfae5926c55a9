import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { ReceiveRequest } from '../../packages/server/src/store/contract.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { newMessage as message } from '../helpers/new-message.ts';

/**
 * Writes queued in one turn of the event loop share one transaction, which first runs without savepoints.
 * A failing write must still fail alone: the transaction is rolled back and the batch runs again with a
 * savepoint per write, so the other writes commit and the failing one leaves nothing behind, even the rows
 * it had inserted before it failed.
 */
describe('SQLite group commit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-group-commit-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('commits the other writes of a batch in which one fails, and nothing of the failed one', async () => {
    const store = new SqliteStore({ dataDir: dir, durability: 'durable' });
    const queue = await store.createQueue({ name: 'q', fifo: false, attributes: {}, tags: {}, now: 1 });
    const results = await Promise.allSettled([
      store.sendMessages(queue.id, [message('m1', 'one')]),
      // The first message is inserted, then the second breaks the NOT NULL on body.
      store.sendMessages(queue.id, [message('m2', 'two'), message('m3', null as unknown as string)]),
      store.createQueue({ name: 'q', fifo: false, attributes: {}, tags: {}, now: 2 }),
      store.sendMessages(queue.id, [message('m4', 'four')]),
      store.createQueue({ name: 'r', fifo: false, attributes: {}, tags: {}, now: 3 }),
    ]);
    assert.deepEqual(
      results.map((result) => result.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled'],
    );
    assert.match(String((results[1] as PromiseRejectedResult).reason), /NOT NULL/);
    assert.match(String((results[2] as PromiseRejectedResult).reason), /UNIQUE/);
    await store.close();

    const reopened = new SqliteStore({ dataDir: dir, durability: 'durable' });
    assert.equal((await reopened.countMessages(queue.id, 2)).visible, 2);
    const received = await reopened.receiveMessages(receiveAt2(queue.id, 10));
    assert.deepEqual(received.messages.map((m) => m.body).sort(), ['four', 'one']);
    assert.ok(await reopened.getQueue('r'));
    await reopened.close();
  });

  /**
   * Handing an fsync to libuv's thread pool wakes another thread, which on the 2-core VM cost the event loop
   * about 0.2 ms; a long poll woken by a send, answered at the commit, must not wait for that.
   */
  it("answers a commit's writes that need no fsync before it hands the fsync to the thread pool", async () => {
    const store = new SqliteStore({ dataDir: join(dir, 'order'), durability: 'durable' });
    const queue = await store.createQueue({ name: 'q', fifo: false, attributes: {}, tags: {}, now: 1 });
    await store.sendMessages(queue.id, [message('m0', 'zero')]);
    const events: string[] = [];
    // An fs call on the thread pool (the WAL's fdatasync) starts as an FSREQCALLBACK resource.
    const hook = createHook({
      init(_id, type) {
        if (type === 'FSREQCALLBACK') events.push('fsync');
      },
    }).enable();
    try {
      // One turn of the event loop, so one commit: a send (answered once fsynced) and a receive (answered at
      // the commit).
      await Promise.all([
        store.sendMessages(queue.id, [message('m1', 'one')]).then(() => events.push('sent')),
        store.receiveMessages(receiveAt2(queue.id, 1)).then(() => events.push('received')),
      ]);
    } finally {
      hook.disable();
    }
    assert.deepEqual(events, ['received', 'fsync', 'sent']);
    await store.close();
  });

  /**
   * A long poll is woken from the send's onApplied, inside the send's transaction (LongPoll.notify runs the
   * waiting receive at once). A receive that queues its write there joins that transaction, so the woken
   * receiver is answered after one commit, not after another turn of the event loop and a second commit.
   */
  it('takes a receive started while a send is applied into the same commit', async () => {
    const store = new SqliteStore({ dataDir: join(dir, 'wake'), durability: 'durable' });
    const queue = await store.createQueue({ name: 'q', fifo: false, attributes: {}, tags: {}, now: 1 });
    const receive = () => store.receiveMessages(receiveAt2(queue.id, 1));
    // A receive that found nothing, as the long poll's first look does.
    assert.deepEqual((await receive()).messages, []);
    const commits = countCommits();
    try {
      let woken: ReturnType<typeof receive> | undefined;
      await store.sendMessages(queue.id, [message('m1', 'one')], () => {
        woken = receive();
      });
      assert.ok(woken);
      assert.deepEqual(
        (await woken).messages.map((m) => m.body),
        ['one'],
      );
      assert.equal(commits.count, 1);
    } finally {
      commits.stop();
    }
    await store.close();
  });
});

/** Counts the COMMIT statements run on any better-sqlite3 database of this process until stopped. */
function countCommits(): { readonly count: number; stop(): void } {
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as {
    run(...params: unknown[]): unknown;
  };
  probe.close();
  const run = statement.run;
  let count = 0;
  statement.run = function (this: { source: string }, ...params: unknown[]) {
    if (this.source === 'COMMIT') count++;
    return run.apply(this, params);
  };
  return {
    get count() {
      return count;
    },
    stop: () => {
      statement.run = run;
    },
  };
}

/** A receive at time 2 of up to `max` messages, in flight until 100. */
function receiveAt2(queueId: number, max: number): ReceiveRequest {
  return { queueId, now: 2, max, visibleUntil: 100, newReceiptToken: () => 'token', maxInFlight: 120_000 };
}
