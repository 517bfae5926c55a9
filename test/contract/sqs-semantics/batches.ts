import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ContractService, context } from '../harness.ts';

/**
 * The store limits, and the batch actions: send, change visibility and delete. Part of the SQS semantics
 * suite (../sqs-semantics.ts).
 */
export function batchesSuite(h: ContractService): void {
  const { newQueue, send, receive, counts, rejects } = h;

  describe('store limits', () => {
    it('refuses a receive once maxInFlight messages are in flight, not counting delayed ones', async () => {
      const url = await newQueue();
      const queue = (await h.store.getQueue(url.split('/').at(-1)!))!;
      for (let i = 0; i < 4; i++) await send(url, `m${i}`);
      for (let i = 0; i < 5; i++) await send(url, `delayed${i}`, { DelaySeconds: 900 });
      const claim = (max: number) =>
        h.store.receiveMessages({
          queueId: queue.id,
          now: h.clock.now(),
          max,
          visibleUntil: h.clock.now() + 30_000,
          newReceiptToken: () => 'aaaaaaaaaaaaaaaa',
          maxInFlight: 3,
        });
      assert.equal((await claim(2)).messages.length, 2);
      const second = await claim(1);
      assert.equal(second.overLimit, false);
      assert.equal(second.messages.length, 1);
      // Three in flight, five delayed: the limit of three is reached by the in-flight ones alone.
      const third = await claim(1);
      assert.equal(third.overLimit, true);
      assert.equal(third.messages.length, 0);
      // Their visibility runs out: the limit frees, and receiving them again fills it again.
      await h.clock.advance(31_000);
      assert.equal((await claim(3)).messages.length, 3);
      assert.equal((await claim(1)).overLimit, true);
      await h.clock.advance(31_000);
      const again = await claim(1);
      assert.equal(again.overLimit, false);
      assert.equal(again.messages.length, 1);
    });
  });

  describe('batches', () => {
    it('sends a batch with per-entry results and checks batch rules', async () => {
      const url = await newQueue();
      const result = await h.service.actions.SendMessageBatch(
        {
          QueueUrl: url,
          Entries: [
            { Id: 'ok', MessageBody: 'fine' },
            { Id: 'bad', MessageBody: 'bad \u0001' },
          ],
        },
        context,
      );
      assert.deepEqual(
        (result.Successful ?? []).map((entry) => entry.Id),
        ['ok'],
      );
      assert.equal(result.Failed?.[0]?.Id, 'bad');
      assert.equal(result.Failed?.[0]?.Code, 'InvalidMessageContents');
      assert.equal(result.Failed?.[0]?.SenderFault, true);
      await rejects(
        h.service.actions.SendMessageBatch({ QueueUrl: url, Entries: [] }, context),
        'EmptyBatchRequest',
      );
      const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: `e${i}`, MessageBody: 'x' }));
      await rejects(
        h.service.actions.SendMessageBatch({ QueueUrl: url, Entries: eleven }, context),
        'TooManyEntriesInBatchRequest',
      );
      await rejects(
        h.service.actions.SendMessageBatch(
          {
            QueueUrl: url,
            Entries: [
              { Id: 'a', MessageBody: 'x' },
              { Id: 'a', MessageBody: 'y' },
            ],
          },
          context,
        ),
        'BatchEntryIdsNotDistinct',
      );
      await rejects(
        h.service.actions.SendMessageBatch(
          { QueueUrl: url, Entries: [{ Id: 'bad id', MessageBody: 'x' }] },
          context,
        ),
        'InvalidBatchEntryId',
      );
      const big = Array.from({ length: 2 }, (_, i) => ({ Id: `e${i}`, MessageBody: 'x'.repeat(600_000) }));
      await rejects(
        h.service.actions.SendMessageBatch({ QueueUrl: url, Entries: big }, context),
        'BatchRequestTooLong',
      );
    });

    it("fails an entry over the queue's MaximumMessageSize alone, and a batch over 1 MiB whole", async () => {
      const url = await newQueue({ MaximumMessageSize: '1024' });
      const result = await h.service.actions.SendMessageBatch(
        {
          QueueUrl: url,
          Entries: [
            { Id: 'big', MessageBody: 'x'.repeat(1025) },
            { Id: 'small', MessageBody: 'y' },
          ],
        },
        context,
      );
      assert.deepEqual(
        (result.Successful ?? []).map((entry) => entry.Id),
        ['small'],
      );
      assert.deepEqual(result.Failed, [
        {
          Id: 'big',
          SenderFault: true,
          Code: 'InvalidParameterValue',
          Message:
            'One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.',
        },
      ]);
      // The whole request is held to 1 MiB whatever the queue's maximum.
      await rejects(
        h.service.actions.SendMessageBatch(
          {
            QueueUrl: url,
            Entries: [
              { Id: 'a', MessageBody: 'x'.repeat(524_288) },
              { Id: 'b', MessageBody: 'x'.repeat(524_289) },
            ],
          },
          context,
        ),
        'BatchRequestTooLong',
        /^Batch requests cannot be longer than 1048576 bytes\. You have sent 1048577 bytes\.$/,
      );
      assert.deepEqual(await counts(url), { visible: 1, notVisible: 0, delayed: 0 });
    });

    it('deletes and changes visibility in batches with per-entry failures', async () => {
      const url = await newQueue();
      await h.service.actions.SendMessageBatch(
        {
          QueueUrl: url,
          Entries: Array.from({ length: 3 }, (_, i) => ({ Id: `e${i}`, MessageBody: `m${i}` })),
        },
        context,
      );
      const messages = await receive(url);
      const changed = await h.service.actions.ChangeMessageVisibilityBatch({
        QueueUrl: url,
        Entries: [
          { Id: 'a', ReceiptHandle: messages[0]!.ReceiptHandle, VisibilityTimeout: 0 },
          { Id: 'b', ReceiptHandle: 'garbage', VisibilityTimeout: 0 },
        ],
      });
      assert.deepEqual(
        (changed.Successful ?? []).map((entry) => entry.Id),
        ['a'],
      );
      assert.equal(changed.Failed?.[0]?.Code, 'ReceiptHandleIsInvalid');
      const deleted = await h.service.actions.DeleteMessageBatch({
        QueueUrl: url,
        Entries: messages.slice(1).map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })),
      });
      assert.equal((deleted.Successful ?? []).length, 2);
      assert.deepEqual(await counts(url), { visible: 1, notVisible: 0, delayed: 0 });
    });

    it('deletes a batch mixing valid, stale, repeated and invalid handles, each entry on its own', async () => {
      const url = await newQueue();
      for (const body of ['a', 'b', 'c']) await send(url, body);
      const first = await receive(url, { MaxNumberOfMessages: 3, VisibilityTimeout: 0 });
      const again = await receive(url, { MaxNumberOfMessages: 3, VisibilityTimeout: 30 });
      assert.equal(again.length, 3);
      const deleted = await h.service.actions.DeleteMessageBatch({
        QueueUrl: url,
        Entries: [
          { Id: 'stale', ReceiptHandle: first[0]!.ReceiptHandle },
          { Id: 'bad', ReceiptHandle: 'garbage' },
          { Id: 'x', ReceiptHandle: again[0]!.ReceiptHandle },
          { Id: 'y', ReceiptHandle: again[1]!.ReceiptHandle },
          { Id: 'y-again', ReceiptHandle: again[1]!.ReceiptHandle },
        ],
      });
      // The older handle deletes 'a' (SQS), so the latest one finds it gone: no error either. Only the
      // garbage one fails.
      assert.deepEqual(
        (deleted.Successful ?? []).map((entry) => entry.Id),
        ['stale', 'x', 'y', 'y-again'],
      );
      assert.deepEqual(
        (deleted.Failed ?? []).map((entry) => [entry.Id, entry.Code]),
        [['bad', 'ReceiptHandleIsInvalid']],
      );
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 1, delayed: 0 });
    });
  });

  describe('batched delete', () => {
    it("refuses another queue's handle in a batch, and counts each deleted message once", async () => {
      const url = await newQueue({ VisibilityTimeout: '60' });
      const other = await newQueue();
      for (const body of ['a', 'b', 'c', 'd']) await send(url, body);
      await send(other, 'elsewhere');
      const messages = await receive(url);
      const [foreign] = await receive(other);
      assert.equal(messages.length, 4);
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: messages[3]!.ReceiptHandle });
      const before = h.service.activity.totals(url.split('/').at(-1)!).deleted;
      const output = await h.service.actions.DeleteMessageBatch({
        QueueUrl: url,
        Entries: [
          { Id: 'first', ReceiptHandle: messages[0]!.ReceiptHandle },
          { Id: 'garbage', ReceiptHandle: 'garbage' },
          { Id: 'again', ReceiptHandle: messages[0]!.ReceiptHandle },
          { Id: 'second', ReceiptHandle: messages[1]!.ReceiptHandle },
          { Id: 'foreign', ReceiptHandle: foreign!.ReceiptHandle },
          { Id: 'stale', ReceiptHandle: messages[3]!.ReceiptHandle },
        ],
      });
      assert.deepEqual(
        (output.Successful ?? []).map((entry) => entry.Id),
        ['first', 'again', 'second', 'stale'],
      );
      assert.deepEqual(
        (output.Failed ?? []).map((entry) => [entry.Id, entry.Code, entry.SenderFault]),
        [
          ['garbage', 'ReceiptHandleIsInvalid', true],
          ['foreign', 'ReceiptHandleIsInvalid', true],
        ],
      );
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 1, delayed: 0 });
      assert.equal(h.service.activity.totals(url.split('/').at(-1)!).deleted - before, 2);
      assert.deepEqual(await counts(other), { visible: 0, notVisible: 1, delayed: 0 });
    });

    it('judges each receipt in the store by the rule the core chooses: any issued, the latest, the latest in flight', async () => {
      const url = await newQueue();
      for (const body of ['x', 'y', 'z', 'w']) await send(url, body);
      const queue = (await h.store.getQueue(url.split('/').at(-1)!))!;
      const claim = async (visibleForMs: number) =>
        (
          await h.store.receiveMessages({
            queueId: queue.id,
            now: h.clock.now(),
            max: 10,
            visibleUntil: h.clock.now() + visibleForMs,
            newReceiptToken: () => Math.random().toString(16).slice(2, 18).padEnd(16, '0'),
            maxInFlight: 1000,
          })
        ).messages;
      type Claimed = Awaited<ReturnType<typeof claim>>[number];
      const receipt = (m: Claimed | undefined) => ({
        seq: m!.seq,
        receiveCount: m!.receiveCount,
        receiptToken: m!.receiptToken!,
      });
      const check = (rule: 'anyIssued' | 'latest' | 'inFlight') => ({ rule, now: h.clock.now() });
      const [x1, , z1, w1] = await claim(0);
      const [x2, y2, z2] = await claim(60_000);
      assert.equal(x2!.receiptToken, x1!.receiptToken, 'a message keeps its token from its first receive');
      assert.deepEqual(
        await h.store.deleteMessages(
          queue.id,
          [
            { ...receipt(x2), receiptToken: 'not-its-token' },
            { ...receipt(x2), receiveCount: 3 },
          ],
          check('anyIssued'),
        ),
        ['invalid', 'invalid'],
        'never issued: another token, or a receive the message has not had',
      );
      assert.deepEqual(await h.store.deleteMessages(queue.id, [receipt(x1)], check('latest')), ['stale']);
      assert.deepEqual(await h.store.deleteMessages(queue.id, [receipt(x1)], check('inFlight')), ['stale']);
      assert.deepEqual(
        await h.store.deleteMessages(queue.id, [receipt(x1), receipt(x2), receipt(x1)], check('anyIssued')),
        ['deleted', 'missing', 'missing'],
        'a superseded handle deletes; the message is deleted once',
      );
      await h.clock.advance(60_000);
      assert.deepEqual(await h.store.deleteMessages(queue.id, [receipt(y2)], check('inFlight')), ['expired']);
      assert.equal(await h.store.deleteMessage(queue.id, receipt(y2), check('latest')), 'deleted');
      const change = (m: Claimed | undefined, rule: 'anyIssued' | 'latest' | 'inFlight') =>
        h.store.changeVisibility({
          queueId: queue.id,
          receipt: receipt(m),
          ...check(rule),
          visibleAt: h.clock.now() + 5_000,
          maxDeliveryMs: 43_200_000,
        });
      assert.equal(await change(z2, 'latest'), 'notInFlight', 'its timeout lapsed');
      assert.equal(await change(z1, 'latest'), 'stale');
      assert.equal(await change({ ...z2!, receiptToken: 'not-its-token' }, 'anyIssued'), 'invalid');
      assert.equal(await change(z1, 'anyIssued'), 'changed', 'lapsed and superseded, under anyIssued');
      assert.equal((await h.store.countMessages(queue.id, h.clock.now())).notVisible, 1);
      assert.equal(await change(x1, 'anyIssued'), 'missing');
      assert.deepEqual(
        await h.store.deleteMessages(
          queue.id,
          [{ ...receipt(w1), receiptToken: 'not-its-token' }, receipt(w1), receipt(w1)],
          check('anyIssued'),
        ),
        ['invalid', 'deleted', 'missing'],
        'a receipt refused before the one that deletes says why; one after finds the message gone',
      );
      assert.deepEqual(await h.store.deleteMessages(queue.id, [], check('anyIssued')), []);
    });
  });
}
