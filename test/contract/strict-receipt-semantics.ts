import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createServerMetrics } from '../../packages/server/src/server/metrics.ts';
import { context, type StoreFactory, useContractService } from './harness.ts';

/** The queue the suite's settings leave as AWS has it, though the server-wide switch is on. */
const AWS_LIKE = 'aws-like';

/**
 * Strict receipt handles (`--strict-receipt-handles`, issue 26), through the service on a real store with a
 * fake clock: a handle acts only while it holds the message's lease, and the instant the lease ends is the
 * instant a receive may take the message, on every backend.
 */
export function strictReceiptSuite(backend: string, factory: () => StoreFactory): void {
  describe(`strict receipt handles on ${backend}`, () => {
    const h = useContractService(factory, {
      receiptHandles: { strict: true, strictQueues: new Map([[AWS_LIKE, false]]) },
    });
    const { newQueue, send, receive, counts, rejects } = h;
    const stale = (reason: 'superseded' | 'lapsed') =>
      new RegExp(
        `^The input receipt handle "[^"]+" is not a valid receipt handle\\. Reason: ${
          reason === 'superseded'
            ? 'the message was received again after this handle was issued'
            : 'its visibility timeout has lapsed'
        } \\(strict receipt handles\\)\\.$`,
      );
    /** The four actions that act through a handle, each with `handle`; what each answered. */
    const allFour = async (url: string, handle: string) => {
      const answer = async (call: Promise<unknown>) => {
        try {
          await call;
          return 'ok';
        } catch (error) {
          return (error as { code?: string }).code ?? String(error);
        }
      };
      const entry = { Id: 'e', ReceiptHandle: handle };
      const deleteBatch = await h.service.actions.DeleteMessageBatch({ QueueUrl: url, Entries: [entry] });
      const changeBatch = await h.service.actions.ChangeMessageVisibilityBatch({
        QueueUrl: url,
        Entries: [{ ...entry, VisibilityTimeout: 0 }],
      });
      return {
        DeleteMessage: await answer(
          h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: handle }),
        ),
        DeleteMessageBatch: deleteBatch.Failed?.[0]?.Code ?? 'ok',
        ChangeMessageVisibility: await answer(
          h.service.actions.ChangeMessageVisibility({
            QueueUrl: url,
            ReceiptHandle: handle,
            VisibilityTimeout: 0,
          }),
        ),
        ChangeMessageVisibilityBatch: changeBatch.Failed?.[0]?.Code ?? 'ok',
      };
    };
    const refusedByAll = {
      DeleteMessage: 'ReceiptHandleIsInvalid',
      DeleteMessageBatch: 'ReceiptHandleIsInvalid',
      ChangeMessageVisibility: 'ReceiptHandleIsInvalid',
      ChangeMessageVisibilityBatch: 'ReceiptHandleIsInvalid',
    };

    it('refuses a superseded handle in all four actions, and leaves the message with its new holder', async () => {
      const url = await newQueue({ VisibilityTimeout: '30' });
      await send(url, 'a');
      const [first] = await receive(url);
      await h.clock.advance(30_000);
      const [second] = await receive(url);
      assert.deepEqual(await allFour(url, first!.ReceiptHandle), refusedByAll);
      await rejects(
        h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: first!.ReceiptHandle }),
        'ReceiptHandleIsInvalid',
        stale('superseded'),
      );
      // None of them touched the message: still in flight for the second receive, until its own timeout.
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 1, delayed: 0 });
      await h.clock.advance(29_999);
      assert.deepEqual(await receive(url), []);
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: second!.ReceiptHandle });
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 0, delayed: 0 });
    });

    it('ends a lease at the instant the message may be received again, though no one has received it since', async () => {
      const url = await newQueue({ VisibilityTimeout: '30' });
      await send(url, 'a');
      const [message] = await receive(url);
      await h.clock.advance(29_999);
      await h.service.actions.ChangeMessageVisibility({
        QueueUrl: url,
        ReceiptHandle: message!.ReceiptHandle,
        VisibilityTimeout: 10,
      });
      await h.clock.advance(10_000);
      assert.deepEqual(await allFour(url, message!.ReceiptHandle), refusedByAll);
      await rejects(
        h.service.actions.ChangeMessageVisibility({
          QueueUrl: url,
          ReceiptHandle: message!.ReceiptHandle,
          VisibilityTimeout: 60,
        }),
        'ReceiptHandleIsInvalid',
        stale('lapsed'),
      );
      // Nothing was deleted or hidden again: the message is there for the next consumer.
      assert.deepEqual(await counts(url), { visible: 1, notVisible: 0, delayed: 0 });
      const [again] = await receive(url);
      assert.equal(again?.Attributes?.ApproximateReceiveCount, '2');
    });

    it('takes the latest handle while it holds the lease, and a message already deleted is still no error', async () => {
      const url = await newQueue({ VisibilityTimeout: '30' });
      for (const body of ['a', 'b']) await send(url, body);
      const [a, b] = await receive(url);
      await h.clock.advance(29_999);
      const changed = await h.service.actions.ChangeMessageVisibilityBatch({
        QueueUrl: url,
        Entries: [{ Id: 'b', ReceiptHandle: b!.ReceiptHandle, VisibilityTimeout: 5 }],
      });
      assert.deepEqual(changed, { Successful: [{ Id: 'b' }] });
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: a!.ReceiptHandle });
      await h.clock.advance(4_999);
      const deleted = await h.service.actions.DeleteMessageBatch({
        QueueUrl: url,
        Entries: [
          { Id: 'b', ReceiptHandle: b!.ReceiptHandle },
          { Id: 'a-again', ReceiptHandle: a!.ReceiptHandle },
        ],
      });
      assert.deepEqual(deleted, { Successful: [{ Id: 'b' }, { Id: 'a-again' }] });
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 0, delayed: 0 });
    });

    it('leaves a queue the config file sets non-strict, and FIFO queues, with the answers AWS gives', async () => {
      const { QueueUrl: url } = await h.service.actions.CreateQueue(
        { QueueName: AWS_LIKE, Attributes: { VisibilityTimeout: '30' } },
        context,
      );
      await send(url, 'a');
      const [first] = await receive(url);
      await h.clock.advance(30_000);
      await receive(url);
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: first!.ReceiptHandle });
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 0, delayed: 0 });

      const fifo = await newQueue({ FifoQueue: 'true', ContentBasedDeduplication: 'true' });
      await send(fifo, 'f', { MessageGroupId: 'g' });
      const [lapsed] = await receive(fifo);
      await h.clock.advance(30_000);
      await rejects(
        h.service.actions.DeleteMessage({ QueueUrl: fifo, ReceiptHandle: lapsed!.ReceiptHandle }),
        'InvalidParameterValue',
        /Reason: The receipt handle has expired\.$/,
      );
      await rejects(
        h.service.actions.ChangeMessageVisibility({
          QueueUrl: fifo,
          ReceiptHandle: lapsed!.ReceiptHandle,
          VisibilityTimeout: 5,
        }),
        'MessageNotInflight',
      );
    });

    it('counts refused stale handles per queue and action on /metrics, FIFO ones too, until the queue is deleted', async () => {
      let monotonic = 0;
      const metrics = createServerMetrics(
        h.service,
        async () => [],
        undefined,
        () => (monotonic += 1_000),
      );
      const url = await newQueue({ VisibilityTimeout: '30' });
      const name = url.split('/').at(-1)!;
      await send(url, 'a');
      const [first] = await receive(url);
      await h.clock.advance(30_000);
      await receive(url);
      await allFour(url, first!.ReceiptHandle);
      await allFour(url, first!.ReceiptHandle);
      await rejects(
        h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: 'not-a-handle' }),
        'ReceiptHandleIsInvalid',
      );
      const fifo = await newQueue({ FifoQueue: 'true', ContentBasedDeduplication: 'true' });
      const fifoName = fifo.split('/').at(-1)!;
      await send(fifo, 'f', { MessageGroupId: 'g' });
      const [lapsed] = await receive(fifo);
      await h.clock.advance(30_000);
      await h.service.actions.DeleteMessageBatch({
        QueueUrl: fifo,
        Entries: [{ Id: 'x', ReceiptHandle: lapsed!.ReceiptHandle }],
      });
      const refused = async () =>
        (await metrics.render())
          .split('\n')
          .filter((line) => line.startsWith('sluice_stale_receipt_handles_total{'))
          .filter((line) => line.includes(`"${name}"`) || line.includes(`"${fifoName}"`))
          .sort();
      assert.deepEqual(
        await refused(),
        [
          `sluice_stale_receipt_handles_total{queue="${name}",action="ChangeMessageVisibility"} 2`,
          `sluice_stale_receipt_handles_total{queue="${name}",action="ChangeMessageVisibilityBatch"} 2`,
          `sluice_stale_receipt_handles_total{queue="${name}",action="DeleteMessage"} 2`,
          `sluice_stale_receipt_handles_total{queue="${name}",action="DeleteMessageBatch"} 2`,
          `sluice_stale_receipt_handles_total{queue="${fifoName}",action="DeleteMessageBatch"} 1`,
        ].sort(),
      );
      await h.service.actions.DeleteQueue({ QueueUrl: url });
      await h.service.actions.DeleteQueue({ QueueUrl: fifo });
      assert.deepEqual(await refused(), []);
    });
  });
}
