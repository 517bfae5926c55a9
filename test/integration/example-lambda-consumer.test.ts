/**
 * docs/guide/lambda.md's example as the page runs it: examples/lambda-consumer/invoke-server.ts (serving
 * handler.ts over the Invoke API) as a real child process, Sluice started with --lambda-endpoint, and the
 * page's queue, dead-letter queue and mapping; a good order is processed and deleted, a bad one reported as a
 * batch item failure comes back and lands in the dead-letter queue.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CreateEventSourceMappingCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { advanceClock } from 'sluice-client/testing';
import { eventually } from '../helpers/client-toolkit.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

interface LogLine {
  event: string;
  [field: string]: unknown;
}

let invokeServer: ChildProcess;
let invokeUrl: string;
const lines: LogLine[] = [];
let server: RunningServer;

before(async () => {
  invokeServer = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'examples/lambda-consumer/invoke-server.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let partial = '';
  invokeServer.stdout?.on('data', (chunk: Buffer) => {
    partial += chunk.toString();
    const complete = partial.split('\n');
    partial = complete.pop() ?? '';
    for (const line of complete) if (line.trim().startsWith('{')) lines.push(JSON.parse(line) as LogLine);
  });
  await eventually(() => lines.some((line) => line.event === 'listening'), 'the invoke server', 30_000);
  invokeUrl = lines.find((line) => line.event === 'listening')!.url as string;
  server = await startServer({ args: ['--test-clock', '--lambda-endpoint', invokeUrl] });
});

after(async () => {
  await server?.stop();
  if (server) removeDataDir(server.dataDir);
  invokeServer?.kill('SIGTERM');
});

describe('docs/guide/lambda.md: a Lambda consumer tested locally', () => {
  it('processes good orders and sends a bad one to the dead-letter queue', async () => {
    const sqs = sqsClient(server.endpoint);
    const lambda = new LambdaClient({
      endpoint: server.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    try {
      const dlq = await sqs.send(new CreateQueueCommand({ QueueName: 'orders-dlq' }));
      const orders = await sqs.send(
        new CreateQueueCommand({
          QueueName: 'orders',
          Attributes: {
            VisibilityTimeout: '30',
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:orders-dlq',
              maxReceiveCount: 2,
            }),
          },
        }),
      );
      await lambda.send(
        new CreateEventSourceMappingCommand({
          FunctionName: 'orders-handler',
          EventSourceArn: 'arn:aws:sqs:us-east-1:000000000000:orders',
          BatchSize: 10,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        }),
      );
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: orders.QueueUrl,
          MessageBody: '{"orderId": "o-1", "amountCents": 500}',
        }),
      );
      await sqs.send(new SendMessageCommand({ QueueUrl: orders.QueueUrl, MessageBody: 'not an order' }));
      await eventually(
        () => lines.some((line) => line.event === 'order processed' && line.orderId === 'o-1'),
        'the good order',
        30_000,
      );
      const dlqCount = async () => {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: dlq.QueueUrl,
            AttributeNames: ['ApproximateNumberOfMessages'],
          }),
        );
        return Number(Attributes?.ApproximateNumberOfMessages);
      };
      // Past the visibility timeout, twice; each step is given time to act on before the next.
      const deadline = Date.now() + 90_000;
      while ((await dlqCount()) !== 1) {
        assert.ok(Date.now() < deadline, 'the bad order in the dead-letter queue');
        await advanceClock(server.endpoint, 31);
        await eventually(
          async () => (await dlqCount()) === 1,
          'the bad order in the dead-letter queue',
          5_000,
        ).catch(() => {});
      }
      assert.equal(lines.filter((line) => line.event === 'order failed').length, 2);
      const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq.QueueUrl }));
      assert.equal(Messages?.[0]?.Body, 'not an order');
    } finally {
      sqs.destroy();
      lambda.destroy();
    }
  });
});
