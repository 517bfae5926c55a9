import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CreateEventSourceMappingCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { eventually } from '../helpers/client-toolkit.ts';
import { ACCOUNT, type Backend, describeMappings, REGION } from '../helpers/event-source-mappings.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * Lambda event source mappings delivering, against a really started server (test mode, so time rules move
 * with the clock) and a real HTTP function served over the Invoke API: polling and the SQS event, batching
 * windows, failures and partial batch responses, and malformed batch responses.
 */

describeMappings((m) => {
  const {
    queue,
    counts,
    bodiesOf,
    isEmpty,
    SLOW_SERVERS_FUNCTIONS,
    metricsText,
    answersTaken,
    advanceUntil,
    create,
    sendAll,
    receiveCountsOf,
    failures,
  } = m;

  describe('event source mappings: polling', () => {
    it("invokes the function with AWS's SQS event and deletes the batch it processed", async () => {
      const q = await queue();
      await m.sqs.send(
        new SendMessageCommand({
          QueueUrl: q.url,
          MessageBody: '{"hello": "world"}',
          MessageAttributes: {
            colour: { DataType: 'String', StringValue: 'blue' },
            bytes: { DataType: 'Binary', BinaryValue: Buffer.from('xyz') },
          },
        }),
      );
      await m.lambda.send(
        new CreateEventSourceMappingCommand({ EventSourceArn: q.arn, FunctionName: 'shape-fn' }),
      );
      await eventually(() => bodiesOf('shape-fn').length === 1, 'the invocation');
      const record = m.fn.invocations.find((invocation) => invocation.functionName === 'shape-fn')!.event
        .Records[0]!;
      assert.equal(record.body, '{"hello": "world"}');
      assert.equal(record.eventSource, 'aws:sqs');
      assert.equal(record.eventSourceARN, q.arn);
      assert.equal(record.awsRegion, REGION);
      assert.match(record.messageId, /^[0-9a-f-]{36}$/);
      assert.ok(record.receiptHandle.length > 0);
      assert.equal(record.md5OfBody, createHash('md5').update('{"hello": "world"}').digest('hex'));
      assert.match(record.md5OfMessageAttributes ?? '', /^[0-9a-f]{32}$/);
      assert.equal(record.attributes.ApproximateReceiveCount, '1');
      assert.match(record.attributes.SentTimestamp, /^\d{13}$/);
      assert.match(record.attributes.ApproximateFirstReceiveTimestamp, /^\d{13}$/);
      assert.equal(typeof record.attributes.SenderId, 'string');
      assert.deepEqual(record.messageAttributes.colour, {
        stringValue: 'blue',
        stringListValues: [],
        binaryListValues: [],
        dataType: 'String',
      });
      assert.deepEqual(record.messageAttributes.bytes, {
        binaryValue: Buffer.from('xyz').toString('base64'),
        stringListValues: [],
        binaryListValues: [],
        dataType: 'Binary',
      });
      await eventually(() => isEmpty(q.url), 'the processed message deleted');
      await eventually(async () => {
        const metrics = await (await fetch(`${m.server.endpoint}/metrics`)).text();
        return (
          /sluice_lambda_invocations_total\{mapping="[0-9a-f-]+",function="shape-fn",result="success"\} 1/.test(
            metrics,
          ) &&
          /sluice_lambda_batch_size_sum\{mapping="[0-9a-f-]+",function="shape-fn"\} 1/.test(metrics) &&
          /sluice_lambda_duration_seconds_count\{mapping="[0-9a-f-]+",function="shape-fn"\} 1/.test(
            metrics,
          ) &&
          /sluice_lambda_records_total\{mapping="[0-9a-f-]+",function="shape-fn"\} 1/.test(metrics)
        );
      }, 'the invocation in /metrics');
    });
  });

  describe('event source mappings: batches and failures', () => {
    it('fills a batch from several receives within the batching window, on the test clock', async () => {
      // Long enough for the records to stay in flight through two steps of the clock (see below).
      const q = await queue({ VisibilityTimeout: '300' });
      await sendAll(q.url, ['w1', 'w2', 'w3']);
      await create({
        EventSourceArn: q.arn,
        FunctionName: 'window-fn',
        BatchSize: 50,
        MaximumBatchingWindowInSeconds: 60,
      });
      // The window (60 s on the server's clock) is open: what is sent now joins the same batch.
      await eventually(async () => (await counts(q.url)).inFlight === 3, 'the first records received');
      await sendAll(q.url, ['w4', 'w5']);
      await eventually(async () => (await counts(q.url)).inFlight === 5, 'the later records received');
      assert.equal(bodiesOf('window-fn').length, 0);
      // A step may take a second: the poller's next long poll within the window may start during the first
      // (on PostgreSQL its receive is real I/O, which the step does not wait for), timed from a moment the
      // step passed through, so its end is still ahead.
      await advanceUntil(
        61,
        () => bodiesOf('window-fn').length === 1,
        'the invocation at the end of the window',
      );
      assert.equal(bodiesOf('window-fn').length, 1);
      assert.deepEqual(bodiesOf('window-fn')[0]!.sort(), ['w1', 'w2', 'w3', 'w4', 'w5']);
      await eventually(() => isEmpty(q.url), 'the batch deleted');
    });

    it('sends up to BatchSize records per invocation', async () => {
      const q = await queue();
      await sendAll(
        q.url,
        Array.from({ length: 25 }, (_, index) => `b${index}`),
      );
      await create({
        EventSourceArn: q.arn,
        FunctionName: 'size-fn',
        BatchSize: 4,
        ScalingConfig: { MaximumConcurrency: 2 },
      });
      await eventually(() => bodiesOf('size-fn').flat().length === 25, 'all 25 records invoked');
      assert.ok(bodiesOf('size-fn').every((batch) => batch.length >= 1 && batch.length <= 4));
      await eventually(() => isEmpty(q.url), 'every batch deleted');
    });

    it('leaves only the reported batch item failures, which reach the DLQ past maxReceiveCount', async () => {
      const dlq = await queue();
      const q = await queue({
        VisibilityTimeout: '30',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 2 }),
      });
      m.fn.behave('partial-fn', ({ event }) =>
        failures(event.Records.filter((record) => record.body === 'bad').map((record) => record.messageId)),
      );
      await sendAll(q.url, ['good1', 'bad', 'good2']);
      await create({
        EventSourceArn: q.arn,
        FunctionName: 'partial-fn',
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      await eventually(
        async () => bodiesOf('partial-fn').length === 1 && (await counts(q.url)).inFlight === 1,
        'the good records deleted',
      );
      assert.deepEqual((await counts(q.url)).visible, 0);
      await advanceUntil(
        31,
        () => receiveCountsOf('partial-fn', 'bad').length === 2,
        'the failed record again',
      );
      assert.deepEqual(receiveCountsOf('partial-fn', 'bad'), ['1', '2']);
      await advanceUntil(
        31,
        async () => (await counts(dlq.url)).visible === 1,
        'the failed record in the DLQ',
      );
      assert.ok(await isEmpty(q.url));
      const { Messages } = await m.sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq.url }));
      assert.equal(Messages?.[0]?.Body, 'bad');
      assert.deepEqual(receiveCountsOf('partial-fn', 'good1'), ['1']);
    });

    it('fails the whole batch on an unknown identifier, and on an empty list succeeds', async () => {
      const q = await queue({ VisibilityTimeout: '30' });
      let calls = 0;
      m.fn.behave('ids-fn', () =>
        ++calls === 1 ? failures(['not-a-message-id']) : { body: '{"batchItemFailures": []}' },
      );
      await sendAll(q.url, ['i1', 'i2']);
      await create({
        EventSourceArn: q.arn,
        FunctionName: 'ids-fn',
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      await eventually(() => bodiesOf('ids-fn').length === 1, 'the first invocation');
      await advanceUntil(31, () => bodiesOf('ids-fn').flat().length === 4, 'both records again');
      assert.deepEqual(receiveCountsOf('ids-fn', 'i1'), ['1', '2']);
      await advanceUntil(31, () => isEmpty(q.url), 'the batch deleted after the empty list');
    });

    it('leaves the whole batch on a function error: X-Amz-Function-Error or a non-2xx answer', async () => {
      for (const [name, answer] of [
        [
          'unhandled-fn',
          { headers: { 'x-amz-function-error': 'Unhandled' }, body: '{"errorMessage": "boom"}' },
        ],
        ['status-fn', { status: 502, body: '{"message": "bad gateway"}' }],
      ] as const) {
        const q = await queue({ VisibilityTimeout: '30' });
        let calls = 0;
        m.fn.behave(name, () => (++calls === 1 ? answer : undefined));
        await sendAll(q.url, ['e1', 'e2']);
        await create({
          EventSourceArn: q.arn,
          FunctionName: name,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        });
        await eventually(() => bodiesOf(name).length === 1, `${name}: the failed invocation`);
        assert.equal((await counts(q.url)).inFlight, 2);
        await advanceUntil(31, () => bodiesOf(name).length === 2, `${name}: the batch again`);
        assert.deepEqual(receiveCountsOf(name, 'e1'), ['1', '2']);
        await advanceUntil(31, () => isEmpty(q.url), `${name}: the batch deleted once it succeeded`);
      }
    });

    it('counts an invocation not answered within the function time-out (3 s) as failed', async () => {
      const q = await queue({ VisibilityTimeout: '30' });
      let release!: () => void;
      const hung = new Promise<undefined>((resolve) => {
        release = () => resolve(undefined);
      });
      let calls = 0;
      m.fn.behave('slow-fn', () => (++calls === 1 ? hung : undefined));
      await sendAll(q.url, ['t1']);
      await create({ EventSourceArn: q.arn, FunctionName: 'slow-fn' });
      await eventually(() => bodiesOf('slow-fn').length === 1, 'the hanging invocation');
      assert.equal(m.fn.runningOf('slow-fn'), 1);
      await m.server.advance(4);
      await eventually(() => m.fn.runningOf('slow-fn') === 0, 'the invocation abandoned at its time-out');
      assert.equal((await counts(q.url)).inFlight, 1);
      await advanceUntil(31, () => bodiesOf('slow-fn').length === 2, 'the record again');
      await advanceUntil(31, () => isEmpty(q.url), 'the record deleted');
      release();
    });
  });

  describe('event source mappings: malformed batch responses', () => {
    // A server of its own whose functions time out after 60 s: the test moves the clock a visibility timeout at
    // a time, three times, and the clock also runs in real time between the steps; with 3 s a step could run
    // past an invocation started during it and time it out.
    let slow: Backend;
    let slowLambda: LambdaClient;
    before(async () => {
      slow = await m.store.start(m.fn.endpoint, 60);
      slowLambda = new LambdaClient({
        endpoint: slow.endpoint,
        region: REGION,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        maxAttempts: 1,
      });
    });
    after(async () => {
      slowLambda?.destroy();
      await slow?.close();
    });

    it('fails the whole batch on an empty or null itemIdentifier, or an answer that is not JSON', async () => {
      const slowSqs = sqsClient(slow.endpoint);
      try {
        const { QueueUrl: url } = await slowSqs.send(
          new CreateQueueCommand({ QueueName: 'malformed', Attributes: { VisibilityTimeout: '60' } }),
        );
        const malformed = [
          { body: '{"batchItemFailures": [{"itemIdentifier": ""}]}' },
          { body: '{"batchItemFailures": [{"itemIdentifier": null}]}' },
          { body: 'this is not JSON' },
        ];
        let calls = 0;
        m.fn.behave('malformed-fn', () => malformed[calls++]);
        await slowSqs.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: [
              { Id: '1', MessageBody: 'm1' },
              { Id: '2', MessageBody: 'm2' },
            ],
          }),
        );
        await slowLambda.send(
          new CreateEventSourceMappingCommand({
            EventSourceArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:malformed`,
            FunctionName: 'malformed-fn',
            FunctionResponseTypes: ['ReportBatchItemFailures'],
          }),
        );
        // Each malformed answer leaves both records: they come back together after the visibility timeout.
        for (let round = 1; round <= 4; round++) {
          if (round > 1) {
            await eventually(
              () => answersTaken(slow.endpoint, SLOW_SERVERS_FUNCTIONS),
              `answer ${round - 1} taken`,
              30_000,
            );
            await slow.advance(60);
          }
          await eventually(() => bodiesOf('malformed-fn').length === round, `invocation ${round}`, 30_000);
        }
        assert.deepEqual(receiveCountsOf('malformed-fn', 'm1'), ['1', '2', '3', '4']);
        assert.deepEqual(receiveCountsOf('malformed-fn', 'm2'), ['1', '2', '3', '4']);
        // The fourth answer (null) is a success: the batch is deleted.
        await eventually(async () => {
          const { Attributes } = await slowSqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: url,
              AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
            }),
          );
          return (
            Attributes!.ApproximateNumberOfMessages === '0' &&
            Attributes!.ApproximateNumberOfMessagesNotVisible === '0'
          );
        }, 'the batch deleted after the fourth answer');
        // Counted once the deletion is done.
        await eventually(
          async () => /function="malformed-fn",result="success"\} 1\n/.test(await metricsText(slow.endpoint)),
          'the success counted',
        );
        assert.match(
          await metricsText(slow.endpoint),
          /function="malformed-fn",result="function-error"\} 3\n/,
        );
      } finally {
        slowSqs.destroy();
      }
    });
  });
});
