import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newReceiptToken } from '../../packages/server/src/core/receipt-handle.ts';
import { BudgetShare, ByteBudget } from '../../packages/server/src/server/byte-budget.ts';
import { context, type StoreFactory, useContractService } from './harness.ts';

/**
 * The in-flight limits and the operator's caps, through the service. The limits are constructor options,
 * so small numbers stand in for SQS's 120,000 and 20,000 here (the rule is the same); the real defaults
 * are checked once at full size in limits-default.test.ts.
 */
export function limitsSuite(backend: string, factory: () => StoreFactory): void {
  describe(`capacity limits on ${backend}`, () => {
    const h = useContractService(factory, {
      limits: { maxInFlightStandard: 5, maxInFlightFifo: 3, maxQueues: 6, maxStoredBytes: 2_000_000 },
    });

    it('refuses a receive with OverLimit once a standard queue has its limit in flight, until one is deleted', async () => {
      const url = await h.newQueue();
      for (let i = 0; i < 7; i++) await h.send(url, `m${i}`);
      const first = await h.receive(url, { MaxNumberOfMessages: 5 });
      assert.equal(first.length, 5);
      await h.rejects(
        h.receive(url),
        'OverLimit',
        /Too many messages in flight for this queue \(5 at most\)/,
      );
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: first[0]!.ReceiptHandle });
      assert.equal((await h.receive(url, { MaxNumberOfMessages: 1 })).length, 1);
      // Once visibility runs out the messages are no longer in flight, and receives work again.
      await h.clock.advance(31_000);
      assert.equal((await h.receive(url, { MaxNumberOfMessages: 2 })).length, 2);
    });

    it('counts messages hidden again through lapsed handles as in flight (standard queues)', async () => {
      const url = await h.newQueue();
      for (let i = 0; i < 6; i++) await h.send(url, `m${i}`);
      const lapsed = await h.receive(url, { MaxNumberOfMessages: 5, VisibilityTimeout: 0 });
      assert.equal(lapsed.length, 5);
      assert.equal((await h.receive(url, { MaxNumberOfMessages: 1, VisibilityTimeout: 0 })).length, 1);
      for (const { ReceiptHandle } of lapsed)
        await h.service.actions.ChangeMessageVisibility({
          QueueUrl: url,
          ReceiptHandle,
          VisibilityTimeout: 60,
        });
      assert.equal((await h.counts(url)).notVisible, 5);
      await h.rejects(h.receive(url), 'OverLimit');
      // The maxQueues test counts the queues the tests before it leave.
      await h.service.actions.DeleteQueue({ QueueUrl: url });
    });

    it('applies the FIFO limit to FIFO queues', async () => {
      const url = await h.newQueue({ FifoQueue: 'true', ContentBasedDeduplication: 'true' });
      for (let i = 0; i < 5; i++) await h.send(url, `f${i}`, { MessageGroupId: `g${i}` });
      assert.equal((await h.receive(url, { MaxNumberOfMessages: 3 })).length, 3);
      await h.rejects(h.receive(url), 'OverLimit', /\(3 at most\)/);
    });

    it('refuses a queue past maxQueues with a clear OverLimit, and takes one again after a delete', async () => {
      const made: string[] = [];
      // Two queues exist from the tests above.
      for (let i = 0; i < 4; i++) made.push(await h.newQueue());
      await h.rejects(h.newQueue(), 'OverLimit', /at most 6 queues \(--max-queues\)/);
      // Re-creating an existing queue is not a new queue.
      const name = made[0]!.split('/').at(-1)!;
      await h.service.actions.CreateQueue({ QueueName: name }, context);
      await h.service.actions.DeleteQueue({ QueueUrl: made[0]! });
      await h.newQueue();
    });

    it('refuses sends once the store holds maxStoredBytes, and accepts them again once it shrinks', async () => {
      const url = (await h.service.actions.GetQueueUrl({ QueueName: 'q1' }, context)).QueueUrl;
      const big = 'x'.repeat(200_000);
      let refusedAfter = -1;
      for (let i = 0; i < 30; i++) {
        await h.clock.advance(1_000);
        try {
          await h.send(url, big);
        } catch (error) {
          assert.equal((error as { code?: string }).code, 'OverLimit');
          assert.match((error as Error).message, /storage cap of 2000000 bytes is reached/);
          refusedAfter = i;
          break;
        }
      }
      assert.ok(refusedAfter >= 5 && refusedAfter <= 12, `refused after ${refusedAfter} sends of 200 kB`);
      await h.rejects(
        h.service.actions.SendMessageBatch(
          { QueueUrl: url, Entries: [{ Id: 'a', MessageBody: 'small' }] },
          context,
        ),
        'OverLimit',
      );
      await h.service.actions.PurgeQueue({ QueueUrl: url });
      await h.clock.advance(1_000);
      await h.send(url, 'fits again');
    });
  });

  describe(`room in answers on ${backend}`, () => {
    const h = useContractService(factory);

    /** A store receive of up to 10 whose admit lets through `room` characters of messages, and what it asked. */
    async function receiveWithRoom(url: string, room: number) {
      const queue = await h.store.getQueue(url.split('/').at(-1)!);
      const asked: number[] = [];
      const now = h.clock.now();
      const result = await h.store.receiveMessages({
        queueId: queue!.id,
        now,
        max: 10,
        visibleUntil: now + 30_000,
        newReceiptToken,
        maxInFlight: 1_000,
        admit: (bytes) => {
          asked.push(bytes);
          if (bytes > room) return false;
          room -= bytes;
          return true;
        },
      });
      return { bodies: result.messages.map((message) => message.body), asked };
    }

    it('a receive stops at the first message its admit refuses; that one and those after stay visible', async () => {
      const url = await h.newQueue();
      for (const body of ['a'.repeat(10), 'b'.repeat(30), 'c'.repeat(10)]) await h.send(url, body);
      assert.deepEqual(await receiveWithRoom(url, 25), { bodies: ['a'.repeat(10)], asked: [10, 30] });
      assert.deepEqual(await h.counts(url), { visible: 2, notVisible: 1, delayed: 0 });
      assert.deepEqual(await receiveWithRoom(url, 100), {
        bodies: ['b'.repeat(30), 'c'.repeat(10)],
        asked: [30, 10],
      });
    });

    it('on a FIFO queue, the refused message keeps its place in its group', async () => {
      const url = await h.newQueue({ FifoQueue: 'true', ContentBasedDeduplication: 'true' });
      for (const body of ['a'.repeat(10), 'b'.repeat(30), 'c'.repeat(10)])
        await h.send(url, body, { MessageGroupId: 'g' });
      assert.deepEqual((await receiveWithRoom(url, 25)).bodies, ['a'.repeat(10)]);
      await h.clock.advance(31_000);
      assert.deepEqual((await receiveWithRoom(url, 100)).bodies, [
        'a'.repeat(10),
        'b'.repeat(30),
        'c'.repeat(10),
      ]);
    });

    it('a receive with no room for one message waits for room, oldest first, then answers', async () => {
      const url = await h.newQueue({ MaximumMessageSize: '100000' });
      for (let i = 0; i < 3; i++) await h.send(url, String(i).repeat(90_000));
      const budget = new ByteBudget(200_000, h.clock);
      const holder = new BudgetShare(budget);
      assert.ok(holder.tryTake(150_000));
      const first = h.service.actions.ReceiveMessage(
        { QueueUrl: url, MaxNumberOfMessages: 10 },
        { ...context, answerRoom: new BudgetShare(budget) },
      );
      await h.clock.advance(1_000);
      holder.releaseAll();
      await h.clock.advance(0);
      // Room for two messages of 90,000 was set aside once the holder let go.
      const messages = ((await first).Messages ?? []) as Array<{ Body: string }>;
      assert.deepEqual(
        messages.map((message) => message.Body[0]),
        ['0', '1'],
      );
    });

    it('a short poll with no room in time answers with no messages and leaves them visible', async () => {
      const url = await h.newQueue({ MaximumMessageSize: '100000' });
      await h.send(url, 'x'.repeat(90_000));
      const budget = new ByteBudget(100_000, h.clock);
      assert.ok(new BudgetShare(budget).tryTake(100_000));
      const answer = h.service.actions.ReceiveMessage(
        { QueueUrl: url },
        { ...context, answerRoom: new BudgetShare(budget) },
      );
      await h.clock.advance(2_000);
      assert.deepEqual(await answer, {});
      assert.deepEqual(await h.counts(url), { visible: 1, notVisible: 0, delayed: 0 });
    });
  });
}
