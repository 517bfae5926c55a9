import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { startRetentionSweeper } from '../../packages/server/src/core/retention.ts';
import { context, type StoreFactory, useContractService } from './harness.ts';

/**
 * FIFO queues and fair queues, checked through the service against a real store with a fake clock. Every
 * storage backend runs this suite too.
 */
export function fifoSemanticsSuite(backend: string, factory: () => StoreFactory): void {
  describe(`FIFO and fair-queue semantics on ${backend}`, () => {
    const h = useContractService(factory);
    const fifoQueue = (attributes: Record<string, string> = {}) =>
      h.newQueue({ FifoQueue: 'true', ContentBasedDeduplication: 'true', ...attributes });
    const sendTo = (url: string, group: string, body: string, extra: Record<string, unknown> = {}) =>
      h.send(url, body, { MessageGroupId: group, ...extra });
    const bodies = (messages: Array<{ Body: string }>) => messages.map((message) => message.Body);
    const deleteAll = async (url: string, messages: Array<{ ReceiptHandle: string }>) => {
      for (const { ReceiptHandle } of messages)
        await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle });
    };

    describe('FIFO queues', () => {
      it('are created with FifoQueue=true and a .fifo name together, and FifoQueue cannot change', async () => {
        await h.rejects(
          h.service.actions.CreateQueue({ QueueName: 'plain', Attributes: { FifoQueue: 'true' } }, context),
          'InvalidParameterValue',
        );
        await h.rejects(
          h.service.actions.CreateQueue({ QueueName: 'named.fifo' }, context),
          'InvalidParameterValue',
        );
        const url = await fifoQueue();
        await h.rejects(
          h.service.actions.SetQueueAttributes({ QueueUrl: url, Attributes: { FifoQueue: 'false' } }),
          'InvalidAttributeValue',
        );
        const { Attributes } = (await h.service.actions.GetQueueAttributes({
          QueueUrl: url,
          AttributeNames: ['All'],
        })) as {
          Attributes: Record<string, string>;
        };
        assert.equal(Attributes.FifoQueue, 'true');
        assert.equal(Attributes.ContentBasedDeduplication, 'true');
        assert.equal(Attributes.DeduplicationScope, 'queue');
        assert.equal(Attributes.FifoThroughputLimit, 'perQueue');
      });

      it('allows the per-group throughput limit only with per-group deduplication', async () => {
        await h.rejects(fifoQueue({ FifoThroughputLimit: 'perMessageGroupId' }), 'InvalidAttributeValue');
        const url = await fifoQueue({
          FifoThroughputLimit: 'perMessageGroupId',
          DeduplicationScope: 'messageGroup',
        });
        await h.rejects(
          h.service.actions.SetQueueAttributes({
            QueueUrl: url,
            Attributes: { DeduplicationScope: 'queue' },
          }),
          'InvalidAttributeValue',
        );
        await h.service.actions.SetQueueAttributes({
          QueueUrl: url,
          Attributes: { DeduplicationScope: 'queue', FifoThroughputLimit: 'perQueue' },
        });
      });

      it('rejects sends without a group, without deduplication, with a delay of their own or bad ids', async () => {
        const url = await fifoQueue();
        await h.rejects(h.send(url, 'x'), 'MissingParameter', /MessageGroupId/);
        await h.rejects(
          sendTo(url, 'g', 'x', { DelaySeconds: 5 }),
          'InvalidParameterValue',
          /^Value 5 for parameter DelaySeconds is invalid\. Reason: The request include parameter that is not valid for this queue type\.$/,
        );
        await h.rejects(sendTo(url, 'a b', 'x'), 'InvalidParameterValue', /MessageGroupId/);
        await h.rejects(sendTo(url, 'g'.repeat(129), 'x'), 'InvalidParameterValue');
        await h.rejects(sendTo(url, 'g', 'x', { MessageDeduplicationId: 'é' }), 'InvalidParameterValue');
        const explicitOnly = await h.newQueue({ FifoQueue: 'true' });
        await h.rejects(sendTo(explicitOnly, 'g', 'x'), 'InvalidParameterValue', /ContentBasedDeduplication/);
        await sendTo(explicitOnly, 'g', 'x', { MessageDeduplicationId: 'd-1', DelaySeconds: 0 });
        assert.equal((await h.counts(explicitOnly)).visible, 1);
      });

      it('delivers a group in order, several at once, and nothing more of it while any is in flight', async () => {
        const url = await fifoQueue();
        for (const body of ['a1', 'a2', 'a3']) await sendTo(url, 'a', body);
        await sendTo(url, 'b', 'b1');
        assert.deepEqual(bodies(await h.receive(url, { MaxNumberOfMessages: 1 })), ['a1']);
        const others = await h.receive(url);
        assert.deepEqual(bodies(others), ['b1'], 'group a is blocked by a1 in flight');
        assert.deepEqual(await h.receive(url), []);
        const [a1] = await h.receive(url, { ReceiveRequestAttemptId: 'never-used' });
        assert.equal(a1, undefined);
      });

      it('unblocks a group when its message is deleted or its visibility runs out', async () => {
        const url = await fifoQueue({ VisibilityTimeout: '30' });
        for (const body of ['a1', 'a2', 'a3']) await sendTo(url, 'a', body);
        const first = await h.receive(url, { MaxNumberOfMessages: 1 });
        await deleteAll(url, first);
        const rest = await h.receive(url);
        assert.deepEqual(bodies(rest), ['a2', 'a3'], 'one receive returns several of a group, in order');
        await h.clock.advance(31_000);
        const again = await h.receive(url);
        assert.deepEqual(bodies(again), ['a2', 'a3'], 'redelivered in the same order');
        assert.deepEqual(
          again.map((message) => message.Attributes?.ApproximateReceiveCount),
          ['2', '2'],
        );
        // Making the first visible again delivers it again; the second, still in flight, holds back nothing before it.
        await h.service.actions.ChangeMessageVisibility({
          QueueUrl: url,
          ReceiptHandle: again[0]!.ReceiptHandle,
          VisibilityTimeout: 0,
        });
        const third = await h.receive(url);
        assert.deepEqual(bodies(third), ['a2']);
        await deleteAll(url, [third[0]!, again[1]!]);
        assert.deepEqual(await h.receive(url), []);
      });

      it('holds a group back from its first message in flight on, not before it (SQS)', async () => {
        const url = await fifoQueue({ VisibilityTimeout: '30' });
        for (const body of ['a1', 'a2', 'a3']) await sendTo(url, 'a', body);
        const all = await h.receive(url);
        assert.deepEqual(bodies(all), ['a1', 'a2', 'a3']);
        await h.service.actions.ChangeMessageVisibility({
          QueueUrl: url,
          ReceiptHandle: all[1]!.ReceiptHandle,
          VisibilityTimeout: 60,
        });
        await h.clock.advance(29_999);
        assert.deepEqual(await h.receive(url), []);
        await h.clock.advance(1);
        // a1's own timeout lapsed: it is delivered again, the older before the newer; a3 waits behind a2.
        const again = await h.receive(url);
        assert.deepEqual(bodies(again), ['a1']);
        assert.equal(again[0]!.Attributes?.ApproximateReceiveCount, '2');
        await h.clock.advance(30_000);
        assert.deepEqual(bodies(await h.receive(url)), ['a1', 'a2', 'a3']);
      });

      it('refuses a delete whose visibility timeout lapsed, and takes one extended in time (SQS)', async () => {
        const url = await fifoQueue({ VisibilityTimeout: '10' });
        await sendTo(url, 'g', 'm');
        const [first] = await h.receive(url);
        await h.clock.advance(10_000);
        const expired = (handle: string) =>
          new RegExp(
            `^Value ${handle} for parameter ReceiptHandle is invalid\\. Reason: The receipt handle has expired\\.$`,
          );
        await h.rejects(
          h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: first!.ReceiptHandle }),
          'InvalidParameterValue',
          expired(first!.ReceiptHandle),
        );
        const [second] = await h.receive(url);
        // Superseded by the second receive: expired too, alone or in a batch.
        const batch = await h.service.actions.DeleteMessageBatch({
          QueueUrl: url,
          Entries: [{ Id: 'old', ReceiptHandle: first!.ReceiptHandle }],
        });
        assert.deepEqual(
          (batch.Failed ?? []).map((entry) => [entry.Id, entry.Code, entry.Message]),
          [
            [
              'old',
              'InvalidParameterValue',
              `Value ${first!.ReceiptHandle} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.`,
            ],
          ],
        );
        await h.service.actions.ChangeMessageVisibility({
          QueueUrl: url,
          ReceiptHandle: second!.ReceiptHandle,
          VisibilityTimeout: 20,
        });
        await h.clock.advance(15_000);
        await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: second!.ReceiptHandle });
        assert.deepEqual(await h.counts(url), { visible: 0, notVisible: 0, delayed: 0 });
      });

      it('unblocks every group a DeleteMessageBatch empties of in-flight messages, and only those', async () => {
        const url = await fifoQueue({ VisibilityTimeout: '30' });
        for (const group of ['a', 'b', 'c']) for (const n of [1, 2]) await sendTo(url, group, `${group}${n}`);
        const firsts = await h.receive(url, { MaxNumberOfMessages: 1 });
        const more = [
          ...(await h.receive(url, { MaxNumberOfMessages: 1 })),
          ...(await h.receive(url, { MaxNumberOfMessages: 1 })),
        ];
        const all = [...firsts, ...more];
        assert.deepEqual(bodies(all).sort(), ['a1', 'b1', 'c1']);
        const kept = all.find((message) => message.Body === 'c1')!;
        const output = await h.service.actions.DeleteMessageBatch({
          QueueUrl: url,
          Entries: all
            .filter((message) => message !== kept)
            .map((message, i) => ({ Id: `e${i}`, ReceiptHandle: message.ReceiptHandle })),
        });
        assert.equal((output.Successful ?? []).length, 2);
        assert.deepEqual(bodies(await h.receive(url)).sort(), ['a2', 'b2'], 'c stays blocked by c1');
      });

      it('serves the group whose oldest message has waited longest first', async () => {
        const url = await fifoQueue();
        await sendTo(url, 'late', 'l1');
        await h.clock.advance(1);
        await sendTo(url, 'early', 'e1');
        await h.clock.advance(1);
        await sendTo(url, 'late', 'l2');
        assert.deepEqual(bodies(await h.receive(url)), ['l1', 'l2', 'e1']);
      });

      it('returns sequence numbers that increase, and the group and deduplication ids, on receive', async () => {
        const url = await h.newQueue({ FifoQueue: 'true' });
        const sent = [];
        for (let i = 0; i < 3; i++) {
          sent.push(await sendTo(url, `g${i % 2}`, `m${i}`, { MessageDeduplicationId: `d${i}` }));
        }
        const numbers = sent.map((output) => BigInt(output.SequenceNumber!));
        assert.ok(numbers[0]! < numbers[1]! && numbers[1]! < numbers[2]!, 'strictly increasing');
        assert.ok(sent.every((output) => /^\d{20}$/.test(output.SequenceNumber!)));
        const received = await h.receive(url);
        const m0 = received.find((message) => message.Body === 'm0')!;
        assert.equal(m0.Attributes?.MessageGroupId, 'g0');
        assert.equal(m0.Attributes?.MessageDeduplicationId, 'd0');
        assert.equal(m0.Attributes?.SequenceNumber, sent[0]!.SequenceNumber);
      });

      it('accepts a duplicate within 5 minutes without enqueueing it, and returns the original ids', async () => {
        const url = await fifoQueue();
        const first = await sendTo(url, 'g', 'same body');
        await h.clock.advance(4 * 60_000);
        const duplicate = await sendTo(url, 'g', 'same body');
        assert.equal(duplicate.MessageId, first.MessageId);
        assert.equal(duplicate.SequenceNumber, first.SequenceNumber);
        const explicit = await sendTo(url, 'g', 'other body', { MessageDeduplicationId: 'k' });
        const explicitAgain = await sendTo(url, 'g', 'yet another body', { MessageDeduplicationId: 'k' });
        assert.equal(explicitAgain.MessageId, explicit.MessageId);
        assert.equal((await h.counts(url)).visible, 2);
        // Deleting the message does not end its deduplication window.
        const received = await h.receive(url);
        assert.equal(
          received[0]!.Attributes?.MessageDeduplicationId,
          createHash('sha256').update('same body').digest('hex'),
        );
        await deleteAll(url, received);
        assert.equal(
          (await sendTo(url, 'g', 'other body', { MessageDeduplicationId: 'k' })).MessageId,
          explicit.MessageId,
        );
        assert.equal((await h.counts(url)).visible, 0);
        await h.clock.advance(60_001);
        const afterWindow = await sendTo(url, 'g', 'same body');
        assert.notEqual(afterWindow.MessageId, first.MessageId);
        assert.equal((await h.counts(url)).visible, 1);
      });

      it('deduplicates per queue or per group, as DeduplicationScope says', async () => {
        const perQueue = await fifoQueue();
        await sendTo(perQueue, 'a', 'x');
        await sendTo(perQueue, 'b', 'x');
        assert.equal((await h.counts(perQueue)).visible, 1);
        const perGroup = await fifoQueue({ DeduplicationScope: 'messageGroup' });
        await sendTo(perGroup, 'a', 'x');
        await sendTo(perGroup, 'b', 'x');
        await sendTo(perGroup, 'b', 'x');
        assert.equal((await h.counts(perGroup)).visible, 2);
      });

      it('keeps deduplicating in the scope the queue was created with after DeduplicationScope changes (SQS)', async () => {
        const sendWithId = (url: string, group: string, body: string, id: string) =>
          sendTo(url, group, body, { MessageDeduplicationId: id });
        const highThroughput = {
          DeduplicationScope: 'messageGroup',
          FifoThroughputLimit: 'perMessageGroupId',
        };
        const toGroups = await h.newQueue({ FifoQueue: 'true' });
        const first = await sendWithId(toGroups, 'g1', 'one', 'd');
        await h.service.actions.SetQueueAttributes({ QueueUrl: toGroups, Attributes: highThroughput });
        // The id from before the switch still blocks another group, and so does one sent after it.
        assert.equal((await sendWithId(toGroups, 'g3', 'three', 'd')).MessageId, first.MessageId);
        const fresh = await sendWithId(toGroups, 'g4', 'four', 'd2');
        assert.equal((await sendWithId(toGroups, 'g5', 'five', 'd2')).MessageId, fresh.MessageId);
        assert.deepEqual(bodies(await h.receive(toGroups)).sort(), ['four', 'one']);
        // For the rest of the 5 minutes from the first send, not longer.
        await h.clock.advance(5 * 60_000);
        assert.notEqual((await sendWithId(toGroups, 'g3', 'three', 'd')).MessageId, first.MessageId);

        const toQueue = await h.newQueue({ FifoQueue: 'true', ...highThroughput });
        await sendWithId(toQueue, 'g1', 'one', 'd');
        await h.service.actions.SetQueueAttributes({
          QueueUrl: toQueue,
          Attributes: { DeduplicationScope: 'queue', FifoThroughputLimit: 'perQueue' },
        });
        await sendWithId(toQueue, 'g3', 'three', 'd');
        await sendWithId(toQueue, 'g3', 'three again', 'd');
        assert.deepEqual(bodies(await h.receive(toQueue)).sort(), ['one', 'three']);
        const { Attributes } = (await h.service.actions.GetQueueAttributes({
          QueueUrl: toQueue,
          AttributeNames: ['DeduplicationScope', 'FifoThroughputLimit'],
        })) as { Attributes: Record<string, string> };
        assert.deepEqual(Attributes, { DeduplicationScope: 'queue', FifoThroughputLimit: 'perQueue' });
      });

      it('sends batches with per-entry results, duplicates inside the batch included', async () => {
        const url = await h.newQueue({ FifoQueue: 'true' });
        const output = await h.service.actions.SendMessageBatch(
          {
            QueueUrl: url,
            Entries: [
              { Id: 'one', MessageBody: '1', MessageGroupId: 'g', MessageDeduplicationId: 'd1' },
              { Id: 'badgroup', MessageBody: '2', MessageGroupId: 'a b', MessageDeduplicationId: 'd2' },
              { Id: 'dup', MessageBody: '3', MessageGroupId: 'g', MessageDeduplicationId: 'd1' },
              { Id: 'two', MessageBody: '4', MessageGroupId: 'g', MessageDeduplicationId: 'd4' },
            ],
          },
          context,
        );
        assert.deepEqual(
          (output.Successful ?? []).map((entry) => entry.Id),
          ['one', 'dup', 'two'],
        );
        assert.deepEqual(
          (output.Failed ?? []).map((entry) => [entry.Id, entry.Code]),
          [['badgroup', 'InvalidParameterValue']],
        );
        const [one, dup, two] = output.Successful as unknown as Array<{
          MessageId: string;
          SequenceNumber: string;
        }>;
        assert.equal(dup!.MessageId, one!.MessageId);
        assert.ok(BigInt(two!.SequenceNumber!) > BigInt(one!.SequenceNumber!));
        assert.deepEqual(bodies(await h.receive(url)), ['1', '4']);
      });

      it('fails a whole batch with an entry missing its group, or its deduplication id where one is needed (SQS)', async () => {
        const url = await h.newQueue({ FifoQueue: 'true' });
        const batch = (...entries: Array<Record<string, string>>) =>
          h.service.actions.SendMessageBatch(
            {
              QueueUrl: url,
              Entries: entries.map((entry, i) => ({ Id: `e${i}`, MessageBody: `m${i}`, ...entry })),
            },
            context,
          );
        await h.rejects(
          batch({ MessageGroupId: 'g', MessageDeduplicationId: 'd1' }, { MessageDeduplicationId: 'd2' }),
          'InvalidParameterValue',
          /^The request must contain the parameter MessageGroupId\.$/,
        );
        await h.rejects(
          batch({ MessageGroupId: 'g', MessageDeduplicationId: 'd1' }, { MessageGroupId: 'g' }),
          'InvalidParameterValue',
          /^The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly$/,
        );
        assert.deepEqual(await h.counts(url), { visible: 0, notVisible: 0, delayed: 0 }, 'nothing was sent');
        const contentBased = await fifoQueue();
        const output = await h.service.actions.SendMessageBatch(
          { QueueUrl: contentBased, Entries: [{ Id: 'e', MessageBody: 'm', MessageGroupId: 'g' }] },
          context,
        );
        assert.deepEqual(
          (output.Successful ?? []).map((entry) => entry.Id),
          ['e'],
        );
      });

      it("gives a message sent with DelaySeconds 0 the queue's delay (SQS)", async () => {
        const url = await fifoQueue({ DelaySeconds: '10' });
        await sendTo(url, 'g', 'zero', { DelaySeconds: 0 });
        assert.deepEqual(await h.counts(url), { visible: 0, notVisible: 0, delayed: 1 });
        await h.clock.advance(9_999);
        assert.deepEqual(await h.receive(url), []);
        await h.clock.advance(1);
        assert.deepEqual(bodies(await h.receive(url)), ['zero']);
      });

      it('forgets the deduplication ids on PurgeQueue (SQS)', async () => {
        const url = await h.newQueue({ FifoQueue: 'true' });
        const first = await sendTo(url, 'g', 'message-1', { MessageDeduplicationId: 'd' });
        await h.service.actions.PurgeQueue({ QueueUrl: url });
        await h.clock.advance(1);
        const second = await sendTo(url, 'g', 'message-2', { MessageDeduplicationId: 'd' });
        assert.notEqual(second.MessageId, first.MessageId);
        assert.deepEqual(bodies(await h.receive(url)), ['message-2']);
      });

      it('answers a retried receive with the same attempt id with the same messages and handles', async () => {
        const url = await fifoQueue({ VisibilityTimeout: '30' });
        for (const body of ['a1', 'a2']) await sendTo(url, 'a', body);
        await sendTo(url, 'b', 'b1');
        const first = await h.receive(url, { ReceiveRequestAttemptId: 'attempt-1' });
        assert.deepEqual(bodies(first), ['a1', 'a2', 'b1']);
        await h.clock.advance(20_000);
        const retried = await h.receive(url, { ReceiveRequestAttemptId: 'attempt-1' });
        assert.deepEqual(
          retried.map((message) => message.ReceiptHandle),
          first.map((message) => message.ReceiptHandle),
        );
        assert.deepEqual(
          retried.map((message) => message.Attributes?.ApproximateReceiveCount),
          ['1', '1', '1'],
          'a retry is not another receive',
        );
        // The retry restarted the visibility timeout: 20 s later they are still in flight.
        await h.clock.advance(20_000);
        assert.equal((await h.counts(url)).notVisible, 3);
        await deleteAll(url, retried.slice(0, 1));
        assert.deepEqual(bodies(await h.receive(url, { ReceiveRequestAttemptId: 'attempt-1' })), [
          'a2',
          'b1',
        ]);
        // After 5 minutes the attempt id is forgotten: the same id is a new receive.
        await h.clock.advance(5 * 60_000);
        const fresh = await h.receive(url, { ReceiveRequestAttemptId: 'attempt-1' });
        assert.deepEqual(bodies(fresh), ['a2', 'b1']);
        assert.notEqual(fresh[0]!.ReceiptHandle, retried[1]!.ReceiptHandle);
        await h.rejects(h.receive(url, { ReceiveRequestAttemptId: 'bad id' }), 'InvalidParameterValue');
      });

      it("applies a change of the queue's delay to messages already waiting", async () => {
        const url = await fifoQueue({ DelaySeconds: '60' });
        await sendTo(url, 'g', 'late');
        assert.deepEqual(await h.counts(url), { visible: 0, notVisible: 0, delayed: 1 });
        await h.service.actions.SetQueueAttributes({ QueueUrl: url, Attributes: { DelaySeconds: '0' } });
        await deleteAll(url, await h.receive(url));
        await h.service.actions.SetQueueAttributes({ QueueUrl: url, Attributes: { DelaySeconds: '120' } });
        await sendTo(url, 'h', 'later');
        await h.clock.advance(60_000);
        await h.service.actions.SetQueueAttributes({ QueueUrl: url, Attributes: { DelaySeconds: '30' } });
        assert.deepEqual(
          bodies(await h.receive(url)),
          ['later'],
          'sent 60 s ago, the new 30 s delay has passed',
        );
      });

      it('wakes a long poll when a group it waits for is unblocked by a delete', async () => {
        const url = await fifoQueue();
        await sendTo(url, 'g', 'first');
        await sendTo(url, 'g', 'second');
        const [first] = await h.receive(url, { MaxNumberOfMessages: 1 });
        const waiting = h.receive(url, { WaitTimeSeconds: 20 });
        await h.clock.advance(1_000);
        await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: first!.ReceiptHandle });
        await h.clock.advance(0);
        assert.deepEqual(bodies(await waiting), ['second']);
      });

      it('moves a poison message to a FIFO dead-letter queue and lets its group go on', async () => {
        const dlq = await fifoQueue();
        const dlqArn = `arn:aws:sqs:us-east-1:000000000000:${dlq.split('/').at(-1)}`;
        const url = await fifoQueue({
          VisibilityTimeout: '10',
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
        });
        await sendTo(url, 'g', 'poison');
        await sendTo(url, 'g', 'next');
        assert.deepEqual(bodies(await h.receive(url, { MaxNumberOfMessages: 1 })), ['poison']);
        await h.clock.advance(11_000);
        assert.deepEqual(bodies(await h.receive(url)), ['next']);
        const [moved] = await h.receive(dlq);
        assert.equal(moved?.Body, 'poison');
        assert.equal(moved?.Attributes?.MessageGroupId, 'g');
        assert.equal(moved?.Attributes?.DeadLetterQueueSourceArn?.endsWith(url.split('/').at(-1)!), true);
        assert.equal(
          moved?.Attributes?.SentTimestamp,
          String(h.clock.now()),
          'a FIFO DLQ restarts the clock',
        );
      });

      it('frees a group when its messages are purged or expire', async () => {
        const url = await fifoQueue({ VisibilityTimeout: '600', MessageRetentionPeriod: '60' });
        await sendTo(url, 'g', 'old');
        await h.receive(url);
        await h.clock.advance(30_000);
        await sendTo(url, 'g', 'new');
        assert.deepEqual(await h.receive(url), []);
        await h.clock.advance(31_000);
        const sweeper = startRetentionSweeper(h.reads, (error) => assert.fail(String(error)), 1_000);
        await h.clock.advance(1_000);
        sweeper.stop();
        assert.deepEqual(
          bodies(await h.receive(url)),
          ['new'],
          'the expired in-flight message no longer blocks',
        );
        await sendTo(url, 'g', 'newer');
        await h.service.actions.PurgeQueue({ QueueUrl: url });
        await h.clock.advance(1);
        await sendTo(url, 'g', 'after purge');
        assert.deepEqual(bodies(await h.receive(url)), ['after purge']);
      });
    });

    describe('fair queues', () => {
      it('serves a quiet tenant promptly while a noisy one has a backlog of 100,000, and starves neither', async () => {
        const url = await h.newQueue();
        const batchOfA = (start: number) =>
          Array.from({ length: 10 }, (_, i) => ({
            Id: `n${i}`,
            MessageBody: `A${start + i}`,
            MessageGroupId: 'A',
          }));
        // Batches sent 100 at a time share commits, so the backlog fills in seconds.
        for (let start = 0; start < 100_000; start += 1_000) {
          await Promise.all(
            Array.from({ length: 100 }, (_, k) =>
              h.service.actions.SendMessageBatch(
                { QueueUrl: url, Entries: batchOfA(start + k * 10) },
                context,
              ),
            ),
          );
        }
        await h.clock.advance(1);
        for (let i = 0; i < 100; i++) await h.send(url, `B${i}`, { MessageGroupId: 'B' });
        await h.send(url, 'no tenant');
        const delivered: string[] = [];
        while (delivered.filter((body) => body.startsWith('B')).length < 100 && delivered.length < 2_200) {
          const messages = await h.receive(url);
          delivered.push(...bodies(messages));
          await deleteAll(url, messages);
        }
        const quietServedWithin = delivered.length;
        assert.ok(quietServedWithin <= 300, `B's 100 messages took ${quietServedWithin} deliveries`);
        const noisyServed = delivered.filter((body) => body.startsWith('A')).length;
        assert.ok(noisyServed >= 80, `A was starved: ${noisyServed} of ${quietServedWithin}`);
        assert.ok(delivered.includes('no tenant'), 'a message without a group id is served too');
        const tenantB = delivered.filter((body) => body.startsWith('B'));
        assert.equal(new Set(tenantB).size, 100);
        const first = await h.receive(url, { AttributeNames: ['MessageGroupId'] });
        assert.equal(first[0]?.Attributes?.MessageGroupId, 'A', 'the tenant comes back as MessageGroupId');
      });
    });
  });
}
