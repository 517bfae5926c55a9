/**
 * The pollers of one event source mapping: ordinary consumers of its queue, through the same ReceiveMessage
 * and DeleteMessageBatch the SQS API serves, so the queue's visibility timeout, redrive and FIFO rules are
 * the queue's own. Each poller gathers a batch (up to BatchSize, waiting up to the batching window on the
 * service's clock), drops and deletes the records the filters refuse, invokes the function with the rest,
 * and deletes what the function processed. Pollers scale with the backlog up to the mapping's maximum
 * concurrency and back down to one.
 */
import type { Clock } from '#toolkit/clock';
import type { SqsActions } from '../actions.ts';
import type { Message } from '../api-types.ts';
import { SqsError } from '../errors.ts';
import type { JsonObjectValue } from '../event-filter/index.ts';
import type { RequestContext } from '../request-context.ts';
import { reportedFailures, withLaterGroupRecords } from './batch-response.ts';
import { compileFilters, DEFAULT_MAXIMUM_CONCURRENCY, type EventSourceMapping } from './mapping-config.ts';
import { type SqsRecord, sqsRecord } from './sqs-event.ts';

/** What an Invoke request answered; it rejects when no answer came (unreachable, or aborted at the time-out). */
export interface InvokeAnswer {
  status: number;
  /** `X-Amz-Function-Error`: the function failed (Unhandled, Handled). */
  functionError?: string;
  body: string;
}

/** The Lambda Invoke API: `POST /2015-03-31/functions/{FunctionName}/invocations`. */
export interface FunctionInvoker {
  invoke(request: {
    functionName: string;
    qualifier?: string;
    payload: string;
    signal: AbortSignal;
  }): Promise<InvokeAnswer>;
}

export type InvocationResult = 'success' | 'partial' | 'function-error' | 'timeout' | 'unreachable';

/** Told of each invocation, for the per-mapping metrics. */
export interface MappingObserver {
  invoked(mapping: EventSourceMapping, records: number, result: InvocationResult, seconds: number): void;
  filteredOut(mapping: EventSourceMapping, records: number): void;
}

export interface PollerDependencies {
  sqs: Pick<SqsActions, 'ReceiveMessage' | 'DeleteMessageBatch'>;
  clock: Clock;
  invoker: FunctionInvoker;
  region: string;
  /** The queue's URL, as ReceiveMessage names it. */
  queueUrl: string;
  fifo: boolean;
  /** As an SQS request's: the URL base and the consumer's identity. */
  context: Pick<RequestContext, 'baseUrl' | 'senderId'>;
  observer: MappingObserver;
  /** The queue is gone: the mapping is to be disabled (the pollers have stopped). */
  onQueueGone(): void;
  onError(error: unknown, message: string): void;
}

/** The longest long poll SQS takes; a poller with an empty batch waits this long at a time. */
const LONG_POLL_SECONDS = 20;
/** Messages one ReceiveMessage returns at most. */
const RECEIVE_MAX = 10;
/** A batch's message bytes stop growing near Lambda's 6 MB invocation payload limit. */
const PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024 - 256 * 1024;
/** After an unexpected failure (the store unavailable), a poller waits this long before trying again. */
const RETRY_AFTER_MS = 1_000;

export class MappingPollers {
  private readonly mapping: EventSourceMapping;
  private readonly deps: PollerDependencies;
  private readonly filters;
  private readonly stopping = new AbortController();
  private readonly workers = new Set<Promise<void>>();
  private readonly maxConcurrency: number;

  constructor(mapping: EventSourceMapping, deps: PollerDependencies) {
    this.mapping = mapping;
    this.deps = deps;
    this.filters = compileFilters(mapping.filterPatterns);
    this.maxConcurrency = mapping.maximumConcurrency ?? DEFAULT_MAXIMUM_CONCURRENCY;
  }

  /** Pollers now at work (for stats and the concurrency bound). */
  get pollers(): number {
    return this.workers.size;
  }

  start(): void {
    this.spawn();
  }

  /** No new receive or invocation starts; resolves once the invocations under way have ended. */
  async stop(): Promise<void> {
    this.stopping.abort();
    while (this.workers.size > 0) await Promise.allSettled([...this.workers]);
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private spawn(): void {
    if (this.stopped || this.workers.size >= this.maxConcurrency) return;
    const worker: Promise<void> = this.work().finally(() => this.workers.delete(worker));
    this.workers.add(worker);
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      let batch: Message[];
      try {
        batch = await this.gather();
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof SqsError && error.code === 'QueueDoesNotExist') {
          this.stopping.abort();
          queueMicrotask(() => this.deps.onQueueGone());
          return;
        }
        this.deps.onError(error, 'event source mapping: receive failed');
        await this.pause(RETRY_AFTER_MS);
        continue;
      }
      if (batch.length === 0) {
        // Back down: an idle poller beyond the first ends.
        if (this.workers.size > 1) return;
        continue;
      }
      // A full batch says there is more: another poller joins, up to the mapping's bound.
      if (batch.length >= Math.min(this.mapping.batchSize, RECEIVE_MAX)) this.spawn();
      try {
        await this.process(batch);
      } catch (error) {
        // What was not deleted comes back after its visibility timeout.
        this.deps.onError(error, 'event source mapping: batch not finished');
        await this.pause(RETRY_AFTER_MS);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    const { signal } = this.stopping;
    return new Promise((resolve) => {
      const stop = () => {
        timer.cancel();
        resolve();
      };
      const timer = this.deps.clock.setTimer(ms, () => {
        signal.removeEventListener('abort', stop);
        resolve();
      });
      signal.addEventListener('abort', stop, { once: true });
    });
  }

  /**
   * Up to BatchSize messages: a long poll for the first ones; then, with a batching window, more receives
   * until the batch is full or the window (from the first record) has passed; without one, at once.
   */
  private async gather(): Promise<Message[]> {
    const { clock } = this.deps;
    const { batchSize } = this.mapping;
    const windowMs = this.mapping.maximumBatchingWindowInSeconds * 1000;
    const batch: Message[] = [];
    let bytes = 0;
    let windowEnd = 0;
    while (!this.stopped && batch.length < batchSize && bytes < PAYLOAD_LIMIT_BYTES) {
      let waitSeconds = LONG_POLL_SECONDS;
      if (batch.length > 0) {
        const left = windowEnd - clock.now();
        if (left <= 0) break;
        waitSeconds = Math.min(LONG_POLL_SECONDS, Math.ceil(left / 1000));
      }
      const received = await this.receive(Math.min(RECEIVE_MAX, batchSize - batch.length), waitSeconds);
      if (batch.length === 0 && received.length > 0) windowEnd = clock.now() + windowMs;
      for (const message of received) {
        // A message whose visibility timeout ran out during the window comes again: one record, the
        // latest receipt handle.
        const earlier = batch.findIndex((candidate) => candidate.MessageId === message.MessageId);
        if (earlier >= 0) {
          batch[earlier] = message;
          continue;
        }
        batch.push(message);
        bytes += Buffer.byteLength(message.Body ?? '');
      }
      if (batch.length === 0 || windowMs === 0) break;
    }
    return batch;
  }

  private async receive(max: number, waitSeconds: number): Promise<Message[]> {
    const result = await this.deps.sqs.ReceiveMessage(
      {
        QueueUrl: this.deps.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      },
      { ...this.deps.context, signal: this.stopping.signal },
    );
    return result.Messages ?? [];
  }

  private async process(batch: Message[]): Promise<void> {
    const { region, observer } = this.deps;
    const records = batch.map((message) => sqsRecord(message, this.mapping.eventSourceArn, region));
    const passed = this.filters
      ? records.filter((record) => this.filters!.matches(recordForFilter(record)))
      : records;
    if (passed.length < records.length) {
      // Lambda deletes the records no filter matches, without invoking the function.
      const refused = records.filter((record) => !passed.includes(record));
      await this.delete(refused);
      observer.filteredOut(this.mapping, refused.length);
    }
    if (passed.length === 0) return;
    const started = process.hrtime.bigint();
    const outcome = await this.invoke(passed);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (outcome === 'success') {
      await this.delete(passed);
      observer.invoked(this.mapping, passed.length, 'success', seconds);
      return;
    }
    if (typeof outcome === 'string') {
      // A function error leaves the whole batch to its visibility timeout, as Lambda does.
      observer.invoked(this.mapping, passed.length, outcome, seconds);
      return;
    }
    const left = this.deps.fifo
      ? withLaterGroupRecords(
          passed.map((record) => ({
            messageId: record.messageId,
            groupId: record.attributes.MessageGroupId,
          })),
          outcome,
        )
      : outcome;
    await this.delete(passed.filter((record) => !left.has(record.messageId)));
    observer.invoked(this.mapping, passed.length, left.size === 0 ? 'success' : 'partial', seconds);
  }

  /** 'success', the ids the function reported failed, or why the whole batch failed. */
  private async invoke(records: SqsRecord[]): Promise<'success' | ReadonlySet<string> | InvocationResult> {
    const { clock, invoker } = this.deps;
    const timeout = new AbortController();
    const timer = clock.setTimer(this.mapping.functionTimeoutSeconds * 1000, () => timeout.abort());
    let answer: InvokeAnswer;
    try {
      answer = await invoker.invoke({
        functionName: this.mapping.functionName,
        qualifier: this.mapping.qualifier,
        payload: JSON.stringify({ Records: records }),
        signal: timeout.signal,
      });
    } catch (error) {
      if (timeout.signal.aborted) return 'timeout';
      this.deps.onError(error, 'event source mapping: function not reached');
      return 'unreachable';
    } finally {
      timer.cancel();
    }
    if (answer.status < 200 || answer.status > 299 || answer.functionError !== undefined)
      return 'function-error';
    if (!this.mapping.reportBatchItemFailures) return 'success';
    const failed = reportedFailures(answer.body, new Set(records.map((record) => record.messageId)));
    if (failed === 'all') return 'function-error';
    return failed.size === 0 ? 'success' : failed;
  }

  private async delete(records: readonly SqsRecord[]): Promise<void> {
    for (let start = 0; start < records.length; start += RECEIVE_MAX) {
      const entries = records.slice(start, start + RECEIVE_MAX).map((record, index) => ({
        Id: String(index),
        ReceiptHandle: record.receiptHandle,
      }));
      const result = await this.deps.sqs.DeleteMessageBatch(
        { QueueUrl: this.deps.queueUrl, Entries: entries },
        this.deps.context,
      );
      if (result.Failed && result.Failed.length > 0)
        this.deps.onError(result.Failed, 'event source mapping: some processed messages were not deleted');
    }
  }
}

/** The record as Lambda's filters see it: the JSON the function would get (a record is plain JSON already). */
function recordForFilter(record: SqsRecord): JsonObjectValue {
  return record as unknown as JsonObjectValue;
}
