/**
 * The PostgreSQL backend against SQLite in the same run: produce and consume throughput on SQLite (durable),
 * on one PostgreSQL node and on three nodes sharing one database (requests spread over the nodes), as ratios
 * to SQLite, for a standard and a FIFO queue; and the cross-node long-poll wake latency (a receive parked on
 * node A, the send through node B).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase } from '../tools/postgres.ts';
import type { QueueClient } from './client.ts';
import { makeRawClient } from './raw-client.ts';
import { makeBody } from './scenarios.ts';
import { now, round, type Summary, summarize } from './stats.ts';
import { type RunningTarget, SLUICE_BIN, spawnListening } from './targets.ts';

export interface PostgresBenchOptions {
  messages: number;
  /** Concurrent producers, and as many consumers. */
  concurrency: number;
  wakeSamples: number;
  log: (line: string) => void;
}

/** The FIFO runs' groups: four per consumer, so most groups are free whenever a receive looks. */
const FIFO_GROUPS_PER_CONSUMER = 4;

interface Throughput {
  label: string;
  nodes: number;
  queue: 'standard' | 'FIFO';
  produceMsgsPerS: number;
  consumeMsgsPerS: number;
}

export interface PostgresBenchResult {
  messages: number;
  rows: Array<Throughput & { produceRatio: number; consumeRatio: number }>;
  /** Milliseconds from the start of a send on node B to the return of the receive parked on node A. */
  crossNodeWakeMs: Summary | null;
  /** The same with both on one SQLite server, for comparison. */
  sameNodeWakeMs: Summary | null;
}

/** A `sluice serve` on 127.0.0.1 with its own data directory (removed when it stops), stopped on Ctrl-C too. */
function startNode(args: string[]): Promise<RunningTarget> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-bench-pg-'));
  return spawnListening(
    'sluice-pg',
    process.execPath,
    [
      SLUICE_BIN,
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--data',
      dataDir,
      '--log-level',
      'warn',
      ...args,
    ],
    /listening on (http:\/\/[^\s]+)/,
    () => rmSync(dataDir, { recursive: true, force: true }),
  );
}

/** Produces then consumes `messages` with requests spread round-robin over the nodes. */
async function throughput(
  label: string,
  nodes: RunningTarget[],
  queue: Throughput['queue'],
  options: PostgresBenchOptions,
): Promise<Throughput> {
  const clients = nodes.map((node) => makeRawClient(node.endpoint));
  const fifo = queue === 'FIFO';
  const groups = options.concurrency * FIFO_GROUPS_PER_CONSUMER;
  try {
    const name = `bench-pg-${Date.now()}${fifo ? '.fifo' : ''}`;
    await clients[0]!.createQueue(name, { VisibilityTimeout: '120', ...(fifo ? { FifoQueue: 'true' } : {}) });
    const urls = nodes.map((node) => `${node.endpoint}/000000000000/${name}`);
    let turn = 0;
    const pick = (): [QueueClient, string] => {
      const index = turn++ % nodes.length;
      return [clients[index]!, urls[index]!];
    };
    const batches = Math.ceil(options.messages / 10);
    let nextBatch = 0;
    const t0 = now();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (nextBatch < batches) {
          const batch = nextBatch++;
          const [client, url] = pick();
          await client.sendMessageBatch(
            url,
            Array.from({ length: 10 }, (_, i) => {
              const seq = batch * 10 + i;
              const entry = { Id: `m${i}`, MessageBody: makeBody(seq, now()) };
              return fifo
                ? { ...entry, MessageGroupId: `g${seq % groups}`, MessageDeduplicationId: String(seq) }
                : entry;
            }),
          );
        }
      }),
    );
    const produceS = (now() - t0) / 1000;
    let consumed = 0;
    const t1 = now();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (consumed < batches * 10) {
          const [client, url] = pick();
          const messages = await client.receiveMessage(url, 10, 1);
          if (messages.length === 0) continue;
          consumed += messages.length;
          await client.deleteMessageBatch(
            url,
            messages.map((message, i) => ({ Id: `d${i}`, ReceiptHandle: message.ReceiptHandle! })),
          );
        }
      }),
    );
    const consumeS = (now() - t1) / 1000;
    const result = {
      label,
      nodes: nodes.length,
      queue,
      produceMsgsPerS: round((batches * 10) / produceS, 0),
      consumeMsgsPerS: round((batches * 10) / consumeS, 0),
    };
    options.log(
      `postgres bench: ${label} ${queue}: produce ${result.produceMsgsPerS}/s, consume ${result.consumeMsgsPerS}/s`,
    );
    return result;
  } finally {
    for (const client of clients) client.close();
  }
}

/** A receive parked on `waiter`, then a send through `sender`: how long until the receive returns. */
async function wakeLatency(
  waiter: RunningTarget,
  sender: RunningTarget,
  samples: number,
): Promise<Summary | null> {
  const waitClient = makeRawClient(waiter.endpoint);
  const sendClient = makeRawClient(sender.endpoint);
  try {
    const name = `bench-wake-${Date.now()}`;
    await waitClient.createQueue(name, {});
    const waitUrl = `${waiter.endpoint}/000000000000/${name}`;
    const sendUrl = `${sender.endpoint}/000000000000/${name}`;
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const receiving = waitClient
        .receiveMessage(waitUrl, 1, 5)
        .then((messages) => ({ messages, at: now() }));
      await new Promise((resolve) => setTimeout(resolve, 30)); // let the receive park
      const sentAt = now();
      await sendClient.sendMessage(sendUrl, `wake ${i}`);
      const { messages, at } = await receiving;
      if (messages[0]?.ReceiptHandle) {
        latencies.push(at - sentAt);
        await waitClient.deleteMessage(waitUrl, messages[0].ReceiptHandle);
      }
    }
    return summarize(latencies);
  } finally {
    waitClient.close();
    sendClient.close();
  }
}

export async function postgresComparison(options: PostgresBenchOptions): Promise<PostgresBenchResult> {
  const rows: Throughput[] = [];
  let crossNodeWakeMs: Summary | null = null;
  let sameNodeWakeMs: Summary | null = null;
  const queues: Array<Throughput['queue']> = ['standard', 'FIFO'];
  const sqlite = await startNode(['--durability', 'durable']);
  try {
    for (const queue of queues) rows.push(await throughput('sqlite durable', [sqlite], queue, options));
    sameNodeWakeMs = await wakeLatency(sqlite, sqlite, options.wakeSamples);
  } finally {
    await sqlite.stop();
  }
  for (const count of [1, 3]) {
    const database = await freshDatabase();
    const nodes: RunningTarget[] = [];
    try {
      for (let i = 0; i < count; i++) nodes.push(await startNode(['--store', database.url]));
      for (const queue of queues)
        rows.push(await throughput(`postgres ${count} node${count > 1 ? 's' : ''}`, nodes, queue, options));
      if (count > 1) crossNodeWakeMs = await wakeLatency(nodes[0]!, nodes[1]!, options.wakeSamples);
    } finally {
      for (const node of nodes) await node.stop();
      await database.drop();
    }
  }
  // Each row against SQLite's with the same kind of queue.
  const baseOf = (queue: Throughput['queue']) => rows.find((row) => row.queue === queue)!;
  return {
    messages: options.messages,
    rows: rows.map((row) => ({
      ...row,
      produceRatio: round(row.produceMsgsPerS / baseOf(row.queue).produceMsgsPerS, 2),
      consumeRatio: round(row.consumeMsgsPerS / baseOf(row.queue).consumeMsgsPerS, 2),
    })),
    crossNodeWakeMs,
    sameNodeWakeMs,
  };
}

export function renderPostgres(result: PostgresBenchResult): string {
  const lines = [
    `PostgreSQL backend vs SQLite (durable), ${result.messages} messages, same run (ratios to SQLite's run` +
      ' with the same kind of queue):',
    ...result.rows.map(
      (row) =>
        `  ${row.label.padEnd(16)} ${row.queue.padEnd(8)}` +
        ` produce ${String(row.produceMsgsPerS).padStart(6)}/s (x${row.produceRatio})` +
        `  consume ${String(row.consumeMsgsPerS).padStart(6)}/s (x${row.consumeRatio})`,
    ),
  ];
  const wake = (summary: Summary | null) =>
    summary ? `p50 ${round(summary.p50, 1)} ms, p99 ${round(summary.p99, 1)} ms (n=${summary.count})` : 'n/a';
  lines.push(`  long-poll wake, send on node B -> receive on node A: ${wake(result.crossNodeWakeMs)}`);
  lines.push(`  long-poll wake, same SQLite node:                    ${wake(result.sameNodeWakeMs)}`);
  return lines.join('\n');
}
