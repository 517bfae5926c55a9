/**
 * Issue 9's workload on any Peer: produce N 1 KiB messages in batches, consume + ack them with C
 * consumers, a mixed window (producers and consumers together), and the idle-consumer wake probe.
 * Every message carries its sequence number and send time (bench/scenarios.ts' body format), so losses,
 * duplicates and end-to-end latency are checked per message.
 */
import { makeBody, parseBody, roundSummary } from '../scenarios.ts';
import { errorText, now, round, type Summary, sleep, summarize } from '../stats.ts';
import type { Delivery, PeerConsumer, PeerQueue, PeerTopic, Sender } from './peer.ts';

export interface Counted {
  lost: number;
  /** Acknowledged messages still not delivered when the phase hit its time limit (not proven lost). */
  undrained: number;
  duplicates: number;
  unexpected: number;
  errors: number;
  firstError?: string | undefined;
}

class Tally {
  errors = 0;
  firstError: string | undefined;
  fail(err: unknown): void {
    this.errors++;
    this.firstError ??= errorText(err);
  }
}

/** Per-sequence delivery counts: unique, duplicates and unexpected bodies. */
class Seen {
  readonly times: Uint16Array;
  unique = 0;
  duplicates = 0;
  unexpected = 0;
  constructor(
    readonly acked: Uint8Array,
    capacity = acked.length,
  ) {
    this.times = new Uint16Array(capacity);
  }
  /** Records one body; its send time when this is its first delivery, else null. */
  note(body: string): number | null {
    const parsed = parseBody(body);
    if (!parsed || parsed.seq >= this.times.length) {
      this.unexpected++;
      return null;
    }
    const times = (this.times[parsed.seq] ?? 0) + 1;
    this.times[parsed.seq] = times;
    if (times > 1) {
      this.duplicates++;
      return null;
    }
    this.unique++;
    return parsed.sentAt;
  }
  /**
   * Losses and duplicates of sequences [0, upTo): what was acknowledged and never delivered is undrained
   * when the phase ran out of time while messages still arrived, else lost.
   */
  count(upTo: number, outOfTime: boolean, tally: Tally): Counted {
    const { lost, unacked } = this.missing(upTo);
    return {
      lost: outOfTime ? 0 : lost,
      undrained: outOfTime ? lost : 0,
      duplicates: this.duplicates,
      unexpected: this.unexpected + unacked,
      errors: tally.errors,
      firstError: tally.firstError,
    };
  }
  /** Acknowledged but never delivered, and delivered but never acknowledged. */
  private missing(upTo: number): { lost: number; unacked: number } {
    let lost = 0;
    let unacked = 0;
    for (let seq = 0; seq < upTo; seq++) {
      if (this.acked[seq] === 1 && this.times[seq] === 0) lost++;
      if (this.acked[seq] === 0 && (this.times[seq] ?? 0) > 0) unacked++;
    }
    return { lost, unacked };
  }
}

async function nextOrPause(consumer: PeerConsumer, waitMs: number, tally: Tally): Promise<Delivery | null> {
  try {
    return await consumer.next(10, waitMs);
  } catch (err) {
    tally.fail(err);
    await sleep(50);
    return null;
  }
}

/** Sends one batch of sequence numbers [first, first + count); marks them acked on success. */
async function sendBatch(
  queue: Sender,
  acked: Uint8Array,
  first: number,
  count: number,
  tally: Tally,
): Promise<number> {
  const sentAt = now();
  const bodies: string[] = [];
  for (let seq = first; seq < first + count; seq++) bodies.push(makeBody(seq, sentAt));
  try {
    await queue.send(bodies);
    acked.fill(1, first, first + count);
    return count;
  } catch (err) {
    tally.fail(err);
    return 0;
  }
}

export interface ProduceFigures {
  acked: number;
  seconds: number;
  msgPerSec: number;
  errors: number;
  firstError?: string | undefined;
}

export async function produce(
  queue: Sender,
  n: number,
  producers: number,
  batch: number,
  timeLimitMs: number,
): Promise<{ figures: ProduceFigures; acked: Uint8Array }> {
  const acked = new Uint8Array(n);
  const tally = new Tally();
  let next = 0;
  let count = 0;
  const t0 = now();
  const worker = async (): Promise<void> => {
    while (next < n && now() - t0 < timeLimitMs) {
      const first = next;
      next = Math.min(n, first + batch);
      const got = await sendBatch(queue, acked, first, next - first, tally);
      count += got; // not `count += await`: that would add to a stale value read before the await
    }
  };
  await Promise.all(Array.from({ length: producers }, worker));
  const seconds = (now() - t0) / 1000;
  return {
    acked,
    figures: {
      acked: count,
      seconds: round(seconds, 3),
      msgPerSec: round(count / seconds, 1),
      errors: tally.errors,
      firstError: tally.firstError,
    },
  };
}

export interface ConsumeFigures extends Counted {
  consumers: number;
  unique: number;
  seconds: number;
  msgPerSec: number;
}

/** Each of `consumers` takes up to 10, acks them, repeats, until every acked message was seen. */
export async function consume(
  queue: PeerQueue,
  acked: Uint8Array,
  expected: number,
  consumers: number,
  timeLimitMs: number,
  idleMs: number,
): Promise<ConsumeFigures> {
  const seen = new Seen(acked);
  const tally = new Tally();
  const t0 = now();
  let lastAt = t0;
  let lastUniqueAt = t0;
  const worker = async (): Promise<void> => {
    const consumer = await queue.consumer();
    try {
      while (seen.unique < expected && now() - t0 < timeLimitMs && now() - lastAt < idleMs) {
        const delivery = await nextOrPause(consumer, 1_000, tally);
        if (!delivery || delivery.bodies.length === 0) continue;
        lastAt = now();
        try {
          await delivery.ack();
        } catch (err) {
          tally.fail(err);
        }
        for (const body of delivery.bodies) if (seen.note(body) !== null) lastUniqueAt = now();
      }
    } finally {
      await consumer.close().catch((err: unknown) => tally.fail(err));
    }
  };
  await Promise.all(Array.from({ length: consumers }, worker));
  const seconds = (lastUniqueAt - t0) / 1000;
  // Stopped by the phase's time limit while messages still arrived: slow, not lossy. Stopped after idleMs
  // with nothing arriving: what is missing is counted lost.
  const timedOut = seen.unique < expected && now() - lastAt < idleMs;
  return {
    consumers,
    unique: seen.unique,
    seconds: round(seconds, 3),
    msgPerSec: seconds > 0 ? round(seen.unique / seconds, 1) : 0,
    ...seen.count(acked.length, timedOut, tally),
  };
}

export interface FanOutFigures extends Counted {
  subscribers: number;
  /** Publish entries accepted (each a delivery to every subscribed queue) and their rate. */
  published: number;
  publishPerSec: number;
  /** published x subscribers / the publish phase's time. */
  committedPerSec: number;
  /** Deliveries received and deleted (unique, over every queue) / the time to the last one. */
  delivered: number;
  drainedPerSec: number;
}

/**
 * Fan-out's second half: after `published` went to the topic (produce() on it, as to a queue), consumers drain
 * every subscribed queue at once, each queue checked for losses and duplicates as in consume(). The consumers
 * are spread over the queues, at least one each.
 */
export async function drainFanOut(
  topic: PeerTopic,
  published: { figures: ProduceFigures; acked: Uint8Array },
  consumers: number,
  timeLimitMs: number,
  idleMs: number,
): Promise<FanOutFigures> {
  const subscribers = topic.queues.length;
  const perQueue = Math.max(1, Math.floor(consumers / subscribers));
  const drained = await Promise.all(
    topic.queues.map((queue) =>
      consume(queue, published.acked, published.figures.acked, perQueue, timeLimitMs, idleMs),
    ),
  );
  const sum = (get: (c: ConsumeFigures) => number): number => drained.reduce((n, c) => n + get(c), 0);
  const seconds = Math.max(...drained.map((c) => c.seconds));
  const delivered = sum((c) => c.unique);
  const { acked, msgPerSec } = published.figures;
  return {
    subscribers,
    published: acked,
    publishPerSec: msgPerSec,
    committedPerSec: round((acked * subscribers) / published.figures.seconds, 1),
    delivered,
    drainedPerSec: seconds > 0 ? round(delivered / seconds, 1) : 0,
    lost: sum((c) => c.lost),
    undrained: sum((c) => c.undrained),
    duplicates: sum((c) => c.duplicates),
    unexpected: sum((c) => c.unexpected),
    errors: published.figures.errors + sum((c) => c.errors),
    firstError: published.figures.firstError ?? drained.find((c) => c.firstError)?.firstError,
  };
}

export interface MixedFigures extends Counted {
  durationS: number;
  /** Messages acknowledged by the system to the producers. */
  sent: number;
  sentPerSec: number;
  e2ePerSec: number;
  latencyMs: Summary | null;
}

/**
 * Producers (closed loop, paused above `backlog` sent-but-undelivered) and consumers together for
 * durationS; then producers stop and consumers drain. Latency: send start -> delivery.
 */
export async function mixed(
  queue: PeerQueue,
  durationS: number,
  producers: number,
  consumers: number,
  batch: number,
  backlog: number,
  drainLimitMs: number,
  idleMs: number,
): Promise<MixedFigures> {
  const capacity = 2_000_000;
  const acked = new Uint8Array(capacity);
  const seen = new Seen(acked, capacity);
  const tally = new Tally();
  const latencies: number[] = [];
  let nextSeq = 0;
  let sent = 0;
  let inWindow = 0;
  let producing = true;
  const t0 = now();
  const tEnd = t0 + durationS * 1000;
  let lastAt = t0;
  let drainTimedOut = false;
  const producer = async (): Promise<void> => {
    while (now() < tEnd && nextSeq + batch <= capacity) {
      if (nextSeq - seen.unique > backlog) {
        await sleep(2);
        continue;
      }
      const first = nextSeq;
      nextSeq += batch;
      const got = await sendBatch(queue, acked, first, batch, tally);
      sent += got;
    }
  };
  const consumer = async (): Promise<void> => {
    const c = await queue.consumer();
    try {
      for (;;) {
        const t = now();
        if (t > tEnd + drainLimitMs) {
          drainTimedOut = true;
          return;
        }
        if (!producing && (seen.unique >= sent || t - lastAt > idleMs)) return;
        const delivery = await nextOrPause(c, 1_000, tally);
        const at = now();
        if (!delivery || delivery.bodies.length === 0) continue;
        lastAt = at;
        for (const body of delivery.bodies) {
          const sentAt = seen.note(body);
          if (sentAt !== null && at <= tEnd) {
            inWindow++;
            latencies.push(at - sentAt);
          }
        }
        try {
          await delivery.ack();
        } catch (err) {
          tally.fail(err);
        }
      }
    } finally {
      await c.close().catch((err: unknown) => tally.fail(err));
    }
  };
  await Promise.all([
    Promise.all(Array.from({ length: producers }, producer)).then(() => {
      producing = false;
    }),
    ...Array.from({ length: consumers }, consumer),
  ]);
  const latency = summarize(latencies);
  return {
    durationS,
    sent,
    sentPerSec: round(sent / durationS, 1),
    e2ePerSec: round(inWindow / durationS, 1),
    latencyMs: latency && roundSummary(latency),
    ...seen.count(nextSeq, drainTimedOut, tally),
  };
}

export interface WakeFigures {
  ok: number;
  misses: number;
  wakeMs: Summary | null;
  errors: number;
  firstError?: string | undefined;
}

/**
 * One idle consumer waits (up to 20 s); settleMs later one message is sent. Wake = send start ->
 * delivery, `iterations` times in sequence; stops after 5 misses or the time limit.
 */
export async function wake(
  queue: PeerQueue,
  iterations: number,
  settleMs: number,
  timeLimitMs: number,
): Promise<WakeFigures> {
  const tally = new Tally();
  const samples: number[] = [];
  const acked = new Uint8Array(iterations);
  let misses = 0;
  const t0 = now();
  const consumer = await queue.consumer();
  try {
    for (let i = 0; i < iterations && misses < 5 && now() - t0 < timeLimitMs; i++) {
      const waiting = consumer.next(1, 20_000).then(
        (delivery) => ({ delivery, at: now() }),
        (err: unknown) => {
          tally.fail(err);
          return { delivery: null, at: now() };
        },
      );
      await sleep(settleMs);
      const sendStart = now();
      const sending = sendBatch(queue, acked, i, 1, tally);
      const { delivery, at } = await waiting;
      await sending;
      const seq = parseBody(delivery?.bodies[0])?.seq;
      if (delivery && seq === i && at >= sendStart) samples.push(at - sendStart);
      else misses++;
      if (delivery) await delivery.ack().catch((err: unknown) => tally.fail(err));
    }
  } finally {
    await consumer.close().catch((err: unknown) => tally.fail(err));
  }
  const summary = summarize(samples);
  return {
    ok: samples.length,
    misses,
    wakeMs: summary && roundSummary(summary),
    errors: tally.errors,
    firstError: tally.firstError,
  };
}
