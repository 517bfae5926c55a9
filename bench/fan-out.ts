/**
 * SNS fan-out beside plain SQS sends, on one `sluice serve` (durable SQLite, the default) in one run: PublishBatch
 * (10 entries) to a topic with 1, 5 and 20 subscribed queues (raw delivery), against SendMessageBatch (10
 * entries) to one queue, each driven by the same number of concurrent loops through the AWS SDK; then consumers
 * (ReceiveMessage 10 + DeleteMessageBatch) drain every subscribed queue, and a plain queue as full. Prints ratios
 * to the plain case: deliveries committed per second (publishes x subscribers), publishes per second, and
 * deliveries received and deleted per second. Small and bounded by default (REQUESTS batches per case), loopback only.
 *   node --conditions=sluice-source --import tsx bench/fan-out.ts [REQUESTS] [CONCURRENCY]
 */
import { CreateTopicCommand, PublishBatchCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { removeDataDir, startServer } from '../tools/sluice-process.ts';

const REQUESTS = Number(process.argv[2] ?? 200);
const CONCURRENCY = Number(process.argv[3] ?? 8);
const SUBSCRIBERS = [1, 5, 20];
const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench' };
const body = 'x'.repeat(200);

const server = await startServer({ args: ['--log-level', 'warn'] });
const sqs = new SQSClient({ endpoint: server.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });
const sns = new SNSClient({ endpoint: server.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });

/** Runs `send` REQUESTS times over CONCURRENCY loops; the seconds it took. */
async function timed(send: (request: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) await send(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

const entries = (request: number) =>
  Array.from({ length: 10 }, (_, i) => ({ Id: String(i), body: `${request}-${i}-${body}` }));

let plainRuns = 0;
/** Messages per second sent in batches of 10 to a fresh queue, and the queue. */
async function plainSends(): Promise<{ rate: number; url: string }> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `plain-${plainRuns++}` }));
  const seconds = await timed((request) =>
    sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: entries(request).map((entry) => ({ Id: entry.Id, MessageBody: entry.body })),
      }),
    ),
  );
  return { rate: (REQUESTS * 10) / seconds, url: QueueUrl! };
}

/**
 * Messages received and deleted per second, draining `perQueue` messages from each of `urls` with CONCURRENCY
 * loops (ReceiveMessage 10 + DeleteMessageBatch), each loop taking the queues still holding messages in turn.
 */
async function drain(urls: readonly string[], perQueue: number): Promise<number> {
  const left = urls.map(() => perQueue);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, loop) => {
      for (let turn = loop; ; turn++) {
        const open = urls.flatMap((_url, index) => ((left[index] ?? 0) > 0 ? [index] : []));
        if (open.length === 0) return;
        const index = open[turn % open.length]!;
        const QueueUrl = urls[index]!;
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 600 }),
        );
        if (Messages.length === 0) continue;
        left[index] = (left[index] ?? 0) - Messages.length;
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl,
            Entries: Messages.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle })),
          }),
        );
      }
    }),
  );
  return (urls.length * perQueue) / ((performance.now() - started) / 1000);
}

/** Publishes per second to a topic with `subscribers` queues, and the queues. */
async function fanOut(subscribers: number): Promise<{ rate: number; urls: string[] }> {
  const urls: string[] = [];
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `fan-out-${subscribers}` }));
  for (let i = 0; i < subscribers; i++) {
    const QueueName = `fan-out-${subscribers}-${i}`;
    urls.push((await sqs.send(new CreateQueueCommand({ QueueName }))).QueueUrl!);
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'sqs',
        Endpoint: `arn:aws:sqs:us-east-1:000000000000:${QueueName}`,
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
  }
  const seconds = await timed((request) =>
    sns.send(
      new PublishBatchCommand({
        TopicArn,
        PublishBatchRequestEntries: entries(request).map((entry) => ({ Id: entry.Id, Message: entry.body })),
      }),
    ),
  );
  return { rate: (REQUESTS * 10) / seconds, urls };
}

try {
  // A first short pass warms the server and the clients (JIT, connections, the store's statements).
  await timed(() => sqs.send(new CreateQueueCommand({ QueueName: 'warm-up' })));
  const rows = [];
  const plains: number[] = [];
  for (const subscribers of SUBSCRIBERS) {
    // Plain sends just before and just after each fan-out case: on a shared machine the load moves, and the
    // ratio is against what the same server did around the same moment.
    const before = await plainSends();
    const published = await fanOut(subscribers);
    const plain = (before.rate + (await plainSends()).rate) / 2;
    plains.push(plain);
    // Then the consumers: every subscribed queue drained, against draining one plain queue as full.
    const drained = await drain(published.urls, REQUESTS * 10);
    const plainDrained = await drain([before.url], REQUESTS * 10);
    rows.push({
      subscribers,
      deliveriesVsPlainSends: Number(((published.rate * subscribers) / plain).toFixed(2)),
      publishesVsPlainSends: Number((published.rate / plain).toFixed(2)),
      drainedVsPlainDrained: Number((drained / plainDrained).toFixed(2)),
    });
  }
  const plain = plains.reduce((sum, rate) => sum + rate, 0) / plains.length;
  console.log(
    JSON.stringify({
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      plainMessagesPerSecond: Math.round(plain),
      rows,
    }),
  );
} finally {
  sqs.destroy();
  sns.destroy();
  await server.stop();
  removeDataDir(server.dataDir);
}
