/**
 * SNS fan-out beside plain SQS sends, on one `sluice serve` (durable SQLite, the default) in one run: PublishBatch
 * (10 entries) to a topic with 1, 5 and 20 subscribed queues (raw delivery), against SendMessageBatch (10
 * entries) to one queue, each driven by the same number of concurrent loops through the AWS SDK. Prints the
 * rates and their ratios to the plain sends: deliveries committed per second (publishes x subscribers) and
 * publishes per second. Small and bounded by default (REQUESTS batches per case), loopback only.
 *   node --conditions=sluice-source --import tsx bench/fan-out.ts [REQUESTS] [CONCURRENCY]
 */
import { CreateTopicCommand, PublishBatchCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
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
async function plainSends(): Promise<number> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `plain-${plainRuns++}` }));
  const seconds = await timed((request) =>
    sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: entries(request).map((entry) => ({ Id: entry.Id, MessageBody: entry.body })),
      }),
    ),
  );
  return (REQUESTS * 10) / seconds;
}

/** Publishes per second to a topic with `subscribers` queues. */
async function fanOut(subscribers: number): Promise<number> {
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `fan-out-${subscribers}` }));
  for (let i = 0; i < subscribers; i++) {
    const QueueName = `fan-out-${subscribers}-${i}`;
    await sqs.send(new CreateQueueCommand({ QueueName }));
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
  return (REQUESTS * 10) / seconds;
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
    const publishes = await fanOut(subscribers);
    const plain = (before + (await plainSends())) / 2;
    plains.push(plain);
    rows.push({
      subscribers,
      deliveriesVsPlainSends: Number(((publishes * subscribers) / plain).toFixed(2)),
      publishesVsPlainSends: Number((publishes / plain).toFixed(2)),
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
