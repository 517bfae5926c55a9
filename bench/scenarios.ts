import type { DeleteEntry, QueueClient, ReceivedMessage, SendEntry } from './client.ts';
import { errorText, now, round, type Summary, sleep, summarize } from './stats.ts';

export interface Ctx {
  readonly client: QueueClient;
  /** Progress line, already prefixed with elapsed time and target by the caller. */
  readonly log: (message: string) => void;
}

export const BODY_BYTES = 1024;
const BATCH = 10;
const PROGRESS_MS = 2_000;

/** Counts failed requests and keeps the first message, so errors are reported and not hidden. */
export class Errors {
  count = 0;
  first: string | undefined;
  add(err: unknown): void {
    this.count++;
    this.first ??= errorText(err);
  }
}

const padding = new Map<number, string>();

/** A 1 KiB body: "<seq> <send timestamp ms> ....". */
export function makeBody(seq: number, sentAt: number): string {
  const head = `${seq} ${sentAt.toFixed(3)} `;
  const len = BODY_BYTES - head.length;
  let pad = padding.get(len);
  if (pad === undefined) {
    pad = '.'.repeat(len);
    padding.set(len, pad);
  }
  return head + pad;
}

export function parseBody(body: string | undefined): { seq: number; sentAt: number } | null {
  if (body === undefined) return null;
  const a = body.indexOf(' ');
  const b = body.indexOf(' ', a + 1);
  if (a <= 0 || b <= a) return null;
  const seq = Number(body.slice(0, a));
  const sentAt = Number(body.slice(a + 1, b));
  return Number.isInteger(seq) && Number.isFinite(sentAt) ? { seq, sentAt } : null;
}

/** A fresh queue with a unique name; a FIFO queue when `FifoQueue` is 'true'. */
export function createQueue(
  client: QueueClient,
  scenario: string,
  attributes: Record<string, string> = {},
): Promise<string> {
  const fifo = attributes.FifoQueue === 'true' ? '.fifo' : '';
  const name = `bench-${scenario}-${Date.now()}-${Math.floor(Math.random() * 1e6)}${fifo}`;
  return client.createQueue(name, { VisibilityTimeout: '120', ...attributes });
}

/** Runs fn while printing status() every PROGRESS_MS. */
async function withProgress<T>(ctx: Ctx, status: () => string, fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => ctx.log(status()), PROGRESS_MS);
  timer.unref();
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

function elapsedS(t0: number): string {
  return `${((now() - t0) / 1000).toFixed(1)}s`;
}

/** One ReceiveMessage of up to 10 with a 1 s wait; an error is counted and answered with a short pause. */
export async function receiveOrBackOff(
  client: QueueClient,
  queueUrl: string,
  errors: Errors,
): Promise<ReceivedMessage[]> {
  try {
    return await client.receiveMessage(queueUrl, 10, 1);
  } catch (err) {
    errors.add(err);
    await sleep(50);
    return [];
  }
}

export async function deleteAll(
  client: QueueClient,
  queueUrl: string,
  messages: readonly ReceivedMessage[],
  errors: Errors,
): Promise<number> {
  const entries: DeleteEntry[] = [];
  for (const [i, m] of messages.entries()) {
    if (m.ReceiptHandle) entries.push({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle });
  }
  if (entries.length === 0) return messages.length;
  try {
    const res = await client.deleteMessageBatch(queueUrl, entries);
    return res.Failed.length + (messages.length - entries.length);
  } catch (err) {
    errors.add(err);
    return messages.length;
  }
}

// ---------------------------------------------------------------------------------------------------
// (a) produce

export interface ProduceResult {
  requested: number;
  producers: number;
  acked: number;
  failedEntries: number;
  requestErrors: number;
  firstError?: string | undefined;
  seconds: number;
  msgPerSec: number;
  timedOut: boolean;
}

/**
 * How produce() keys its messages: a message group (a FIFO group or a fair queue's tenant) and, for FIFO
 * queues, a deduplication id.
 */
export interface Keys {
  groupOf(seq: number): string;
  deduplicate: boolean;
}

/** Sends n 1 KiB messages with SendMessageBatch (10 per batch) from `producers` concurrent loops. */
export async function produce(
  ctx: Ctx,
  queueUrl: string,
  n: number,
  producers: number,
  timeLimitMs: number,
  keys?: Keys,
): Promise<{ result: ProduceResult; acked: Uint8Array }> {
  const acked = new Uint8Array(n);
  const errors = new Errors();
  let next = 0;
  let ackedCount = 0;
  let failedEntries = 0;
  let timedOut = false;
  const t0 = now();
  const deadline = t0 + timeLimitMs;
  const worker = async (): Promise<void> => {
    while (next < n) {
      if (now() > deadline) {
        timedOut = true;
        return;
      }
      const first = next;
      next = Math.min(n, first + BATCH);
      const entries: SendEntry[] = [];
      const sentAt = now();
      for (let seq = first; seq < next; seq++) {
        const entry: SendEntry = { Id: `m${seq}`, MessageBody: makeBody(seq, sentAt) };
        if (keys) entry.MessageGroupId = keys.groupOf(seq);
        if (keys?.deduplicate) entry.MessageDeduplicationId = String(seq);
        entries.push(entry);
      }
      try {
        const res = await ctx.client.sendMessageBatch(queueUrl, entries);
        for (const ok of res.Successful) {
          const seq = Number(ok.Id?.slice(1));
          if (seq >= first && seq < next && acked[seq] === 0) {
            acked[seq] = 1;
            ackedCount++;
          }
        }
        failedEntries += res.Failed.length;
      } catch (err) {
        errors.add(err);
      }
    }
  };
  await withProgress(
    ctx,
    () => `produce ${ackedCount}/${n} acked, ${elapsedS(t0)}`,
    () => Promise.all(Array.from({ length: producers }, worker)),
  );
  const seconds = (now() - t0) / 1000;
  return {
    acked,
    result: {
      requested: n,
      producers,
      acked: ackedCount,
      failedEntries,
      requestErrors: errors.count,
      firstError: errors.first,
      seconds: round(seconds, 3),
      msgPerSec: round(ackedCount / seconds, 1),
      timedOut,
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// (b) consume

export interface ConsumeResult {
  expected: number;
  consumers: number;
  unique: number;
  received: number;
  duplicates: number;
  lost: number;
  /** Bodies that were not among the acknowledged sends (or unparseable). */
  unexpected: number;
  deleteFailed: number;
  requestErrors: number;
  firstError?: string | undefined;
  seconds: number;
  msgPerSec: number;
  stoppedBy: 'complete' | 'idle' | 'time';
}

/**
 * ReceiveMessage (10, WaitTimeSeconds 1) + DeleteMessageBatch from `consumers` loops until every
 * acknowledged message was seen once (or nothing arrived for idleMs, or the time limit passed).
 */
export async function consume(
  ctx: Ctx,
  queueUrl: string,
  acked: Uint8Array,
  expected: number,
  consumers: number,
  timeLimitMs: number,
  idleMs: number,
): Promise<ConsumeResult> {
  const seen = new Uint16Array(acked.length);
  const errors = new Errors();
  let unique = 0;
  let received = 0;
  let duplicates = 0;
  let unexpected = 0;
  let deleteFailed = 0;
  let stoppedBy: ConsumeResult['stoppedBy'] | null = null;
  const t0 = now();
  let lastMessageAt = t0;
  let lastUniqueAt = t0;
  const deadline = t0 + timeLimitMs;
  const worker = async (): Promise<void> => {
    while (stoppedBy === null) {
      if (unique >= expected) stoppedBy = 'complete';
      else if (now() > deadline) stoppedBy = 'time';
      else if (now() - lastMessageAt > idleMs) stoppedBy = 'idle';
      if (stoppedBy !== null) return;
      const messages = await receiveOrBackOff(ctx.client, queueUrl, errors);
      if (messages.length === 0) continue;
      lastMessageAt = now();
      deleteFailed += await deleteAll(ctx.client, queueUrl, messages, errors);
      for (const m of messages) {
        received++;
        const seq = parseBody(m.Body)?.seq ?? -1;
        if (seq < 0 || seq >= acked.length || acked[seq] === 0) {
          unexpected++;
        } else {
          const times = (seen[seq] ?? 0) + 1;
          seen[seq] = times;
          if (times === 1) {
            unique++;
            lastUniqueAt = now();
          } else {
            duplicates++;
          }
        }
      }
    }
  };
  await withProgress(
    ctx,
    () => `consume ${unique}/${expected} unique, ${elapsedS(t0)}`,
    () => Promise.all(Array.from({ length: consumers }, worker)),
  );
  const seconds = (lastUniqueAt - t0) / 1000;
  return {
    expected,
    consumers,
    unique,
    received,
    duplicates,
    lost: expected - unique,
    unexpected,
    deleteFailed,
    requestErrors: errors.count,
    firstError: errors.first,
    seconds: round(seconds, 3),
    msgPerSec: seconds > 0 ? round(unique / seconds, 1) : 0,
    stoppedBy: stoppedBy ?? 'complete',
  };
}

// ---------------------------------------------------------------------------------------------------
// (c) mixed

export interface MixedResult {
  durationS: number;
  producers: number;
  consumers: number;
  backlogCap: number;
  sent: number;
  sentPerSec: number;
  /** First deliveries whose ReceiveMessage returned inside the window. */
  e2eInWindow: number;
  e2ePerSec: number;
  latencyMs: Summary | null;
  drainedAfterWindow: number;
  /** Why the drain after the window ended; 'time' means unreceived messages are not proven lost. */
  drainStoppedBy: 'complete' | 'idle' | 'time';
  /** Acknowledged, never received, and the drain ended complete or idle (5 s with nothing). */
  lost: number;
  /** Acknowledged, not received before the drain time limit (not counted as lost). */
  undrained: number;
  duplicates: number;
  unexpected: number;
  maxBacklog: number;
  requestErrors: number;
  firstError?: string | undefined;
}

/**
 * Producers (SendMessageBatch, closed loop, paused while more than backlogCap messages are
 * sent-but-unreceived) and consumers (Receive 10 / wait 1 + DeleteMessageBatch) run together for
 * durationS; then producers stop and consumers drain. Latency = send start -> receive return.
 */
export async function mixed(
  ctx: Ctx,
  queueUrl: string,
  durationS: number,
  producers: number,
  consumers: number,
  backlogCap: number,
  drainLimitMs: number,
  idleMs: number,
): Promise<MixedResult> {
  const capacity = 2_000_000;
  const acked = new Uint8Array(capacity);
  const seen = new Uint16Array(capacity);
  const latencies: number[] = [];
  const errors = new Errors();
  let nextSeq = 0;
  let sent = 0;
  let uniqueReceived = 0;
  let e2eInWindow = 0;
  let duplicates = 0;
  let unparseable = 0;
  let maxBacklog = 0;
  let producersDone = false;
  const t0 = now();
  const tEnd = t0 + durationS * 1000;
  const drainDeadline = tEnd + drainLimitMs;
  let lastMessageAt = t0;
  const drain: { stoppedBy: MixedResult['drainStoppedBy'] } = { stoppedBy: 'complete' };

  // Producers over the backlog cap wait for a consumer to make progress (or 20 ms), not spin.
  let room: Promise<void> | null = null;
  let signalRoom: (() => void) | null = null;
  const roomOrTimeout = (): Promise<void> => {
    room ??= new Promise<void>((resolve) => {
      signalRoom = resolve;
    });
    return Promise.race([room, sleep(20)]);
  };
  const makeRoom = (): void => {
    signalRoom?.();
    signalRoom = null;
    room = null;
  };

  const producer = async (): Promise<void> => {
    while (now() < tEnd && nextSeq + BATCH <= capacity) {
      if (nextSeq - uniqueReceived > backlogCap) {
        await roomOrTimeout();
        continue;
      }
      const first = nextSeq;
      nextSeq += BATCH;
      const sentAt = now();
      const entries: SendEntry[] = [];
      for (let seq = first; seq < nextSeq; seq++)
        entries.push({ Id: `m${seq}`, MessageBody: makeBody(seq, sentAt) });
      try {
        const res = await ctx.client.sendMessageBatch(queueUrl, entries);
        for (const ok of res.Successful) {
          const seq = Number(ok.Id?.slice(1));
          if (seq >= first && seq < first + BATCH && acked[seq] === 0) {
            acked[seq] = 1;
            sent++;
          }
        }
      } catch (err) {
        errors.add(err);
      }
      maxBacklog = Math.max(maxBacklog, sent - uniqueReceived);
    }
  };

  const consumer = async (): Promise<void> => {
    for (;;) {
      const t = now();
      if (t > drainDeadline) {
        drain.stoppedBy = 'time';
        return;
      }
      if (producersDone && uniqueReceived >= sent) return;
      if (producersDone && t - lastMessageAt > idleMs) {
        drain.stoppedBy = 'idle';
        return;
      }
      const messages = await receiveOrBackOff(ctx.client, queueUrl, errors);
      const receivedAt = now();
      if (messages.length === 0) continue;
      lastMessageAt = receivedAt;
      for (const m of messages) {
        const body = parseBody(m.Body);
        if (!body || body.seq < 0 || body.seq >= capacity) {
          unparseable++;
          continue;
        }
        const times = (seen[body.seq] ?? 0) + 1;
        seen[body.seq] = times;
        if (times > 1) {
          duplicates++;
          continue;
        }
        uniqueReceived++;
        if (receivedAt <= tEnd) {
          e2eInWindow++;
          if (latencies.length < capacity) latencies.push(receivedAt - body.sentAt);
        }
      }
      makeRoom();
      await deleteAll(ctx.client, queueUrl, messages, errors);
    }
  };

  await withProgress(
    ctx,
    () =>
      `mixed sent ${sent}, received ${uniqueReceived}, ${elapsedS(t0)}${producersDone ? ' (draining)' : ''}`,
    () =>
      Promise.all([
        Promise.all(Array.from({ length: producers }, producer)).then(() => {
          producersDone = true;
        }),
        ...Array.from({ length: consumers }, consumer),
      ]),
  );

  let missing = 0;
  let unexpected = unparseable;
  for (let seq = 0; seq < nextSeq; seq++) {
    if (acked[seq] === 1 && seen[seq] === 0) missing++;
    if (acked[seq] === 0 && (seen[seq] ?? 0) > 0) unexpected++;
  }
  const summary = summarize(latencies);
  return {
    durationS,
    producers,
    consumers,
    backlogCap,
    sent,
    sentPerSec: round(sent / durationS, 1),
    e2eInWindow,
    e2ePerSec: round(e2eInWindow / durationS, 1),
    latencyMs: summary && roundSummary(summary),
    drainedAfterWindow: uniqueReceived - e2eInWindow,
    drainStoppedBy: drain.stoppedBy,
    lost: drain.stoppedBy === 'time' ? 0 : missing,
    undrained: drain.stoppedBy === 'time' ? missing : 0,
    duplicates,
    unexpected,
    maxBacklog,
    requestErrors: errors.count,
    firstError: errors.first,
  };
}

export function roundSummary(s: Summary): Summary {
  return {
    count: s.count,
    p50: round(s.p50, 3),
    p90: round(s.p90, 3),
    p99: round(s.p99, 3),
    max: round(s.max, 3),
    mean: round(s.mean, 3),
  };
}

// ---------------------------------------------------------------------------------------------------
// (d) long-poll wake latency

export interface LongPollResult {
  iterations: number;
  settleMs: number;
  ok: number;
  /** Receives that returned without our message (timeout or early empty return). */
  misses: number;
  /** Receives that returned some other (left-over) message. */
  stale: number;
  wakeMs: Summary | null;
  /** SendMessage round trip alone, for context. */
  sendMs: Summary | null;
  requestErrors: number;
  firstError?: string | undefined;
  stoppedEarly: boolean;
}

/**
 * One idle consumer long-polls (WaitTimeSeconds 20); settleMs later a producer sends one message.
 * Wake latency = SendMessage start -> ReceiveMessage return. Sequential, `iterations` times.
 */
export async function longPoll(
  ctx: Ctx,
  queueUrl: string,
  iterations: number,
  settleMs: number,
  timeLimitMs: number,
): Promise<LongPollResult> {
  const errors = new Errors();
  const wake: number[] = [];
  const sendOnly: number[] = [];
  let misses = 0;
  let stale = 0;
  let stoppedEarly = false;
  const t0 = now();
  const deadline = t0 + timeLimitMs;
  const drain = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) {
      try {
        const messages = await ctx.client.receiveMessage(queueUrl, 10);
        if (messages.length === 0) return;
        await deleteAll(ctx.client, queueUrl, messages, errors);
      } catch (err) {
        errors.add(err);
        return;
      }
    }
  };
  await withProgress(
    ctx,
    () => `long-poll ${wake.length}/${iterations}, ${elapsedS(t0)}`,
    async () => {
      for (let i = 0; i < iterations; i++) {
        if (now() > deadline || misses + stale >= 5) {
          stoppedEarly = true;
          break;
        }
        const receive = ctx.client.receiveMessage(queueUrl, 1, 20).then(
          (messages) => ({ messages, at: now() }),
          (err: unknown) => {
            errors.add(err);
            return { messages: [] as ReceivedMessage[], at: now() };
          },
        );
        await sleep(settleMs);
        const sendStart = now();
        const send = ctx.client.sendMessage(queueUrl, makeBody(i, sendStart)).then(
          () => now(),
          (err: unknown) => {
            errors.add(err);
            return Number.NaN;
          },
        );
        const got = await receive;
        const sentAt = await send;
        const message = got.messages[0];
        const seq = parseBody(message?.Body)?.seq;
        if (message && seq === i && got.at >= sendStart) {
          wake.push(got.at - sendStart);
          if (Number.isFinite(sentAt)) sendOnly.push(sentAt - sendStart);
          if (message.ReceiptHandle) {
            try {
              await ctx.client.deleteMessage(queueUrl, message.ReceiptHandle);
            } catch (err) {
              errors.add(err);
            }
          }
        } else {
          if (message) stale++;
          else misses++;
          await drain();
        }
      }
    },
  );
  const w = summarize(wake);
  const s = summarize(sendOnly);
  return {
    iterations,
    settleMs,
    ok: wake.length,
    misses,
    stale,
    wakeMs: w && roundSummary(w),
    sendMs: s && roundSummary(s),
    requestErrors: errors.count,
    firstError: errors.first,
    stoppedEarly,
  };
}

// ---------------------------------------------------------------------------------------------------
// (e, optional) a million waiting messages, and a restart with them

/** A queue's messages by state, from GetQueueAttributes. */
export interface QueueDepth {
  /** ApproximateNumberOfMessages: waiting to be received. */
  visible: number;
  /** ApproximateNumberOfMessagesNotVisible: received, not deleted (in flight). */
  inFlight: number;
}

export async function queueDepth(client: QueueClient, queueUrl: string): Promise<QueueDepth> {
  const attributes = await client.getQueueAttributes(queueUrl, [
    'ApproximateNumberOfMessages',
    'ApproximateNumberOfMessagesNotVisible',
  ]);
  return {
    visible: Number(attributes.ApproximateNumberOfMessages),
    inFlight: Number(attributes.ApproximateNumberOfMessagesNotVisible),
  };
}

export interface MillionResult {
  produce: ProduceResult;
  /** Read after the fill; null if GetQueueAttributes failed. */
  depth: QueueDepth | null;
}

/** Fills one queue with n waiting 1 KiB messages; RSS is read by the caller afterwards. */
export async function million(
  ctx: Ctx,
  queueUrl: string,
  n: number,
  producers: number,
  timeLimitMs: number,
): Promise<MillionResult> {
  const { result } = await produce(ctx, queueUrl, n, producers, timeLimitMs);
  let depth: QueueDepth | null = null;
  try {
    depth = await queueDepth(ctx.client, queueUrl);
  } catch (err) {
    ctx.log(`GetQueueAttributes failed: ${errorText(err)}`);
  }
  return { produce: result, depth };
}

export interface FirstMessage {
  message: ReceivedMessage;
  /** ReceiveMessage calls made, the successful one included. */
  attempts: number;
  /** Calls that failed (e.g. refused while the server was still loading) before it. */
  errors: number;
}

/**
 * ReceiveMessage (1 message, no wait) until one comes back: how soon a restarted server serves what it
 * holds. Failed and empty calls are retried after 5 ms, up to limitMs.
 */
export async function firstMessage(
  client: QueueClient,
  queueUrl: string,
  limitMs: number,
): Promise<FirstMessage> {
  const deadline = now() + limitMs;
  let attempts = 0;
  const errors = new Errors();
  for (;;) {
    attempts++;
    try {
      const [message] = await client.receiveMessage(queueUrl, 1, 0);
      if (message) return { message, attempts, errors: errors.count };
    } catch (err) {
      errors.add(err);
    }
    if (now() > deadline) {
      throw new Error(
        `no message in ${limitMs} ms (${attempts} receives, ${errors.count} failed${errors.first ? `: ${errors.first}` : ''})`,
      );
    }
    await sleep(5);
  }
}
