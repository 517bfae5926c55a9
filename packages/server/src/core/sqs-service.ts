import { randomUUID } from 'node:crypto';
import type { Clock } from 'sluice-client/clock';
import type { MessageAttributes } from '../shared/sqs-values.ts';
import type {
  NewMessage,
  QueueRecord,
  SentMessage,
  Store,
  StoreCondition,
  StoredMessage,
} from '../store/contract.ts';
import type {
  AddPermissionRequest,
  CancelMessageMoveTaskRequest,
  ChangeMessageVisibilityBatchRequest,
  ChangeMessageVisibilityRequest,
  CreateQueueRequest,
  DeleteMessageBatchRequest,
  DeleteMessageRequest,
  DeleteQueueRequest,
  GetQueueAttributesRequest,
  GetQueueUrlRequest,
  ListDeadLetterSourceQueuesRequest,
  ListMessageMoveTasksRequest,
  ListQueuesRequest,
  ListQueueTagsRequest,
  PurgeQueueRequest,
  ReceiveMessageRequest,
  RemovePermissionRequest,
  SendMessageBatchRequest,
  SendMessageRequest,
  SetQueueAttributesRequest,
  StartMessageMoveTaskRequest,
  TagQueueRequest,
  UntagQueueRequest,
} from './api-types.ts';
import { type BatchFailure, batchFailure } from './batch.ts';
import { errors, type SqsError } from './errors.ts';
import {
  checkFifoBatch,
  DEDUPLICATION_WINDOW_MS,
  deduplicationOf,
  messageGroupIdOf,
  RECEIVE_ATTEMPT_WINDOW_MS,
  receiveRequestAttemptIdOf,
  sequenceNumberOf,
} from './fifo.ts';
import { batchEntries, type Input, optionalInteger, optionalStringList } from './input.ts';
import { type CapacityLimits, DEFAULT_CAPACITY, hasOnlyAllowedCharacters, LIMITS } from './limits.ts';
import { LongPoll } from './long-poll.ts';
import {
  md5Hex,
  md5OfAttributes,
  selectMessageAttributes,
  validateMessageAttributes,
} from './message-attributes.ts';
import { type MoveTaskEvents, type MoveTaskSettings, MoveTasks } from './move-tasks.ts';
import { QueueActions } from './queue-actions.ts';
import { QueueActivity } from './queue-activity.ts';
import { integerAttribute } from './queue-attributes.ts';
import { QueueDirectory } from './queue-directory.ts';
import type { CallerScope } from './queue-reference.ts';
import { ReceiptActions } from './receipt-actions.ts';
import { encodeReceiptHandle, newReceiptToken } from './receipt-handle.ts';
import { type ReceiptHandleSettings, ReceiptRules } from './receipt-rules.ts';
import { parseRedrivePolicy } from './redrive-policy.ts';
import type { RequestContext } from './request-context.ts';

const STORED_BYTES_REFRESH_MS = 1000;

export interface ServiceOptions {
  store: Store;
  clock: Clock;
  /** In-flight limits and caps on queues and stored bytes; SQS's in-flight limits and no caps by default. */
  limits?: Partial<CapacityLimits>;
  /** Default 000000000000. */
  accountId?: string;
  /** Default us-east-1. */
  region?: string;
  moveTasks?: MoveTaskSettings;
  moveTaskEvents?: MoveTaskEvents;
  /** Which standard queues refuse stale receipt handles; none by default, as SQS. */
  receiptHandles?: ReceiptHandleSettings;
  /** Told of settings SQS accepts but that are likely mistakes (a DLQ that keeps messages less long). */
  warn?: (details: Record<string, unknown>, message: string) => void;
}

/**
 * How long a receive that finds no room in the server's answers for even one message waits for it: its own
 * wait time, and a short poll this long, after which it answers with no messages (as SQS may).
 */
const ANSWER_ROOM_WAIT_MS = 2_000;

const SYSTEM_ATTRIBUTE_NAMES = [
  'ApproximateReceiveCount',
  'ApproximateFirstReceiveTimestamp',
  'SentTimestamp',
  'SenderId',
  'AWSTraceHeader',
  'MessageDeduplicationId',
  'MessageGroupId',
  'SequenceNumber',
  'DeadLetterQueueSourceArn',
] as const;

/**
 * The SQS rules for standard queues, for both wire protocols. Each public method is one SQS action:
 * it takes the action's input in the API's JSON shape and returns its output in that shape.
 */
export class SqsService {
  readonly store: Store;
  readonly clock: Clock;
  readonly accountId: string;
  readonly region: string;
  readonly longPoll: LongPoll;
  readonly moveTasks: MoveTasks;
  /** Where the queues are found, by name, URL or ARN, with the caller's access checked. */
  readonly queues: QueueDirectory;
  /** The actions on queues themselves: create, look up, list, attributes, tags, permissions, delete, purge. */
  private readonly queueActions: QueueActions;
  /** The actions on received messages by their receipt handles: delete, change visibility, one or a batch. */
  private readonly receiptActions: ReceiptActions;
  /** Counts of sends, receives and deletes per queue, for /metrics and the history. */
  readonly activity = new QueueActivity();
  /** Which receipt handles each queue honours, and the stale ones refused (for /metrics). */
  readonly receiptRules: ReceiptRules;
  readonly limits: CapacityLimits;
  private readonly warn: NonNullable<ServiceOptions['warn']>;
  /** The store's size as last read, and when: sends check it at most once per STORED_BYTES_REFRESH_MS. */
  private storedBytes = { bytes: 0, readAt: Number.NEGATIVE_INFINITY };

  constructor(options: ServiceOptions) {
    this.limits = { ...DEFAULT_CAPACITY, ...options.limits };
    if (this.limits.maxStoredBytes !== undefined && !options.store.storedBytes) {
      throw new Error('this store cannot report its size, so a cap on stored bytes cannot be set');
    }
    this.store = options.store;
    this.clock = options.clock;
    this.accountId = options.accountId ?? '000000000000';
    this.region = options.region ?? 'us-east-1';
    this.queues = new QueueDirectory(this.store, this.region, this.accountId);
    this.longPoll = new LongPoll(this.clock);
    options.store.onRemoteWake?.((queueId) =>
      queueId === undefined ? this.longPoll.notifyAll() : this.longPoll.notify(queueId),
    );
    this.moveTasks = new MoveTasks(
      {
        store: this.store,
        clock: this.clock,
        queues: this.queues,
        wake: (queueId) => this.longPoll.notify(queueId),
      },
      options.moveTasks,
      options.moveTaskEvents,
    );
    this.warn = options.warn ?? (() => {});
    this.receiptRules = new ReceiptRules(options.receiptHandles);
    this.receiptActions = new ReceiptActions({
      store: this.store,
      clock: this.clock,
      queues: this.queues,
      receiptRules: this.receiptRules,
      longPoll: this.longPoll,
      activity: this.activity,
    });
    this.queueActions = new QueueActions({
      store: this.store,
      clock: this.clock,
      queues: this.queues,
      limits: this.limits,
      accountId: this.accountId,
      activity: this.activity,
      receiptRules: this.receiptRules,
      longPoll: this.longPoll,
      warn: this.warn,
    });
  }

  /** Why the store is degraded (disk full, read-only…), as /health reports it; undefined when it is not. */
  async condition(): Promise<StoreCondition | undefined> {
    return this.store.condition?.();
  }

  // ---- Message move tasks (DLQ redrive): src/core/move-tasks.ts ------------------------------------

  CreateQueue(input: CreateQueueRequest, context: RequestContext) {
    return this.queueActions.CreateQueue(input, context);
  }

  GetQueueUrl(input: GetQueueUrlRequest, context: RequestContext) {
    return this.queueActions.GetQueueUrl(input, context);
  }

  ListQueues(input: ListQueuesRequest, context: RequestContext) {
    return this.queueActions.ListQueues(input, context);
  }

  GetQueueAttributes(input: GetQueueAttributesRequest, caller: CallerScope = {}) {
    return this.queueActions.GetQueueAttributes(input, caller);
  }

  SetQueueAttributes(input: SetQueueAttributesRequest, caller: CallerScope = {}) {
    return this.queueActions.SetQueueAttributes(input, caller);
  }

  DeleteQueue(input: DeleteQueueRequest, caller: CallerScope = {}) {
    return this.queueActions.DeleteQueue(input, caller);
  }

  PurgeQueue(input: PurgeQueueRequest, caller: CallerScope = {}) {
    return this.queueActions.PurgeQueue(input, caller);
  }

  TagQueue(input: TagQueueRequest, caller: CallerScope = {}) {
    return this.queueActions.TagQueue(input, caller);
  }

  UntagQueue(input: UntagQueueRequest, caller: CallerScope = {}) {
    return this.queueActions.UntagQueue(input, caller);
  }

  ListQueueTags(input: ListQueueTagsRequest, caller: CallerScope = {}) {
    return this.queueActions.ListQueueTags(input, caller);
  }

  AddPermission(input: AddPermissionRequest, caller: CallerScope = {}) {
    return this.queueActions.AddPermission(input, caller);
  }

  RemovePermission(input: RemovePermissionRequest, caller: CallerScope = {}) {
    return this.queueActions.RemovePermission(input, caller);
  }

  ListDeadLetterSourceQueues(input: ListDeadLetterSourceQueuesRequest, context: RequestContext) {
    return this.queueActions.ListDeadLetterSourceQueues(input, context);
  }

  DeleteMessage(input: DeleteMessageRequest, caller: CallerScope = {}) {
    return this.receiptActions.DeleteMessage(input, caller);
  }

  DeleteMessageBatch(input: DeleteMessageBatchRequest, caller: CallerScope = {}) {
    return this.receiptActions.DeleteMessageBatch(input, caller);
  }

  ChangeMessageVisibility(input: ChangeMessageVisibilityRequest, caller: CallerScope = {}) {
    return this.receiptActions.ChangeMessageVisibility(input, caller);
  }

  ChangeMessageVisibilityBatch(input: ChangeMessageVisibilityBatchRequest, caller: CallerScope = {}) {
    return this.receiptActions.ChangeMessageVisibilityBatch(input, caller);
  }

  StartMessageMoveTask(input: StartMessageMoveTaskRequest, caller: CallerScope = {}) {
    return this.moveTasks.StartMessageMoveTask(input, caller);
  }

  ListMessageMoveTasks(input: ListMessageMoveTasksRequest, caller: CallerScope = {}) {
    return this.moveTasks.ListMessageMoveTasks(input, caller);
  }

  CancelMessageMoveTask(input: CancelMessageMoveTaskRequest, caller: CallerScope = {}) {
    return this.moveTasks.CancelMessageMoveTask(input, caller);
  }

  // ---- Messages -----------------------------------------------------------------------------------

  private maxInFlight(queue: QueueRecord): number {
    return queue.fifo ? this.limits.maxInFlightFifo : this.limits.maxInFlightStandard;
  }

  /**
   * `maxStoredBytes`: refuses sends once the store is that big. The size is read at most once a second,
   * so the cap can be passed by one second's worth of sends; it guards a disk, not an exact quota.
   */
  private async checkStoredBytes(): Promise<void> {
    const max = this.limits.maxStoredBytes;
    if (max === undefined || !this.store.storedBytes) return;
    const now = this.clock.now();
    if (now - this.storedBytes.readAt >= STORED_BYTES_REFRESH_MS) {
      this.storedBytes = { bytes: await this.store.storedBytes(), readAt: now };
    }
    if (this.storedBytes.bytes >= max) {
      throw errors.overLimit(
        `The server's storage cap of ${max} bytes is reached (${this.storedBytes.bytes} stored); receive and delete messages, or raise --max-stored-bytes.`,
      );
    }
  }

  async SendMessage(input: SendMessageRequest, context: RequestContext) {
    const queue = await this.queues.resolveQueue(input, context);
    await this.checkStoredBytes();
    const message = this.prepareMessage(queue, input, context, tooLongAlone);
    const [sent] = await this.store.sendMessages(queue.id, [message.stored], () =>
      this.wakeReceivers(queue, [message.stored.visibleAt]),
    );
    this.activity.sent(queue.name, [message.size]);
    return message.output(sent!);
  }

  async SendMessageBatch(input: SendMessageBatchRequest, context: RequestContext) {
    const queue = await this.queues.resolveQueue(input, context);
    await this.checkStoredBytes();
    const entries = batchEntries(input.Entries, 'SendMessageBatchRequestEntry');
    // The whole request has SQS's fixed cap; the queue's MaximumMessageSize applies to each entry alone.
    const totalSize = entries.reduce((sum, entry) => sum + entrySize(entry), 0);
    if (totalSize > LIMITS.maxBatchBytes) throw errors.batchTooLong(totalSize, LIMITS.maxBatchBytes);
    if (queue.fifo) checkFifoBatch(entries, queue.attributes);
    const failed: BatchFailure[] = [];
    const accepted: Array<{ id: string; message: PreparedMessage }> = [];
    for (const entry of entries) {
      try {
        const message = this.prepareMessage(queue, entry, context, tooLongInBatch);
        accepted.push({ id: entry.Id, message });
      } catch (error) {
        failed.push(batchFailure(entry.Id, error));
      }
    }
    const stored = accepted.map(({ message }) => message.stored);
    const sent =
      stored.length === 0
        ? []
        : await this.store.sendMessages(queue.id, stored, () =>
            this.wakeReceivers(
              queue,
              stored.map((message) => message.visibleAt),
            ),
          );
    this.activity.sent(
      queue.name,
      accepted.map(({ message }) => message.size),
    );
    const successful = accepted.map(({ id, message }, index) => ({
      Id: id,
      ...message.output(sent[index]!),
    }));
    return { Successful: successful, Failed: failed };
  }

  async ReceiveMessage(input: ReceiveMessageRequest, context: RequestContext) {
    const queue = await this.queues.resolveQueue(input, context);
    const max = optionalInteger(input, 'MaxNumberOfMessages', 1, LIMITS.maxReceiveMessages) ?? 1;
    const waitSeconds =
      optionalInteger(
        input,
        'WaitTimeSeconds',
        0,
        LIMITS.maxWaitTimeSeconds,
        `Must be >= 0 and <= ${LIMITS.maxWaitTimeSeconds}, if provided.`,
      ) ?? integerAttribute(queue.attributes, 'ReceiveMessageWaitTimeSeconds');
    const visibilityTimeout =
      optionalInteger(input, 'VisibilityTimeout', 0, LIMITS.maxVisibilityTimeout) ??
      integerAttribute(queue.attributes, 'VisibilityTimeout');
    const systemNames = [
      ...(optionalStringList(input, 'AttributeNames') ?? []),
      ...(optionalStringList(input, 'MessageSystemAttributeNames') ?? []),
    ];
    const messageAttributeNames = optionalStringList(input, 'MessageAttributeNames');
    // A retry token for FIFO queues; standard queues ignore it, as SQS does.
    const attemptId = receiveRequestAttemptIdOf(input);
    const deadLetter = await this.deadLetterTarget(queue);

    let received: StoredMessage[] = [];
    const room = context.answerRoom;
    const messageBytes = integerAttribute(queue.attributes, 'MaximumMessageSize');
    const answerBy = this.clock.now() + Math.max(waitSeconds * 1000, ANSWER_ROOM_WAIT_MS);
    let refusedBytes = 0;
    const claim = (now: number) => {
      refusedBytes = 0;
      return this.store.receiveMessages({
        queueId: queue.id,
        now,
        // No more than there is room for: a look whose messages the room refuses reads them for nothing.
        max: room ? room.fits(max, messageBytes) : max,
        visibleUntil: now + visibilityTimeout * 1000,
        newReceiptToken,
        maxInFlight: this.maxInFlight(queue),
        deadLetter,
        attempt:
          queue.fifo && attemptId !== undefined
            ? { id: attemptId, expiresAt: now + RECEIVE_ATTEMPT_WINDOW_MS }
            : undefined,
        admit:
          room &&
          ((bytes) => {
            if (room.tryTake(bytes)) return true;
            refusedBytes = bytes;
            return false;
          }),
      });
    };
    const attempt = async (): Promise<number> => {
      let now = this.clock.now();
      let result = await claim(now);
      // Not even one message fitted in what the server's answers may hold: wait, oldest first, for room for
      // as many like it as were asked for, and look again.
      while (
        room &&
        refusedBytes > 0 &&
        result.messages.length === 0 &&
        (await room.waitFor(refusedBytes * max, answerBy - this.clock.now(), context.signal))
      ) {
        now = this.clock.now();
        result = await claim(now);
        room.releaseUnused();
      }
      if (result.overLimit) {
        const limit = this.maxInFlight(queue);
        throw errors.overLimit(
          `Too many messages in flight for this queue (${limit.toLocaleString('en-US')} at most).`,
        );
      }
      if (result.movedToDeadLetter > 0 && deadLetter) this.longPoll.notify(deadLetter.queueId);
      received = result.messages;
      // Others waiting on this queue wake when these messages' visibility runs out.
      if (received.length > 0) this.longPoll.notifyAt(queue.id, now + visibilityTimeout * 1000);
      if (received.length === 0 && this.longPoll.hasWaiters(queue.id)) {
        const next = await this.store.nextVisibleAt(queue.id, now);
        if (next !== undefined) this.longPoll.notifyAt(queue.id, next);
      }
      return received.length;
    };
    if (waitSeconds === 0) {
      await attempt();
    } else {
      let failure: unknown;
      const release = context.admitLongPoll?.();
      try {
        await this.longPoll.wait(queue.id, waitSeconds * 1000, context.signal, () =>
          attempt().catch((error: unknown) => {
            failure = error;
            throw error;
          }),
        );
      } finally {
        release?.();
      }
      if (failure) throw failure;
    }
    this.activity.received(queue.name, received.length);
    if (received.length === 0) return {};
    return {
      Messages: received.map((message) =>
        this.renderMessage(queue, message, systemNames, messageAttributeNames),
      ),
    };
  }

  // ---- Rules shared by the actions ----------------------------------------------------------------

  private prepareMessage(
    queue: QueueRecord,
    input: Input,
    context: RequestContext,
    tooLong: (maxSize: number) => SqsError,
  ) {
    const body = input.MessageBody;
    if (body === undefined || body === null || body === '') throw errors.missingParameter('MessageBody');
    if (typeof body !== 'string') throw errors.invalidParameter('MessageBody', body, 'Must be a string.');
    if (!hasOnlyAllowedCharacters(body)) throw errors.invalidMessageContents();
    const delaySeconds = optionalInteger(
      input,
      'DelaySeconds',
      0,
      LIMITS.maxDelaySeconds,
      `DelaySeconds must be >= 0 and <= ${LIMITS.maxDelaySeconds}`,
    );
    const messageAttributes = nonEmpty(input.MessageAttributes as MessageAttributes | undefined);
    const givenSystemAttributes = nonEmpty(input.MessageSystemAttributes as MessageAttributes | undefined);
    // FIFO queues delay only as a whole (SQS); 0 is accepted, as clients that always send it mean no delay.
    if (queue.fifo && delaySeconds !== undefined && delaySeconds !== 0) {
      throw errors.invalidParameter('DelaySeconds', delaySeconds, NOT_FOR_THIS_QUEUE_TYPE);
    }
    if (!queue.fifo && input.MessageDeduplicationId !== undefined) {
      throw errors.invalidParameter(
        'MessageDeduplicationId',
        input.MessageDeduplicationId,
        NOT_FOR_THIS_QUEUE_TYPE,
      );
    }
    const groupId = messageGroupIdOf(input, queue.fifo);
    const deduplication = queue.fifo ? deduplicationOf(input, queue.attributes, groupId!, body) : undefined;
    const size = Buffer.byteLength(body) + validateMessageAttributes(messageAttributes);
    validateSystemAttributes(givenSystemAttributes);
    const maxSize = integerAttribute(queue.attributes, 'MaximumMessageSize');
    if (size > maxSize) throw tooLong(maxSize);
    // The request's trace header, unless the message names its own (SQS: the attribute wins); the sender's
    // digest covers only what it sent.
    const systemAttributes = givenSystemAttributes ?? traceHeaderAttribute(context.traceHeader);
    const now = this.clock.now();
    // A FIFO message always takes the queue's delay: its own can only be 0, which means none was asked (SQS).
    const delay =
      queue.fifo || delaySeconds === undefined
        ? integerAttribute(queue.attributes, 'DelaySeconds')
        : delaySeconds;
    const md5OfBody = md5Hex(body);
    const md5OfMessageAttributes = md5OfAttributes(messageAttributes);
    const md5OfSystemAttributes = md5OfAttributes(givenSystemAttributes);
    const output = (sent: SentMessage) => {
      const result: Record<string, string> = { MessageId: sent.messageId, MD5OfMessageBody: md5OfBody };
      if (md5OfMessageAttributes) result.MD5OfMessageAttributes = md5OfMessageAttributes;
      if (md5OfSystemAttributes) result.MD5OfMessageSystemAttributes = md5OfSystemAttributes;
      if (queue.fifo) result.SequenceNumber = sequenceNumberOf(sent.seq);
      return result;
    };
    const stored: NewMessage = {
      messageId: randomUUID(),
      body,
      messageAttributes,
      systemAttributes,
      md5OfBody,
      md5OfMessageAttributes,
      md5OfSystemAttributes,
      senderId: context.senderId,
      sentAt: now,
      visibleAt: now + delay * 1000,
      expiresAt: now + integerAttribute(queue.attributes, 'MessageRetentionPeriod') * 1000,
      groupId,
      deduplication: deduplication && { ...deduplication, expiresAt: now + DEDUPLICATION_WINDOW_MS },
    };
    return { stored, output, size };
  }

  /**
   * Long polls wake as soon as a send is committed, without waiting for its fsync: a receiver polling at that
   * moment would see the message anyway, and this keeps the disk's latency off the wake path.
   */
  private wakeReceivers(queue: QueueRecord, visibleAts: number[]): void {
    const now = this.clock.now();
    if (visibleAts.some((at) => at <= now)) this.longPoll.notify(queue.id);
    const later = visibleAts.filter((at) => at > now);
    if (later.length > 0) this.longPoll.notifyAt(queue.id, Math.min(...later));
  }

  private renderMessage(
    queue: QueueRecord,
    message: StoredMessage,
    systemNames: readonly string[],
    messageAttributeNames: readonly string[] | undefined,
  ) {
    const all = systemNames.includes('All');
    const attributes: Record<string, string> = {};
    const system: Record<(typeof SYSTEM_ATTRIBUTE_NAMES)[number], string | undefined> = {
      ApproximateReceiveCount: String(message.receiveCount),
      ApproximateFirstReceiveTimestamp:
        message.firstReceivedAt === undefined ? undefined : String(message.firstReceivedAt),
      SentTimestamp: String(message.sentAt),
      SenderId: message.senderId,
      AWSTraceHeader: message.systemAttributes?.AWSTraceHeader?.StringValue,
      MessageDeduplicationId: message.deduplicationId,
      MessageGroupId: message.groupId,
      SequenceNumber: queue.fifo ? sequenceNumberOf(message.seq) : undefined,
      DeadLetterQueueSourceArn: message.deadLetterSourceArn,
    };
    for (const name of SYSTEM_ATTRIBUTE_NAMES) {
      const value = system[name];
      if (value !== undefined && (all || systemNames.includes(name))) attributes[name] = value;
    }
    const selected = selectMessageAttributes(message.messageAttributes, messageAttributeNames);
    const rendered: Record<string, unknown> = {
      MessageId: message.messageId,
      ReceiptHandle: encodeReceiptHandle({
        queueId: queue.id,
        seq: message.seq,
        receiveCount: message.receiveCount,
        token: message.receiptToken!,
      }),
      MD5OfBody: message.md5OfBody,
      Body: message.body,
    };
    if (Object.keys(attributes).length > 0) rendered.Attributes = attributes;
    if (selected) {
      rendered.MD5OfMessageAttributes = md5OfAttributes(selected);
      rendered.MessageAttributes = selected;
    }
    return rendered;
  }

  private async deadLetterTarget(queue: QueueRecord) {
    const policy = queue.attributes.RedrivePolicy;
    if (!policy) return undefined;
    const { deadLetterTargetArn, maxReceiveCount } = parseRedrivePolicy(policy);
    const target = await this.queues.queueByArn(deadLetterTargetArn);
    // A DLQ deleted after the policy was set: SQS keeps redelivering to the source; so do we. A queue that is
    // its own DLQ keeps redelivering too: a move to itself would hide the message for good.
    if (!target || target.id === queue.id) return undefined;
    return {
      queueId: target.id,
      maxReceiveCount,
      sourceArn: this.queues.queueArn(queue.name),
      resetSentAt: target.fifo,
      retentionMs: integerAttribute(target.attributes, 'MessageRetentionPeriod') * 1000,
    };
  }
}

type PreparedMessage = ReturnType<SqsService['prepareMessage']>;

const NOT_FOR_THIS_QUEUE_TYPE = 'The request include parameter that is not valid for this queue type.';

/** SQS words a message over MaximumMessageSize one way when sent alone, another as a batch entry. */
const tooLongAlone = (maxSize: number) =>
  errors.invalidParameterValue(
    `One or more parameters are invalid. Reason: Message must be shorter than ${maxSize} bytes.`,
  );
const tooLongInBatch = (maxSize: number) =>
  errors.invalidParameterValue(
    `One or more parameters cannot be validated. Reason: Message must be shorter than ${maxSize} bytes.`,
  );

function traceHeaderAttribute(traceHeader: string | undefined): MessageAttributes | undefined {
  return traceHeader === undefined
    ? undefined
    : { AWSTraceHeader: { DataType: 'String', StringValue: traceHeader } };
}

function entrySize(entry: Input): number {
  const body = typeof entry.MessageBody === 'string' ? Buffer.byteLength(entry.MessageBody) : 0;
  let attributes = 0;
  const given = entry.MessageAttributes;
  if (given && typeof given === 'object') {
    for (const [name, value] of Object.entries(given as MessageAttributes)) {
      if (!value || typeof value !== 'object') continue;
      attributes += Buffer.byteLength(name) + Buffer.byteLength(String(value.DataType ?? ''));
      if (typeof value.StringValue === 'string') attributes += Buffer.byteLength(value.StringValue);
      if (typeof value.BinaryValue === 'string')
        attributes += Buffer.from(value.BinaryValue, 'base64').length;
    }
  }
  return body + attributes;
}

function validateSystemAttributes(attributes: MessageAttributes | undefined): void {
  if (!attributes) return;
  for (const [name, value] of Object.entries(attributes)) {
    if (name !== 'AWSTraceHeader') {
      throw errors.invalidParameterValue(`Message system attribute name '${name}' is invalid.`);
    }
    if (value?.DataType !== 'String' || typeof value.StringValue !== 'string' || value.StringValue === '') {
      throw errors.invalidParameterValue(
        `Message system attribute '${name}' must be of type String with a value.`,
      );
    }
  }
  validateMessageAttributes(attributes, 'system');
}

function nonEmpty<T extends object>(value: T | undefined): T | undefined {
  return value && Object.keys(value).length > 0 ? value : undefined;
}
