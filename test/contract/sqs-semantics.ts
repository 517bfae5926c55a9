import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { md5OfAttributes } from '../../packages/server/src/core/message-attributes.ts';
import { decodeReceiptHandle, encodeReceiptHandle } from '../../packages/server/src/core/receipt-handle.ts';
import { startRetentionSweeper } from '../../packages/server/src/core/retention.ts';
import { context, type ReceivedMessage, type StoreFactory, useContractService } from './harness.ts';

/**
 * The SQS rules, checked through the service against a real store with a fake clock. Every storage
 * backend runs this same suite (see the *.test.ts files beside it), so a rule holds on all of them.
 */
export function sqsSemanticsSuite(backend: string, factory: () => StoreFactory): void {
  describe(`SQS semantics on ${backend}`, () => {
    const h = useContractService(factory);
    const { newQueue, send, receive, counts, rejects } = h;

    describe('queues', () => {
      it('creates idempotently with equal attributes and refuses different ones', async () => {
        const url = await newQueue({ VisibilityTimeout: '60' });
        const name = url.split('/').at(-1)!;
        const again = await h.service.actions.CreateQueue(
          { QueueName: name, Attributes: { VisibilityTimeout: '60' } },
          context,
        );
        assert.equal(again.QueueUrl, url);
        await rejects(
          h.service.actions.CreateQueue(
            { QueueName: name, Attributes: { VisibilityTimeout: '61' } },
            context,
          ),
          'QueueNameExists',
        );
        assert.equal(url, `http://127.0.0.1:9324/000000000000/${name}`);
      });

      it('validates names and attribute values', async () => {
        await rejects(
          h.service.actions.CreateQueue({ QueueName: 'bad name' }, context),
          'InvalidParameterValue',
        );
        await rejects(
          h.service.actions.CreateQueue({ QueueName: 'x'.repeat(81) }, context),
          'InvalidParameterValue',
        );
        await rejects(
          h.service.actions.CreateQueue(
            { QueueName: 'ok', Attributes: { VisibilityTimeout: '43201' } },
            context,
          ),
          'InvalidAttributeValue',
        );
        await rejects(
          h.service.actions.CreateQueue({ QueueName: 'ok', Attributes: { NoSuchThing: '1' } }, context),
          'InvalidAttributeName',
        );
        await rejects(
          h.service.actions.CreateQueue(
            { QueueName: 'ok', Attributes: { ContentBasedDeduplication: 'true' } },
            context,
          ),
          'InvalidAttributeName',
        );
        await rejects(h.service.actions.CreateQueue({}, context), 'MissingParameter');
      });

      it('reports every attribute with SQS defaults and computed values', async () => {
        const url = await newQueue();
        const { Attributes } = (await h.service.actions.GetQueueAttributes({
          QueueUrl: url,
          AttributeNames: ['All'],
        })) as {
          Attributes: Record<string, string>;
        };
        assert.equal(Attributes.VisibilityTimeout, '30');
        assert.equal(Attributes.MaximumMessageSize, '1048576');
        assert.equal(Attributes.MessageRetentionPeriod, '345600');
        assert.equal(Attributes.DelaySeconds, '0');
        assert.equal(Attributes.ReceiveMessageWaitTimeSeconds, '0');
        assert.equal(Attributes.QueueArn, `arn:aws:sqs:us-east-1:000000000000:${url.split('/').at(-1)}`);
        assert.equal(Attributes.CreatedTimestamp, String(Math.floor(h.clock.now() / 1000)));
        assert.equal(Attributes.ApproximateNumberOfMessages, '0');
        assert.equal(Attributes.FifoQueue, undefined);
        const one = (await h.service.actions.GetQueueAttributes({
          QueueUrl: url,
          AttributeNames: ['VisibilityTimeout'],
        })) as {
          Attributes: Record<string, string>;
        };
        assert.deepEqual(one.Attributes, { VisibilityTimeout: '30' });
        await rejects(
          h.service.actions.GetQueueAttributes({ QueueUrl: url, AttributeNames: ['Nope'] }),
          'InvalidAttributeName',
        );
      });

      it('sets attributes and moves LastModifiedTimestamp', async () => {
        const url = await newQueue();
        await h.clock.advance(5_000);
        await h.service.actions.SetQueueAttributes({
          QueueUrl: url,
          Attributes: { VisibilityTimeout: '0045' },
        });
        const { Attributes } = (await h.service.actions.GetQueueAttributes({
          QueueUrl: url,
          AttributeNames: ['All'],
        })) as {
          Attributes: Record<string, string>;
        };
        assert.equal(Attributes.VisibilityTimeout, '45');
        assert.equal(Number(Attributes.LastModifiedTimestamp) - Number(Attributes.CreatedTimestamp), 5);
      });

      it('lists by prefix with pagination only when MaxResults is given', async () => {
        for (const name of ['list-a', 'list-b', 'list-c'])
          await h.service.actions.CreateQueue({ QueueName: name }, context);
        const all = await h.service.actions.ListQueues({ QueueNamePrefix: 'list-' }, context);
        assert.equal(all.QueueUrls?.length, 3);
        assert.equal(all.NextToken, undefined);
        const first = await h.service.actions.ListQueues(
          { QueueNamePrefix: 'list-', MaxResults: 2 },
          context,
        );
        assert.deepEqual(
          first.QueueUrls?.map((url) => url.split('/').at(-1)),
          ['list-a', 'list-b'],
        );
        assert.ok(first.NextToken);
        const second = await h.service.actions.ListQueues(
          { QueueNamePrefix: 'list-', MaxResults: 2, NextToken: first.NextToken },
          context,
        );
        assert.deepEqual(
          second.QueueUrls?.map((url) => url.split('/').at(-1)),
          ['list-c'],
        );
        assert.equal(second.NextToken, undefined);
        await rejects(
          h.service.actions.ListQueues({ NextToken: 'garbage' }, context),
          'InvalidParameterValue',
        );
      });

      it('resolves a queue by any host and by path, and refuses other accounts', async () => {
        const url = await newQueue();
        const name = url.split('/').at(-1)!;
        await send(`http://elsewhere:1234/000000000000/${name}`, 'x');
        await send(`/000000000000/${name}`, 'y');
        await rejects(send(`http://h/111111111111/${name}`, 'z'), 'QueueDoesNotExist');
        await rejects(send('http://h/000000000000/missing', 'z'), 'QueueDoesNotExist');
        const { QueueUrl } = await h.service.actions.GetQueueUrl({ QueueName: name }, context);
        assert.equal(QueueUrl, url);
        await rejects(h.service.actions.GetQueueUrl({ QueueName: 'missing' }, context), 'QueueDoesNotExist');
      });

      it('refuses to reuse a deleted name for 60 seconds', async () => {
        const url = await newQueue();
        const name = url.split('/').at(-1)!;
        await send(url, 'gone with the queue');
        await h.service.actions.DeleteQueue({ QueueUrl: url });
        await rejects(send(url, 'x'), 'QueueDoesNotExist');
        await rejects(h.service.actions.CreateQueue({ QueueName: name }, context), 'QueueDeletedRecently');
        await h.clock.advance(60_000);
        await h.service.actions.CreateQueue({ QueueName: name }, context);
        assert.equal((await counts(url)).visible, 0);
      });

      it('tags, untags and lists tags', async () => {
        const url = await newQueue();
        await h.service.actions.TagQueue({ QueueUrl: url, Tags: { team: 'a', env: 'test' } });
        await h.service.actions.UntagQueue({ QueueUrl: url, TagKeys: ['env'] });
        assert.deepEqual(await h.service.actions.ListQueueTags({ QueueUrl: url }), { Tags: { team: 'a' } });
        const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
        await rejects(h.service.actions.TagQueue({ QueueUrl: url, Tags: many }), 'InvalidParameterValue');
      });

      it('keeps permissions as the queue policy', async () => {
        const url = await newQueue();
        await h.service.actions.AddPermission({
          QueueUrl: url,
          Label: 'p1',
          AWSAccountIds: ['123456789012'],
          Actions: ['SendMessage'],
        });
        await rejects(
          h.service.actions.AddPermission({
            QueueUrl: url,
            Label: 'p1',
            AWSAccountIds: ['123456789012'],
            Actions: ['SendMessage'],
          }),
          'InvalidParameterValue',
        );
        const { Attributes } = (await h.service.actions.GetQueueAttributes({
          QueueUrl: url,
          AttributeNames: ['Policy'],
        })) as {
          Attributes: Record<string, string>;
        };
        const policy = JSON.parse(Attributes.Policy!) as {
          Statement: Array<{ Sid: string; Action: string }>;
        };
        assert.deepEqual(policy.Statement[0]?.Action, 'SQS:SendMessage');
        await h.service.actions.RemovePermission({ QueueUrl: url, Label: 'p1' });
        await rejects(
          h.service.actions.RemovePermission({ QueueUrl: url, Label: 'p1' }),
          'InvalidParameterValue',
        );
        const after = await h.service.actions.GetQueueAttributes({
          QueueUrl: url,
          AttributeNames: ['Policy'],
        });
        assert.deepEqual(after, {});
      });
    });

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
        const sent = await h.service.actions.SendMessage(
          { QueueUrl: url, MessageBody: 'from header' },
          traced,
        );
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
        assert.deepEqual(await h.store.deleteMessages(queue.id, [receipt(y2)], check('inFlight')), [
          'expired',
        ]);
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
  });
}
