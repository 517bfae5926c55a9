import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { md5OfAttributes } from '../../../packages/server/src/core/message-attributes.ts';
import {
  decodeReceiptHandle,
  encodeReceiptHandle,
} from '../../../packages/server/src/core/receipt-handle.ts';
import { startRetentionSweeper } from '../../../packages/server/src/core/retention.ts';
import { type ContractService, context } from '../harness.ts';

/**
 * Sending, receiving, visibility, delays, retention, purge and the dead-letter move of single messages. Part
 * of the SQS semantics suite (../sqs-semantics.ts).
 */
export function messagesSuite(h: ContractService): void {
  const { newQueue, send, receive, counts, rejects } = h;

  describe('messages', () => {
    it('sends and receives with correct digests and system attributes', async () => {
      const url = await newQueue();
      const attributes = {
        s: { DataType: 'String', StringValue: 'hello' },
        n: { DataType: 'Number', StringValue: '42.5' },
        b: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2, 255]).toString('base64') },
        j: { DataType: 'String.json', StringValue: '{"a":1}' },
      };
      const sent = await send(url, 'body \r\n ✓ 😀', { MessageAttributes: attributes });
      assert.equal(sent.MD5OfMessageBody, createHash('md5').update('body \r\n ✓ 😀', 'utf8').digest('hex'));
      assert.equal(sent.MD5OfMessageAttributes, md5OfAttributes(attributes));
      await h.clock.advance(1000);
      const [message] = await receive(url);
      assert.ok(message);
      assert.equal(message.Body, 'body \r\n ✓ 😀');
      assert.equal(message.MessageId, sent.MessageId);
      assert.equal(message.MD5OfBody, sent.MD5OfMessageBody);
      assert.equal(message.MD5OfMessageAttributes, sent.MD5OfMessageAttributes);
      assert.deepEqual(message.MessageAttributes, attributes);
      assert.equal(message.Attributes?.ApproximateReceiveCount, '1');
      assert.equal(message.Attributes?.SentTimestamp, String(h.clock.now() - 1000));
      assert.equal(message.Attributes?.ApproximateFirstReceiveTimestamp, String(h.clock.now()));
      assert.equal(message.Attributes?.SenderId, 'AKIDTEST');
    });

    it('filters message attributes by name and prefix, and system attributes by name', async () => {
      const url = await newQueue();
      await send(url, 'x', {
        MessageAttributes: {
          'order.id': { DataType: 'String', StringValue: '1' },
          'order.total': { DataType: 'Number', StringValue: '2' },
          other: { DataType: 'String', StringValue: '3' },
        },
        MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: 'Root=1-abc' } },
      });
      const [message] = await receive(url, {
        AttributeNames: undefined,
        MessageSystemAttributeNames: ['SentTimestamp', 'AWSTraceHeader'],
        MessageAttributeNames: ['order.*'],
      });
      assert.deepEqual(Object.keys(message!.Attributes ?? {}).sort(), ['AWSTraceHeader', 'SentTimestamp']);
      assert.equal(message!.Attributes?.AWSTraceHeader, 'Root=1-abc');
      assert.deepEqual(Object.keys(message!.MessageAttributes ?? {}).sort(), ['order.id', 'order.total']);
      assert.equal(
        message!.MD5OfMessageAttributes,
        md5OfAttributes({
          'order.id': { DataType: 'String', StringValue: '1' },
          'order.total': { DataType: 'Number', StringValue: '2' },
        }),
      );
    });

    it('selects every name starting with the prefix for Prefix.*, and every name for * (SQS)', async () => {
      const url = await newQueue();
      const attributes = {
        'Help.Me': { DataType: 'String', StringValue: 'Me' },
        Hello: { DataType: 'String', StringValue: 'There' },
        General: { DataType: 'String', StringValue: 'Kenobi' },
      };
      await send(url, 'msg', { MessageAttributes: attributes });
      const names = async (MessageAttributeNames: string[]) => {
        const [message] = await receive(url, { MessageAttributeNames, VisibilityTimeout: 0 });
        return Object.keys(message!.MessageAttributes ?? {}).sort();
      };
      assert.deepEqual(await names(['Hel.*']), ['Hello', 'Help.Me']);
      for (const all of [['*'], ['All'], ['.*']])
        assert.deepEqual(await names(all), ['General', 'Hello', 'Help.Me']);
      assert.deepEqual(await names(['Foo', 'Hello']), ['Hello']);
      assert.deepEqual(await names(['Help']), []);
    });

    it("words an empty String attribute as SQS does: 'must contain a non-empty value of type'", async () => {
      const url = await newQueue();
      await rejects(
        send(url, 'x', { MessageAttributes: { ErrorDetails: { DataType: 'String', StringValue: '' } } }),
        'InvalidParameterValue',
        /^Message \(user\) attribute 'ErrorDetails' must contain a non-empty value of type 'String'\.$/,
      );
    });

    it('words a parameter the queue type does not take with the final period, as SQS does', async () => {
      const url = await newQueue();
      await rejects(
        send(url, 'x', { MessageDeduplicationId: 'd' }),
        'InvalidParameterValue',
        /^Value d for parameter MessageDeduplicationId is invalid\. Reason: The request include parameter that is not valid for this queue type\.$/,
      );
    });

    it('refuses control characters in a String attribute value as InvalidParameterValue (SQS)', async () => {
      const url = await newQueue();
      // In a body the same characters are InvalidMessageContents.
      await rejects(
        send(url, 'x', {
          MessageAttributes: {
            attr1: { DataType: 'String', StringValue: `Invalid-${'\u0008'},${'\u000b'}` },
          },
        }),
        'InvalidParameterValue',
        /attr1.*Invalid characters found/,
      );
    });

    it('takes attribute names with letters of any script (SQS)', async () => {
      const url = await newQueue();
      const international = { 'attr.1øßä': { DataType: 'String', StringValue: 'Valida' } };
      const sent = await send(url, 'x', { MessageAttributes: international });
      assert.equal(sent.MD5OfMessageAttributes, md5OfAttributes(international));
      const [message] = await receive(url);
      assert.deepEqual(message!.MessageAttributes, international);
    });

    it('stores the request trace header as AWSTraceHeader, unless the message names its own', async () => {
      const url = await newQueue();
      const traced = { ...context, traceHeader: 'Root=1-3152b799-8954dae64eda91bc9a23a7e8;Sampled=1' };
      const sent = await h.service.actions.SendMessage({ QueueUrl: url, MessageBody: 'from header' }, traced);
      assert.equal(sent.MD5OfMessageSystemAttributes, undefined, 'the sender sent no system attribute');
      const own = { AWSTraceHeader: { DataType: 'String', StringValue: 'Root=1-own' } };
      await h.service.actions.SendMessage(
        { QueueUrl: url, MessageBody: 'own attribute', MessageSystemAttributes: own },
        traced,
      );
      await h.service.actions.SendMessageBatch(
        { QueueUrl: url, Entries: [{ Id: 'b', MessageBody: 'batch' }] },
        traced,
      );
      await send(url, 'untraced');
      const messages = await receive(url);
      assert.deepEqual(Object.fromEntries(messages.map((m) => [m.Body, m.Attributes?.AWSTraceHeader])), {
        'from header': traced.traceHeader,
        'own attribute': 'Root=1-own',
        batch: traced.traceHeader,
        untraced: undefined,
      });
    });

    it('rejects bodies and attributes SQS rejects', async () => {
      const url = await newQueue({ MaximumMessageSize: '1024' });
      await rejects(send(url, ''), 'MissingParameter');
      await rejects(send(url, 'bad \u0000 char'), 'InvalidMessageContents');
      await rejects(send(url, 'lone \uD800 surrogate'), 'InvalidMessageContents');
      await rejects(send(url, 'x'.repeat(1025)), 'InvalidParameterValue', /shorter than 1024 bytes/);
      await send(url, 'x'.repeat(1024));
      await rejects(
        send(url, 'x'.repeat(1000), {
          MessageAttributes: { a: { DataType: 'String', StringValue: 'y'.repeat(30) } },
        }),
        'InvalidParameterValue',
      );
      // A binary value counts its decoded bytes, padded or not: 1000 + 'b' + 'Binary' + 17 is the limit.
      for (const bytes of [17, 16]) {
        const value = Buffer.alloc(bytes, 7).toString('base64').replace(/=+$/, '');
        await send(url, 'x'.repeat(1000), {
          MessageAttributes: { b: { DataType: 'Binary', BinaryValue: value } },
        });
      }
      await rejects(
        send(url, 'x'.repeat(1000), {
          MessageAttributes: {
            b: { DataType: 'Binary', BinaryValue: Buffer.alloc(18).toString('base64') },
          },
        }),
        'InvalidParameterValue',
        /shorter than 1024 bytes/,
      );
      const eleven = Object.fromEntries(
        Array.from({ length: 11 }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: 'v' }]),
      );
      await rejects(send(url, 'x', { MessageAttributes: eleven }), 'InvalidParameterValue');
      for (const name of ['AWS.x', 'amazon.y', '.lead', 'trail.', 'a..b', 'sp ace']) {
        await rejects(
          send(url, 'x', { MessageAttributes: { [name]: { DataType: 'String', StringValue: 'v' } } }),
          'InvalidParameterValue',
        );
      }
      await rejects(
        send(url, 'x', { MessageAttributes: { a: { DataType: 'Number', StringValue: 'abc' } } }),
        'InvalidParameterValue',
      );
      await rejects(
        send(url, 'x', { MessageAttributes: { a: { DataType: 'Float', StringValue: '1' } } }),
        'InvalidParameterValue',
      );
      await rejects(
        send(url, 'x', { MessageAttributes: { a: { DataType: 'String', StringValue: '' } } }),
        'InvalidParameterValue',
      );
      await rejects(send(url, 'x', { DelaySeconds: 901 }), 'InvalidParameterValue');
      // A group id names a fair-queue tenant on a standard queue; a deduplication id is FIFO's alone.
      await rejects(send(url, 'x', { MessageDeduplicationId: 'd' }), 'InvalidParameterValue');
      await rejects(send(url, 'x', { MessageGroupId: 'a b' }), 'InvalidParameterValue');
      await rejects(send(url, 'x', { MessageGroupId: 'g'.repeat(129) }), 'InvalidParameterValue');
    });

    it('hides a received message for the visibility timeout, then redelivers it with a new handle', async () => {
      const url = await newQueue({ VisibilityTimeout: '30' });
      await send(url, 'a');
      const [first] = await receive(url);
      assert.equal((await receive(url)).length, 0);
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 1, delayed: 0 });
      await h.clock.advance(29_999);
      assert.equal((await receive(url)).length, 0);
      await h.clock.advance(1);
      const [second] = await receive(url);
      assert.ok(second && first);
      assert.notEqual(second.ReceiptHandle, first.ReceiptHandle);
      assert.equal(second.Attributes?.ApproximateReceiveCount, '2');
      assert.equal(
        second.Attributes?.ApproximateFirstReceiveTimestamp,
        first.Attributes?.ApproximateFirstReceiveTimestamp,
      );
    });

    it('lets the receive override the visibility timeout', async () => {
      const url = await newQueue({ VisibilityTimeout: '30' });
      await send(url, 'a');
      await receive(url, { VisibilityTimeout: 5 });
      await h.clock.advance(5_000);
      assert.equal((await receive(url)).length, 1);
    });

    it('deletes with any handle issued for a message that still exists, a superseded one too (SQS)', async () => {
      const url = await newQueue({ VisibilityTimeout: '10' });
      await send(url, 'a');
      const [first] = await receive(url);
      await h.clock.advance(10_000);
      const [second] = await receive(url);
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: first!.ReceiptHandle });
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 0, delayed: 0 });
      // Deleting again, with either handle, is not an error either.
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: second!.ReceiptHandle });
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: first!.ReceiptHandle });
      await rejects(
        h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: 'not-a-handle' }),
        'ReceiptHandleIsInvalid',
      );
      await rejects(h.service.actions.DeleteMessage({ QueueUrl: url }), 'MissingParameter');
      const other = await newQueue();
      await rejects(
        h.service.actions.DeleteMessage({ QueueUrl: other, ReceiptHandle: second!.ReceiptHandle }),
        'ReceiptHandleIsInvalid',
      );
    });

    it('refuses a handle of a live message that Sluice never issued', async () => {
      const url = await newQueue({ VisibilityTimeout: '10' });
      await send(url, 'a');
      const [message] = await receive(url);
      const issued = decodeReceiptHandle(message!.ReceiptHandle);
      const forged = [
        encodeReceiptHandle({
          ...issued,
          token: issued.token === 'f'.repeat(16) ? '0'.repeat(16) : 'f'.repeat(16),
        }),
        encodeReceiptHandle({ ...issued, receiveCount: issued.receiveCount + 1 }),
      ];
      for (const handle of forged) {
        await rejects(
          h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: handle }),
          'ReceiptHandleIsInvalid',
        );
        await rejects(
          h.service.actions.ChangeMessageVisibility({
            QueueUrl: url,
            ReceiptHandle: handle,
            VisibilityTimeout: 0,
          }),
          'ReceiptHandleIsInvalid',
        );
      }
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 1, delayed: 0 });
    });

    it('changes visibility with a lapsed or superseded handle, alone and in a batch (SQS standard queues)', async () => {
      const url = await newQueue({ VisibilityTimeout: '30' });
      await send(url, 'a');
      const [first] = await receive(url);
      await h.clock.advance(30_000);
      // Its timeout lapsed: the new one still applies, counted from the call, and hides the message again.
      await h.service.actions.ChangeMessageVisibility({
        QueueUrl: url,
        ReceiptHandle: first!.ReceiptHandle,
        VisibilityTimeout: 60,
      });
      assert.deepEqual(await counts(url), { visible: 0, notVisible: 1, delayed: 0 });
      await h.clock.advance(59_999);
      assert.deepEqual(await receive(url), []);
      await h.clock.advance(1);
      const [second] = await receive(url);
      assert.equal(second?.Attributes?.ApproximateReceiveCount, '2');
      // The first handle is superseded now; it still makes the message visible, in a batch too.
      const changed = await h.service.actions.ChangeMessageVisibilityBatch({
        QueueUrl: url,
        Entries: [{ Id: 'old', ReceiptHandle: first!.ReceiptHandle, VisibilityTimeout: 0 }],
      });
      assert.deepEqual(changed, { Successful: [{ Id: 'old' }] });
      const [third] = await receive(url);
      assert.equal(third?.Attributes?.ApproximateReceiveCount, '3');
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: third!.ReceiptHandle });
      // Only a message that no longer exists refuses the change.
      for (const handle of [first!.ReceiptHandle, third!.ReceiptHandle]) {
        await rejects(
          h.service.actions.ChangeMessageVisibility({
            QueueUrl: url,
            ReceiptHandle: handle,
            VisibilityTimeout: 10,
          }),
          'InvalidParameterValue',
          new RegExp(
            `^Value ${handle} for parameter ReceiptHandle is invalid\\. Reason: Message does not exist or is not available for visibility timeout change\\.$`,
          ),
        );
      }
    });

    it('changes visibility from the call, to 0 at once, and restarts at the queue default on redelivery', async () => {
      const url = await newQueue({ VisibilityTimeout: '30' });
      await send(url, 'a');
      const [message] = await receive(url);
      await h.clock.advance(20_000);
      await h.service.actions.ChangeMessageVisibility({
        QueueUrl: url,
        ReceiptHandle: message!.ReceiptHandle,
        VisibilityTimeout: 100,
      });
      await h.clock.advance(99_999);
      assert.equal((await receive(url)).length, 0);
      await h.clock.advance(1);
      const [again] = await receive(url);
      assert.ok(again);
      // This delivery uses the queue default (30 s), not the 100 s of the last one.
      await h.clock.advance(30_000);
      const [third] = await receive(url);
      assert.ok(third);
      await h.service.actions.ChangeMessageVisibility({
        QueueUrl: url,
        ReceiptHandle: third.ReceiptHandle,
        VisibilityTimeout: 0,
      });
      assert.equal((await receive(url)).length, 1);
    });

    it('refuses visibility changes that SQS refuses', async () => {
      const url = await newQueue({ VisibilityTimeout: '30' });
      await send(url, 'a');
      const [again] = await receive(url, { VisibilityTimeout: 43_200 });
      await h.clock.advance(3_600_000 * 11);
      await rejects(
        h.service.actions.ChangeMessageVisibility({
          QueueUrl: url,
          ReceiptHandle: again!.ReceiptHandle,
          VisibilityTimeout: 3_601,
        }),
        'InvalidParameterValue',
        /beyond the limit \[43200 seconds\]/,
      );
      await h.service.actions.ChangeMessageVisibility({
        QueueUrl: url,
        ReceiptHandle: again!.ReceiptHandle,
        VisibilityTimeout: 3_600,
      });
      await rejects(
        h.service.actions.ChangeMessageVisibility({
          QueueUrl: url,
          ReceiptHandle: again!.ReceiptHandle,
          VisibilityTimeout: 43_201,
        }),
        'InvalidParameterValue',
      );
      await rejects(
        h.service.actions.ChangeMessageVisibility({ QueueUrl: url, ReceiptHandle: again!.ReceiptHandle }),
        'MissingParameter',
      );
    });

    it('delays messages by the queue default or the message value, and counts them as delayed', async () => {
      const url = await newQueue({ DelaySeconds: '10' });
      await send(url, 'queue delay');
      await send(url, 'own delay', { DelaySeconds: 0 });
      await send(url, 'longer', { DelaySeconds: 60 });
      assert.deepEqual(await counts(url), { visible: 1, notVisible: 0, delayed: 2 });
      assert.deepEqual(
        (await receive(url, { VisibilityTimeout: 0 })).map((m) => m.Body),
        ['own delay'],
      );
      // Changing the queue delay leaves waiting messages as they were (standard queues).
      await h.service.actions.SetQueueAttributes({ QueueUrl: url, Attributes: { DelaySeconds: '0' } });
      await h.clock.advance(10_000);
      assert.deepEqual((await receive(url, { VisibilityTimeout: 0 })).map((m) => m.Body).sort(), [
        'own delay',
        'queue delay',
      ]);
      await h.clock.advance(50_000);
      assert.equal((await receive(url)).length, 3);
    });

    it('never delivers a message past its retention period and reclaims it', async () => {
      const url = await newQueue({ MessageRetentionPeriod: '60' });
      await send(url, 'short-lived');
      await h.clock.advance(59_999);
      assert.equal((await counts(url)).visible, 1);
      await h.clock.advance(1);
      assert.equal((await receive(url)).length, 0);
      assert.equal((await counts(url)).visible, 0);
      assert.ok((await h.store.deleteExpired(h.clock.now(), 1000)) >= 1);
    });

    it('sweeps expired messages away on its own, on the clock', async () => {
      const url = await newQueue({ MessageRetentionPeriod: '60' });
      const queue = (await h.store.getQueue(url.split('/').at(-1)!))!;
      await send(url, 'expires');
      // Counted as of time 0, every stored row shows up (as delayed), expired or not.
      const storedRows = async () => {
        const counts = await h.store.countMessages(queue.id, 0);
        return counts.visible + counts.notVisible + counts.delayed;
      };
      const sweeper = startRetentionSweeper(h.reads, (error) => assert.fail(String(error)), 10_000);
      try {
        await h.clock.advance(59_999);
        assert.equal(await storedRows(), 1, 'still stored before expiry');
        await h.clock.advance(10_001);
        assert.equal(await storedRows(), 0);
      } finally {
        sweeper.stop();
      }
    });

    it('purges once per 60 seconds, keeping messages sent after the purge', async () => {
      const url = await newQueue();
      await send(url, 'a');
      await send(url, 'b');
      await h.service.actions.PurgeQueue({ QueueUrl: url });
      await rejects(h.service.actions.PurgeQueue({ QueueUrl: url }), 'PurgeQueueInProgress');
      await h.clock.advance(1);
      await send(url, 'after');
      assert.deepEqual(
        (await receive(url)).map((m) => m.Body),
        ['after'],
      );
      await h.clock.advance(60_000);
      await h.service.actions.PurgeQueue({ QueueUrl: url });
    });

    it('validates receive parameters', async () => {
      const url = await newQueue();
      await rejects(receive(url, { MaxNumberOfMessages: 11 }), 'InvalidParameterValue');
      await rejects(receive(url, { MaxNumberOfMessages: 0 }), 'InvalidParameterValue');
      await rejects(receive(url, { WaitTimeSeconds: 21 }), 'InvalidParameterValue');
      await rejects(receive(url, { VisibilityTimeout: 43_201 }), 'InvalidParameterValue');
    });

    it('returns up to MaxNumberOfMessages, oldest first', async () => {
      const url = await newQueue();
      for (let i = 0; i < 15; i++) await send(url, `m${i}`);
      const first = await receive(url);
      assert.equal(first.length, 10);
      assert.deepEqual(
        first.map((m) => m.Body),
        Array.from({ length: 10 }, (_, i) => `m${i}`),
      );
      assert.equal((await receive(url)).length, 5);
      assert.equal((await receive(url, { MaxNumberOfMessages: undefined })).length, 0);
    });

    it('does not return one message twice in a receive with visibility timeout 0', async () => {
      const url = await newQueue();
      await send(url, 'only');
      const messages = await receive(url, { VisibilityTimeout: 0 });
      assert.equal(messages.length, 1);
    });

    it('moves a message received maxReceiveCount times to the dead-letter queue on the next receive', async () => {
      const dlq = await newQueue({ MessageRetentionPeriod: '1209600' });
      const dlqArn = `arn:aws:sqs:us-east-1:000000000000:${dlq.split('/').at(-1)}`;
      const source = await newQueue({
        VisibilityTimeout: '10',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
      });
      const sent = await send(source, 'poison');
      for (let receiveCount = 1; receiveCount <= 2; receiveCount++) {
        const [got] = await receive(source);
        assert.equal(got?.Attributes?.ApproximateReceiveCount, String(receiveCount));
        await h.clock.advance(10_000);
      }
      assert.deepEqual(await receive(source), []);
      assert.deepEqual(await counts(source), { visible: 0, notVisible: 0, delayed: 0 });
      const [dead] = await receive(dlq);
      assert.equal(dead?.MessageId, sent.MessageId);
      assert.equal(dead?.Body, 'poison');
      assert.equal(
        dead?.Attributes?.DeadLetterQueueSourceArn,
        `arn:aws:sqs:us-east-1:000000000000:${source.split('/').at(-1)}`,
      );
      const listed = await h.service.actions.ListDeadLetterSourceQueues({ QueueUrl: dlq }, context);
      assert.deepEqual(listed.queueUrls, [source]);
    });

    it('refuses a redrive policy naming a missing queue or an invalid count', async () => {
      await rejects(
        newQueue({
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:nope',
            maxReceiveCount: 2,
          }),
        }),
        'InvalidParameterValue',
      );
      const dlq = await newQueue();
      const arn = `arn:aws:sqs:us-east-1:000000000000:${dlq.split('/').at(-1)}`;
      await rejects(
        newQueue({ RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: 0 }) }),
        'InvalidParameterValue',
      );
      await rejects(newQueue({ RedrivePolicy: '{not json' }), 'InvalidParameterValue');
      await newQueue({ RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: '5' }) });
    });
  });
}
