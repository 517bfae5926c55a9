import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import type { NewMessage, ReceiveRequest, StoredMessage } from '../../packages/server/src/store/contract.ts';
import { IN_MEMORY } from '../../packages/server/src/store/sqlite/options.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { newMessage } from '../helpers/new-message.ts';

/**
 * The SQLite store keeps standard queues' delivery state in memory, updated by every write. One script of
 * writes is run twice: on one store throughout, and on a store closed and opened again before every step, so
 * that each answer of the second comes from a state just built from the table. The answers must be the same.
 */

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A data directory of its own: the delivery state is the file store's (in memory, messages have no table). */
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-delivery-'));
  dirs.push(dir);
  return dir;
}

interface Queues {
  work: number;
  dlq: number;
}

function message(id: string, at: number, options: { delay?: number; life?: number } = {}): NewMessage {
  return {
    ...newMessage(id, `body ${id}`),
    sentAt: at,
    visibleAt: at + (options.delay ?? 0),
    expiresAt: at + (options.life ?? 1_000_000),
  };
}

function receive(queueId: number, now: number, extra: Partial<ReceiveRequest> = {}): ReceiveRequest {
  let tokens = 0;
  return {
    queueId,
    now,
    max: 10,
    visibleUntil: now + 100,
    newReceiptToken: () => `token-${now}-${++tokens}`,
    maxInFlight: 120_000,
    ...extra,
  };
}

const seqsOf = (messages: StoredMessage[]) => messages.map((m) => [m.seq, m.receiveCount]);

/** What a step shows of the store: its own answer, then the queues' counts and next visibility. */
type Step = (store: SqliteStore, queues: Queues) => Promise<unknown>;

const steps: Step[] = [
  async (store, q) => {
    await store.sendMessages(q.work, [
      message('a', 10),
      message('b', 10, { delay: 50 }),
      message('c', 11, { life: 200 }),
      message('d', 12),
      message('e', 13, { delay: 5 }),
    ]);
  },
  async (store, q) => seqsOf((await store.receiveMessages(receive(q.work, 20, { max: 2 }))).messages),
  async (store, q) => {
    const { messages } = await store.receiveMessages(receive(q.work, 21, { max: 1 }));
    const [first] = messages;
    assert.ok(first);
    return store.deleteMessage(
      q.work,
      { seq: first.seq, receiveCount: first.receiveCount, receiptToken: first.receiptToken! },
      { rule: 'anyIssued', now: 21 },
    );
  },
  async (store, q) => {
    // Received at 20 until 120: made visible again at 30.
    const [seq] = (await store.browseMessages(q.work, { afterSeq: 0, limit: 1, now: 30 })).map((m) => m.seq);
    return store.changeVisibility({
      queueId: q.work,
      receipt: { seq: seq!, receiveCount: 1, receiptToken: 'token-20-1' },
      visibleAt: 30,
      maxDeliveryMs: 43_200_000,
      rule: 'anyIssued',
      now: 30,
    });
  },
  // A receive with a redrive policy: what was received once goes to the DLQ.
  async (store, q) => {
    const result = await store.receiveMessages(
      receive(q.work, 40, {
        deadLetter: {
          queueId: q.dlq,
          maxReceiveCount: 1,
          sourceArn: 'arn:work',
          resetSentAt: false,
          retentionMs: 500_000,
        },
      }),
    );
    return { claimed: seqsOf(result.messages), moved: result.movedToDeadLetter };
  },
  async (store, q) => {
    const [first] = await store.browseMessages(q.dlq, { afterSeq: 0, limit: 1, now: 50 });
    return first && store.deleteMessagesBySeq(q.dlq, [first.seq], 50);
  },
  async (store, q) => {
    await store.sendMessages(q.dlq, [message('f', 55), message('g', 55)]);
    const [first] = await store.browseMessages(q.dlq, { afterSeq: 0, limit: 1, now: 56 });
    return store.replayMessages({
      queueId: q.dlq,
      seqs: [first!.seq],
      now: 56,
      copy: (original) => ({ queueId: q.work, message: message(`replayed ${original.messageId}`, 56) }),
    });
  },
  async (store, q) => {
    await store.sendMessages(q.work, [message('h', 60, { delay: 1000 })]);
    await store.updateQueue(q.work, { waitingDelayMs: 20, now: 60 });
  },
  async (store) => store.deleteExpired(250, 100),
  async (store, q) => {
    await store.createMoveTask({
      handle: 'move',
      sourceArn: 'arn:dlq',
      sourceQueueId: q.dlq,
      destinationArn: undefined,
      maxPerSecond: undefined,
      toMove: 10,
      upToSeq: await store.lastSeq(q.dlq),
      startedAt: 300,
    });
    let ids = 0;
    const outcome = await store.moveMessages({
      handle: 'move',
      now: 300,
      max: 10,
      route: () => ({ queueId: q.work, fifo: false, visibleAt: 300, expiresAt: 900_000 }),
      newMessageId: () => `moved-${++ids}`,
    });
    return outcome.moved;
  },
  async (store, q) =>
    seqsOf((await store.receiveMessages(receive(q.work, 310, { visibleUntil: 310 }))).messages),
  async (store, q) => seqsOf((await store.receiveMessages(receive(q.work, 320, { max: 3 }))).messages),
  async (store, q) => store.purgeQueue(q.work, 330, 60_000),
  async (store, q) => {
    await store.sendMessages(q.work, [message('i', 340), message('j', 341, { delay: 10 })]);
    return seqsOf((await store.receiveMessages(receive(q.work, 345))).messages);
  },
];

/** Runs the script; with `reopen`, on a store opened again before every step. Returns every step's answers. */
async function run(reopen: boolean): Promise<unknown[]> {
  const dir = freshDir();
  let store = new SqliteStore({ dataDir: dir });
  const newQueue = async (name: string) =>
    (await store.createQueue({ name, fifo: false, attributes: {}, tags: {}, now: 0 })).id;
  const queues = { work: await newQueue('work'), dlq: await newQueue('dlq') };
  const seen: unknown[] = [];
  for (const [index, step] of steps.entries()) {
    if (reopen) {
      await store.close();
      store = new SqliteStore({ dataDir: dir });
    }
    const answer = await step(store, queues);
    const now = [20, 21, 30, 40, 50, 56, 60, 250, 300, 310, 320, 330, 345][index]!;
    seen.push({
      step: index,
      answer,
      work: await store.countMessages(queues.work, now),
      dlq: await store.countMessages(queues.dlq, now),
      nextVisible: await store.nextVisibleAt(queues.work, now),
    });
  }
  await store.close();
  return seen;
}

it('a standard queue answers from its delivery state as from one built again from the table', async () => {
  const kept = await run(false);
  const rebuilt = await run(true);
  assert.deepEqual(kept, rebuilt);
  // The script reached what it is about: a DLQ move, a replay, expiry and a move task did happen.
  const answers = kept.map((step) => (step as { answer: unknown }).answer);
  assert.deepEqual(answers[4], { claimed: [[5, 1]], moved: 1 });
  assert.equal((answers[6] as Array<{ outcome: string }>)[0]?.outcome, 'done');
  assert.equal(answers[8], 1);
  assert.equal(answers[9], 1);
});

for (const [where, dataDir] of [
  ['in its file', freshDir],
  ['in memory', () => IN_MEMORY],
] as const)
  it(`a message dead-lettered without a group into a fair queue is served in the first receive there (${where})`, async () => {
    const store = new SqliteStore({ dataDir: dataDir() });
    const newQueue = async (name: string) =>
      (await store.createQueue({ name, fifo: false, attributes: {}, tags: {}, now: 0 })).id;
    const source = await newQueue('source');
    const dlq = await newQueue('dlq');
    // A group id makes the DLQ a fair queue (tenants 't' and '').
    await store.sendMessages(dlq, [{ ...message('tenant t', 1), groupId: 't' }]);
    await store.sendMessages(source, [message('no group', 1)]);
    await store.receiveMessages(receive(source, 2, { visibleUntil: 2 }));
    const deadLetter = {
      queueId: dlq,
      maxReceiveCount: 1,
      sourceArn: 'arn:source',
      resetSentAt: false,
      retentionMs: 1000,
    };
    assert.equal((await store.receiveMessages(receive(source, 3, { deadLetter }))).movedToDeadLetter, 1);
    // Before, it kept no group: the tenant turns passed it over until the tenant '' was forgotten.
    const { messages } = await store.receiveMessages(receive(dlq, 4));
    assert.deepEqual(messages.map((m) => m.messageId).sort(), ['no group', 'tenant t']);
    await store.close();
  });

it('a long queue is read into its delivery state in parts, and writes that land between the parts are kept', async () => {
  /** The same writes on two stores: one reads the state in parts of 10 rows while they land, one reads it after. */
  async function script(interleaved: boolean): Promise<{ answers: unknown; turns: number }> {
    const store = new SqliteStore({ dataDir: freshDir(), warmUpRows: 10 });
    const newQueue = async (name: string) =>
      (await store.createQueue({ name, fifo: false, attributes: {}, tags: {}, now: 0 })).id;
    const work = await newQueue('work');
    const dlq = await newQueue('dlq');
    await store.sendMessages(
      work,
      Array.from({ length: 100 }, (_, i) =>
        message(`w${i}`, 10 + i, { life: i % 30 === 7 ? 200 : 1_000_000 }),
      ),
    );
    await store.sendMessages(dlq, [message('d0', 5), message('d1', 6)]);
    const writes = async () => {
      await store.deleteMessagesBySeq(work, [3, 95], 300);
      await store.sendMessages(work, [message('late0', 300), message('late1', 301, { delay: 50 })]);
      await store.deleteExpired(300, 100);
      await store.createMoveTask({
        handle: 'move',
        sourceArn: 'arn:dlq',
        sourceQueueId: dlq,
        destinationArn: undefined,
        maxPerSecond: undefined,
        toMove: 2,
        upToSeq: await store.lastSeq(dlq),
        startedAt: 300,
      });
      let ids = 0;
      await store.moveMessages({
        handle: 'move',
        now: 300,
        max: 10,
        route: () => ({ queueId: work, fifo: false, visibleAt: 300, expiresAt: 900_000 }),
        newMessageId: () => `moved-${++ids}`,
      });
    };
    let turns = 0;
    let counted = false;
    const tick = () => {
      turns++;
      if (!counted) setImmediate(tick);
    };
    setImmediate(tick);
    if (interleaved) {
      // The count starts the build; the writes land while it reads its parts.
      const counting = store.countMessages(work, 300).then(() => {
        counted = true;
      });
      await writes();
      await counting;
    } else {
      await writes();
      await store.countMessages(work, 300);
      counted = true;
    }
    const received: number[][] = [];
    for (let now = 310; ; now++) {
      const { messages } = await store.receiveMessages(receive(work, now));
      if (messages.length === 0) break;
      received.push(messages.map((m) => m.seq));
    }
    const answers = {
      counts: await store.countMessages(work, 400),
      nextVisible: await store.nextVisibleAt(work, 400),
      received,
    };
    await store.close();
    return { answers, turns };
  }
  const interleaved = await script(true);
  const after = await script(false);
  assert.deepEqual(interleaved.answers, after.answers);
  // 100 rows in parts of 10: the count waited for about ten turns of the event loop, not one.
  assert.ok(interleaved.turns >= 8, `the build took ${interleaved.turns} turns`);
  // The script reached what it is about: deletes below and above the rows read, new and moved messages.
  const seqs = (interleaved.answers as { received: number[][] }).received.flat();
  assert.ok(!seqs.includes(3) && !seqs.includes(95));
  // late0, then the two moved from the DLQ (late1 is still delayed).
  assert.deepEqual(
    seqs.filter((seq) => seq > 102),
    [103, 105, 106],
  );
});
