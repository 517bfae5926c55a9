import { type PeriodicJob, repeatEvery } from 'sluice-client/clock';
import type { QueueSample } from '../store/contract.ts';
import { NO_ACTIVITY } from './queue-activity.ts';
import type { SqsService } from './sqs-service.ts';

/** One sample per queue this often, kept this long (the console's 1 h and 24 h charts). */
export const SAMPLE_PERIOD_MS = 10_000;
export const HISTORY_RETENTION_MS = 24 * 60 * 60 * 1000;

export const HISTORY_RANGES = { '1h': 60 * 60 * 1000, '24h': HISTORY_RETENTION_MS } as const;
export type HistoryRange = keyof typeof HISTORY_RANGES;

/** How often every node adds its activity to the store (a node's history counts lag by at most this). */
export const ACTIVITY_FLUSH_MS = 2000;

/** Adds what this node's clients did since the last flush to the activity the store shares among nodes. */
export async function flushActivity(service: SqsService): Promise<void> {
  const taken = service.activity.takeUnflushed();
  if (taken.length === 0) return;
  try {
    await service.store.addQueueActivity(taken);
  } catch (error) {
    service.activity.restoreUnflushed(taken);
    throw error;
  }
}

/** Runs on every node (not only the lease holder): flushes this node's activity each ACTIVITY_FLUSH_MS. */
export class ActivityFlusher {
  private job: PeriodicJob | undefined;

  constructor(
    private readonly service: SqsService,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  start(): void {
    this.job = repeatEvery(
      this.service.clock,
      ACTIVITY_FLUSH_MS,
      ACTIVITY_FLUSH_MS,
      () => flushActivity(this.service),
      this.onError,
    );
  }

  /** Stops, and flushes once more, so that a node shut down cleanly leaves none of its activity out. */
  async stop(): Promise<void> {
    await this.job?.stop();
    await flushActivity(this.service).catch(this.onError);
  }
}

/**
 * Takes a sample of every queue each SAMPLE_PERIOD_MS on the service's clock: its counts now, and what was
 * sent, received and deleted since the previous sample by the clients of every node sharing the store (this
 * node's activity is flushed first; the others' as of their last flush). Samples older than the retention
 * are dropped.
 */
export class QueueSampler {
  private job: PeriodicJob | undefined;
  private lastAt: number | undefined;

  constructor(
    private readonly service: SqsService,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  start(): void {
    this.job = repeatEvery(
      this.service.clock,
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
    const now = this.service.clock.now();
    const periodMs = this.lastAt === undefined ? SAMPLE_PERIOD_MS : now - this.lastAt;
    this.lastAt = now;
    await flushActivity(this.service);
    // Activity of queues deleted since is dropped with the take.
    const activity = new Map(
      (await this.service.store.takeQueueActivity()).map((counts) => [counts.queue, counts]),
    );
    const samples: QueueSample[] = [];
    for await (const queue of this.service.allQueues()) {
      const counts = await this.service.store.countMessages(queue.id, now);
      const done = activity.get(queue.name) ?? NO_ACTIVITY;
      samples.push({
        queue: queue.name,
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
    await this.service.store.recordQueueSamples(samples);
    await this.service.store.deleteQueueSamplesBefore(now - HISTORY_RETENTION_MS);
  }
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
  service: SqsService,
  queue: string,
  range: HistoryRange,
): Promise<QueueSample[]> {
  const rangeMs = HISTORY_RANGES[range];
  const samples = await service.store.queueSamples(queue, service.clock.now() - rangeMs);
  const bucketMs = Math.max(SAMPLE_PERIOD_MS, rangeMs / 360);
  return bucketMs === SAMPLE_PERIOD_MS ? samples : bucketSamples(samples, bucketMs);
}
