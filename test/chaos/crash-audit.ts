/**
 * The crash audit: producers and consumers run against a real `sluice serve` while it is killed with
 * SIGKILL at random moments and restarted on the same data; every request's outcome is logged on the
 * client side (which is never killed), and the log is audited at the end:
 *
 *  - every acknowledged send was received at least once (retention is days, so nothing expires here);
 *  - a message without any delete attempt is still there when the queues are drained at the end;
 *  - no two receives of one message overlap its visibility timeout;
 *  - FIFO: each group's messages are first delivered in send order, and a retried send (same
 *    deduplication id) is never delivered as a second message;
 *  - DLQ: every poison message ends up in exactly one queue — the dead-letter queue once it was received
 *    maxReceiveCount times — with the same MessageId, never twice.
 *
 * A request cut off by a kill has an unknown outcome; it is logged as attempted, not acknowledged, and
 * the checks only rely on acknowledged ones. Producers retry unacknowledged sends (FIFO with the same
 * deduplication id), as real producers do.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningServer, startServer } from '../helpers/server.ts';

/** How to start the server on a given store; the PostgreSQL backend plugs in here with its own args. */
export interface StoreUnderTest {
  readonly label: string;
  /** `sluice serve` arguments after `--port` and `--data`. */
  readonly args: readonly string[];
}

export const sqliteStore = (durability: 'full' | 'durable' | 'normal' | 'off'): StoreUnderTest => ({
  label: `SQLite, durability ${durability}`,
  args: ['--durability', durability],
});

export interface AuditOptions {
  store: StoreUnderTest;
  kills: number;
  /** Random pause between a restart and the next kill. */
  minUptimeMs: number;
  maxUptimeMs: number;
  /** Producers per queue kind. */
  producers?: number;
  log?: (line: string) => void;
}

export interface AuditReport {
  kills: number;
  acknowledged: { sends: number; receives: number; deletes: number };
  attempted: { unknownOutcome: number };
  violations: string[];
}

const STANDARD = 'audit-std';
const FIFO = 'audit.fifo';
const SOURCE = 'audit-src';
const DLQ = 'audit-dlq';
const VISIBILITY_S = 2;
const POISON_VISIBILITY_S = 1;
const MAX_RECEIVE_COUNT = 2;

interface Received {
  body: string;
  messageId: string;
  receiptHandle: string;
  queue: string;
  started: number;
  ended: number;
  visibilityS: number;
}

class UnknownOutcome extends Error {}

/** One JSON-protocol call; throws UnknownOutcome when the connection broke (the server may have acted). */
class Client {
  constructor(private endpoint: () => string) {}
  async call<T>(action: string, input: object): Promise<T> {
    let response: Response;
    try {
      response = await fetch(this.endpoint(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
        body: JSON.stringify(input),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (error) {
      throw new UnknownOutcome(String(error));
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new UnknownOutcome(String(error));
    }
    if (response.status !== 200) throw new Error(`${action}: HTTP ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }
}

export async function runCrashAudit(options: AuditOptions): Promise<AuditReport> {
  const log = options.log ?? (() => {});
  let server: RunningServer = await startServer({ args: [...options.store.args] });
  const port = server.port;
  const dataDir = server.dataDir;
  const client = new Client(() => server.endpoint);
  const url = (name: string) => `${server.endpoint}/000000000000/${name}`;
  const acked = { sends: 0, receives: 0, deletes: 0 };
  let unknown = 0;
  const violations: string[] = [];

  await client.call('CreateQueue', {
    QueueName: STANDARD,
    Attributes: { VisibilityTimeout: String(VISIBILITY_S) },
  });
  await client.call('CreateQueue', {
    QueueName: FIFO,
    Attributes: { FifoQueue: 'true', VisibilityTimeout: String(VISIBILITY_S) },
  });
  await client.call('CreateQueue', { QueueName: DLQ });
  await client.call('CreateQueue', {
    QueueName: SOURCE,
    Attributes: {
      VisibilityTimeout: String(POISON_VISIBILITY_S),
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:${DLQ}`,
        maxReceiveCount: MAX_RECEIVE_COUNT,
      }),
    },
  });

  const sent = new Map<string, { queue: string; messageIds: Set<string> }>();
  const received: Received[] = [];
  const deleteAttempted = new Set<string>();
  let running = true;

  /** Retries a call until it is acknowledged (through kills); counts the attempts cut off. */
  async function untilAcked<T>(action: string, input: object): Promise<T> {
    for (;;) {
      try {
        return await client.call<T>(action, input);
      } catch (error) {
        if (error instanceof UnknownOutcome) unknown++;
        else if (!/HTTP 5\d\d/.test(String(error))) throw error;
        await sleep(50);
      }
    }
  }

  async function produce(queue: string, prefix: string, group?: string, pauseMs = 5): Promise<void> {
    for (let i = 0; running; i++) {
      const body = `${prefix}:${i}`;
      const input = {
        QueueUrl: url(queue),
        MessageBody: body,
        ...(group ? { MessageGroupId: group, MessageDeduplicationId: body } : {}),
      };
      const { MessageId } = await untilAcked<{ MessageId: string }>('SendMessage', input);
      acked.sends++;
      const entry = sent.get(body) ?? { queue, messageIds: new Set<string>() };
      entry.messageIds.add(MessageId);
      sent.set(body, entry);
      await sleep(pauseMs);
    }
  }

  async function receiveOnce(queue: string, visibilityS: number, waitS: number): Promise<Received[]> {
    const started = Date.now();
    const output = await client.call<{
      Messages?: Array<{ Body: string; MessageId: string; ReceiptHandle: string }>;
    }>('ReceiveMessage', {
      QueueUrl: url(queue),
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitS,
      VisibilityTimeout: visibilityS,
    });
    const ended = Date.now();
    const batch = (output.Messages ?? []).map((m) => ({
      body: m.Body,
      messageId: m.MessageId,
      receiptHandle: m.ReceiptHandle,
      queue,
      started,
      ended,
      visibilityS,
    }));
    acked.receives += batch.length;
    received.push(...batch);
    return batch;
  }

  async function consume(queue: string, deleteThem: boolean): Promise<void> {
    while (running) {
      let batch: Received[];
      try {
        batch = await receiveOnce(queue, queue === SOURCE ? POISON_VISIBILITY_S : VISIBILITY_S, 1);
      } catch (error) {
        if (error instanceof UnknownOutcome) unknown++;
        await sleep(50);
        continue;
      }
      for (const message of batch) {
        // One in ten is left undeleted, to be redelivered after its visibility timeout.
        if (!deleteThem || Math.random() < 0.1) continue;
        deleteAttempted.add(message.body);
        try {
          await client.call('DeleteMessage', { QueueUrl: url(queue), ReceiptHandle: message.receiptHandle });
          acked.deletes++;
        } catch (error) {
          if (error instanceof UnknownOutcome) unknown++;
        }
      }
    }
  }

  const producers = options.producers ?? 2;
  const workers = [
    ...Array.from({ length: producers }, (_, p) => produce(STANDARD, `std${p}`)),
    ...Array.from({ length: producers }, (_, p) => produce(FIFO, `fifo${p}`, `g${p}`)),
    produce(SOURCE, 'poison', undefined, 50),
    consume(STANDARD, true),
    consume(STANDARD, true),
    consume(FIFO, true),
    consume(SOURCE, false),
  ];

  for (let kill = 1; kill <= options.kills; kill++) {
    await sleep(options.minUptimeMs + Math.random() * (options.maxUptimeMs - options.minUptimeMs));
    await server.kill();
    const restarting = Date.now();
    server = await startServer({ dataDir, port, args: [...options.store.args] });
    log(
      `kill ${kill}/${options.kills}: restarted in ${Date.now() - restarting} ms (${acked.sends} sends acknowledged so far)`,
    );
  }
  running = false;
  await Promise.all(workers);

  // Drain: receive everything left, until nothing has come for longer than any visibility timeout. Poison
  // messages keep cycling until each has been received maxReceiveCount times and moved to the DLQ.
  const drainStarted = Date.now();
  const remaining = new Map<string, string[]>();
  let quietSince = Date.now();
  while (Date.now() - quietSince < (VISIBILITY_S + 1) * 1000) {
    let got = 0;
    for (const queue of [STANDARD, FIFO, SOURCE, DLQ]) {
      const batch = await receiveOnce(queue, queue === DLQ ? 3600 : 1, 0);
      got += batch.length;
      for (const message of batch) {
        if (queue === SOURCE) continue; // still on its way to the DLQ
        const where = remaining.get(message.body) ?? [];
        where.push(`${queue}:${message.messageId}`);
        remaining.set(message.body, where);
        if (queue !== DLQ)
          await client.call('DeleteMessage', { QueueUrl: url(queue), ReceiptHandle: message.receiptHandle });
      }
    }
    if (got > 0) quietSince = Date.now();
    else await sleep(100);
  }
  log(`drained in ${Date.now() - drainStarted} ms`);
  await server.stop();

  // 1 and 2: received at least once; still present unless a delete was attempted.
  const receivedBodies = new Set(received.map((r) => r.body));
  for (const [body, { queue, messageIds }] of sent) {
    if (!receivedBodies.has(body)) violations.push(`${queue} ${body}: acknowledged send never received`);
    if (queue !== SOURCE && !deleteAttempted.has(body) && !remaining.has(body))
      violations.push(`${queue} ${body}: gone without any delete`);
    if (queue === FIFO && messageIds.size > 1)
      violations.push(`${body}: one deduplication id acknowledged as ${messageIds.size} messages`);
  }
  // 3: no overlapping deliveries (a later receive ending before an earlier one's start + timeout).
  const byMessage = new Map<string, Received[]>();
  for (const r of received) {
    if (r.queue === DLQ) continue;
    const list = byMessage.get(`${r.queue}:${r.messageId}`) ?? [];
    list.push(r);
    byMessage.set(`${r.queue}:${r.messageId}`, list);
  }
  for (const [key, list] of byMessage) {
    list.sort((a, b) => a.ended - b.ended);
    for (let i = 1; i < list.length; i++) {
      const previous = list[i - 1]!;
      if (list[i]!.ended < previous.started + previous.visibilityS * 1000)
        violations.push(
          `${key}: delivered again ${previous.started + previous.visibilityS * 1000 - list[i]!.ended} ms inside its visibility timeout`,
        );
    }
  }
  // 4: FIFO first deliveries in send order per group; one message per deduplication id.
  const firstSeen = new Map<string, number>();
  for (const r of [...received].sort((a, b) => a.ended - b.ended)) {
    if (r.queue === FIFO && !firstSeen.has(r.body)) firstSeen.set(r.body, firstSeen.size);
  }
  for (let p = 0; p < producers; p++) {
    const order = [...firstSeen.entries()]
      .filter(([body]) => body.startsWith(`fifo${p}:`))
      .sort((a, b) => a[1] - b[1])
      .map(([body]) => Number(body.split(':')[1]));
    for (let i = 1; i < order.length; i++) {
      if (order[i]! < order[i - 1]!)
        violations.push(`FIFO group g${p}: message ${order[i]} first delivered after ${order[i - 1]}`);
    }
  }
  const fifoIds = new Map<string, Set<string>>();
  for (const r of received) {
    if (r.queue !== FIFO) continue;
    const ids = fifoIds.get(r.body) ?? new Set<string>();
    ids.add(r.messageId);
    fifoIds.set(r.body, ids);
  }
  for (const [body, ids] of fifoIds) {
    if (ids.size > 1) violations.push(`FIFO ${body}: delivered as ${ids.size} different messages`);
  }
  // 5: every acknowledged poison message is in the DLQ exactly once, under the MessageId it was sent as.
  // (A send retried after a kill may have been stored twice, as two messages: each is checked on its own.)
  for (const [body, { queue, messageIds }] of sent) {
    if (queue !== SOURCE) continue;
    const where = remaining.get(body) ?? [];
    for (const id of messageIds) {
      const copies = where.filter((w) => w === `${DLQ}:${id}`).length;
      if (copies !== 1) violations.push(`${body} (${id}): in the DLQ ${copies} times (${where.join(', ')})`);
    }
    if (where.some((w) => !w.startsWith(`${DLQ}:`)))
      violations.push(`${body}: outside the DLQ (${where.join(', ')})`);
  }
  return { kills: options.kills, acknowledged: acked, attempted: { unknownOutcome: unknown }, violations };
}
