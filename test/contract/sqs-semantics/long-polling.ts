import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ContractService, context, type ReceivedMessage } from '../harness.ts';

/**
 * Long polling: answers on a send, at the deadline, on a delay or visibility ending, once per message, and
 * frees a waiter whose client went away. Part of the SQS semantics suite (../sqs-semantics.ts).
 */
export function longPollingSuite(h: ContractService): void {
  const { newQueue, send, receive } = h;

  describe('long polling', () => {
    it('answers as soon as a message is sent', async () => {
      const url = await newQueue();
      const waiting = receive(url, { WaitTimeSeconds: 20 });
      await h.clock.advance(3_000);
      await send(url, 'wake');
      const messages = await waiting;
      assert.equal(messages[0]?.Body, 'wake');
    });

    it('returns empty at the deadline, not before', async () => {
      const url = await newQueue();
      let done = false;
      const waiting = receive(url, { WaitTimeSeconds: 5 }).then((messages) => {
        done = true;
        return messages;
      });
      await h.clock.advance(4_999);
      assert.equal(done, false);
      await h.clock.advance(1);
      assert.deepEqual(await waiting, []);
    });

    it('uses the queue ReceiveMessageWaitTimeSeconds unless the call says otherwise', async () => {
      const url = await newQueue({ ReceiveMessageWaitTimeSeconds: '10' });
      let done = false;
      const waiting = receive(url).then(() => {
        done = true;
      });
      await h.clock.advance(9_000);
      assert.equal(done, false);
      await h.clock.advance(1_000);
      await waiting;
      assert.equal(done, true);
      assert.deepEqual(await receive(url, { WaitTimeSeconds: 0 }), []);
    });

    it('wakes when a delay ends or a visibility timeout expires', async () => {
      const url = await newQueue({ VisibilityTimeout: '7' });
      await send(url, 'later', { DelaySeconds: 4 });
      const delayed: { messages?: ReceivedMessage[] } = {};
      const waiting = receive(url, { WaitTimeSeconds: 20 }).then((messages) => {
        delayed.messages = messages;
      });
      await h.clock.advance(3_999);
      assert.equal(delayed.messages === undefined, true);
      await h.clock.advance(1);
      await waiting;
      assert.equal(delayed.messages?.[0]?.Body, 'later');
      const redelivered: { messages?: ReceivedMessage[] } = {};
      const again = receive(url, { WaitTimeSeconds: 20 }).then((messages) => {
        redelivered.messages = messages;
      });
      await h.clock.advance(6_999);
      assert.equal(redelivered.messages === undefined, true);
      await h.clock.advance(1);
      await again;
      assert.equal(redelivered.messages?.[0]?.Attributes?.ApproximateReceiveCount, '2');
    });

    it('wakes when a message is made visible with ChangeMessageVisibility 0', async () => {
      const url = await newQueue();
      await send(url, 'x');
      const [message] = await receive(url);
      const waiting = receive(url, { WaitTimeSeconds: 20 });
      await h.clock.advance(1_000);
      await h.service.actions.ChangeMessageVisibility({
        QueueUrl: url,
        ReceiptHandle: message!.ReceiptHandle,
        VisibilityTimeout: 0,
      });
      assert.equal((await waiting).length, 1);
    });

    it('gives one message to one of many waiters, and the rest time out empty', async () => {
      const url = await newQueue();
      const waiters = Array.from({ length: 5 }, () => receive(url, { WaitTimeSeconds: 10 }));
      await h.clock.advance(100);
      await send(url, 'single');
      await h.clock.advance(10_000);
      const results = await Promise.all(waiters);
      assert.equal(results.flat().length, 1);
    });

    it('frees the waiter when the client goes away', async () => {
      const url = await newQueue();
      const abort = new AbortController();
      const waiting = h.service.actions.ReceiveMessage(
        { QueueUrl: url, WaitTimeSeconds: 20 },
        { ...context, signal: abort.signal },
      );
      await h.clock.advance(1_000);
      abort.abort();
      assert.deepEqual(await waiting, {});
      assert.equal(h.service.longPoll.hasWaiters(Number.NaN), false);
    });
  });
}
