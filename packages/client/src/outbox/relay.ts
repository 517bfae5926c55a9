import {
  GetQueueUrlCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type Clock, type PeriodicJob, repeatEvery, systemClock } from '../clock.ts';
import { chunks } from '../visibility.ts';
import type { OutboxRow, OutboxStore, PublishFailure } from './message.ts';

export interface RelayBackoffOptions {
  /** Delay before the first retry of a row, before jitter. Default 1000 ms. */
  initialMs?: number;
  /** Largest delay between retries. Default 300000 ms (5 minutes). */
  maxMs?: number;
}

export interface OutboxRelayHooks {
  /**
   * Called after SQS accepted `rows` and before they are marked sent. A hook that throws stops the pass
   * there, as if the process died: the rows stay leased, and are published again once the lease expires.
   */
  published?(rows: readonly OutboxRow[]): void | Promise<void>;
  /** Rows SQS refused (or a request that failed outright); they are retried after a backoff. */
  failed?(failures: readonly PublishFailure[]): void;
  /** A pass that failed as a whole (the database was unreachable, a hook threw); the next pass retries. */
  error?(error: unknown): void;
}

export interface OutboxRelayOptions {
  outbox: OutboxStore;
  client: SQSClient;
  /** Rows claimed per pass (published in SendMessageBatch requests of 10 per queue). Default 100. */
  batchSize?: number;
  /** Pause between passes that found no more rows. Default 1000 ms. */
  pollIntervalMs?: number;
  /** How long a claim keeps a row from other relays; a relay that dies frees its rows after this. Default 30000 ms. */
  leaseMs?: number;
  backoff?: RelayBackoffOptions;
  /** Time source for polling, leases and backoff (tests pass a FakeClock). */
  clock?: Clock;
  /** Jitter source, [0, 1). Default Math.random. */
  random?: () => number;
  hooks?: OutboxRelayHooks;
  /**
   * Put before the row id in MessageDeduplicationId on FIFO queues. Default ''. Set one per outbox table
   * when several tables (services) publish to one FIFO queue, or their equal row ids would dedup each other.
   */
  deduplicationIdPrefix?: string;
}

/**
 * Publishes what `outbox.add` recorded. Each pass leases pending rows lowest id first, sends them with
 * SendMessageBatch per queue in id order, then marks the accepted ones sent and schedules the refused ones
 * for a retry with exponential backoff. Delivery is at least once: a relay that dies after SQS accepted a
 * batch and before marking it re-publishes that batch; on FIFO queues the row id is the
 * MessageDeduplicationId, so SQS drops the repeat within its 5-minute deduplication window.
 */
export class OutboxRelay {
  private readonly outbox: OutboxStore;
  private readonly client: SQSClient;
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly hooks: OutboxRelayHooks;
  private readonly deduplicationIdPrefix: string;
  private readonly queueUrls = new Map<string, string>();
  private job: PeriodicJob | undefined;
  /** Serialises passes started by the timer and by `publishIds`, so one relay never races itself. */
  private passes: Promise<unknown> = Promise.resolve();

  constructor(options: OutboxRelayOptions) {
    this.outbox = options.outbox;
    this.client = options.client;
    this.batchSize = options.batchSize ?? 100;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.initialBackoffMs = options.backoff?.initialMs ?? 1000;
    this.maxBackoffMs = options.backoff?.maxMs ?? 300_000;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.hooks = options.hooks ?? {};
    this.deduplicationIdPrefix = options.deduplicationIdPrefix ?? '';
  }

  /** Starts polling: a pass at once, then one `pollIntervalMs` after each pass that drained the table. */
  start(): void {
    if (this.job) return;
    this.job = repeatEvery(
      this.clock,
      0,
      this.pollIntervalMs,
      async () => {
        await this.drain();
      },
      (error) => this.hooks.error?.(error),
    );
  }

  /** Stops polling; resolves once a pass under way has finished. */
  async stop(): Promise<void> {
    const job = this.job;
    this.job = undefined;
    await job?.stop();
    await this.passes.catch(() => {});
  }

  /** Runs passes until no claimable row is left; returns how many rows were published. */
  drain(): Promise<number> {
    return this.serialised(async () => {
      let published = 0;
      for (;;) {
        const rows = await this.outbox.claim(this.batchSize, this.clock.now(), this.leaseUntil());
        published += await this.publish(rows);
        if (rows.length < this.batchSize) return published;
      }
    });
  }

  /** Publishes the given rows if they are still pending and unclaimed (the CDC relay's fast path). */
  publishIds(ids: readonly string[]): Promise<number> {
    return this.serialised(async () => {
      let published = 0;
      for (const batch of chunks(ids, this.batchSize)) {
        published += await this.publish(
          await this.outbox.claimIds(batch, this.clock.now(), this.leaseUntil()),
        );
      }
      return published;
    });
  }

  private serialised<T>(pass: () => Promise<T>): Promise<T> {
    const run = this.passes.catch(() => {}).then(pass);
    this.passes = run;
    return run;
  }

  private leaseUntil(): number {
    return this.clock.now() + this.leaseMs;
  }

  /** Sends claimed rows, grouped by queue in id order; returns how many SQS accepted. */
  private async publish(rows: readonly OutboxRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const accepted: OutboxRow[] = [];
    const failures: PublishFailure[] = [];
    const deferred: string[] = [];
    for (const [queue, queued] of groupByQueue(rows)) {
      let queueUrl: string;
      try {
        queueUrl = await this.queueUrl(queue);
      } catch (error) {
        for (const row of queued) failures.push(this.failure(row, error));
        continue;
      }
      const fifo = queueUrl.endsWith('.fifo');
      // On a FIFO queue a row must not overtake an earlier row of its group: behind a refused row, and
      // behind a retried row (which may be refused again), the group's later rows wait for the next pass.
      const heldGroups = new Set<string>();
      for (const chunk of chunks(queued)) {
        const batch: OutboxRow[] = [];
        for (const row of chunk) {
          const group = fifo ? row.groupId : undefined;
          if (group !== undefined && heldGroups.has(group)) deferred.push(row.id);
          else batch.push(row);
          if (group !== undefined && row.attempts > 0) heldGroups.add(group);
        }
        if (batch.length === 0) continue;
        const refusals = await this.send(queueUrl, batch, fifo);
        for (const [i, row] of batch.entries()) {
          const reason = refusals(i);
          if (reason === undefined) {
            accepted.push(row);
            continue;
          }
          failures.push(this.failure(row, reason));
          if (fifo && row.groupId !== undefined) heldGroups.add(row.groupId);
        }
      }
    }
    if (accepted.length > 0) await this.hooks.published?.(accepted);
    await this.outbox.markSent(
      accepted.map((r) => r.id),
      this.clock.now(),
    );
    await this.outbox.release(deferred);
    if (failures.length > 0) {
      await this.outbox.markFailed(failures);
      this.hooks.failed?.(failures);
    }
    return accepted.length;
  }

  /** One SendMessageBatch; returns why entry `i` was refused, or undefined when SQS accepted it. */
  private async send(
    queueUrl: string,
    batch: readonly OutboxRow[],
    fifo: boolean,
  ): Promise<(i: number) => unknown> {
    try {
      const result = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((r, i) => this.entry(r, i, fifo)),
        }),
      );
      const refused = new Map((result.Failed ?? []).map((f) => [Number(f.Id), `${f.Code}: ${f.Message}`]));
      return (i) => refused.get(i);
    } catch (error) {
      return () => error;
    }
  }

  private entry(row: OutboxRow, index: number, fifo: boolean): SendMessageBatchRequestEntry {
    return {
      Id: String(index),
      MessageBody: row.body,
      MessageAttributes: row.attributes,
      DelaySeconds: row.delaySeconds,
      MessageGroupId: row.groupId,
      // The row id is stable across relays and restarts, so SQS sees a re-publish of a row as a duplicate.
      MessageDeduplicationId: fifo ? `${this.deduplicationIdPrefix}${row.id}` : undefined,
    };
  }

  private async queueUrl(queue: string): Promise<string> {
    if (/^https?:\/\//.test(queue)) return queue;
    const known = this.queueUrls.get(queue);
    if (known) return known;
    const { QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: queue }));
    if (!QueueUrl) throw new Error(`no URL for queue ${queue}`);
    this.queueUrls.set(queue, QueueUrl);
    return QueueUrl;
  }

  /** Exponential in the row's attempts (after this one), with jitter in [50 %, 100 %] so retries spread out. */
  private failure(row: OutboxRow, error: unknown): PublishFailure {
    const exponential = this.initialBackoffMs * 2 ** row.attempts;
    const delay = Math.min(this.maxBackoffMs, exponential) * (0.5 + this.random() / 2);
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { id: row.id, retryAt: this.clock.now() + Math.round(delay), error: text };
  }
}

function groupByQueue(rows: readonly OutboxRow[]): Map<string, OutboxRow[]> {
  const byQueue = new Map<string, OutboxRow[]>();
  for (const row of rows) {
    const list = byQueue.get(row.queue);
    if (list) list.push(row);
    else byQueue.set(row.queue, [row]);
  }
  return byQueue;
}
