/**
 * The Consumer (src/client/consumer.ts) against a hand-written receive/delete loop with the same
 * concurrency, on one started Sluice, in the same run; and the heartbeat's request cost, counted on the
 * server (/metrics). `npm run bench` runs it after the targets (see bench/README.md, "Client toolkit").
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { FakeClock } from 'sluice';
import { Consumer } from 'sluice-client';
import { answeredRequests } from '../tools/metrics.ts';
import { now, round, sleep } from './stats.ts';

/** Handlers (Consumer) or loops (baseline) at once, as the issue asks. */
export const HANDLERS = 16;
/** The queue default: the heartbeat then runs every 10 s (a third of it). */
const DEFAULT_VISIBILITY_SECONDS = 30;
/** Handler time the heartbeat cost is measured over, on the consumer's FakeClock. */
const HEARTBEAT_WINDOW_MS = 60_000;
/** Server actions a consumer or the baseline sends per message. */
const MESSAGE_ACTIONS = [
  'ReceiveMessage',
  'DeleteMessage',
  'DeleteMessageBatch',
  'ChangeMessageVisibility',
  'ChangeMessageVisibilityBatch',
];

export interface Throughput {
  messages: number;
  perSecond: number;
  /** Requests the server answered for these messages, per message. */
  requestsPerMessage: number;
  /** Messages still in the queue afterwards (should be 0). */
  left: number;
}

export interface ConsumerRun {
  workMs: number;
  /** 16 loops of receive 1 / work / DeleteMessage: the loop people write first. */
  single: Throughput;
  /** 16 loops of receive 10 / work each in turn / DeleteMessageBatch: the same batching the Consumer does. */
  batched: Throughput;
  consumer: Throughput;
  /** consumer / single and consumer / batched messages per second. */
  ratioToSingle: number;
  ratioToBatched: number;
}

export interface HeartbeatCost {
  visibilityTimeoutSeconds: number;
  intervalSeconds: number;
  messages: number;
  /** ChangeMessageVisibilityBatch requests answered per message per minute of handler time. */
  requestsPerMessageMinute: number;
  /** What one heartbeat per interval per message makes: 60 / interval. */
  expected: number;
}

export interface ConsumerBench {
  runs: ConsumerRun[];
  heartbeat: HeartbeatCost;
}

/** Rounds of the three throughput variants per work time; the median round of each is reported. */
const ROUNDS = 3;

function median(rounds: Throughput[]): Throughput {
  const sorted = [...rounds].sort((a, b) => a.perSecond - b.perSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function work(ms: number): Promise<void> {
  return ms > 0 ? sleep(ms) : Promise.resolve();
}

export async function consumerBench(
  endpoint: string,
  messages: number,
  timeLimitMs: number,
  log: (message: string) => void,
): Promise<ConsumerBench> {
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    maxAttempts: 1,
  });
  let queues = 0;
  const createQueue = async (attributes?: Record<string, string>): Promise<string> => {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `bench-consumer-${process.pid}-${++queues}`,
        Attributes: attributes,
      }),
    );
    return QueueUrl!;
  };
  const requests = async (actions: readonly string[]): Promise<number> => {
    let sum = 0;
    for (const action of actions) sum += await answeredRequests(endpoint, action);
    return sum;
  };
  const left = async (queueUrl: string): Promise<number> => {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(Attributes.ApproximateNumberOfMessages) +
      Number(Attributes.ApproximateNumberOfMessagesNotVisible)
    );
  };
  const fill = async (queueUrl: string, count: number): Promise<void> => {
    let next = 0;
    await Promise.all(
      Array.from({ length: HANDLERS }, async () => {
        while (next < count) {
          const first = next;
          next = Math.min(count, next + 10);
          const entries = Array.from({ length: next - first }, (_, i) => ({
            Id: String(i),
            MessageBody: `message ${first + i}`,
          }));
          await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
        }
      }),
    );
  };
  /** Fills a fresh queue, then times `drain` until `count` messages were handled and deleted. */
  const measure = async (count: number, drain: (queueUrl: string, deadline: number) => Promise<number>) => {
    const queueUrl = await createQueue();
    await fill(queueUrl, count);
    const before = await requests(MESSAGE_ACTIONS);
    const start = now();
    const done = await drain(queueUrl, start + timeLimitMs);
    const seconds = (now() - start) / 1000;
    const used = (await requests(MESSAGE_ACTIONS)) - before;
    return {
      messages: done,
      perSecond: Math.round(done / seconds),
      requestsPerMessage: round(used / Math.max(1, done), 2),
      left: await left(queueUrl),
    };
  };

  try {
    const runs: ConsumerRun[] = [];
    for (const workMs of [0, 50]) {
      // 50 ms handlers cap 16 of them at 320 msg/s: a quarter of the messages keeps that run as short.
      const count = workMs === 0 ? messages : Math.max(HANDLERS, Math.round(messages / 4));
      type Variant = 'single' | 'batched' | 'consumer';
      const drains: Record<Variant, (queueUrl: string, deadline: number) => Promise<number>> = {
        single: (queueUrl, deadline) => handWrittenLoop(queueUrl, count, workMs, 1, deadline),
        batched: (queueUrl, deadline) => handWrittenLoop(queueUrl, count, workMs, 10, deadline),
        consumer: (queueUrl, deadline) => throughConsumer(queueUrl, count, workMs, deadline),
      };
      const order: Variant[] = ['single', 'batched', 'consumer'];
      const measured: Record<Variant, Throughput[]> = { single: [], batched: [], consumer: [] };
      // The shared machine's load drifts: rounds in rotated order, and the median round of each, keep one
      // variant from getting all the quiet moments.
      for (let r = 0; r < ROUNDS; r++) {
        for (const variant of [...order.slice(r % 3), ...order.slice(0, r % 3)]) {
          measured[variant].push(await measure(count, drains[variant]));
        }
      }
      const [single, batched, consumer] = order.map((v) => median(measured[v])) as [
        Throughput,
        Throughput,
        Throughput,
      ];
      const run: ConsumerRun = {
        workMs,
        single,
        batched,
        consumer,
        ratioToSingle: round(consumer.perSecond / Math.max(1, single.perSecond), 2),
        ratioToBatched: round(consumer.perSecond / Math.max(1, batched.perSecond), 2),
      };
      log(
        `${workMs} ms work: Consumer ${consumer.perSecond} msg/s, loops of 1 ${single.perSecond}, loops of 10 ${batched.perSecond}`,
      );
      runs.push(run);
    }
    const heartbeat = await heartbeatCost();
    log(
      `heartbeat: ${heartbeat.requestsPerMessageMinute} requests per message per minute (expected ${heartbeat.expected})`,
    );
    return { runs, heartbeat };
  } finally {
    sqs.destroy();
  }

  /**
   * What people write by hand: 16 loops, each receives up to `batchSize` messages, works through them one
   * after the other (so 16 handlers run at once, as in the Consumer) and deletes them (one DeleteMessage, or
   * one DeleteMessageBatch for the lot). No heartbeat, no backoff, no events.
   */
  async function handWrittenLoop(
    queueUrl: string,
    count: number,
    workMs: number,
    batchSize: number,
    deadline: number,
  ) {
    let done = 0;
    await Promise.all(
      Array.from({ length: HANDLERS }, async () => {
        while (done < count && now() < deadline) {
          const { Messages = [] } = await sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: queueUrl,
              MaxNumberOfMessages: batchSize,
              WaitTimeSeconds: 1,
            }),
          );
          if (Messages.length === 0) continue;
          for (const _ of Messages) await work(workMs);
          if (batchSize === 1) {
            await sqs.send(
              new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: Messages[0]!.ReceiptHandle }),
            );
          } else {
            await sqs.send(
              new DeleteMessageBatchCommand({
                QueueUrl: queueUrl,
                Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
              }),
            );
          }
          done += Messages.length;
        }
      }),
    );
    return done;
  }

  /** The bench's Consumer: 16 handlers, short long polls (so stop() returns soon), no signal handlers. */
  function benchConsumer(queueUrl: string, handler: () => Promise<void>, clock?: FakeClock): Consumer {
    return new Consumer({
      sqs,
      queueUrl,
      concurrency: HANDLERS,
      waitTimeSeconds: 1,
      stopOnSignals: [],
      handler,
      ...(clock ? { clock } : {}),
    });
  }

  /** Timed until stop() sent the last deletes. */
  async function throughConsumer(queueUrl: string, count: number, workMs: number, deadline: number) {
    let done = 0;
    let allDone!: () => void;
    const finished = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    const consumer = benchConsumer(queueUrl, () => work(workMs));
    consumer.on('processed', () => {
      if (++done >= count) allDone();
    });
    await consumer.start();
    await Promise.race([finished, sleep(Math.max(0, deadline - now()))]);
    await consumer.stop();
    return done;
  }

  /**
   * 16 handlers that run one minute on the consumer's FakeClock (the server keeps real time; each heartbeat
   * asks it for another full timeout), at the default interval for the default 30 s timeout.
   */
  async function heartbeatCost(): Promise<HeartbeatCost> {
    const queueUrl = await createQueue({ VisibilityTimeout: String(DEFAULT_VISIBILITY_SECONDS) });
    await fill(queueUrl, HANDLERS);
    const clock = new FakeClock(Date.now());
    let started = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const consumer = benchConsumer(
      queueUrl,
      async () => {
        started++;
        await released;
      },
      clock,
    );
    await consumer.start();
    const until = now() + timeLimitMs;
    while (started < HANDLERS && now() < until) await sleep(5);
    const before = await answeredRequests(endpoint, 'ChangeMessageVisibilityBatch');
    await clock.advance(HEARTBEAT_WINDOW_MS);
    const heartbeats = (await answeredRequests(endpoint, 'ChangeMessageVisibilityBatch')) - before;
    release();
    await consumer.stop();
    const intervalSeconds = consumer.visibilityTimeoutSeconds / 3;
    return {
      visibilityTimeoutSeconds: consumer.visibilityTimeoutSeconds,
      intervalSeconds,
      messages: started,
      requestsPerMessageMinute: round(heartbeats / Math.max(1, started) / (HEARTBEAT_WINDOW_MS / 60_000), 2),
      expected: round(60 / intervalSeconds, 2),
    };
  }
}

export function renderConsumerBench(bench: ConsumerBench): string {
  const lines = [
    `Consumer vs hand-written receive/work/delete loops, ${HANDLERS} handlers at once in each (msg/s, requests per message):`,
  ];
  const figures = (t: Throughput): string =>
    `${t.perSecond} msg/s, ${t.requestsPerMessage} req/msg${t.left > 0 ? `, ${t.left} LEFT in queue` : ''}`;
  for (const run of bench.runs) {
    lines.push(
      `  ${String(run.workMs).padStart(2)} ms work: Consumer ${figures(run.consumer)}; loops of 1 ${figures(run.single)}; ` +
        `loops of 10 ${figures(run.batched)}`,
      `             ratio Consumer / loops of 1 ${run.ratioToSingle.toFixed(2)}, Consumer / loops of 10 ${run.ratioToBatched.toFixed(2)}`,
    );
  }
  const h = bench.heartbeat;
  lines.push(
    `Heartbeat (visibility ${h.visibilityTimeoutSeconds} s, every ${h.intervalSeconds} s, ${h.messages} handlers): ` +
      `${h.requestsPerMessageMinute} ChangeMessageVisibilityBatch requests per message per minute of handler time, ` +
      `ratio to 60 s / interval ${(h.requestsPerMessageMinute / h.expected).toFixed(2)}`,
  );
  return lines.join('\n');
}
