import { type PeriodicJob, repeatEvery } from '#toolkit/clock';
import type { MessageCounts, QueueSample, Store } from '../store/contract.ts';
import type { QueueActivity } from './queue-activity.ts';
import { type ActivityTotals, NO_ACTIVITY } from './queue-activity.ts';
import type { CountsDependencies } from './queue-counts.ts';
import { QueueCounts } from './queue-counts.ts';

/** One sample per queue this often, kept this long (the console's 1 h and 24 h charts). */
export const SAMPLE_PERIOD_MS = 10_000;
export const HISTORY_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * A queue left idle and unchanged is sampled only this often (10,000 idle queues would otherwise add a row
 * each every 10 s); readers carry its last sample forward over the gap (fillGaps).
 */
export const SAMPLE_KEEPALIVE_MS = 10 * 60 * 1000;

export const HISTORY_RANGES = { '1h': 60 * 60 * 1000, '24h': HISTORY_RETENTION_MS } as const;
export type HistoryRange = keyof typeof HISTORY_RANGES;

/** How often every node adds its activity to the store (a node's history counts lag by at most this). */
export const ACTIVITY_FLUSH_MS = 2000;

/** What the history needs: time, the queues' counts, this node's activity, and the store's history tables. */
export interface HistoryDependencies extends CountsDependencies {
  readonly activity: Pick<QueueActivity, 'takeUnflushed' | 'restoreUnflushed'>;
  readonly store: Pick<
    Store,
    | 'addQueueActivity'
    | 'deleteQueueSamplesBefore'
    | 'queueSamples'
    | 'recordQueueSamples'
    | 'takeQueueActivity'
  >;
}

/** Adds what this node's clients did since the last flush to the activity the store shares among nodes. */
export async function flushActivity(deps: HistoryDependencies): Promise<void> {
  const taken = deps.activity.takeUnflushed();
  if (taken.length === 0) return;
  try {
    await deps.store.addQueueActivity(taken);
  } catch (error) {
    deps.activity.restoreUnflushed(taken);
    throw error;
  }
}

/** Runs on every node (not only the lease holder): flushes this node's activity each ACTIVITY_FLUSH_MS. */
export class ActivityFlusher {
  private job: PeriodicJob | undefined;

  constructor(
    private readonly deps: HistoryDependencies,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  start(): void {
    this.job = repeatEvery(
      this.deps.clock,
      ACTIVITY_FLUSH_MS,
      ACTIVITY_FLUSH_MS,
      () => flushActivity(this.deps),
      this.onError,
    );
  }

  /** Stops, and flushes once more, so that a node shut down cleanly leaves none of its activity out. */
  async stop(): Promise<void> {
    await this.job?.stop();
    await flushActivity(this.deps).catch(this.onError);
  }
}

/**
 * Takes a sample of every queue each SAMPLE_PERIOD_MS on the clock it is given: its counts now, and what was
 * sent, received and deleted since the previous sample by the clients of every node sharing the store (this
 * node's activity is flushed first; the others' as of their last flush). A queue whose counts are those of
 * its last recorded sample and that saw no activity is skipped, unless that sample is SAMPLE_KEEPALIVE_MS
 * old. Samples older than the retention (and the keepalive, so that a reader finds the sample a gap at the
 * start of its range carries on from) are dropped.
 */
export class QueueSampler {
  private job: PeriodicJob | undefined;
  private lastAt: number | undefined;
  /** The last sample recorded of each queue, by this sampler (a new lease holder records every queue once). */
  private recorded = new Map<string, { at: number; counts: MessageCounts }>();

  constructor(
    private readonly deps: HistoryDependencies,
    private readonly onError: (error: unknown) => void = () => {},
    /** Where the counts read for each sample are kept for others (/metrics) to serve. */
    readonly counts: QueueCounts = new QueueCounts(deps),
  ) {}

  start(): void {
    // A node that held the lease before counts its first period afresh, as the activity it takes does, and
    // records every queue once, as a new holder does.
    this.lastAt = undefined;
    this.recorded = new Map();
    this.job = repeatEvery(
      this.deps.clock,
      SAMPLE_PERIOD_MS,
      SAMPLE_PERIOD_MS,
      () => this.sample(),
      this.onError,
    );
  }

  async stop(): Promise<void> {
    await this.job?.stop();
  }

  async sample(): Promise<void> {
    const now = this.deps.clock.now();
    const periodMs = this.lastAt === undefined ? SAMPLE_PERIOD_MS : now - this.lastAt;
    this.lastAt = now;
    await flushActivity(this.deps);
    // Activity of queues deleted since is dropped with the take.
    const activity = new Map(
      (await this.deps.store.takeQueueActivity()).map((counts) => [counts.queue, counts]),
    );
    const samples: QueueSample[] = [];
    const recorded = new Map<string, { at: number; counts: MessageCounts }>();
    for (const [queue, counts] of await this.counts.readAll(now)) {
      const done = activity.get(queue) ?? NO_ACTIVITY;
      const last = this.recorded.get(queue);
      if (last && now - last.at < SAMPLE_KEEPALIVE_MS && isIdle(done) && sameCounts(last.counts, counts)) {
        recorded.set(queue, last);
        continue;
      }
      recorded.set(queue, { at: now, counts });
      samples.push({
        queue,
        at: now,
        periodMs,
        visible: counts.visible,
        notVisible: counts.notVisible,
        delayed: counts.delayed,
        oldestAgeSeconds: ageSeconds(counts.oldestSentAt, now),
        sent: done.sent,
        received: done.received,
        deleted: done.deleted,
        emptyReceives: done.emptyReceives,
        sentBytes: done.sentBytes,
      });
    }
    await this.deps.store.recordQueueSamples(samples);
    this.recorded = recorded;
    await this.deps.store.deleteQueueSamplesBefore(now - HISTORY_RETENTION_MS - SAMPLE_KEEPALIVE_MS);
  }
}

function isIdle(activity: ActivityTotals): boolean {
  return (
    activity.sent === 0 && activity.received === 0 && activity.deleted === 0 && activity.emptyReceives === 0
  );
}

function sameCounts(a: MessageCounts, b: MessageCounts): boolean {
  return (
    a.visible === b.visible &&
    a.notVisible === b.notVisible &&
    a.delayed === b.delayed &&
    a.oldestSentAt === b.oldestSentAt
  );
}

/**
 * The skipped samples put back: after each sample, a copy every SAMPLE_PERIOD_MS until the next sample (or
 * `until`), with no activity and its oldest message older by the time passed — what the sampler would have
 * recorded, since it skips only idle, unchanged queues. A silence longer than the keepalive allows means no
 * sampler was running (a server stopped, a lease moving) and stays empty.
 */
export function fillGaps(samples: readonly QueueSample[], until: number): QueueSample[] {
  const filled: QueueSample[] = [];
  for (const [index, sample] of samples.entries()) {
    filled.push(sample);
    const next = samples[index + 1]?.at;
    const end = next ?? until;
    if (end - sample.at > SAMPLE_KEEPALIVE_MS + 2 * SAMPLE_PERIOD_MS) continue;
    const holds = sample.visible + sample.notVisible + sample.delayed > 0;
    for (
      let at = sample.at + SAMPLE_PERIOD_MS;
      next === undefined ? at <= until : at + SAMPLE_PERIOD_MS / 2 <= next;
      at += SAMPLE_PERIOD_MS
    ) {
      filled.push({
        ...sample,
        at,
        periodMs: SAMPLE_PERIOD_MS,
        oldestAgeSeconds: holds ? sample.oldestAgeSeconds + Math.floor((at - sample.at) / 1000) : 0,
        ...NO_ACTIVITY,
      });
    }
  }
  return filled;
}

/** The queue's samples taken at or after `since`, skipped ones filled in (fillGaps), oldest first. */
export async function samplesSince(
  deps: HistoryDependencies,
  queue: string,
  since: number,
): Promise<QueueSample[]> {
  const stored = await deps.store.queueSamples(queue, since - SAMPLE_KEEPALIVE_MS);
  return fillGaps(stored, deps.clock.now()).filter((sample) => sample.at >= since);
}

/** Whole seconds since `sentAt`; 0 for an empty queue (CloudWatch reports no data point then). */
export function ageSeconds(sentAt: number | undefined, now: number): number {
  return sentAt === undefined ? 0 : Math.max(0, Math.floor((now - sentAt) / 1000));
}

/**
 * Samples merged into buckets of `bucketMs` (so a 24 h chart is a few hundred points, not 8,640): the
 * counts are the last sample's in each bucket, the activity the sum over it.
 */
export function bucketSamples(samples: readonly QueueSample[], bucketMs: number): QueueSample[] {
  const buckets: QueueSample[] = [];
  for (const sample of samples) {
    const last = buckets.at(-1);
    if (last && Math.floor(last.at / bucketMs) === Math.floor(sample.at / bucketMs)) {
      buckets[buckets.length - 1] = {
        ...sample,
        periodMs: last.periodMs + sample.periodMs,
        sent: last.sent + sample.sent,
        received: last.received + sample.received,
        deleted: last.deleted + sample.deleted,
        emptyReceives: last.emptyReceives + sample.emptyReceives,
        sentBytes: last.sentBytes + sample.sentBytes,
      };
    } else buckets.push({ ...sample });
  }
  return buckets;
}

/** The queue's history over `range`, at most ~360 points. */
export async function queueHistory(
  deps: HistoryDependencies,
  queue: string,
  range: HistoryRange,
): Promise<QueueSample[]> {
  const rangeMs = HISTORY_RANGES[range];
  const samples = await samplesSince(deps, queue, deps.clock.now() - rangeMs);
  const bucketMs = Math.max(SAMPLE_PERIOD_MS, rangeMs / 360);
  return bucketMs === SAMPLE_PERIOD_MS ? samples : bucketSamples(samples, bucketMs);
}
