import { randomUUID } from 'node:crypto';
import { formatQueueArn } from 'sluice-client/arn';
import type { Clock } from 'sluice-client/clock';
import { readJsonObject as readJsonText } from '../shared/json-object.ts';
import type { MessageAttributes, QueueAttributes } from '../shared/sqs-values.ts';
import type {
  DeleteOutcome,
  MessageReceipt,
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
import { errors, SqsError } from './errors.ts';
import {
  checkFifoBatch,
  checkFifoThroughputSettings,
  DEDUPLICATION_WINDOW_MS,
  deduplicationOf,
  messageGroupIdOf,
  RECEIVE_ATTEMPT_WINDOW_MS,
  receiveRequestAttemptIdOf,
  sequenceNumberOf,
} from './fifo.ts';
import {
  batchEntries,
  type Input,
  optionalInteger,
  optionalString,
  optionalStringList,
  optionalStringMap,
  requiredString,
} from './input.ts';
import { type CapacityLimits, DEFAULT_CAPACITY, hasOnlyAllowedCharacters, LIMITS } from './limits.ts';
import { LongPoll } from './long-poll.ts';
import {
  md5Hex,
  md5OfAttributes,
  selectMessageAttributes,
  validateMessageAttributes,
} from './message-attributes.ts';
import { type MoveTaskEvents, type MoveTaskSettings, MoveTasks } from './move-tasks.ts';
import { withoutPermission, withPermission } from './permissions.ts';
import { QueueActivity } from './queue-activity.ts';
import {
  applyAttributeChanges,
  COMPUTED_ATTRIBUTE_NAMES,
  defaultAttributes,
  integerAttribute,
  isKnownAttributeName,
  isTrue,
  validateSettableAttributes,
} from './queue-attributes.ts';
import { QueueDirectory } from './queue-directory.ts';
import {
  type AccessedQueue,
  type CallerScope,
  isQueueName,
  type QueueAccess,
  queueNameOfArn,
  queueNameOfUrl,
} from './queue-reference.ts';
import { decodeReceiptHandle, encodeReceiptHandle, newReceiptToken } from './receipt-handle.ts';
import { type ReceiptAction, type ReceiptHandleSettings, ReceiptRules } from './receipt-rules.ts';
import {
  allowsRedriveFrom,
  invalidRedrivePolicy,
  parseRedriveAllowPolicy,
  parseRedrivePolicy,
} from './redrive-policy.ts';

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

/** What the transport knows about the request that the rules need. */
export interface RequestContext extends CallerScope {
  /** Scheme, host and port the client used, e.g. http://127.0.0.1:9324; queue URLs are built on it. */
  baseUrl: string;
  /** The caller's identity as SQS reports it in SenderId (the access key id when signed). */
  senderId: string;
  /** Aborted when the client goes away, so a long poll frees its waiter. */
  signal?: AbortSignal;
  /**
   * The transport's cap on concurrent long polls: takes a slot (returning its release) or throws the
   * error to answer with. Absent: no cap.
   */
  admitLongPoll?: () => () => void;
  /**
   * The request's `X-Amzn-Trace-Id` header: a send stores it as each message's AWSTraceHeader, unless the
   * message names its own (SQS).
   */
  traceHeader?: string;
  /** The transport's bound on message bytes its answers hold at once. Absent: no bound. */
  answerRoom?: AnswerRoom;
}

/** Room in the server's answers for the messages of one receive, held until its answer is sent. */
export interface AnswerRoom {
  /** How many of `count` messages of up to `messageBytes` each there is room for now; at least 1. */
  fits(count: number, messageBytes: number): number;
  /** Takes room for a message of `bytes` now, or returns false. */
  tryTake(bytes: number): boolean;
  /**
   * Resolves true once room for `bytes` is set aside for this answer's next takes (oldest waiter first),
   * false at `waitMs` or on `signal`.
   */
  waitFor(bytes: number, waitMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Gives back what waitFor set aside and the takes since did not use. */
  releaseUnused(): void;
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
  }

  /** Why the store is degraded (disk full, read-only…), as /health reports it; undefined when it is not. */
  async condition(): Promise<StoreCondition | undefined> {
    return this.store.condition?.();
  }

  async CreateQueue(input: CreateQueueRequest, context: RequestContext) {
    const name = requiredString(input, 'QueueName');
    const given = optionalStringMap(input, 'Attributes') ?? {};
    // CreateQueue's member is lower-case `tags` in the SQS model (TagQueue's is `Tags`).
    const tags = optionalStringMap(input, 'tags') ?? {};
    const fifo = isTrue(given.FifoQueue);
    if (!isQueueName(name, false) && !(fifo && isQueueName(name, true))) {
      throw errors.invalidParameterValue(
        'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length',
      );
    }
    if (name.endsWith('.fifo') !== fifo) {
      throw errors.invalidParameterValue(
        'The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.',
      );
    }
    const existing = await this.queues.accessQueue(name, context);
    validateTags(tags);
    const requested = await this.checkPolicies(
      { name, fifo, attributes: defaultAttributes(fifo) },
      validateSettableAttributes(given, { fifo }),
      context,
    );
    const attributes = applyAttributeChanges(defaultAttributes(fifo), requested);
    if (fifo) checkFifoThroughputSettings(attributes);
    const now = this.clock.now();
    if (existing) {
      // The same name with the same given values is the same queue; SQS names the first value that differs.
      const differing = Object.keys(requested).find((key) => existing.attributes[key] !== requested[key]);
      if (differing !== undefined) throw errors.queueNameExists(differing);
      return { QueueUrl: this.queues.queueUrl(context.baseUrl, name) };
    }
    await this.checkQueueCount();
    const deletedAt = await this.store.queueDeletedAt(name);
    if (deletedAt !== undefined && now - deletedAt < LIMITS.deletedQueueNameReuseSeconds * 1000) {
      throw errors.queueDeletedRecently();
    }
    try {
      await this.store.createQueue({ name, fifo, attributes, tags, now });
    } catch (error) {
      // Two creates of one name at once: the loser sees the winner's queue, as a sequential caller would.
      if (!(await this.store.getQueue(name))) throw error;
    }
    return { QueueUrl: this.queues.queueUrl(context.baseUrl, name) };
  }

  /** `maxQueues`: a new queue is refused once the server holds that many. */
  private async checkQueueCount(): Promise<void> {
    const max = this.limits.maxQueues;
    if (max === undefined) return;
    const existing = await this.store.listQueues({ limit: max });
    if (existing.length >= max) {
      throw errors.overLimit(`This server holds at most ${max} queues (--max-queues); delete one first.`);
    }
  }

  async GetQueueUrl(input: GetQueueUrlRequest, context: RequestContext) {
    const name = requiredString(input, 'QueueName');
    const owner = optionalString(input, 'QueueOwnerAWSAccountId');
    if (owner !== undefined && owner !== this.accountId) throw errors.queueDoesNotExist();
    const queue = await this.queues.accessQueue(name, context);
    if (!queue) throw errors.queueDoesNotExist();
    return { QueueUrl: this.queues.queueUrl(context.baseUrl, queue.name) };
  }

  async ListQueues(input: ListQueuesRequest, context: RequestContext) {
    const prefix = optionalString(input, 'QueueNamePrefix');
    const maxResults = optionalInteger(input, 'MaxResults', 1, LIMITS.maxListQueuesResults);
    const token = optionalString(input, 'NextToken');
    const afterName = token === undefined ? undefined : decodeListToken(token);
    const limit = maxResults ?? LIMITS.maxListQueuesResults;
    // Only the queues the caller may use are listed, so a page may have to read past others.
    const page: QueueRecord[] = [];
    let more = false;
    for await (const queue of this.queues.allQueues({ prefix, afterName })) {
      if (!this.queues.allows(context, queue)) continue;
      if (page.length === limit) {
        more = true;
        break;
      }
      page.push(queue);
    }
    const output: { QueueUrls?: string[]; NextToken?: string } = {};
    if (page.length > 0)
      output.QueueUrls = page.map((queue) => this.queues.queueUrl(context.baseUrl, queue.name));
    // SQS pages only when MaxResults is given.
    if (maxResults !== undefined && more) output.NextToken = encodeListToken(page.at(-1)!.name);
    return output;
  }

  async GetQueueAttributes(input: GetQueueAttributesRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    const requested = optionalStringList(input, 'AttributeNames') ?? [];
    for (const name of requested) {
      if (name !== 'All' && !isKnownAttributeName(name)) throw errors.invalidAttributeName(name);
    }
    const all = requested.includes('All');
    const wanted = (name: string) => all || requested.includes(name);
    const result: Record<string, string> = {};
    const computed: Record<(typeof COMPUTED_ATTRIBUTE_NAMES)[number], () => Promise<string> | string> = {
      ApproximateNumberOfMessages: async () => String((await this.counts(queue)).visible),
      ApproximateNumberOfMessagesNotVisible: async () => String((await this.counts(queue)).notVisible),
      ApproximateNumberOfMessagesDelayed: async () => String((await this.counts(queue)).delayed),
      CreatedTimestamp: () => String(Math.floor(queue.createdAt / 1000)),
      LastModifiedTimestamp: () => String(Math.floor(queue.lastModifiedAt / 1000)),
      QueueArn: () => this.queues.queueArn(queue.name),
    };
    for (const name of COMPUTED_ATTRIBUTE_NAMES) if (wanted(name)) result[name] = await computed[name]();
    for (const [name, value] of Object.entries(queue.attributes)) if (wanted(name)) result[name] = value;
    return Object.keys(result).length > 0 ? { Attributes: sortKeys(result) } : {};
  }

  async SetQueueAttributes(input: SetQueueAttributesRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    const given = optionalStringMap(input, 'Attributes');
    if (given === undefined) throw errors.missingParameter('Attributes');
    const changes = await this.checkPolicies(
      queue,
      validateSettableAttributes(given, { fifo: queue.fifo, current: queue.attributes }),
      caller,
    );
    const attributes = applyAttributeChanges(queue.attributes, changes);
    if (!queue.fifo) {
      await this.store.updateQueue(queue.id, { attributes, now: this.clock.now() });
      return {};
    }
    checkFifoThroughputSettings(attributes);
    // A FIFO queue's delay applies to the messages already waiting too (SQS): they never had one of their own.
    const redelay = attributes.DelaySeconds !== queue.attributes.DelaySeconds;
    await this.store.updateQueue(queue.id, {
      attributes,
      now: this.clock.now(),
      waitingDelayMs: redelay ? integerAttribute(attributes, 'DelaySeconds') * 1000 : undefined,
    });
    if (redelay) this.longPoll.notify(queue.id);
    return {};
  }

  async DeleteQueue(input: DeleteQueueRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    await this.store.deleteQueue(queue.id, this.clock.now());
    this.activity.forget(queue.name);
    this.receiptRules.forget(queue.name);
    return {};
  }

  async PurgeQueue(input: PurgeQueueRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    // SQS allows one purge per 60 s; the store checks and records it in one step.
    const purged = await this.store.purgeQueue(queue.id, this.clock.now(), LIMITS.purgeWindowSeconds * 1000);
    if (!purged) throw errors.purgeInProgress(queue.name);
    return {};
  }

  async TagQueue(input: TagQueueRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    const tags = optionalStringMap(input, 'Tags');
    // No tags at all is a missing parameter (the Query protocol cannot send an empty map anyway).
    if (tags === undefined || Object.keys(tags).length === 0) throw errors.missingParameter('Tags');
    const merged = { ...queue.tags, ...tags };
    validateTags(merged);
    await this.store.updateQueue(queue.id, { tags: merged, now: queue.lastModifiedAt });
    return {};
  }

  async UntagQueue(input: UntagQueueRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    const keys = optionalStringList(input, 'TagKeys');
    if (keys === undefined) throw errors.missingParameter('TagKeys');
    if (keys.length === 0)
      throw errors.invalidParameterValue('Tag keys must be between 1 and 128 characters in length.');
    const tags = { ...queue.tags };
    for (const key of keys) delete tags[key];
    await this.store.updateQueue(queue.id, { tags, now: queue.lastModifiedAt });
    return {};
  }

  async ListQueueTags(input: ListQueueTagsRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    return Object.keys(queue.tags).length > 0 ? { Tags: queue.tags } : {};
  }

  async AddPermission(input: AddPermissionRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    const label = requiredString(input, 'Label');
    const accounts = optionalStringList(input, 'AWSAccountIds');
    const actions = optionalStringList(input, 'Actions');
    if (!accounts || accounts.length === 0) throw errors.missingParameter('AWSAccountIds');
    if (!actions || actions.length === 0) throw errors.missingParameter('Actions');
    if (!/^[A-Za-z0-9_-]{1,80}$/.test(label)) {
      throw errors.invalidParameter(
        'Label',
        label,
        'Must be 1 to 80 alphanumeric characters, hyphens or underscores.',
      );
    }
    const Policy = withPermission(queue.attributes.Policy, {
      label,
      accountIds: accounts,
      actions,
      queueArn: this.queues.queueArn(queue.name),
    });
    await this.store.updateQueue(queue.id, {
      attributes: { ...queue.attributes, Policy },
      now: this.clock.now(),
    });
    return {};
  }

  async RemovePermission(input: RemovePermissionRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    const label = requiredString(input, 'Label');
    const Policy = withoutPermission(queue.attributes.Policy, label);
    const { Policy: _previous, ...attributes } = queue.attributes;
    if (Policy !== undefined) attributes.Policy = Policy;
    await this.store.updateQueue(queue.id, { attributes, now: this.clock.now() });
    return {};
  }

  async ListDeadLetterSourceQueues(input: ListDeadLetterSourceQueuesRequest, context: RequestContext) {
    const queue = await this.resolveQueue(input, context);
    const maxResults = optionalInteger(input, 'MaxResults', 1, LIMITS.maxListQueuesResults);
    const token = optionalString(input, 'NextToken');
    const after = token === undefined ? undefined : decodeListToken(token);
    const sources = (await this.queues.deadLetterSources(this.queues.queueArn(queue.name), after)).filter(
      (source) => this.queues.allows(context, source),
    );
    const page = sources.slice(0, maxResults ?? LIMITS.maxListQueuesResults);
    const output: { queueUrls: string[]; NextToken?: string } = {
      queueUrls: page.map((source) => this.queues.queueUrl(context.baseUrl, source.name)),
    };
    // SQS pages only when MaxResults is given.
    if (maxResults !== undefined && sources.length > page.length)
      output.NextToken = encodeListToken(page.at(-1)!.name);
    return output;
  }

  // ---- Message move tasks (DLQ redrive): src/core/move-tasks.ts ------------------------------------

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
    const queue = await this.resolveQueue(input, context);
    await this.checkStoredBytes();
    const message = this.prepareMessage(queue, input, context, tooLongAlone);
    const [sent] = await this.store.sendMessages(queue.id, [message.stored], () =>
      this.wakeReceivers(queue, [message.stored.visibleAt]),
    );
    this.activity.sent(queue.name, [message.size]);
    return message.output(sent!);
  }

  async SendMessageBatch(input: SendMessageBatchRequest, context: RequestContext) {
    const queue = await this.resolveQueue(input, context);
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
    const queue = await this.resolveQueue(input, context);
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

  async DeleteMessage(input: DeleteMessageRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    const receiptHandle = requiredString(input, 'ReceiptHandle');
    const outcome = await this.store.deleteMessage(
      queue.id,
      this.receiptOf(queue, receiptHandle),
      this.deleteCheck(queue),
    );
    this.receiptRules.refuseStale(queue, 'DeleteMessage', outcome, receiptHandle);
    const deleted = wasDeleted(outcome, receiptHandle);
    if (deleted) this.groupMayBeFree(queue);
    this.activity.deleted(queue.name, deleted ? 1 : 0);
    return {};
  }

  async DeleteMessageBatch(input: DeleteMessageBatchRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    const entries = batchEntries(input.Entries, 'DeleteMessageBatchRequestEntry');
    let deleted = 0;
    const deleteOne = this.batchDeleter(queue);
    const output = await this.runBatch(entries, async (entry) => {
      const receiptHandle = requiredString(entry, 'ReceiptHandle');
      const outcome = await deleteOne(receiptHandle);
      this.receiptRules.refuseStale(queue, 'DeleteMessageBatch', outcome, receiptHandle);
      if (wasDeleted(outcome, receiptHandle)) deleted++;
    });
    if (deleted > 0) this.groupMayBeFree(queue);
    this.activity.deleted(queue.name, deleted);
    return output;
  }

  async ChangeMessageVisibility(input: ChangeMessageVisibilityRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    await this.changeOne(queue, input, 'ChangeMessageVisibility');
    return {};
  }

  async ChangeMessageVisibilityBatch(input: ChangeMessageVisibilityBatchRequest, caller: CallerScope = {}) {
    const queue = await this.resolveQueue(input, caller);
    const entries = batchEntries(input.Entries, 'ChangeMessageVisibilityBatchRequestEntry');
    return this.runBatch(entries, (entry) => this.changeOne(queue, entry, 'ChangeMessageVisibilityBatch'));
  }

  // ---- Rules shared by the actions ----------------------------------------------------------------

  /** The queue a request's QueueUrl names, once the caller's access to it is checked; else QueueDoesNotExist. */
  async resolveQueue(input: Input, caller: CallerScope): Promise<QueueRecord> {
    const name = this.queues.queueNameFromUrl(requiredString(input, 'QueueUrl'));
    const queue = name === undefined ? undefined : await this.queues.accessQueue(name, caller);
    if (!queue) throw errors.queueDoesNotExist();
    return queue;
  }

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

  /** A FIFO group blocked by a message just deleted may be receivable now: let a waiting receive look. */
  private groupMayBeFree(queue: QueueRecord): void {
    if (queue.fifo) this.longPoll.notify(queue.id);
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

  private deleteCheck(queue: QueueRecord) {
    return { rule: this.receiptRules.deleteRule(queue), now: this.clock.now() };
  }

  /**
   * The store's delete for the entries of one DeleteMessageBatch: each handle is checked on its own (a bad one
   * fails only its entry), and the valid ones reach the store in one write.
   */
  private batchDeleter(queue: QueueRecord): (receiptHandle: string) => Promise<DeleteOutcome> {
    const batch: MessageReceipt[] = [];
    let results: Promise<DeleteOutcome[]> | undefined;
    return async (receiptHandle) => {
      const index = batch.push(this.receiptOf(queue, receiptHandle)) - 1;
      // A microtask later, so every entry is in: runBatch starts them all in one synchronous pass.
      results ??= Promise.resolve().then(() =>
        this.store.deleteMessages(queue.id, batch, this.deleteCheck(queue)),
      );
      return (await results)[index]!;
    };
  }

  /** The message a client's receipt handle names, which must be a handle in the form Sluice issues for this queue. */
  private receiptOf(queue: QueueRecord, receiptHandle: string): MessageReceipt {
    const handle = decodeReceiptHandle(receiptHandle);
    if (handle.queueId !== queue.id) throw errors.receiptHandleIsInvalid(receiptHandle);
    return { seq: handle.seq, receiveCount: handle.receiveCount, receiptToken: handle.token };
  }

  private async changeOne(queue: QueueRecord, input: Input, action: ReceiptAction): Promise<void> {
    const receiptHandle = requiredString(input, 'ReceiptHandle');
    if (input.VisibilityTimeout === undefined || input.VisibilityTimeout === null) {
      throw errors.missingParameter('VisibilityTimeout');
    }
    const timeout = optionalInteger(
      input,
      'VisibilityTimeout',
      0,
      LIMITS.maxVisibilityTimeout,
      `Must be between 0 and ${LIMITS.maxVisibilityTimeout}, if provided.`,
    )!;
    const receipt = this.receiptOf(queue, receiptHandle);
    const now = this.clock.now();
    const outcome = await this.store.changeVisibility({
      queueId: queue.id,
      receipt,
      rule: this.receiptRules.changeRule(queue),
      now,
      visibleAt: now + timeout * 1000,
      maxDeliveryMs: LIMITS.maxInFlightSecondsPerDelivery * 1000,
    });
    this.receiptRules.refuseStale(queue, action, outcome, receiptHandle);
    switch (outcome) {
      case 'changed':
        if (timeout === 0) this.longPoll.notify(queue.id);
        else this.longPoll.notifyAt(queue.id, now + timeout * 1000);
        return;
      case 'notInFlight':
        throw errors.messageNotInflight();
      case 'beyondLimit':
        throw errors.invalidParameter(
          'VisibilityTimeout',
          timeout,
          `Total VisibilityTimeout for the message is beyond the limit [${LIMITS.maxInFlightSecondsPerDelivery} seconds]`,
        );
      case 'invalid':
        throw errors.receiptHandleIsInvalid(receiptHandle);
      case 'stale':
      case 'missing':
        throw errors.invalidParameter(
          'ReceiptHandle',
          receiptHandle,
          'Message does not exist or is not available for visibility timeout change.',
        );
    }
  }

  private async runBatch<Entry extends { Id: string }>(
    entries: Entry[],
    run: (entry: Entry) => Promise<void>,
  ) {
    const successful: Array<{ Id: string }> = [];
    const failed: BatchFailure[] = [];
    await Promise.all(
      entries.map(async (entry) => {
        const id = entry.Id;
        try {
          await run(entry);
          successful.push({ Id: id });
        } catch (error) {
          failed.push(batchFailure(id, error));
        }
      }),
    );
    const order = new Map(entries.map((entry, index) => [entry.Id, index]));
    const byRequestOrder = (a: { Id: string }, b: { Id: string }) => order.get(a.Id)! - order.get(b.Id)!;
    return { Successful: successful.sort(byRequestOrder), Failed: failed.sort(byRequestOrder) };
  }

  private async counts(queue: QueueRecord) {
    return this.store.countMessages(queue.id, this.clock.now());
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

  /**
   * RedrivePolicy must name an existing queue of ours, of the same type, whose RedriveAllowPolicy lets this
   * queue use it; the other policies must be JSON objects. Returns the changes with RedrivePolicy in SQS's
   * canonical form (maxReceiveCount a number, whatever was sent).
   */
  private async checkPolicies(
    queue: Pick<QueueRecord, 'name' | 'fifo' | 'attributes'>,
    changes: QueueAttributes,
    caller: CallerScope,
  ): Promise<QueueAttributes> {
    if (changes.Policy) readJsonObject('Policy', changes.Policy);
    if (changes.RedriveAllowPolicy) {
      const allowPolicy = parseRedriveAllowPolicy(changes.RedriveAllowPolicy);
      // Letting a queue use this one as its DLQ concerns that queue too: the caller must be allowed there.
      if (allowPolicy.redrivePermission === 'byQueue')
        for (const sourceArn of allowPolicy.sourceQueueArns)
          await this.queues.accessQueueByArn(sourceArn, caller);
    }
    const redrive = changes.RedrivePolicy;
    if (!redrive) return changes;
    const policy = parseRedrivePolicy(redrive);
    const arn = policy.deadLetterTargetArn;
    // Messages will move into the dead-letter queue: the caller must be allowed there.
    const target = await this.queues.accessQueueByArn(arn, caller);
    if (!target) throw invalidRedrivePolicy(redrive, 'Dead letter target does not exist.');
    if (target.fifo !== queue.fifo) {
      throw invalidRedrivePolicy(
        redrive,
        `Dead-letter queue must be of the same type as the source queue: ${queue.fifo ? 'FIFO' : 'standard'}.`,
      );
    }
    const sourceArn = this.queues.queueArn(queue.name);
    if (!allowsRedriveFrom(target.attributes.RedriveAllowPolicy, sourceArn)) {
      throw invalidRedrivePolicy(
        redrive,
        `The dead-letter queue's RedriveAllowPolicy does not allow ${sourceArn} to use it.`,
      );
    }
    // The retention trap: a standard message keeps its send time in the DLQ, so a DLQ that keeps messages no
    // longer than the source can drop one as soon as it arrives. SQS accepts this; Sluice says so, unless the
    // DLQ's retention was chosen (is not the default): whoever set it knows (docs/decisions/retention-warning.md).
    // A queue may name itself (SQS accepts that too), and then nothing is ever moved (see deadLetterTarget).
    const sourceRetention = integerAttribute({ ...queue.attributes, ...changes }, 'MessageRetentionPeriod');
    const targetRetention = integerAttribute(target.attributes, 'MessageRetentionPeriod');
    const defaultRetention = integerAttribute(defaultAttributes(target.fifo), 'MessageRetentionPeriod');
    if (
      !queue.fifo &&
      target.name !== queue.name &&
      targetRetention <= sourceRetention &&
      targetRetention === defaultRetention
    ) {
      this.warn(
        { queue: queue.name, deadLetterQueue: target.name, sourceRetention, targetRetention },
        `dead-letter queue ${target.name} keeps messages ${targetRetention} s, not longer than ${queue.name}'s ` +
          `${sourceRetention} s: a message keeps its original send time when moved, so it may expire in the ` +
          'DLQ as soon as it arrives; give the DLQ a longer MessageRetentionPeriod',
      );
    }
    return { ...changes, RedrivePolicy: JSON.stringify(policy) };
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

type BatchFailure = { Id: string; SenderFault: boolean; Code: string; Message: string };

/**
 * Whether a delete removed the message. A message already gone is no error (SQS); a handle Sluice never
 * issued is ReceiptHandleIsInvalid; a superseded or lapsed one (FIFO) has expired, in SQS's words.
 */
function wasDeleted(outcome: DeleteOutcome, receiptHandle: string): boolean {
  switch (outcome) {
    case 'deleted':
      return true;
    case 'missing':
      return false;
    case 'invalid':
      throw errors.receiptHandleIsInvalid(receiptHandle);
    case 'stale':
    case 'expired':
      throw errors.invalidParameter('ReceiptHandle', receiptHandle, 'The receipt handle has expired.');
  }
}

function batchFailure(id: string, error: unknown): BatchFailure {
  if (!(error instanceof SqsError)) throw error;
  return { Id: id, SenderFault: error.spec.sender, Code: error.spec.queryCode, Message: error.message };
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

function validateTags(tags: Record<string, string>): void {
  const keys = Object.keys(tags);
  if (keys.length > LIMITS.maxTagsPerQueue) {
    throw errors.invalidParameterValue(
      `Too many tags added for queue. A queue can have at most ${LIMITS.maxTagsPerQueue} tags.`,
    );
  }
  for (const [key, value] of Object.entries(tags)) {
    if (key.length === 0 || key.length > 128)
      throw errors.invalidParameter('TagKey', key, 'Tag keys must be 1 to 128 characters.');
    if (value.length > 256)
      throw errors.invalidParameter('TagValue', value, 'Tag values must be at most 256 characters.');
  }
}

function readJsonObject(name: string, text: string): Record<string, unknown> {
  const reading = readJsonText(text);
  if ('object' in reading) return reading.object;
  throw errors.invalidAttributeValue(
    name,
    reading.problem === 'not JSON' ? 'Invalid JSON.' : 'Must be a JSON object.',
  );
}

function sortKeys(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

function encodeListToken(lastName: string): string {
  return Buffer.from(JSON.stringify({ after: lastName })).toString('base64url');
}

function decodeListToken(token: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof parsed.after === 'string') return parsed.after;
  } catch {
    // fall through to the error below
  }
  throw errors.invalidParameter('NextToken', token, 'Invalid or expired next token.');
}
