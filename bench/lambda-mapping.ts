/**
 * Throughput of an event source mapping against a no-op function (batch size 10, and 100 with a 1 s window)
 * beside a plain consumer (5 loops of ReceiveMessage 10 + DeleteMessageBatch, as many as the mapping's
 * default pollers) on the same server in the same run: records per second to drain a queue of N messages.
 *   node --conditions=sluice-source --import tsx bench/lambda-mapping.ts [N]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateEventSourceMappingCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { removeDataDir, startServer } from '../tools/sluice-process.ts';

const N = Number(process.argv[2] ?? 3000);
const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench' };

const fn = createServer((request, response) => {
  request.resume();
  request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('null'));
});
await new Promise<void>((resolve) => fn.listen(0, '127.0.0.1', resolve));
const fnUrl = `http://127.0.0.1:${(fn.address() as AddressInfo).port}`;
const server = await startServer({ args: ['--lambda-endpoint', fnUrl, '--log-level', 'warn'] });
const sqs = new SQSClient({ endpoint: server.endpoint, region: 'us-east-1', credentials });
const lambda = new LambdaClient({ endpoint: server.endpoint, region: 'us-east-1', credentials });

async function filledQueue(name: string): Promise<string> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  const batches = Array.from({ length: Math.ceil(N / 10) }, (_, b) => b);
  for (let start = 0; start < batches.length; start += 20)
    await Promise.all(
      batches.slice(start, start + 20).map((b) =>
        sqs.send(
          new SendMessageBatchCommand({
            QueueUrl,
            Entries: Array.from({ length: Math.min(10, N - b * 10) }, (_, i) => ({
              Id: String(i),
              MessageBody: `m-${b}-${i}`,
            })),
          }),
        ),
      ),
    );
  return QueueUrl!;
}

async function drained(url: string): Promise<void> {
  for (;;) {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    if (
      Attributes?.ApproximateNumberOfMessages === '0' &&
      Attributes.ApproximateNumberOfMessagesNotVisible === '0'
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function mapping(name: string, batchSize: number, window: number): Promise<number> {
  const url = await filledQueue(name);
  const started = performance.now();
  await lambda.send(
    new CreateEventSourceMappingCommand({
      EventSourceArn: `arn:aws:sqs:us-east-1:000000000000:${name}`,
      FunctionName: 'noop',
      BatchSize: batchSize,
      MaximumBatchingWindowInSeconds: window,
    }),
  );
  await drained(url);
  return N / ((performance.now() - started) / 1000);
}

async function plainConsumer(name: string): Promise<number> {
  const url = await filledQueue(name);
  const started = performance.now();
  let left = N;
  await Promise.all(
    Array.from({ length: 5 }, async () => {
      while (left > 0) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        );
        if (Messages.length === 0) continue;
        left -= Messages.length;
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: url,
            Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
      }
    }),
  );
  await drained(url);
  return N / ((performance.now() - started) / 1000);
}

try {
  const results = {
    messages: N,
    plainConsumer: Math.round(await plainConsumer('plain')),
    mappingBatch10: Math.round(await mapping('mapped-10', 10, 0)),
    mappingBatch100Window1s: Math.round(await mapping('mapped-100', 100, 1)),
  };
  console.log(JSON.stringify(results));
} finally {
  sqs.destroy();
  lambda.destroy();
  await server.stop();
  removeDataDir(server.dataDir);
  fn.close();
}
