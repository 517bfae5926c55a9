/**
 * The Producer's auto-batching against one SendMessage per message, on the same Sluice in the same run.
 * Standalone: `node --import tsx bench/producer.ts [--messages N]` starts Sluice in-process (127.0.0.1, a
 * temporary data dir); `npm run bench` calls `producerComparison` against its own started server.
 * Reports messages/s of each and their ratio, and the requests each needed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startSluice } from 'sluice';
import { Producer } from 'sluice-client';

/** Callers sending at once in the baseline, so it is not limited to one request at a time. */
const BASELINE_CONCURRENCY = 16;

export interface SendFigures {
  perSecond: number;
  requests: number;
}

export interface ProducerComparison {
  messages: number;
  single: SendFigures;
  batched: SendFigures;
  /** batched / single messages per second. */
  ratio: number;
}

export async function producerComparison(endpoint: string, messages: number): Promise<ProducerComparison> {
  let requests = 0;
  const sqs = new SQSClient({
    endpoint,
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
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: `${name}-${process.pid}-${Date.now()}` }),
    );
    return QueueUrl!;
  }

  async function timed(run: () => Promise<void>): Promise<SendFigures> {
    const before = requests;
    const start = performance.now();
    await run();
    const seconds = (performance.now() - start) / 1000;
    return { perSecond: Math.round(messages / seconds), requests: requests - before };
  }

  try {
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
    return { messages, single, batched, ratio: batched.perSecond / single.perSecond };
  } finally {
    sqs.destroy();
  }
}

export function renderProducerComparison(p: ProducerComparison): string {
  return [
    `SendMessage x${BASELINE_CONCURRENCY} callers: ${p.single.perSecond} msg/s, ${p.single.requests} requests`,
    `Producer (batches of 10):   ${p.batched.perSecond} msg/s, ${p.batched.requests} requests`,
    `ratio Producer / SendMessage: ${p.ratio.toFixed(2)}`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const flag = process.argv.indexOf('--messages');
  const messages = Math.min(100_000, Number(flag > 0 ? process.argv[flag + 1] : 3000));
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-bench-producer-'));
  const sluice = await startSluice({ port: 0, host: '127.0.0.1', dataDir, logLevel: 'silent' });
  try {
    const comparison = await producerComparison(sluice.endpoint, messages);
    console.log(`messages: ${messages} (SQLite durability 'durable')`);
    console.log(renderProducerComparison(comparison));
  } finally {
    await sluice.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
