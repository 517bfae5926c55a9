import { randomUUID } from 'node:crypto';
import {
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type Clock, systemClock } from './clock.ts';
import { MAX_BATCH_ENTRIES } from './visibility.ts';

/** One message for `Producer.send`: a SendMessageBatch entry without its Id (the producer numbers entries). */
export type ProducerMessage = Omit<SendMessageBatchRequestEntry, 'Id'>;

export interface ProducerRetryOptions {
  /** Tries per message, the first included. Default 5. */
  maxAttempts?: number;
  /** Backoff ceiling after the first failure, before full jitter. Default 100 ms. */
  initialMs?: number;
  /** Largest backoff. Default 5000 ms. */
  maxMs?: number;
}

export interface ProducerOptions {
  client: SQSClient;
  queueUrl: string;
  /** Entries per SendMessageBatch, 1-10. Default 10. */
  maxBatchSize?: number;
  /** How long a message waits for others to fill its batch. Default 5 ms. */
  maxWaitMs?: number;
  /** Bytes of bodies and attributes per batch. Default 262,144 (256 KiB), and never above the queue's MaximumMessageSize. */
  maxBatchBytes?: number;
  /** Batches in flight at once on a standard queue. Default 10; a FIFO queue always sends one at a time, in order. */
  maxConcurrentBatches?: number;
  retry?: ProducerRetryOptions;
  /** Time source for the batching wait and the backoff (tests pass a FakeClock). */
  clock?: Clock;
  /** Jitter source, [0, 1). Default Math.random. */
  random?: () => number;
}

/** SQS refused one entry for a reason a retry cannot fix (SenderFault), or retries ran out. */
export class ProducerSendError extends Error {
  override readonly name = 'ProducerSendError';
  constructor(
    readonly code: string,
    message: string,
    /** True when SQS blamed the message itself; false when the service kept failing until maxAttempts. */
    readonly senderFault: boolean,
    /** Tries made, the first included. */
    readonly attempts: number,
  ) {
    super(`${code}: ${message}`);
  }
}

interface Pending {
  entry: ProducerMessage;
  bytes: number;
  resolve: (messageId: string) => void;
  reject: (error: unknown) => void;
}

interface QueueSettings {
  fifo: boolean;
  /** A FIFO queue with content-based dedup lets SQS hash the body; otherwise the producer names each message. */
  generateDeduplicationIds: boolean;
  maxBatchBytes: number;
}

/** Error names that mean "try again later" whatever their HTTP status. */
const RETRYABLE_CODES = new Set([
  'ThrottlingException',
  'Throttling',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ServiceUnavailable',
  'InternalError',
  'InternalFailure',
  'KmsThrottled',
]);

/**
 * Sends messages in SendMessageBatch requests: `send()` resolves with the MessageId once SQS took the
 * message. A batch leaves when it holds `maxBatchSize` entries, when the next message would take it past
 * `maxBatchBytes`, or `maxWaitMs` after its first message. Entries SQS failed on its side (and whole
 * requests that were throttled or got no answer) are retried alone, with exponential backoff and full jitter;
 * entries SQS refused (SenderFault) are rejected at once. On a FIFO queue every retry carries the same
 * MessageDeduplicationId, so a request that reached SQS but whose answer was lost is not stored twice.
 */
export class Producer {
  private readonly client: SQSClient;
  private readonly queueUrl: string;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly maxBatchSize: number;
  private readonly maxWaitMs: number;
  private readonly maxAttempts: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private settings: Promise<QueueSettings> | undefined;
  private buffer: Pending[] = [];
  private bufferBytes = 0;
  private waitTimer: { cancel(): void } | undefined;
  private readonly outstanding = new Set<Promise<void>>();
  private batchesInFlight = 0;
  private slotWaiters: Array<() => void> = [];
  private closed = false;

  constructor(private readonly options: ProducerOptions) {
    this.client = options.client;
    this.queueUrl = options.queueUrl;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.maxBatchSize = options.maxBatchSize ?? MAX_BATCH_ENTRIES;
    if (
      !Number.isInteger(this.maxBatchSize) ||
      this.maxBatchSize < 1 ||
      this.maxBatchSize > MAX_BATCH_ENTRIES
    ) {
      throw new RangeError('maxBatchSize must be 1-10 (SQS batch entries)');
    }
    this.maxWaitMs = options.maxWaitMs ?? 5;
    this.maxAttempts = options.retry?.maxAttempts ?? 5;
    if (!Number.isInteger(this.maxAttempts) || this.maxAttempts < 1) {
      throw new RangeError('retry.maxAttempts must be a positive integer');
    }
    this.initialBackoffMs = options.retry?.initialMs ?? 100;
    this.maxBackoffMs = options.retry?.maxMs ?? 5000;
  }

  /** Queues one message; resolves with its MessageId when SQS has it, rejects when it cannot be sent. */
  async send(message: ProducerMessage): Promise<string> {
    if (this.closed) throw new Error('Producer is closed');
    const settings = await this.queueSettings();
    const entry =
      settings.generateDeduplicationIds && message.MessageDeduplicationId === undefined
        ? { ...message, MessageDeduplicationId: randomUUID() }
        : message;
    const bytes = messageBytes(entry);
    return new Promise<string>((resolve, reject) => {
      if (this.buffer.length > 0 && this.bufferBytes + bytes > settings.maxBatchBytes) this.dispatch();
      this.buffer.push({ entry, bytes, resolve, reject });
      this.bufferBytes += bytes;
      if (this.buffer.length >= this.maxBatchSize) this.dispatch();
      else this.waitTimer ??= this.clock.setTimer(this.maxWaitMs, () => this.dispatch());
    });
  }

  /** Sends what is buffered now and resolves once every message sent so far has succeeded or failed. */
  async flush(): Promise<void> {
    // Sends made before this call may still wait on the queue's settings; they join the buffer first.
    await this.settings?.catch(() => {});
    this.dispatch();
    while (this.outstanding.size > 0) await Promise.all(this.outstanding);
  }

  /** Refuses new messages, then flushes. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private queueSettings(): Promise<QueueSettings> {
    this.settings ??= this.readQueueSettings().catch((error: unknown) => {
      this.settings = undefined;
      throw error;
    });
    return this.settings;
  }

  private async readQueueSettings(): Promise<QueueSettings> {
    const { Attributes: attributes = {} } = await this.client.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.queueUrl,
        AttributeNames: ['FifoQueue', 'ContentBasedDeduplication', 'MaximumMessageSize'],
      }),
    );
    const fifo = attributes.FifoQueue === 'true' || this.queueUrl.endsWith('.fifo');
    const queueMax = Number(attributes.MaximumMessageSize ?? Number.POSITIVE_INFINITY);
    return {
      fifo,
      generateDeduplicationIds: fifo && attributes.ContentBasedDeduplication !== 'true',
      maxBatchBytes: Math.min(this.options.maxBatchBytes ?? 262_144, queueMax),
    };
  }

  private dispatch(): void {
    this.waitTimer?.cancel();
    this.waitTimer = undefined;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.bufferBytes = 0;
    const sent = this.sendWhenSlotFree(batch)
      .catch((error: unknown) => {
        // Not expected (every failure is settled per entry), but no send may be left hanging.
        for (const item of batch) item.reject(error);
      })
      .finally(() => this.outstanding.delete(sent));
    this.outstanding.add(sent);
  }

  /** Batches take slots in the order they were made, so a FIFO queue (one slot) receives them in order. */
  private async sendWhenSlotFree(batch: Pending[]): Promise<void> {
    const settings = await this.queueSettings();
    const slots = settings.fifo ? 1 : (this.options.maxConcurrentBatches ?? 10);
    if (this.batchesInFlight >= slots || this.slotWaiters.length > 0) {
      // Woken by a batch that ended: it hands its slot over, so no newer batch can take it first.
      await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    } else {
      this.batchesInFlight++;
    }
    try {
      await this.sendWithRetries(batch);
    } finally {
      const next = this.slotWaiters.shift();
      if (next) next();
      else this.batchesInFlight--;
    }
  }

  private async sendWithRetries(batch: Pending[]): Promise<void> {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const retry: Array<{ item: Pending; code: string; message: string }> = [];
      try {
        const result = await this.client.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: pending.map((item, i) => ({ ...item.entry, Id: String(i) })),
          }),
        );
        const answered = new Set<number>();
        for (const done of result.Successful ?? []) {
          answered.add(Number(done.Id));
          pending[Number(done.Id)]?.resolve(done.MessageId!);
        }
        for (const failed of result.Failed ?? []) {
          const item = pending[Number(failed.Id)];
          answered.add(Number(failed.Id));
          if (!item) continue;
          const code = failed.Code ?? 'Unknown';
          if (failed.SenderFault)
            item.reject(new ProducerSendError(code, failed.Message ?? '', true, attempt));
          else retry.push({ item, code, message: failed.Message ?? '' });
        }
        for (const [i, item] of pending.entries()) {
          if (!answered.has(i))
            retry.push({ item, code: 'MissingEntry', message: 'not in the batch result' });
        }
      } catch (error) {
        if (!isRetryable(error)) {
          for (const item of pending) item.reject(error);
          return;
        }
        const code = error instanceof Error ? error.name : 'Error';
        const message = error instanceof Error ? error.message : String(error);
        for (const item of pending) retry.push({ item, code, message });
      }
      if (retry.length > 0 && attempt >= this.maxAttempts) {
        for (const { item, code, message } of retry)
          item.reject(new ProducerSendError(code, message, false, attempt));
        return;
      }
      pending = retry.map(({ item }) => item);
      if (pending.length > 0) await this.pause(this.backoffMs(attempt));
    }
  }

  /** Full jitter: anywhere up to the exponential step, so producers throttled together do not retry together. */
  private backoffMs(attempt: number): number {
    const step = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** Math.min(30, attempt - 1));
    return Math.round(this.random() * step);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimer(ms, resolve));
  }
}

/** Throttling, a server-side failure, or no answer at all; a 4xx about the request is not worth retrying. */
function isRetryable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const details = error as Error & { $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
  if (details.$retryable || RETRYABLE_CODES.has(error.name)) return true;
  const status = details.$metadata?.httpStatusCode;
  return status === undefined || status === 429 || status >= 500;
}

/** What SQS counts against the size limit: the body plus each attribute's name, type and value. */
function messageBytes(entry: ProducerMessage): number {
  let bytes = Buffer.byteLength(entry.MessageBody ?? '');
  for (const [name, value] of Object.entries(entry.MessageAttributes ?? {})) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
    if (value.StringValue !== undefined) bytes += Buffer.byteLength(value.StringValue);
    if (value.BinaryValue !== undefined) bytes += value.BinaryValue.length;
  }
  return bytes;
}
