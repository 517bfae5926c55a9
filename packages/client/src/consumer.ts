import { EventEmitter } from 'node:events';
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { parseQueueArn } from './arn.ts';
import { type Clock, systemClock, type Timer } from './clock.ts';
import { changeVisibility, deleteMessages, MAX_VISIBILITY_SECONDS } from './visibility.ts';

export type { Message } from '@aws-sdk/client-sqs';

export interface HandlerContext {
  /**
   * Aborted when the handler must give up: its `handlerTimeoutSeconds` passed, the delivery reached SQS's
   * 12-hour visibility limit (the message is visible again to other consumers), or `stop()` ran out of time.
   */
  signal: AbortSignal;
}

/** Handles one message; resolving means success (the message is deleted), throwing means failure. */
export type MessageHandler = (message: Message, context: HandlerContext) => Promise<unknown>;

/** What a batch handler reports: the MessageIds that failed. Only they are retried; the rest are deleted. */
export interface BatchOutcome {
  failed: readonly string[];
}

/** Handles up to `batchSize` messages at once; resolving with nothing means all succeeded, throwing all failed. */
export type BatchHandler = (
  messages: Message[],
  context: HandlerContext,
) => Promise<BatchOutcome | undefined>;

/**
 * A step between receive and handler, and after a processed message's delete: large payloads use it
 * (`LargePayloads.consumerHook()`). Events, deletes and the DLQ copy keep the message as received.
 */
export interface PayloadHook {
  /** The message the handler is given. A throw fails the message as a handler error would. */
  prepare(message: Message): Promise<Message>;
  /** After these messages were deleted as processed (not dead-lettered), as received. */
  deleted?(messages: Message[]): Promise<void>;
}

export interface BackoffOptions {
  /** Visibility after the first failure, before jitter. Default 2. */
  initialSeconds?: number;
  /** Largest backoff. Default 900 (15 minutes). */
  maxSeconds?: number;
}

export interface ConsumerOptions {
  sqs: SQSClient;
  queueUrl: string;
  /** Exactly one of `handler` and `batchHandler`. */
  handler?: MessageHandler;
  batchHandler?: BatchHandler;
  /** Handlers (per-message mode) or batches (batch mode) running at once. Default 10. */
  concurrency?: number;
  /** MaxNumberOfMessages per receive, 1-10. Default 10. */
  batchSize?: number;
  /** Long-poll wait per receive, 0-20. Default 20. */
  waitTimeSeconds?: number;
  /** Visibility each receive and heartbeat asks for. Default: the queue's VisibilityTimeout. */
  visibilityTimeoutSeconds?: number;
  /** Heartbeat period. Default a third of the visibility timeout, so two heartbeats may fail before the lease lapses. */
  heartbeatIntervalSeconds?: number;
  /** Abort a handler's signal after this long. Default: only at SQS's 12-hour limit. */
  handlerTimeoutSeconds?: number;
  /** Visibility after a failure: exponential in the receive count, with jitter. `false`: wait out the timeout. */
  backoff?: BackoffOptions | false;
  /**
   * On the last receive before the queue's maxReceiveCount, send a failing message to the DLQ with the error
   * as message attributes (`SluiceError`, `SluiceErrorStack`, `SluiceFailedAt`), then delete it. Default true
   * when the queue has a RedrivePolicy.
   */
  poisonToDeadLetterQueue?: boolean;
  /** How long `stop()` lets running handlers finish before aborting them. Default 30 s. */
  shutdownTimeoutSeconds?: number;
  /** Process signals that call `stop()`. Default `['SIGTERM']`; `[]` for none. */
  stopOnSignals?: NodeJS.Signals[];
  /** Time source for heartbeats, backoff and timeouts (tests pass a FakeClock). */
  clock?: Clock;
  /** Jitter source, [0, 1). Default Math.random. */
  random?: () => number;
  /** Pause after a failed receive before the next one. Default 1 s. */
  receiveRetrySeconds?: number;
  /** Resolves Extended Client pointers for handlers and removes blobs after deletes: `large.consumerHook()`. */
  largePayloads?: PayloadHook;
}

export type TimeoutReason = 'handler-timeout' | 'visibility-limit' | 'shutdown';

export interface ConsumerEvents {
  received: [messages: Message[]];
  processed: [message: Message];
  failed: [message: Message, error: unknown, handling: FailureHandling];
  heartbeatFailed: [message: Message, code: string, errorMessage: string];
  handlerTimeout: [messages: Message[], reason: TimeoutReason];
  receiveFailed: [error: unknown];
  deleteFailed: [message: Message, code: string, errorMessage: string];
  stopped: [];
}

/** What the consumer did with a failed message. */
export type FailureHandling =
  | { kind: 'backoff'; visibleInSeconds: number }
  | { kind: 'timeout' }
  | { kind: 'dead-lettered'; deadLetterQueueUrl: string };

/** Error attributes a poison message carries into the DLQ. */
export const POISON_ATTRIBUTES = {
  error: 'SluiceError',
  stack: 'SluiceErrorStack',
  failedAt: 'SluiceFailedAt',
} as const;

const MAX_MESSAGE_ATTRIBUTES = 10;
const MAX_ERROR_TEXT = 1024;
const MAX_STACK_TEXT = 8192;

/** Handlers run on one lease at a time: one message, or one batch. */
interface Lease {
  messages: Message[];
  /** When the receive was sent: SQS's 12-hour limit counts from its receive, which came no earlier. */
  receivedAt: number;
  controller: AbortController;
  timers: Timer[];
  ended: boolean;
}

interface Outcome {
  succeeded: Message[];
  failed: Array<{ message: Message; error: unknown }>;
}

export class Consumer {
  private readonly sqs: SQSClient;
  private readonly queueUrl: string;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly events = new EventEmitter();
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly waitTimeSeconds: number;
  private visibilityTimeout = 30;
  private heartbeatMs = 10_000;
  private maxReceiveCount: number | undefined;
  private deadLetterQueueUrl: string | undefined;
  private state: 'idle' | 'running' | 'stopping' | 'stopped' = 'idle';
  private readonly active = new Set<Lease>();
  private slotWaiters: Array<() => void> = [];
  private receiveAbort = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  private stopping: Promise<void> | undefined;
  /** Latest receipt handle per MessageId, and how many copies are being handled (SQS may redeliver). */
  private readonly latestHandles = new Map<string, { receiptHandle: string; copies: number }>();
  private pendingDeletes: Message[] = [];
  /** Deleted because a copy went to the DLQ: their payload hook must not see them as processed. */
  private readonly deadLettered = new WeakSet<Message>();
  private deleting: Promise<void> | undefined;
  private readonly signalListener = () => void this.stop();

  constructor(private readonly options: ConsumerOptions) {
    if (!options.handler === !options.batchHandler) {
      throw new TypeError('Consumer needs exactly one of handler and batchHandler');
    }
    this.sqs = options.sqs;
    this.queueUrl = options.queueUrl;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.concurrency = positiveInteger('concurrency', options.concurrency ?? 10);
    this.batchSize = positiveInteger('batchSize', options.batchSize ?? 10);
    if (this.batchSize > 10) throw new RangeError('batchSize must be 1-10 (SQS MaxNumberOfMessages)');
    this.waitTimeSeconds = options.waitTimeSeconds ?? 20;
    if (this.waitTimeSeconds < 0 || this.waitTimeSeconds > 20) {
      throw new RangeError('waitTimeSeconds must be 0-20 (SQS WaitTimeSeconds)');
    }
  }

  on<K extends keyof ConsumerEvents>(event: K, listener: (...args: ConsumerEvents[K]) => void): this {
    this.events.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  off<K extends keyof ConsumerEvents>(event: K, listener: (...args: ConsumerEvents[K]) => void): this {
    this.events.off(event, listener as (...args: unknown[]) => void);
    return this;
  }

  private emit<K extends keyof ConsumerEvents>(event: K, ...args: ConsumerEvents[K]): void {
    this.events.emit(event, ...args);
  }

  /** Reads the queue's visibility timeout and redrive policy, then starts receiving. */
  async start(): Promise<void> {
    if (this.state !== 'idle') throw new Error(`Consumer cannot start: it is ${this.state}`);
    this.state = 'running';
    try {
      await this.readQueueSettings();
    } catch (error) {
      this.state = 'stopped';
      throw error;
    }
    for (const signal of this.options.stopOnSignals ?? ['SIGTERM']) process.on(signal, this.signalListener);
    this.loopDone = this.receiveLoop();
  }

  /** Messages being handled right now. */
  get inFlight(): number {
    let count = 0;
    for (const lease of this.active) count += lease.messages.length;
    return count;
  }

  get visibilityTimeoutSeconds(): number {
    return this.visibilityTimeout;
  }

  /**
   * Stops receiving, lets running handlers finish for up to `shutdownTimeoutSeconds` (then aborts their
   * signals and leaves their messages to reappear after their visibility timeout), releases messages that
   * arrived after the stop at visibility 0, and sends the pending deletes.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutDown();
    return this.stopping;
  }

  private async shutDown(): Promise<void> {
    if (this.state === 'idle') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    // The deadline counts from the stop() call, as a SIGTERM's grace period does.
    let timer: Timer | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = this.clock.setTimer((this.options.shutdownTimeoutSeconds ?? 30) * 1000, () =>
        resolve('deadline'),
      );
    });
    for (const signal of this.options.stopOnSignals ?? ['SIGTERM']) process.off(signal, this.signalListener);
    this.receiveAbort.abort();
    this.wakeSlotWaiters();
    await this.loopDone;
    if ((await Promise.race([this.allHandlersDone(), deadline])) === 'deadline') {
      for (const lease of this.active) this.endLease(lease, 'shutdown');
    }
    timer?.cancel();
    await this.flushDeletes();
    this.state = 'stopped';
    this.emit('stopped');
  }

  private async allHandlersDone(): Promise<'finished'> {
    while (this.active.size > 0) await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    return 'finished';
  }

  private async readQueueSettings(): Promise<void> {
    const { Attributes: attributes = {} } = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.queueUrl,
        AttributeNames: ['VisibilityTimeout', 'RedrivePolicy'],
      }),
    );
    this.visibilityTimeout =
      this.options.visibilityTimeoutSeconds ?? Number(attributes.VisibilityTimeout ?? 30);
    const heartbeatSeconds = this.options.heartbeatIntervalSeconds ?? this.visibilityTimeout / 3;
    if (!(heartbeatSeconds > 0) || heartbeatSeconds >= this.visibilityTimeout) {
      throw new RangeError(
        `heartbeatIntervalSeconds (${heartbeatSeconds}) must be above 0 and below the visibility timeout (${this.visibilityTimeout})`,
      );
    }
    this.heartbeatMs = heartbeatSeconds * 1000;
    if (!attributes.RedrivePolicy) return;
    const policy = JSON.parse(attributes.RedrivePolicy) as {
      deadLetterTargetArn?: string;
      maxReceiveCount?: unknown;
    };
    this.maxReceiveCount = Number(policy.maxReceiveCount);
    if (this.options.poisonToDeadLetterQueue === false || !policy.deadLetterTargetArn) return;
    const deadLetterQueue = parseQueueArn(policy.deadLetterTargetArn);
    if (!deadLetterQueue)
      throw new Error(`The RedrivePolicy names no queue ARN: ${policy.deadLetterTargetArn}`);
    const { QueueUrl } = await this.sqs.send(
      new GetQueueUrlCommand({
        QueueName: deadLetterQueue.name,
        QueueOwnerAWSAccountId: deadLetterQueue.accountId,
      }),
    );
    this.deadLetterQueueUrl = QueueUrl;
  }

  private async receiveLoop(): Promise<void> {
    while (this.state === 'running') {
      await this.freeSlot();
      if (this.state !== 'running') break;
      const free = this.concurrency - this.active.size;
      const wanted = this.options.handler ? Math.min(this.batchSize, free) : this.batchSize;
      const receivedAt = this.clock.now();
      let messages: Message[];
      try {
        const result = await this.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: this.queueUrl,
            MaxNumberOfMessages: wanted,
            WaitTimeSeconds: this.waitTimeSeconds,
            VisibilityTimeout: this.visibilityTimeout,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: this.receiveAbort.signal },
        );
        messages = result.Messages ?? [];
      } catch (error) {
        if (this.state !== 'running') break;
        this.emit('receiveFailed', error);
        await this.pause((this.options.receiveRetrySeconds ?? 1) * 1000);
        continue;
      }
      if (messages.length === 0) continue;
      if (this.state !== 'running') {
        // Received after stop() began: nobody will handle these, so give them back now, not after the timeout.
        await changeVisibility(
          this.sqs,
          this.queueUrl,
          messages.map((m) => ({ receiptHandle: m.ReceiptHandle!, seconds: 0 })),
        );
        break;
      }
      for (const message of messages) this.trackHandle(message);
      this.emit('received', messages);
      if (this.options.handler) {
        for (const message of messages) this.runLease([message], receivedAt);
      } else {
        this.runLease(messages, receivedAt);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(ms, resolve);
      this.receiveAbort.signal.addEventListener('abort', () => {
        timer.cancel();
        resolve();
      });
    });
  }

  private freeSlot(): Promise<void> {
    if (this.active.size < this.concurrency) return Promise.resolve();
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  private wakeSlotWaiters(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const wake of waiters) wake();
  }

  private trackHandle(message: Message): void {
    const id = message.MessageId!;
    const known = this.latestHandles.get(id);
    this.latestHandles.set(id, { receiptHandle: message.ReceiptHandle!, copies: (known?.copies ?? 0) + 1 });
  }

  private latestHandle(message: Message): string {
    return this.latestHandles.get(message.MessageId!)?.receiptHandle ?? message.ReceiptHandle!;
  }

  private untrackHandle(message: Message): void {
    const id = message.MessageId!;
    const known = this.latestHandles.get(id);
    if (!known) return;
    if (known.copies <= 1) this.latestHandles.delete(id);
    else known.copies--;
  }

  private runLease(messages: Message[], receivedAt: number): void {
    const lease: Lease = {
      messages,
      receivedAt,
      controller: new AbortController(),
      timers: [],
      ended: false,
    };
    this.active.add(lease);
    this.scheduleHeartbeat(lease);
    const limitMs = Math.min(
      (this.options.handlerTimeoutSeconds ?? Number.POSITIVE_INFINITY) * 1000,
      MAX_VISIBILITY_SECONDS * 1000,
    );
    const reason: TimeoutReason =
      this.options.handlerTimeoutSeconds !== undefined && this.options.handlerTimeoutSeconds * 1000 <= limitMs
        ? 'handler-timeout'
        : 'visibility-limit';
    lease.timers.push(
      this.clock.setTimer(receivedAt + limitMs - this.clock.now(), () => this.endLease(lease, reason)),
    );
    // A lease stays active until its outcome is settled (deleted, backed off or dead-lettered), so stop()
    // waiting for the active set waits for that too.
    void this.handle(lease)
      .then((outcome) => this.settle(lease, outcome))
      .finally(() => {
        this.active.delete(lease);
        this.wakeSlotWaiters();
      });
  }

  /** Stops the heartbeat and tells the handler to give up; its messages reappear when their visibility ends. */
  private endLease(lease: Lease, reason: TimeoutReason): void {
    if (lease.ended) return;
    this.stopTimers(lease);
    lease.controller.abort(new Error(`handler aborted: ${reason}`));
    this.emit('handlerTimeout', lease.messages, reason);
  }

  private stopTimers(lease: Lease): void {
    lease.ended = true;
    for (const timer of lease.timers) timer.cancel();
    lease.timers = [];
  }

  private scheduleHeartbeat(lease: Lease): void {
    const timer = this.clock.setTimer(this.heartbeatMs, async () => {
      if (lease.ended) return;
      this.scheduleHeartbeat(lease);
      const seconds = this.withinDeliveryLimit(lease, this.visibilityTimeout);
      if (seconds <= 0) return;
      const failures = await changeVisibility(
        this.sqs,
        this.queueUrl,
        lease.messages.map((m) => ({ receiptHandle: this.latestHandle(m), seconds })),
      );
      for (const failure of failures) {
        const message = lease.messages.find((m) => this.latestHandle(m) === failure.receiptHandle);
        if (message) this.emit('heartbeatFailed', message, failure.code, failure.message);
      }
    });
    lease.timers.push(timer);
  }

  /** SQS refuses visibility past 12 hours from the receive; ask for no more than what is left. */
  private withinDeliveryLimit(lease: Lease, seconds: number): number {
    const leftMs = lease.receivedAt + MAX_VISIBILITY_SECONDS * 1000 - this.clock.now();
    return Math.max(0, Math.min(seconds, Math.floor(leftMs / 1000)));
  }

  private async handle(lease: Lease): Promise<Outcome> {
    const context: HandlerContext = { signal: lease.controller.signal };
    const { ready, unprepared } = await this.prepare(lease.messages);
    const pending = lease.messages.filter((m) => !unprepared.some((u) => u.message === m));
    if (ready.length === 0) return { succeeded: [], failed: unprepared };
    try {
      if (this.options.handler) {
        await this.options.handler(ready[0]!, context);
        return { succeeded: pending, failed: [] };
      }
      const outcome = await this.options.batchHandler!(ready, context);
      const failedIds = new Set(outcome?.failed ?? []);
      const error = new Error('reported failed by the batch handler');
      return {
        succeeded: pending.filter((m) => !failedIds.has(m.MessageId!)),
        failed: [
          ...unprepared,
          ...pending.filter((m) => failedIds.has(m.MessageId!)).map((message) => ({ message, error })),
        ],
      };
    } catch (error) {
      return { succeeded: [], failed: [...unprepared, ...pending.map((message) => ({ message, error }))] };
    }
  }

  /** Runs the payload hook: the messages handlers get, in order, and those it could not prepare. */
  private async prepare(messages: Message[]): Promise<{ ready: Message[]; unprepared: Outcome['failed'] }> {
    const hook = this.options.largePayloads;
    if (!hook) return { ready: messages, unprepared: [] };
    const settled = await Promise.allSettled(messages.map((m) => hook.prepare(m)));
    const ready: Message[] = [];
    const unprepared: Outcome['failed'] = [];
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled') ready.push(result.value);
      else unprepared.push({ message: messages[i]!, error: result.reason });
    });
    return { ready, unprepared };
  }

  private async settle(lease: Lease, outcome: Outcome): Promise<void> {
    const timedOut = lease.controller.signal.aborted;
    this.stopTimers(lease);
    for (const message of outcome.succeeded) {
      this.emit('processed', message);
      this.pendingDeletes.push(message);
    }
    if (outcome.succeeded.length > 0) this.scheduleDeleteFlush();
    const backoffs: Array<{ message: Message; error: unknown; seconds: number }> = [];
    for (const { message, error } of outcome.failed) {
      if (timedOut) {
        // Its heartbeat has stopped; it reappears when the last visibility granted runs out.
        this.emit('failed', message, error, { kind: 'timeout' });
        this.untrackHandle(message);
      } else if (this.isLastAttempt(message) && (await this.sendToDeadLetterQueue(message, error))) {
        this.emit('failed', message, error, {
          kind: 'dead-lettered',
          deadLetterQueueUrl: this.deadLetterQueueUrl!,
        });
        this.deadLettered.add(message);
        this.pendingDeletes.push(message);
        this.scheduleDeleteFlush();
      } else {
        backoffs.push({
          message,
          error,
          seconds: this.withinDeliveryLimit(lease, this.backoffSeconds(message)),
        });
      }
    }
    if (backoffs.length === 0) return;
    if (this.options.backoff !== false) {
      // A refused change leaves the message to its current visibility: it still comes back, only later.
      await changeVisibility(
        this.sqs,
        this.queueUrl,
        backoffs.map((b) => ({ receiptHandle: this.latestHandle(b.message), seconds: b.seconds })),
      );
    }
    for (const { message, error, seconds } of backoffs) {
      const visibleInSeconds = this.options.backoff === false ? this.visibilityTimeout : seconds;
      this.emit('failed', message, error, { kind: 'backoff', visibleInSeconds });
      this.untrackHandle(message);
    }
  }

  private isLastAttempt(message: Message): boolean {
    if (!this.deadLetterQueueUrl || this.maxReceiveCount === undefined) return false;
    return receiveCount(message) >= this.maxReceiveCount;
  }

  /** Exponential in the receive count, with "equal jitter": at least half the step, so retries spread but still wait. */
  backoffSeconds(message: Message): number {
    const backoff = this.options.backoff || {};
    const initial = backoff.initialSeconds ?? 2;
    const max = backoff.maxSeconds ?? 900;
    const step = Math.min(max, initial * 2 ** Math.min(30, receiveCount(message) - 1));
    return Math.min(MAX_VISIBILITY_SECONDS, Math.round(step / 2 + this.random() * (step / 2)));
  }

  /**
   * Sends the message to the DLQ with the reason beside it. False when it cannot (too many attributes to add
   * three, or the send failed): the message then goes back with a backoff and SQS's own redrive moves it.
   */
  private async sendToDeadLetterQueue(message: Message, error: unknown): Promise<boolean> {
    const attributes: Record<string, MessageAttributeValue> = {};
    for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
      attributes[name] = {
        DataType: value.DataType,
        ...(value.StringValue !== undefined ? { StringValue: value.StringValue } : {}),
        ...(value.BinaryValue !== undefined ? { BinaryValue: value.BinaryValue } : {}),
      };
    }
    if (Object.keys(attributes).length + 3 > MAX_MESSAGE_ATTRIBUTES) return false;
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const stack = error instanceof Error && error.stack ? error.stack : text;
    attributes[POISON_ATTRIBUTES.error] = {
      DataType: 'String',
      StringValue: text.slice(0, MAX_ERROR_TEXT) || '-',
    };
    attributes[POISON_ATTRIBUTES.stack] = {
      DataType: 'String',
      StringValue: stack.slice(0, MAX_STACK_TEXT) || '-',
    };
    attributes[POISON_ATTRIBUTES.failedAt] = {
      DataType: 'String',
      StringValue: new Date(this.clock.now()).toISOString(),
    };
    const fifo = this.deadLetterQueueUrl!.endsWith('.fifo');
    try {
      await this.sqs.send(
        new SendMessageCommand({
          QueueUrl: this.deadLetterQueueUrl,
          MessageBody: message.Body,
          MessageAttributes: attributes,
          ...(fifo
            ? {
                MessageGroupId: message.Attributes?.MessageGroupId ?? 'default',
                MessageDeduplicationId: message.MessageId,
              }
            : {}),
        }),
      );
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Deletes are sent in batches: those that finish within one turn of the event loop, or while the previous
   * batch is in flight, go together (as group commit does), so there is no timer to wait on.
   */
  private scheduleDeleteFlush(): void {
    if (this.deleting) return;
    this.deleting = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.sendPendingDeletes())
      .finally(() => {
        this.deleting = undefined;
        if (this.pendingDeletes.length > 0) this.scheduleDeleteFlush();
      });
  }

  private async sendPendingDeletes(): Promise<void> {
    while (this.pendingDeletes.length > 0) {
      const batch = this.pendingDeletes.splice(0, this.pendingDeletes.length);
      const byHandle = new Map(batch.map((m) => [this.latestHandle(m), m]));
      const failures = await deleteMessages(this.sqs, this.queueUrl, [...byHandle.keys()]);
      for (const failure of failures) {
        const message = byHandle.get(failure.receiptHandle);
        if (message) this.emit('deleteFailed', message, failure.code, failure.message);
      }
      await this.afterDeletes(batch, new Set(failures.map((f) => f.receiptHandle)));
      for (const message of batch) this.untrackHandle(message);
    }
  }

  /** Tells the payload hook which processed messages are gone; its failures are reported as deleteFailed. */
  private async afterDeletes(batch: Message[], failedHandles: Set<string>): Promise<void> {
    const hook = this.options.largePayloads;
    if (!hook?.deleted) return;
    const processed = batch.filter(
      (m) => !this.deadLettered.has(m) && !failedHandles.has(this.latestHandle(m)),
    );
    if (processed.length === 0) return;
    try {
      await hook.deleted(processed);
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      for (const message of processed) this.emit('deleteFailed', message, 'PayloadDeleteFailed', text);
    }
  }

  private async flushDeletes(): Promise<void> {
    while (this.deleting || this.pendingDeletes.length > 0) {
      if (this.deleting) await this.deleting;
      else await this.sendPendingDeletes();
    }
  }
}

/** ApproximateReceiveCount of a received message (1 if the receive did not ask for it). */
export function receiveCount(message: Message): number {
  return Number(message.Attributes?.ApproximateReceiveCount ?? 1);
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
