import type { QueueSample } from '../store/contract.ts';
import { type PeriodicJob, repeatEvery } from './clock.ts';
import { type ActivityTotals, NO_ACTIVITY } from './queue-activity.ts';
import type { SqsService } from './sqs-service.ts';

/** One sample per queue this often, kept this long (the console's 1 h and 24 h charts). */
export const SAMPLE_PERIOD_MS = 10_000;
export const HISTORY_RETENTION_MS = 24 * 60 * 60 * 1000;

export const HISTORY_RANGES = { '1h': 60 * 60 * 1000, '24h': HISTORY_RETENTION_MS } as const;
export type HistoryRange = keyof typeof HISTORY_RANGES;

/**
 * Takes a sample of every queue each SAMPLE_PERIOD_MS on the service's clock: its counts now, and what was
 * sent, received and deleted since the previous sample. Samples older than the retention are dropped.
 */
export class QueueSampler {
  private job: PeriodicJob | undefined;
  /** Activity totals at the previous sample, per queue. */
  private readonly previous = new Map<string, ActivityTotals>();
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
    const samples: QueueSample[] = [];
    const seen = new Set<string>();
    for await (const queue of this.service.allQueues()) {
      seen.add(queue.name);
      const counts = await this.service.store.countMessages(queue.id, now);
      const totals = this.service.activity.totals(queue.name);
      const before = this.previous.get(queue.name) ?? NO_ACTIVITY;
      this.previous.set(queue.name, totals);
      samples.push({
        queue: queue.name,
        at: now,
        periodMs,
        visible: counts.visible,
        notVisible: counts.notVisible,
        delayed: counts.delayed,
        oldestAgeSeconds: ageSeconds(counts.oldestSentAt, now),
        sent: totals.sent - before.sent,
        received: totals.received - before.received,
        deleted: totals.deleted - before.deleted,
        emptyReceives: totals.emptyReceives - before.emptyReceives,
        sentBytes: totals.sentBytes - before.sentBytes,
      });
    }
    for (const name of this.previous.keys()) if (!seen.has(name)) this.previous.delete(name);
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
