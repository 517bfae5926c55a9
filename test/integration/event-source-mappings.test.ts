/**
 * Lambda event source mappings against a really started server (test mode, so time rules move with the
 * clock) and a real HTTP function served over the Invoke API, driven by the JS SDK's Lambda client: the
 * API's shapes and errors, the SQS event, batching, failures, FIFO order, filters, states and concurrency.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateEventSourceMappingCommand,
  DeleteEventSourceMappingCommand,
  GetEventSourceMappingCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  ListTagsCommand,
  TagResourceCommand,
  UntagResourceCommand,
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
import { startSluice } from 'sluice';
import { advanceClock, serverTime } from 'sluice-client/testing';
import { TestClock } from '../../packages/server/src/server/test-clock.ts';
import { freshDatabase, postgresUnreachable } from '../../tools/postgres.ts';
import { eventually } from '../helpers/client-toolkit.ts';
import { type FunctionServer, startFunctionServer } from '../helpers/function-server.ts';
import { removeDataDir, SLUICE_CLI, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { hasBoto3, PYTHONS } from './clients/clients.ts';

const ACCOUNT = '000000000000';
const REGION = 'us-east-1';
const run = promisify(execFile);

/** Why the PostgreSQL variant cannot run here (PostgreSQL unreachable, outside CI), or false. */
const postgresSkip = process.env.CI ? false : await postgresUnreachable();

/** A server the suite drives, on one store, with a clock the tests move. */
interface Backend {
  readonly endpoint: string;
  /** Moves the server's clock forward, as `POST /_sluice/clock/advance` does. */
  advance(seconds: number): Promise<void>;
  /** The server's clock now, in epoch milliseconds. */
  now(): Promise<number>;
  /** Stops it and removes what it kept. */
  close(): Promise<void>;
}

interface StoreUnderTest {
  label: string;
  skip: string | false;
  /** Starts a server on a store of its own, invoking functions at `lambdaEndpoint`. */
  start(lambdaEndpoint: string, lambdaTimeoutSeconds?: number): Promise<Backend>;
}

const STORES: StoreUnderTest[] = [
  {
    label: 'SQLite',
    skip: false,
    // `sluice serve --test-clock`, a process of its own.
    async start(lambdaEndpoint, lambdaTimeoutSeconds) {
      const server = await startServer({
        args: [
          '--test-clock',
          '--lambda-endpoint',
          lambdaEndpoint,
          ...(lambdaTimeoutSeconds === undefined ? [] : ['--lambda-timeout', String(lambdaTimeoutSeconds)]),
        ],
      });
      return {
        endpoint: server.endpoint,
        async advance(seconds) {
          await advanceClock(server.endpoint, seconds);
        },
        now: async () => (await serverTime(server.endpoint)).now,
        async close() {
          await server.stop();
          removeDataDir(server.dataDir);
        },
      };
    },
  },
  {
    label: 'PostgreSQL',
    skip: postgresSkip,
    // `--test-clock` is refused with `--store postgres://` (other nodes would not share the clock), so the
    // server runs in this process with the test mode's clock injected: the same clock, moved directly. A fresh
    // database per server; it holds the cluster lease alone, so it polls the mappings.
    async start(lambdaEndpoint, lambdaTimeoutSeconds) {
      const database = await freshDatabase('sluice_esm');
      const clock = new TestClock();
      const node = await startSluice({
        port: 0,
        storeUrl: database.url,
        dataDir: ':memory:',
        logLevel: 'silent',
        clock,
        lambdaEndpoint,
        lambdaTimeoutSeconds,
      }).catch(async (error: unknown) => {
        await database.drop();
        throw error;
      });
      return {
        endpoint: node.endpoint,
        advance: (seconds) => clock.advance(seconds * 1000),
        now: async () => clock.now(),
        async close() {
          try {
            await node.close();
          } finally {
            await database.drop();
          }
        },
      };
    },
  },
];

const boto3Python = PYTHONS.find((python) => python.protocol === 'json')?.bin;

for (const store of STORES) {
  describe(`event source mappings on ${store.label}`, { skip: store.skip }, () => {
    let fn: FunctionServer;
    let server: Backend;
    let sqs: ReturnType<typeof sqsClient>;
    let lambda: LambdaClient;

    before(async () => {
      // A function server per store: the tests tell invocations apart by function name.
      fn = await startFunctionServer();
      server = await store.start(fn.endpoint);
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
      await server?.close();
      await fn?.close();
    });

    let queues = 0;
    async function queue(attributes: Record<string, string> = {}, fifo = false) {
      const name = `esm-${++queues}${fifo ? '.fifo' : ''}`;
      const { QueueUrl } = await sqs.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: {
            ...(fifo && { FifoQueue: 'true', ContentBasedDeduplication: 'true' }),
            ...attributes,
          },
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
          new CreateEventSourceMappingCommand({
            EventSourceArn: q.arn,
            FunctionName: 'api-fn',
            Enabled: false,
          }),
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
        // On the server's clock, which the tests move.
        assert.ok(Math.abs(created.LastModified.getTime() - (await server.now())) < 60_000);

        const got = await lambda.send(new GetEventSourceMappingCommand({ UUID: created.UUID }));
        assert.equal(got.State, 'Disabled');
        // Not execFileSync: a server in this process (PostgreSQL's) must go on answering.
        const { stdout: stats } = await run(process.execPath, [
          ...SLUICE_CLI,
          'stats',
          q.name,
          '--endpoint',
          server.endpoint,
        ]);
        assert.match(
          stats,
          new RegExp(`event source mappings:\\n.*\\n${created.UUID}\\s+api-fn\\s+Disabled\\s+10\\s+0`),
        );

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

      it('keeps the Tags given at create, and serves ListTags, TagResource and UntagResource on its ARN', async () => {
        const q = await queue();
        const created = await lambda.send(
          new CreateEventSourceMappingCommand({
            EventSourceArn: q.arn,
            FunctionName: 'tags-fn',
            Enabled: false,
            Tags: { team: 'orders', cost: 'ops' },
          }),
        );
        const Resource = created.EventSourceMappingArn!;
        assert.equal(Resource, `arn:aws:lambda:${REGION}:${ACCOUNT}:event-source-mapping:${created.UUID}`);
        assert.deepEqual((await lambda.send(new ListTagsCommand({ Resource }))).Tags, {
          team: 'orders',
          cost: 'ops',
        });
        await lambda.send(new TagResourceCommand({ Resource, Tags: { env: 'dev', cost: 'shared' } }));
        await lambda.send(new UntagResourceCommand({ Resource, TagKeys: ['team', 'absent'] }));
        assert.deepEqual((await lambda.send(new ListTagsCommand({ Resource }))).Tags, {
          cost: 'shared',
          env: 'dev',
        });
        // An update keeps them; the mapping's own answers carry none (Lambda's EventSourceMappingConfiguration has no Tags).
        const updated = await lambda.send(
          new UpdateEventSourceMappingCommand({ UUID: created.UUID, BatchSize: 3 }),
        );
        assert.equal('Tags' in updated, false);
        assert.deepEqual((await lambda.send(new ListTagsCommand({ Resource }))).Tags, {
          cost: 'shared',
          env: 'dev',
        });
        await assert.rejects(
          lambda.send(new TagResourceCommand({ Resource, Tags: { 'aws:reserved': 'x' } })),
          {
            name: 'InvalidParameterValueException',
          },
        );
        await lambda.send(new DeleteEventSourceMappingCommand({ UUID: created.UUID }));
        await assert.rejects(lambda.send(new ListTagsCommand({ Resource })), {
          name: 'ResourceNotFoundException',
        });
        await assert.rejects(
          lambda.send(
            new ListTagsCommand({
              Resource: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:no-such-function`,
            }),
          ),
          { name: 'ResourceNotFoundException' },
        );
      });

      it('takes one of two mappings created at once for the same queue and function, refusing the other', async () => {
        const q = await queue();
        const results = await Promise.allSettled(
          [1, 2, 3].map(() =>
            lambda.send(
              new CreateEventSourceMappingCommand({
                EventSourceArn: q.arn,
                FunctionName: 'race-fn',
                Enabled: false,
              }),
            ),
          ),
        );
        assert.deepEqual(
          results
            .map((result) => (result.status === 'fulfilled' ? 'created' : (result.reason as Error).name))
            .sort(),
          ['ResourceConflictException', 'ResourceConflictException', 'created'],
        );
        const listed = await lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: q.arn }));
        assert.equal(listed.EventSourceMappings?.length, 1);
      });

      it('keeps every change of writes made at once to one mapping: taggings and an update', async () => {
        const q = await queue();
        const created = await create({
          EventSourceArn: q.arn,
          FunctionName: 'write-race-fn',
          Enabled: false,
        });
        const Resource = created.EventSourceMappingArn!;
        await Promise.all([
          ...['a', 'b', 'c'].map((key) =>
            lambda.send(new TagResourceCommand({ Resource, Tags: { [key]: key } })),
          ),
          lambda.send(new UpdateEventSourceMappingCommand({ UUID: created.UUID, BatchSize: 7 })),
        ]);
        assert.deepEqual((await lambda.send(new ListTagsCommand({ Resource }))).Tags, {
          a: 'a',
          b: 'b',
          c: 'c',
        });
        assert.equal(
          (await lambda.send(new GetEventSourceMappingCommand({ UUID: created.UUID }))).BatchSize,
          7,
        );
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
          new ListEventSourceMappingsCommand({
            EventSourceArn: q.arn,
            MaxItems: 2,
            Marker: first.NextMarker,
          }),
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
          /^1 validation error detected: Value '1' at 'scalingConfig.maximumConcurrency' failed to satisfy constraint: Member must have value greater than or equal to 2$/,
        );
        await refusal(
          { EventSourceArn: q.arn, FunctionName: 'f', ScalingConfig: { MaximumConcurrency: 1001 } },
          'ValidationException',
          /^1 validation error detected: Value '1001' at 'scalingConfig.maximumConcurrency' failed to satisfy constraint: Member must have value less than or equal to 1000$/,
        );
        // The bounds themselves are taken (botocore's model: MaximumConcurrency min 2, max 1000).
        for (const [name, bound] of [
          ['bound-2', 2],
          ['bound-1000', 1000],
        ] as const) {
          const made = await create({
            EventSourceArn: q.arn,
            FunctionName: name,
            Enabled: false,
            ScalingConfig: { MaximumConcurrency: bound },
          });
          assert.deepEqual(made.ScalingConfig, { MaximumConcurrency: bound });
        }
        await refusal(
          {
            EventSourceArn: q.arn,
            FunctionName: 'f',
            FilterCriteria: { Filters: [{ Pattern: '{"body": 1}' }] },
          },
          'InvalidParameterValueException',
          /^Invalid filter pattern definition\.$/,
        );
        await refusal(
          { EventSourceArn: q.arn, FunctionName: 'f', StartingPosition: 'LATEST' },
          'InvalidParameterValueException',
          /StartingPosition is not valid for SQS/,
        );
        const short = await queue({ VisibilityTimeout: '2' });
        await refusal(
          { EventSourceArn: short.arn, FunctionName: 'f' },
          'InvalidParameterValueException',
          /^Queue visibility timeout: 2 seconds is less than Function timeout: 3 seconds$/,
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
        await eventually(async () => {
          const metrics = await (await fetch(`${server.endpoint}/metrics`)).text();
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

    /**
     * The functions the malformed-response tests' server of its own invokes: the main server never counts their
     * answers, so waiting for it to would wait out every timeout (10 s per clock step of each later test).
     */
    const SLOW_SERVERS_FUNCTIONS = new Set(['malformed-fn']);

    const metricsText = async (endpoint = server.endpoint) => (await fetch(`${endpoint}/metrics`)).text();

    /**
     * Every invocation the function received has its result counted by the server: the server has read the
     * function's answer (the function having written it is not enough: it may still be on its way).
     */
    async function answersTaken(
      endpoint = server.endpoint,
      names = new Set(
        fn.invocations
          .map((invocation) => invocation.functionName)
          .filter((name) => !SLOW_SERVERS_FUNCTIONS.has(name)),
      ),
    ): Promise<boolean> {
      const counted = new Map<string, number>();
      for (const [, name, value] of (await metricsText(endpoint)).matchAll(
        /^sluice_lambda_invocations_total\{[^}]*function="([^"]+)"[^}]*\} (\d+)$/gm,
      ))
        counted.set(name!, (counted.get(name!) ?? 0) + Number(value));
      return [...names].every((name) => bodiesOf(name).length === (counted.get(name) ?? 0));
    }

    /**
     * Moves the server's clock by `seconds` until `check` holds. A step is taken only once the server has taken
     * every answer (a step during an invocation would time it out too), and the server is given a few seconds
     * to act on it.
     */
    async function advanceUntil(seconds: number, check: () => boolean | Promise<boolean>, what: string) {
      const deadline = Date.now() + 90_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await eventually(() => fn.idle(), 'no invocation under way', 10_000).catch(() => {});
        await eventually(answersTaken, 'every answer taken by the server', 10_000).catch(() => {});
        if (await check()) return;
        await server.advance(seconds);
        await eventually(check, what, 5_000).catch(() => {});
      }
    }

    const create = (input: ConstructorParameters<typeof CreateEventSourceMappingCommand>[0]) =>
      lambda.send(new CreateEventSourceMappingCommand(input));

    async function sendAll(url: string, bodies: string[], group?: string) {
      for (let start = 0; start < bodies.length; start += 10)
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: bodies.slice(start, start + 10).map((body, index) => ({
              Id: String(index),
              MessageBody: body,
              ...(group !== undefined && { MessageGroupId: group }),
            })),
          }),
        );
    }

    const receiveCountsOf = (functionName: string, body: string) =>
      fn.invocations
        .filter((invocation) => invocation.functionName === functionName)
        .flatMap((invocation) => invocation.event.Records)
        .filter((record) => record.body === body)
        .map((record) => record.attributes.ApproximateReceiveCount);

    const failures = (ids: string[]): { body: string } => ({
      body: JSON.stringify({
        batchItemFailures: ids.map((itemIdentifier) => ({ itemIdentifier })),
      } satisfies SQSBatchResponse),
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
        fn.behave('partial-fn', ({ event }) =>
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
        const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq.url }));
        assert.equal(Messages?.[0]?.Body, 'bad');
        assert.deepEqual(receiveCountsOf('partial-fn', 'good1'), ['1']);
      });

      it('fails the whole batch on an unknown identifier, and on an empty list succeeds', async () => {
        const q = await queue({ VisibilityTimeout: '30' });
        let calls = 0;
        fn.behave('ids-fn', () =>
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
          fn.behave(name, () => (++calls === 1 ? answer : undefined));
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
        fn.behave('slow-fn', () => (++calls === 1 ? hung : undefined));
        await sendAll(q.url, ['t1']);
        await create({ EventSourceArn: q.arn, FunctionName: 'slow-fn' });
        await eventually(() => bodiesOf('slow-fn').length === 1, 'the hanging invocation');
        assert.equal(fn.runningOf('slow-fn'), 1);
        await server.advance(4);
        await eventually(() => fn.runningOf('slow-fn') === 0, 'the invocation abandoned at its time-out');
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
        slow = await store.start(fn.endpoint, 60);
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
          fn.behave('malformed-fn', () => malformed[calls++]);
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
            async () =>
              /function="malformed-fn",result="success"\} 1\n/.test(await metricsText(slow.endpoint)),
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

    describe('event source mappings: FIFO, filters, states, concurrency', () => {
      it('keeps FIFO order: after a failure in a group, its later records come back with it', async () => {
        const q = await queue({ VisibilityTimeout: '30' }, true);
        let calls = 0;
        fn.behave('fifo-fn', ({ event }) =>
          ++calls === 1
            ? failures(
                event.Records.filter((record) => record.body === 'a2').map((record) => record.messageId),
              )
            : undefined,
        );
        await sendAll(q.url, ['a1', 'a2', 'a3', 'a4'], 'A');
        await sendAll(q.url, ['b1', 'b2'], 'B');
        await create({
          EventSourceArn: q.arn,
          FunctionName: 'fifo-fn',
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        });
        await eventually(() => bodiesOf('fifo-fn').length === 1, 'the first batch');
        assert.deepEqual(bodiesOf('fifo-fn')[0], ['a1', 'a2', 'a3', 'a4', 'b1', 'b2']);
        const first = fn.invocations.find((invocation) => invocation.functionName === 'fifo-fn')!.event
          .Records[0]!;
        assert.equal(first.attributes.MessageGroupId, 'A');
        // A message without attributes: null, as a real Lambda event has it (not left out).
        assert.ok('md5OfMessageAttributes' in first);
        assert.equal(first.md5OfMessageAttributes, null);
        assert.match(first.attributes.SequenceNumber ?? '', /^\d{20}$/);
        assert.ok(first.attributes.MessageDeduplicationId);
        await eventually(async () => (await counts(q.url)).inFlight === 3, 'a1, b1 and b2 deleted');
        await advanceUntil(31, () => bodiesOf('fifo-fn').length === 2, 'the group again');
        assert.deepEqual(bodiesOf('fifo-fn')[1], ['a2', 'a3', 'a4']);
        await advanceUntil(31, () => isEmpty(q.url), 'the group deleted');
      });

      it('keeps one batch of a FIFO group in flight at a time, however many pollers', async () => {
        const q = await queue({ VisibilityTimeout: '60' }, true);
        let open!: () => void;
        const gate = new Promise<void>((resolve) => {
          open = resolve;
        });
        const inFlight = new Map<string, number>();
        let mostOfOneGroup = 0;
        fn.behave('fifo-lock-fn', async ({ event }) => {
          const group = event.Records[0]!.attributes.MessageGroupId!;
          const now = (inFlight.get(group) ?? 0) + 1;
          inFlight.set(group, now);
          mostOfOneGroup = Math.max(mostOfOneGroup, now);
          await gate;
          inFlight.set(group, (inFlight.get(group) ?? 1) - 1);
          return undefined;
        });
        await sendAll(q.url, ['a1', 'a2', 'a3'], 'A');
        await sendAll(q.url, ['b1', 'b2', 'b3'], 'B');
        // A batch of one record is full, so each one received brings another poller, up to five.
        await create({
          EventSourceArn: q.arn,
          FunctionName: 'fifo-lock-fn',
          BatchSize: 1,
          ScalingConfig: { MaximumConcurrency: 5 },
        });
        await eventually(() => fn.runningOf('fifo-lock-fn') === 2, 'one batch of each group in flight');
        const { inFlight: received } = await counts(q.url);
        assert.equal(received, 2, "the group's later records wait for its batch");
        open();
        await eventually(() => isEmpty(q.url), 'both groups processed');
        assert.equal(mostOfOneGroup, 1);
        const order = bodiesOf('fifo-lock-fn').flat();
        assert.deepEqual(
          order.filter((body) => body.startsWith('a')),
          ['a1', 'a2', 'a3'],
        );
        assert.deepEqual(
          order.filter((body) => body.startsWith('b')),
          ['b1', 'b2', 'b3'],
        );
      });

      it('deletes the records no filter matches without invoking the function', async () => {
        const q = await queue();
        await create({
          EventSourceArn: q.arn,
          FunctionName: 'filter-fn',
          FilterCriteria: { Filters: [{ Pattern: '{"body": {"kind": ["keep"]}}' }] },
        });
        await sendAll(q.url, ['{"kind": "drop"}', '{"kind": "keep"}', 'not json']);
        await eventually(() => isEmpty(q.url), 'every record gone');
        assert.deepEqual(bodiesOf('filter-fn').flat(), ['{"kind": "keep"}']);
      });

      it('stops polling when disabled or deleted, and starts again when enabled', async () => {
        const q = await queue();
        const { UUID } = await create({ EventSourceArn: q.arn, FunctionName: 'state-fn' });
        await sendAll(q.url, ['s1']);
        await eventually(() => bodiesOf('state-fn').length === 1, 'the first invocation');
        const disabled = await lambda.send(new UpdateEventSourceMappingCommand({ UUID, Enabled: false }));
        assert.equal(disabled.State, 'Updating');
        assert.equal((await lambda.send(new GetEventSourceMappingCommand({ UUID }))).State, 'Disabled');
        await sendAll(q.url, ['s2']);
        // The mapping no longer consumes: an ordinary consumer gets the message, and gives it back.
        const { Messages } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: q.url, WaitTimeSeconds: 5, VisibilityTimeout: 0 }),
        );
        assert.equal(Messages?.[0]?.Body, 's2');
        assert.equal(bodiesOf('state-fn').length, 1);
        await lambda.send(new UpdateEventSourceMappingCommand({ UUID, Enabled: true }));
        await eventually(
          () => bodiesOf('state-fn').flat().includes('s2'),
          'the enabled mapping invoking again',
        );
        await lambda.send(new DeleteEventSourceMappingCommand({ UUID }));
        await sendAll(q.url, ['s3']);
        const again = await sqs.send(new ReceiveMessageCommand({ QueueUrl: q.url, WaitTimeSeconds: 5 }));
        assert.equal(again.Messages?.[0]?.Body, 's3');
        assert.ok(!bodiesOf('state-fn').flat().includes('s3'));
      });

      it('disables the mappings of a deleted queue, saying why', async () => {
        const q = await queue();
        const { UUID } = await create({ EventSourceArn: q.arn, FunctionName: 'gone-fn' });
        await sqs.send(new DeleteQueueCommand({ QueueUrl: q.url }));
        await advanceUntil(
          21,
          async () => (await lambda.send(new GetEventSourceMappingCommand({ UUID }))).State === 'Disabled',
          'the mapping disabled',
        );
        const mapping = await lambda.send(new GetEventSourceMappingCommand({ UUID }));
        assert.equal(mapping.StateTransitionReason, 'PROBLEM: The event source queue does not exist.');
      });

      it('scales pollers with the backlog up to ScalingConfig.MaximumConcurrency', async () => {
        const q = await queue();
        let open!: () => void;
        const gate = new Promise<undefined>((resolve) => {
          open = () => resolve(undefined);
        });
        fn.behave('scale-fn', () => gate);
        await sendAll(
          q.url,
          Array.from({ length: 12 }, (_, index) => `c${index}`),
        );
        await create({
          EventSourceArn: q.arn,
          FunctionName: 'scale-fn',
          BatchSize: 1,
          ScalingConfig: { MaximumConcurrency: 2 },
        });
        await eventually(() => fn.runningOf('scale-fn') === 2, 'two invocations at once');
        fn.behave('scale-fn', () => undefined);
        open();
        await eventually(() => isEmpty(q.url), 'the backlog processed');
        assert.equal(fn.mostRunningOf('scale-fn'), 2);
        // And back down: a poller beyond the first whose long poll (20 s) comes back empty ends.
        const pollers = async () => {
          const answer = (await (await fetch(`${server.endpoint}/api/event-source-mappings`)).json()) as {
            mappings: { FunctionArn: string; Pollers: number }[];
          };
          return answer.mappings.find((mapping) => mapping.FunctionArn.endsWith(':function:scale-fn'))
            ?.Pollers;
        };
        await advanceUntil(21, async () => (await pollers()) === 1, 'one poller left');
      });
    });

    describe('event source mappings: the concurrency bound without ScalingConfig', () => {
      it("runs at most five pollers, Sluice's documented bound", async () => {
        const q = await queue();
        let open!: () => void;
        const gate = new Promise<undefined>((resolve) => {
          open = () => resolve(undefined);
        });
        fn.behave('default-bound-fn', () => gate);
        await sendAll(
          q.url,
          Array.from({ length: 12 }, (_, index) => `d${index}`),
        );
        await create({ EventSourceArn: q.arn, FunctionName: 'default-bound-fn', BatchSize: 1 });
        await eventually(() => fn.runningOf('default-bound-fn') === 5, 'five invocations at once');
        // Seven records wait: no sixth poller took one.
        assert.deepEqual(await counts(q.url), { visible: 7, inFlight: 5 });
        fn.behave('default-bound-fn', () => undefined);
        open();
        await eventually(() => isEmpty(q.url), 'the backlog processed');
        assert.equal(fn.mostRunningOf('default-bound-fn'), 5);
      });
    });

    /** Runs a boto3 script against the server with `lambda` and `sqs` clients; it prints one JSON value. */
    async function boto3(script: string): Promise<unknown> {
      const program = `
import boto3, json, sys
from botocore.exceptions import ClientError
session = boto3.session.Session(aws_access_key_id='test', aws_secret_access_key='test', region_name='${REGION}')
lam = session.client('lambda', endpoint_url='${server.endpoint}')
sqs = session.client('sqs', endpoint_url='${server.endpoint}')
def error_of(call):
    try:
        call()
        return None
    except ClientError as e:
        return {'code': e.response['Error']['Code'], 'message': e.response['Error']['Message'], 'status': e.response['ResponseMetadata']['HTTPStatusCode']}
${script}
`;
      return JSON.parse((await run(boto3Python!, ['-c', program], { timeout: 60_000 })).stdout);
    }

    describe('event source mappings: boto3', {
      skip: boto3Python && hasBoto3(boto3Python) ? false : 'no pyenv boto3',
    }, () => {
      it("manages a mapping with boto3's Lambda client, which the function then serves", async () => {
        const q = await queue();
        const result = (await boto3(`
created = lam.create_event_source_mapping(EventSourceArn='${q.arn}', FunctionName='boto-fn', BatchSize=5,
    FunctionResponseTypes=['ReportBatchItemFailures'], ScalingConfig={'MaximumConcurrency': 2}, Tags={'team': 'boto'})
uuid = created['UUID']
got = lam.get_event_source_mapping(UUID=uuid)
listed = lam.list_event_source_mappings(FunctionName='boto-fn')
updated = lam.update_event_source_mapping(UUID=uuid, BatchSize=7)
print(json.dumps({
    'uuid': uuid,
    'created': {k: created[k] for k in ('State', 'BatchSize', 'FunctionArn', 'EventSourceArn', 'FunctionResponseTypes', 'ScalingConfig')},
    'lastModified': created['LastModified'].timestamp(),
    'got': got['State'],
    'listed': [m['UUID'] for m in listed['EventSourceMappings']],
    'updated': [updated['State'], updated['BatchSize']],
    'tags': lam.list_tags(Resource=created['EventSourceMappingArn'])['Tags'],
    'missing': error_of(lambda: lam.get_event_source_mapping(UUID='00000000-0000-0000-0000-000000000000')),
    'bad': error_of(lambda: lam.create_event_source_mapping(EventSourceArn='${q.arn}', FunctionName='x', BatchSize=20)),
    'conflict': error_of(lambda: lam.create_event_source_mapping(EventSourceArn='${q.arn}', FunctionName='boto-fn')),
}))
`)) as Record<string, unknown>;
        assert.deepEqual(result.created, {
          State: 'Creating',
          BatchSize: 5,
          FunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:boto-fn`,
          EventSourceArn: q.arn,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          ScalingConfig: { MaximumConcurrency: 2 },
        });
        assert.ok(Math.abs((result.lastModified as number) * 1000 - (await server.now())) < 60_000);
        assert.equal(result.got, 'Enabled');
        assert.deepEqual(result.listed, [result.uuid]);
        assert.deepEqual(result.updated, ['Updating', 7]);
        assert.deepEqual(result.tags, { team: 'boto' });
        assert.deepEqual(result.missing, {
          code: 'ResourceNotFoundException',
          message: 'The resource you requested does not exist.',
          status: 404,
        });
        assert.equal((result.bad as { code: string }).code, 'InvalidParameterValueException');
        assert.equal((result.conflict as { status: number }).status, 409);
        await sendAll(q.url, ['from-boto3']);
        await eventually(() => bodiesOf('boto-fn').flat().includes('from-boto3'), 'the invocation');
        await eventually(() => isEmpty(q.url), 'the record deleted');
        await boto3(`lam.delete_event_source_mapping(UUID='${result.uuid as string}'); print('null')`);
        await assert.rejects(lambda.send(new GetEventSourceMappingCommand({ UUID: result.uuid as string })), {
          name: 'ResourceNotFoundException',
        });
      });
    });
  });
}
