import type { SendEntry } from './client.ts';
import {
  type ConsumeResult,
  type Ctx,
  consume,
  createQueue,
  deleteAll,
  Errors,
  makeBody,
  type ProduceResult,
  parseBody,
  produce,
  receiveOrBackOff,
} from './scenarios.ts';
import { now, round } from './stats.ts';

/** The FIFO workload: 100 groups, batch sends, receive + delete with 4 consumers. */
export const FIFO_GROUPS = 100;
export const FIFO_CONSUMERS = 4;

export interface QueueRun {
  produce: ProduceResult;
  consume: ConsumeResult;
  /** Acknowledged and then consumed, over the time of both phases. */
  endToEndPerSec: number;
}

export interface FifoComparison {
  messages: number;
  standard: QueueRun;
  fifo: QueueRun;
  /** fifo.endToEndPerSec / standard.endToEndPerSec, both measured here on the same server. */
  ratio: number;
}

async function produceThenConsume(
  ctx: Ctx,
  queueUrl: string,
  n: number,
  producers: number,
  timeLimitMs: number,
  fifo: boolean,
): Promise<QueueRun> {
  const keys = fifo ? { groupOf: (seq: number) => `g${seq % FIFO_GROUPS}`, deduplicate: true } : undefined;
  const produced = await produce(ctx, queueUrl, n, producers, timeLimitMs, keys);
  const consumed = await consume(
    ctx,
    queueUrl,
    produced.acked,
    produced.result.acked,
    FIFO_CONSUMERS,
    timeLimitMs,
    5_000,
  );
  const seconds = produced.result.seconds + consumed.seconds;
  return {
    produce: produced.result,
    consume: consumed,
    endToEndPerSec: seconds > 0 ? round(consumed.unique / seconds, 1) : 0,
  };
}

/**
 * The same produce-then-consume workload on a standard queue and on a FIFO queue of the same server, so
 * the FIFO figure is read as a ratio to the standard one from the same run.
 */
export async function fifoComparison(
  ctx: Ctx,
  n: number,
  producers: number,
  timeLimitMs: number,
): Promise<FifoComparison> {
  ctx.log(`fifo: standard queue, ${n} messages, ${FIFO_CONSUMERS} consumers`);
  const standardUrl = await createQueue(ctx.client, 'fifo-baseline');
  const standard = await produceThenConsume(ctx, standardUrl, n, producers, timeLimitMs, false);
  ctx.log(`fifo: FIFO queue, ${FIFO_GROUPS} groups`);
  const fifoUrl = await createQueue(ctx.client, 'fifo', { FifoQueue: 'true' });
  const fifo = await produceThenConsume(ctx, fifoUrl, n, producers, timeLimitMs, true);
  return {
    messages: n,
    standard,
    fifo,
    ratio: standard.endToEndPerSec > 0 ? round(fifo.endToEndPerSec / standard.endToEndPerSec, 3) : 0,
  };
}

export interface QuietTenantRun {
  /** Deliveries (of either tenant) until the quiet tenant's last message was received. */
  deliveriesUntilServed: number;
  /** From the quiet tenant's first send to the receive of its last message. */
  msUntilServed: number;
  /** Messages of the busy tenant received meanwhile: it is not starved either. */
  busyDelivered: number;
  served: boolean;
  requestErrors: number;
}

export interface FairnessResult {
  backlog: number;
  quiet: number;
  /** Busy and quiet tenants keyed by MessageGroupId: the fair queue. */
  fair: QuietTenantRun;
  /** The same messages without MessageGroupId: one arrival-ordered backlog. */
  unkeyed: QuietTenantRun;
}

/** Body sequence numbers of the quiet tenant start here, above any backlog. */
const QUIET_BASE = 10_000_000;

async function serveQuietTenant(
  ctx: Ctx,
  backlog: number,
  quiet: number,
  producers: number,
  timeLimitMs: number,
  keyed: boolean,
): Promise<QuietTenantRun> {
  const queueUrl = await createQueue(ctx.client, keyed ? 'fair' : 'unkeyed');
  await produce(
    ctx,
    queueUrl,
    backlog,
    producers,
    timeLimitMs,
    keyed ? { groupOf: () => 'busy', deduplicate: false } : undefined,
  );
  const errors = new Errors();
  const t0 = now();
  for (let first = 0; first < quiet; first += 10) {
    const entries: SendEntry[] = [];
    for (let i = first; i < Math.min(quiet, first + 10); i++) {
      const entry: SendEntry = { Id: `q${i}`, MessageBody: makeBody(QUIET_BASE + i, now()) };
      if (keyed) entry.MessageGroupId = 'quiet';
      entries.push(entry);
    }
    await ctx.client.sendMessageBatch(queueUrl, entries);
  }
  let deliveries = 0;
  let quietSeen = 0;
  let served: { deliveries: number; ms: number } | undefined;
  const deadline = t0 + timeLimitMs;
  const consumer = async (): Promise<void> => {
    while (!served && now() < deadline) {
      const messages = await receiveOrBackOff(ctx.client, queueUrl, errors);
      for (const message of messages) {
        deliveries++;
        if ((parseBody(message.Body)?.seq ?? 0) >= QUIET_BASE) quietSeen++;
      }
      if (!served && quietSeen >= quiet) served = { deliveries, ms: now() - t0 };
      await deleteAll(ctx.client, queueUrl, messages, errors);
    }
  };
  await Promise.all(Array.from({ length: FIFO_CONSUMERS }, consumer));
  return {
    deliveriesUntilServed: served?.deliveries ?? deliveries,
    msUntilServed: round(served?.ms ?? now() - t0, 1),
    busyDelivered: (served?.deliveries ?? deliveries) - quiet,
    served: served !== undefined,
    requestErrors: errors.count,
  };
}

/**
 * A busy tenant with a large backlog, then a quiet tenant sending a few messages: how many deliveries
 * and how long until the quiet tenant is fully served, on a fair queue and on the same messages
 * without tenant keys.
 */
export async function fairness(
  ctx: Ctx,
  backlog: number,
  quiet: number,
  producers: number,
  timeLimitMs: number,
): Promise<FairnessResult> {
  ctx.log(`fair: ${backlog} busy-tenant messages waiting, then ${quiet} from a quiet tenant`);
  const fair = await serveQuietTenant(ctx, backlog, quiet, producers, timeLimitMs, true);
  ctx.log('fair: the same without tenant keys');
  const unkeyed = await serveQuietTenant(ctx, backlog, quiet, producers, timeLimitMs, false);
  return { backlog, quiet, fair, unkeyed };
}
