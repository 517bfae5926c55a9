/**
 * Lambda event source mappings against a really started server (test mode, so time rules move with the
 * clock) and a real HTTP function served over the Invoke API, driven by the JS SDK's Lambda client: the
 * API's shapes and errors, the SQS event, batching, failures, FIFO order, filters, states and concurrency.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  CreateEventSourceMappingCommand,
  DeleteEventSourceMappingCommand,
  GetEventSourceMappingCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { advanceClock } from 'sluice-client/testing';
import { eventually } from '../helpers/client-toolkit.ts';
import { type FunctionServer, startFunctionServer } from '../helpers/function-server.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const ACCOUNT = '000000000000';
const REGION = 'us-east-1';

let fn: FunctionServer;
let server: RunningServer;
let sqs: ReturnType<typeof sqsClient>;
let lambda: LambdaClient;

before(async () => {
  fn = await startFunctionServer();
  server = await startServer({ args: ['--test-clock', '--lambda-endpoint', fn.endpoint] });
  sqs = sqsClient(server.endpoint);
  lambda = new LambdaClient({
    endpoint: server.endpoint,
    region: REGION,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
});

after(async () => {
  sqs?.destroy();
  lambda?.destroy();
  await server?.stop();
  if (server) removeDataDir(server.dataDir);
  await fn?.close();
});

let queues = 0;
async function queue(attributes: Record<string, string> = {}, fifo = false) {
  const name = `esm-${++queues}${fifo ? '.fifo' : ''}`;
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: { ...(fifo && { FifoQueue: 'true', ContentBasedDeduplication: 'true' }), ...attributes },
    }),
  );
  return { name, url: QueueUrl!, arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}` };
}

async function counts(url: string) {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes!.ApproximateNumberOfMessages),
    inFlight: Number(Attributes!.ApproximateNumberOfMessagesNotVisible),
  };
}

/** The bodies the function was invoked with for `functionName`, invocation by invocation. */
function bodiesOf(functionName: string): string[][] {
  return fn.invocations
    .filter((invocation) => invocation.functionName === functionName)
    .map((invocation) => invocation.event.Records.map((record) => record.body));
}

const isEmpty = async (url: string) => {
  const { visible, inFlight } = await counts(url);
  return visible === 0 && inFlight === 0;
};

describe('event source mappings: the API', () => {
  it('creates a mapping with Lambda defaults, and gets, lists, updates and deletes it', async () => {
    const q = await queue();
    const created = await lambda.send(
      new CreateEventSourceMappingCommand({ EventSourceArn: q.arn, FunctionName: 'api-fn', Enabled: false }),
    );
    assert.match(created.UUID!, /^[0-9a-f-]{36}$/);
    assert.equal(created.State, 'Creating');
    assert.equal(created.StateTransitionReason, 'USER_INITIATED');
    assert.equal(created.BatchSize, 10);
    assert.equal(created.MaximumBatchingWindowInSeconds, 0);
    assert.equal(created.EventSourceArn, q.arn);
    assert.equal(created.FunctionArn, `arn:aws:lambda:${REGION}:${ACCOUNT}:function:api-fn`);
    assert.deepEqual(created.FunctionResponseTypes, []);
    assert.ok(created.LastModified instanceof Date);
    assert.ok(Math.abs(created.LastModified.getTime() - Date.now()) < 60_000);

    const got = await lambda.send(new GetEventSourceMappingCommand({ UUID: created.UUID }));
    assert.equal(got.State, 'Disabled');

    const updated = await lambda.send(
      new UpdateEventSourceMappingCommand({
        UUID: created.UUID,
        BatchSize: 100,
        MaximumBatchingWindowInSeconds: 5,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 3 },
        FilterCriteria: { Filters: [{ Pattern: '{"body": {"kind": ["a"]}}' }] },
      }),
    );
    assert.equal(updated.State, 'Updating');
    assert.equal(updated.BatchSize, 100);
    assert.deepEqual(updated.FunctionResponseTypes, ['ReportBatchItemFailures']);
    assert.deepEqual(updated.ScalingConfig, { MaximumConcurrency: 3 });
    assert.deepEqual(updated.FilterCriteria, { Filters: [{ Pattern: '{"body": {"kind": ["a"]}}' }] });

    const listed = await lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: q.arn }));
    assert.deepEqual(
      listed.EventSourceMappings?.map((mapping) => mapping.UUID),
      [created.UUID],
    );
    const byFunction = await lambda.send(
      new ListEventSourceMappingsCommand({
        FunctionName: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:api-fn`,
      }),
    );
    assert.deepEqual(
      byFunction.EventSourceMappings?.map((mapping) => mapping.UUID),
      [created.UUID],
    );

    const deleted = await lambda.send(new DeleteEventSourceMappingCommand({ UUID: created.UUID }));
    assert.equal(deleted.State, 'Deleting');
    await assert.rejects(lambda.send(new GetEventSourceMappingCommand({ UUID: created.UUID })), {
      name: 'ResourceNotFoundException',
    });
  });

  it('pages the list with Marker and MaxItems', async () => {
    const q = await queue();
    const made: string[] = [];
    for (const name of ['page-a', 'page-b', 'page-c'])
      made.push(
        (
          await lambda.send(
            new CreateEventSourceMappingCommand({
              EventSourceArn: q.arn,
              FunctionName: name,
              Enabled: false,
            }),
          )
        ).UUID!,
      );
    const first = await lambda.send(
      new ListEventSourceMappingsCommand({ EventSourceArn: q.arn, MaxItems: 2 }),
    );
    assert.equal(first.EventSourceMappings?.length, 2);
    assert.ok(first.NextMarker);
    const second = await lambda.send(
      new ListEventSourceMappingsCommand({ EventSourceArn: q.arn, MaxItems: 2, Marker: first.NextMarker }),
    );
    assert.equal(second.NextMarker, undefined);
    assert.deepEqual(
      [...first.EventSourceMappings!, ...second.EventSourceMappings!].map((mapping) => mapping.UUID),
      made,
    );
  });

  it("answers Lambda's errors for bad settings", async () => {
    const q = await queue();
    const fifo = await queue({}, true);
    const refusal = async (
      input: ConstructorParameters<typeof CreateEventSourceMappingCommand>[0],
      name: string,
      message: RegExp,
    ) =>
      assert.rejects(
        lambda.send(new CreateEventSourceMappingCommand(input)),
        (error: Error & { $metadata?: { httpStatusCode?: number } }) => {
          assert.equal(error.name, name);
          assert.match(error.message, message);
          return true;
        },
      );
    await refusal(
      { EventSourceArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:no-such-queue`, FunctionName: 'f' },
      'InvalidParameterValueException',
      /NonExistentQueue/,
    );
    await refusal(
      { EventSourceArn: q.arn, FunctionName: 'f', BatchSize: 11 },
      'InvalidParameterValueException',
      /batch window/,
    );
    await refusal(
      { EventSourceArn: q.arn, FunctionName: 'f', BatchSize: 10_001, MaximumBatchingWindowInSeconds: 1 },
      'ValidationException',
      /batchSize/,
    );
    await refusal(
      { EventSourceArn: fifo.arn, FunctionName: 'f', BatchSize: 11 },
      'InvalidParameterValueException',
      /FIFO/,
    );
    await refusal(
      { EventSourceArn: q.arn, FunctionName: 'f', ScalingConfig: { MaximumConcurrency: 1 } },
      'ValidationException',
      /maximumConcurrency/,
    );
    await refusal(
      { EventSourceArn: q.arn, FunctionName: 'f', FilterCriteria: { Filters: [{ Pattern: '{"body": 1}' }] } },
      'InvalidParameterValueException',
      /^Invalid filter pattern definition\.$/,
    );
    await refusal(
      { EventSourceArn: q.arn, FunctionName: 'f', StartingPosition: 'LATEST' },
      'InvalidParameterValueException',
      /StartingPosition is not valid for SQS/,
    );
    await lambda.send(
      new CreateEventSourceMappingCommand({ EventSourceArn: q.arn, FunctionName: 'dup', Enabled: false }),
    );
    await refusal(
      { EventSourceArn: q.arn, FunctionName: 'dup' },
      'ResourceConflictException',
      /already exists/,
    );
    await assert.rejects(
      lambda.send(new GetEventSourceMappingCommand({ UUID: '00000000-0000-0000-0000-000000000000' })),
      {
        name: 'ResourceNotFoundException',
      },
    );
  });
});

describe('event source mappings: polling', () => {
  it("invokes the function with AWS's SQS event and deletes the batch it processed", async () => {
    const q = await queue();
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: q.url,
        MessageBody: '{"hello": "world"}',
        MessageAttributes: {
          colour: { DataType: 'String', StringValue: 'blue' },
          bytes: { DataType: 'Binary', BinaryValue: Buffer.from('xyz') },
        },
      }),
    );
    await lambda.send(
      new CreateEventSourceMappingCommand({ EventSourceArn: q.arn, FunctionName: 'shape-fn' }),
    );
    await eventually(() => bodiesOf('shape-fn').length === 1, 'the invocation');
    const record = fn.invocations.find((invocation) => invocation.functionName === 'shape-fn')!.event
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
  });
});
