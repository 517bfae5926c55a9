import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  DeleteMessageBatchCommand,
  type SendMessageBatchCommandInput,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { Producer, type ProducerOptions, ProducerSendError } from 'sluice-client';
import { startToolkitServer, type ToolkitServer } from '../helpers/client-toolkit.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/** What the injected fault does to one SendMessageBatch call (numbered from 1). */
interface BatchFault {
  /** Entry Ids answered as failed on the service's side (SenderFault false) instead of being sent. */
  failIds?: string[];
  /** Thrown before the request leaves. */
  throwBefore?: Error;
  /** Thrown after the request reached the server: its answer is "lost". */
  throwAfter?: Error;
}

/** A throttling answer as the SDK raises it. */
function throttled(): Error {
  return Object.assign(new Error('Rate exceeded'), {
    name: 'ThrottlingException',
    $metadata: { httpStatusCode: 400 },
  });
}

/**
 * The producer against a really started Sluice through the real SDK. Its client records every
 * SendMessageBatch's entries and lets a test inject faults; retries' backoff runs on the FakeClock.
 */
describe('client producer', { concurrency: false, timeout: 120_000 }, () => {
  let t: ToolkitServer;
  before(async () => {
    t = await startToolkitServer();
  });
  after(async () => {
    await t?.close();
  });

  function producerFor(
    queueUrl: string,
    inject?: (call: number, entries: SendMessageBatchRequestEntry[]) => BatchFault | undefined,
    options: Partial<ProducerOptions> = {},
  ) {
    const batches: SendMessageBatchRequestEntry[][] = [];
    const client = sqsClient(t.sluice.endpoint);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'SendMessageBatchCommand') return next(args);
        const input = args.input as SendMessageBatchCommandInput;
        const entries = (input.Entries ?? []).map((entry) => ({ ...entry }));
        batches.push(entries);
        const fault = inject?.(batches.length, entries) ?? {};
        if (fault.throwBefore) throw fault.throwBefore;
        const failIds = new Set(fault.failIds ?? []);
        const kept = entries.filter((entry) => !failIds.has(entry.Id!));
        const result =
          kept.length > 0
            ? await next({ ...args, input: { ...input, Entries: kept } })
            : { output: { Successful: [], Failed: [], $metadata: {} }, response: {} };
        if (fault.throwAfter) throw fault.throwAfter;
        const output = result.output as SendMessageBatchCommandOutput;
        output.Failed = [
          ...(output.Failed ?? []),
          ...[...failIds].map((Id) => ({
            Id,
            SenderFault: false,
            Code: 'ServiceUnavailable',
            Message: 'injected',
          })),
        ];
        return result;
      },
      { step: 'initialize', name: 'injectBatchFaults' },
    );
    const producer = new Producer({ client, queueUrl, clock: t.clock, random: () => 1, ...options });
    return { producer, batches, client };
  }

  /** Moves the FakeClock (for batching waits and backoff) until `promise` settles. */
  async function settled<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
    let outcome: PromiseSettledResult<T> | undefined;
    void promise.then(
      (value) => {
        outcome = { status: 'fulfilled', value };
      },
      (reason: unknown) => {
        outcome = { status: 'rejected', reason };
      },
    );
    for (let i = 0; i < 2000 && !outcome; i++) {
      await t.clock.advance(10);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    assert.ok(outcome, 'settled');
    return outcome;
  }

  async function drain(queueUrl: string): Promise<string[]> {
    const bodies: string[] = [];
    for (;;) {
      const messages = await t.receiveNow(queueUrl);
      if (messages.length === 0) return bodies.sort();
      bodies.push(...messages.map((m) => m.Body!));
    }
  }

  const numbered = (n: number, prefix = 'm') =>
    Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);

  test('25 sends go out as batches of 10, 10 and 5, each send resolving with its MessageId', async () => {
    const queue = await t.createQueue('producer-batch');
    const { producer, batches, client } = producerFor(queue);
    const bodies = numbered(25);
    const ids = await settled(Promise.all(bodies.map((MessageBody) => producer.send({ MessageBody }))));
    assert.equal(ids.status, 'fulfilled');
    if (ids.status === 'fulfilled') assert.equal(new Set(ids.value).size, 25);
    assert.deepEqual(
      batches.map((b) => b.length),
      [10, 10, 5],
    );
    assert.deepEqual(await drain(queue), bodies);
    await producer.close();
    await assert.rejects(producer.send({ MessageBody: 'late' }), /closed/);
    client.destroy();
  });

  test('a lone message waits maxWaitMs for company, and flush() sends it at once', async () => {
    const queue = await t.createQueue('producer-wait');
    const { producer, batches, client } = producerFor(queue, undefined, { maxWaitMs: 50 });
    const first = producer.send({ MessageBody: 'a' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await t.clock.advance(49);
    assert.equal(batches.length, 0, 'still waiting at 49 ms');
    const second = producer.send({ MessageBody: 'b' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await t.clock.advance(1);
    assert.equal((await settled(Promise.all([first, second]))).status, 'fulfilled');
    assert.deepEqual(
      batches.map((b) => b.length),
      [2],
    );
    const third = producer.send({ MessageBody: 'c' });
    await producer.flush();
    assert.equal(typeof (await third), 'string');
    assert.deepEqual(
      batches.map((b) => b.length),
      [2, 1],
    );
    client.destroy();
  });

  test('flush() right after the first send() (queue settings not yet read) still sends it', async () => {
    const queue = await t.createQueue('producer-flush-first');
    const { producer, batches, client } = producerFor(queue, undefined, { maxWaitMs: 60_000 });
    const sent = producer.send({ MessageBody: 'first' });
    await producer.flush();
    assert.equal(batches.length, 1);
    assert.equal(typeof (await sent), 'string');
    client.destroy();
  });

  test('on a FIFO queue batches go one at a time, so a group keeps its order', async () => {
    const queue = await t.createQueue('producer-order', { FifoQueue: 'true' });
    let inFlight = 0;
    let peak = 0;
    const { producer, batches, client } = producerFor(queue, undefined, { maxBatchSize: 3 });
    client.middlewareStack.add(
      (next) => async (args) => {
        peak = Math.max(peak, ++inFlight);
        try {
          return await next(args);
        } finally {
          inFlight--;
        }
      },
      { step: 'finalizeRequest', name: 'countInFlight' },
    );
    const bodies = numbered(20, 'o');
    const sent = await settled(
      Promise.all(bodies.map((MessageBody) => producer.send({ MessageBody, MessageGroupId: 'g' }))),
    );
    assert.equal(sent.status, 'fulfilled');
    assert.equal(batches.length, 7);
    assert.equal(peak, 1, 'never two batches in flight on a FIFO queue');
    const received: string[] = [];
    for (;;) {
      const messages = await t.receiveNow(queue);
      if (messages.length === 0) break;
      received.push(...messages.map((m) => m.Body!));
      await t.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queue,
          Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
    assert.deepEqual(received, bodies, 'received in the order sent');
    client.destroy();
  });

  test('a queue that does not exist rejects each send() with the SDK error and sends nothing', async () => {
    const queue = `${await t.createQueue('producer-exists')}-missing`;
    const { producer, batches, client } = producerFor(queue);
    await assert.rejects(producer.send({ MessageBody: 'lost' }), /NonExistentQueue|does not exist/);
    await assert.rejects(producer.send({ MessageBody: 'lost' }), /NonExistentQueue|does not exist/);
    assert.equal(batches.length, 0);
    client.destroy();
  });

  test('a batch stays within 256 KiB: three 100 KiB messages go as 2 + 1', async () => {
    const queue = await t.createQueue('producer-bytes');
    const { producer, batches, client } = producerFor(queue);
    const big = (c: string) => c.repeat(100 * 1024);
    const sent = await settled(
      Promise.all(['x', 'y', 'z'].map((c) => producer.send({ MessageBody: big(c) }))),
    );
    assert.equal(sent.status, 'fulfilled');
    assert.deepEqual(
      batches.map((b) => b.length),
      [2, 1],
    );
    assert.equal((await drain(queue)).length, 3);
    client.destroy();
  });

  test('an invalid entry is rejected alone and never retried; the rest of its batch is sent', async () => {
    const queue = await t.createQueue('producer-invalid');
    const { producer, batches, client } = producerFor(queue);
    const sends = ['ok1', 'bad', 'ok2'].map((MessageBody) =>
      producer.send(MessageBody === 'bad' ? { MessageBody, DelaySeconds: 1000 } : { MessageBody }),
    );
    const [ok1, bad, ok2] = await Promise.all(sends.map((s) => settled(s)));
    assert.equal(ok1?.status, 'fulfilled');
    assert.equal(ok2?.status, 'fulfilled');
    assert.equal(bad?.status, 'rejected');
    if (bad?.status === 'rejected') {
      assert.ok(bad.reason instanceof ProducerSendError);
      assert.equal(bad.reason.senderFault, true);
      assert.equal(bad.reason.attempts, 1);
      assert.match(bad.reason.code, /InvalidParameterValue/);
    }
    assert.equal(batches.length, 1, 'no retry of a sender fault');
    assert.deepEqual(await drain(queue), ['ok1', 'ok2']);
    client.destroy();
  });

  test('on a FIFO queue only the failed entry is retried, with the MessageDeduplicationId it had', async () => {
    const queue = await t.createQueue('producer-retry', { FifoQueue: 'true' });
    const { producer, batches, client } = producerFor(queue, (call) =>
      call === 1 ? { failIds: ['2'] } : call === 2 ? { failIds: ['0'] } : undefined,
    );
    const bodies = numbered(5, 'f');
    const sent = await settled(
      Promise.all(bodies.map((MessageBody) => producer.send({ MessageBody, MessageGroupId: 'g' }))),
    );
    assert.equal(sent.status, 'fulfilled');
    assert.deepEqual(
      batches.map((b) => b.map((e) => e.MessageBody)),
      [bodies, ['f02'], ['f02']],
      'only the failed entry is retried (twice: the first retry failed too)',
    );
    const dedupIds = batches.map((b) => b.find((e) => e.MessageBody === 'f02')?.MessageDeduplicationId);
    assert.ok(dedupIds[0], 'generated: the queue has no content-based dedup');
    assert.equal(new Set(dedupIds).size, 1, 'same MessageDeduplicationId on every try');
    assert.equal(new Set(batches[0]!.map((e) => e.MessageDeduplicationId)).size, 5, 'one per message');
    assert.deepEqual(await drain(queue), bodies);
    client.destroy();
  });

  test('a FIFO batch whose answer was lost is retried whole and SQS dedup keeps one copy of each', async () => {
    const queue = await t.createQueue('producer-lost', { FifoQueue: 'true' });
    const lost = Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
    const { producer, batches, client } = producerFor(queue, (call) =>
      call === 1 ? { throwAfter: lost } : undefined,
    );
    const bodies = numbered(4, 'l');
    const sent = await settled(
      Promise.all(bodies.map((MessageBody) => producer.send({ MessageBody, MessageGroupId: 'g' }))),
    );
    assert.equal(sent.status, 'fulfilled');
    assert.equal(batches.length, 2);
    assert.deepEqual(
      batches[1]!.map((e) => e.MessageDeduplicationId),
      batches[0]!.map((e) => e.MessageDeduplicationId),
    );
    assert.deepEqual(await drain(queue), bodies, 'stored once although sent twice');
    client.destroy();
  });

  test('a content-based-dedup FIFO queue gets no generated MessageDeduplicationId', async () => {
    const queue = await t.createQueue('producer-cbd', {
      FifoQueue: 'true',
      ContentBasedDeduplication: 'true',
    });
    const { producer, batches, client } = producerFor(queue);
    const sent = await settled(
      Promise.all([
        producer.send({ MessageBody: 'same', MessageGroupId: 'g' }),
        producer.send({ MessageBody: 'same', MessageGroupId: 'g' }),
      ]),
    );
    assert.equal(sent.status, 'fulfilled');
    assert.deepEqual(
      batches[0]!.map((e) => e.MessageDeduplicationId),
      [undefined, undefined],
    );
    assert.deepEqual(await drain(queue), ['same'], 'SQS deduplicated the identical bodies');
    client.destroy();
  });

  test('a throttled request is retried with backoff until it passes, or rejected after maxAttempts', async () => {
    const queue = await t.createQueue('producer-throttle');
    const flaky = producerFor(queue, (call) => (call <= 2 ? { throwBefore: throttled() } : undefined));
    const startedAt = t.clock.now();
    const passed = await settled(flaky.producer.send({ MessageBody: 'eventually' }));
    assert.equal(passed.status, 'fulfilled');
    assert.equal(flaky.batches.length, 3);
    // 5 ms batching wait, then backoffs of 100 and 200 ms (random() = 1 takes the whole step).
    assert.ok(t.clock.now() - startedAt >= 305, `waited ${t.clock.now() - startedAt} ms of clock time`);
    flaky.client.destroy();

    const down = producerFor(queue, () => ({ throwBefore: throttled() }), { retry: { maxAttempts: 3 } });
    const failed = await settled(down.producer.send({ MessageBody: 'never' }));
    assert.equal(failed.status, 'rejected');
    if (failed.status === 'rejected') {
      assert.ok(failed.reason instanceof ProducerSendError);
      assert.equal(failed.reason.senderFault, false);
      assert.equal(failed.reason.attempts, 3);
      assert.equal(failed.reason.code, 'ThrottlingException');
    }
    assert.equal(down.batches.length, 3);
    down.client.destroy();

    const refused = producerFor(queue, () => ({
      throwBefore: Object.assign(new Error('bad request'), {
        name: 'InvalidParameterValue',
        $metadata: { httpStatusCode: 400 },
      }),
    }));
    const rejected = await settled(refused.producer.send({ MessageBody: 'refused' }));
    assert.equal(rejected.status, 'rejected');
    assert.equal(refused.batches.length, 1, 'a 4xx that is not throttling is not retried');
    refused.client.destroy();
    assert.deepEqual(await drain(queue), ['eventually']);
  });
});
