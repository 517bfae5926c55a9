/**
 * The Producer's auto-batching against one SendMessage per message, on the same in-process Sluice in the
 * same run (127.0.0.1, a temporary data dir): `node --import tsx bench/producer.ts [--messages N]`.
 * Reports messages/s of each and their ratio, and the requests each needed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Producer } from '../src/client/index.ts';
import { startSluice } from '../src/index.ts';

const flag = process.argv.indexOf('--messages');
const messages = Math.min(100_000, Number(flag > 0 ? process.argv[flag + 1] : 3000));
/** Callers sending at once in the baseline, so it is not limited to one request at a time. */
const BASELINE_CONCURRENCY = 16;

const dataDir = mkdtempSync(join(tmpdir(), 'sluice-bench-producer-'));
const sluice = await startSluice({ port: 0, host: '127.0.0.1', dataDir, logLevel: 'silent' });
let requests = 0;
const sqs = new SQSClient({
  endpoint: sluice.endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
});
sqs.middlewareStack.add(
  (next) => (args) => {
    requests++;
    return next(args);
  },
  { step: 'initialize', name: 'countRequests' },
);

async function queue(name: string): Promise<string> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-${process.pid}` }));
  return QueueUrl!;
}

async function timed(run: () => Promise<void>): Promise<{ perSecond: number; requests: number }> {
  const before = requests;
  const start = performance.now();
  await run();
  const seconds = (performance.now() - start) / 1000;
  return { perSecond: Math.round(messages / seconds), requests: requests - before };
}

const singleUrl = await queue('bench-single');
const single = await timed(async () => {
  let next = 0;
  await Promise.all(
    Array.from({ length: BASELINE_CONCURRENCY }, async () => {
      while (next < messages) {
        const i = next++;
        await sqs.send(new SendMessageCommand({ QueueUrl: singleUrl, MessageBody: `message ${i}` }));
      }
    }),
  );
});
const batchedUrl = await queue('bench-producer');
const producer = new Producer({ client: sqs, queueUrl: batchedUrl });
const batched = await timed(async () => {
  await Promise.all(
    Array.from({ length: messages }, (_, i) => producer.send({ MessageBody: `message ${i}` })),
  );
});
await producer.close();
sqs.destroy();
await sluice.close();
rmSync(dataDir, { recursive: true, force: true });

console.log(`messages: ${messages} (SQLite durability 'durable')`);
console.log(
  `SendMessage x${BASELINE_CONCURRENCY} callers: ${single.perSecond} msg/s, ${single.requests} requests`,
);
console.log(`Producer (batches of 10):   ${batched.perSecond} msg/s, ${batched.requests} requests`);
console.log(`ratio Producer / SendMessage: ${(batched.perSecond / single.perSecond).toFixed(2)}`);
