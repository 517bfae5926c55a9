import type { MessageAttributes, QueueAttributes } from '../shared/sqs-values.ts';

/**
 * The storage contract. The core decides the SQS rules of each request and passes its decisions in (times,
 * limits, targets, receipt rules); a store carries each operation out atomically and durably, so that what a
 * caller was told succeeded is on disk. What a receive and a move task's batch take must be decided inside
 * the store's transaction, so both stores run the same plans for them (planner.ts) over their own statements.
 * Every backend passes test/store/ (each operation, directly) and test/contract/ (SQS semantics, through the
 * core).
 *
 * All times are epoch milliseconds. A store never reads a clock: `now` always comes from the caller.
 */
/**
 * The store cannot work now: its disk is full, its files (or database) are read-only, the device failed, or
 * the database server cannot be reached. The operation was not acknowledged (a write may or may not have
 * been applied if only the final fsync or the commit's answer was lost), and reads may still work; the
 * server answers ServiceUnavailable and keeps running, so requests succeed again once the condition clears.
 */
export class StoreUnavailableError extends Error {
  constructor(
    readonly reason: 'full' | 'read-only' | 'io' | 'unreachable',
    options: { cause: unknown },
  ) {
    super(UNAVAILABLE_MESSAGES[reason], options);
    this.name = 'StoreUnavailableError';
  }
}

const UNAVAILABLE_MESSAGES: Record<StoreUnavailableError['reason'], string> = {
  full: 'The server cannot store more data: its disk is full.',
  'read-only': 'The server cannot store data: its data directory or database is read-only.',
  io: 'The server cannot store data: its disk reported an I/O error.',
  unreachable: 'The server cannot reach its database.',
};

/** Why a store is degraded, as `/health` names it. */
export type StoreCondition = 'disk full' | 'read-only' | 'disk I/O error' | 'store unreachable';

/** The `/health` condition each StoreUnavailableError reason stands for. */
export const UNAVAILABLE_CONDITIONS: Record<StoreUnavailableError['reason'], StoreCondition> = {
  full: 'disk full',
  'read-only': 'read-only',
  io: 'disk I/O error',
  unreachable: 'store unreachable',
};

/** Queues: their records, and the names of deleted ones. */
export interface QueueStore {
  createQueue(queue: NewQueue): Promise<QueueRecord>;
  getQueue(name: string): Promise<QueueRecord | undefined>;
  /** Names in ascending order, after `afterName` when given, at most `limit`. */
  listQueues(options: { prefix?: string; afterName?: string; limit: number }): Promise<QueueRecord[]>;
  /** With `waitingDelayMs`, messages never received become visible that long after their send (FIFO delay). */
  updateQueue(id: number, changes: QueueChanges): Promise<QueueRecord | undefined>;
  /** Deletes the queue and its messages; remembers the name's deletion time. */
  deleteQueue(id: number, now: number): Promise<void>;
  /** When a queue of this name was last deleted, if the store still remembers. */
  queueDeletedAt(name: string): Promise<number | undefined>;
}

/** Messages: what every SQS message action does to them, and what the core's sweeps and counts need. */
export interface MessageStore {
  /**
   * Stores the messages, in order; resolves once they are durable, with each message's id and seq. A message
   * whose `deduplication` key was stored in the same queue within its window is not stored again: its result
   * is the original's (checked and recorded atomically with the insert). `onVisible` runs as soon as receivers
   * can see the messages, which may be before they are durable; a receive it starts may share the commit.
   */
  sendMessages(queueId: number, messages: NewMessage[], onVisible?: () => void): Promise<SentMessage[]>;
  /**
   * Claims up to `max` messages visible at `now` (not expired), making each invisible until `visibleUntil`
   * with one more receive. A message keeps its receipt token from its first receive on (drawn then with
   * `newReceiptToken`), so every handle issued for it carries the same token. Which messages, by the
   * queue's kind:
   * - standard: oldest visibility first; once messages carry group ids (fair queues), tenants take turns,
   *   least recently served first, so one tenant's backlog does not hold the others back;
   * - FIFO: each group from its oldest message on, in seq order, stopping at the first message that is not
   *   visible (in flight or delayed): an earlier message in flight holds back the later ones, not the ones
   *   before it; groups whose oldest message became visible first go first.
   * Messages already received `deadLetter.maxReceiveCount` times are moved to the dead-letter queue instead,
   * in the same transaction. With `attempt` (FIFO), a receive with the same attempt id within the window
   * returns the messages it claimed that were not received again since, made invisible until `visibleUntil`
   * again, instead of claiming new ones.
   */
  receiveMessages(request: ReceiveRequest): Promise<ReceiveResult>;
  /** Deletes the message if the receipt passes `check` (see ReceiptRule); says why not otherwise. */
  deleteMessage(queueId: number, receipt: MessageReceipt, check: ReceiptCheck): Promise<DeleteOutcome>;
  /**
   * `deleteMessage` for several messages of one queue in one write (DeleteMessageBatch), in order. A message
   * named by several receipts that pass is deleted once: the first of them is 'deleted', the others 'missing'.
   */
  deleteMessages(
    queueId: number,
    receipts: ReadonlyArray<MessageReceipt>,
    check: ReceiptCheck,
  ): Promise<DeleteOutcome[]>;
  changeVisibility(request: ChangeVisibilityRequest): Promise<ChangeVisibilityOutcome>;
  /**
   * Deletes every message sent at or before `now`, and forgets the queue's FIFO deduplication ids (SQS), and
   * records the purge time, unless the queue was purged less than `windowMs` ago: then it changes nothing and
   * returns false (checked and set atomically).
   */
  purgeQueue(queueId: number, now: number, windowMs: number): Promise<boolean>;
  countMessages(queueId: number, now: number): Promise<MessageCounts>;
  /** The earliest time after `now` at which a message of the queue becomes visible, if any. */
  nextVisibleAt(queueId: number, now: number): Promise<number | undefined>;
  /** Deletes up to `limit` expired messages, and forgets expired deduplication and attempt ids; returns how many messages. */
  deleteExpired(now: number, limit: number): Promise<number>;
  /** When the queue's next message to expire does so (retention), if it has any. */
  nextExpiryAt(queueId: number, now: number): Promise<number | undefined>;
  /** The seq of the queue's newest message, 0 if it has none. */
  lastSeq(queueId: number): Promise<number>;
}

/** Message move tasks (StartMessageMoveTask and the rest) and their batches. */
export interface MoveTaskStore {
  /**
   * Records a new move task, unless the source already has one RUNNING or CANCELLING (checked and recorded
   * atomically): then returns undefined. `upToSeq` is the source's highest message seq at the start.
   */
  createMoveTask(task: NewMoveTask): Promise<MoveTaskRecord | undefined>;
  /** The source's tasks, most recently started first. */
  listMoveTasks(sourceArn: string, limit: number): Promise<MoveTaskRecord[]>;
  /** Tasks RUNNING or CANCELLING, of every source (resumed at start). */
  activeMoveTasks(): Promise<MoveTaskRecord[]>;
  getMoveTask(handle: string): Promise<MoveTaskRecord | undefined>;
  /** Sets a task's status (and its end time, when final); only a task still RUNNING or CANCELLING changes. */
  setMoveTaskStatus(handle: string, change: MoveTaskChange): Promise<MoveTaskRecord | undefined>;
  /**
   * Moves up to `max` of the source's visible messages with seq up to the task's `upToSeq`, lowest seq first
   * (on a FIFO source, only messages with no earlier message of their group in flight or delayed, as a
   * receive takes them), each into the queue `route` names for its
   * DeadLetterQueueSourceArn, as a new message: `newMessageId()`, receive count 0, sent at `now`. Each move
   * deletes the source row and adds the destination row in one transaction with the task's moved count, so a
   * message is in exactly one queue at every instant and a restarted task never moves one twice. Stops at
   * the first message `route` has no destination for, and names its origin in `unroutable`.
   */
  moveMessages(request: MoveRequest): Promise<MoveOutcome>;
}

/** The queues' history (the console's charts, `sluice stats`); nothing here is needed for delivery. */
export interface HistoryStore {
  /** Adds one history sample per queue (the console's charts and `sluice stats`); not needed for delivery. */
  recordQueueSamples(samples: QueueSample[]): Promise<void>;
  /** The queue's samples taken at or after `since`, oldest first. */
  queueSamples(queue: string, since: number): Promise<QueueSample[]>;
  /** Forgets samples taken before `time`; returns how many. */
  deleteQueueSamplesBefore(time: number): Promise<number>;
  /**
   * Adds what one node's clients did to each queue (at most one entry per queue) to the activity every node
   * shares, so that the history, sampled by one node, counts the whole cluster's traffic.
   */
  addQueueActivity(activity: QueueActivityCounts[]): Promise<void>;
  /**
   * The activity added since the last take, per queue, reset to nothing in the same step: an add counts in
   * exactly one take, this one or the next.
   */
  takeQueueActivity(): Promise<QueueActivityCounts[]>;
}

/**
 * What the nodes sharing a store share besides queues: state the lease holder computes, wakes, leases. A
 * single-process store keeps the state and leaves the rest out.
 */
export interface ClusterStore {
  /**
   * Replaces the named document of cluster state: what the lease holder computes for every node to read
   * (the DLQ alarm states), and a new holder resumes from.
   */
  saveClusterState(name: string, value: string): Promise<void>;
  /** The named document as last saved, if any. */
  clusterState(name: string): Promise<string | undefined>;
  /**
   * For stores shared by several servers (nodes): calls `wake` when another node may have made messages of
   * the queue visible (a send, a visibility change to 0, a move), or with undefined when any queue may have,
   * so this node's long polls try again. A single-process store leaves it out.
   */
  onRemoteWake?(wake: (queueId: number | undefined) => void): void;
  /**
   * For stores shared by several nodes: takes or renews the named lease for `holder` for `ttlMs`, unless
   * another holder's lease has not expired (checked and set atomically); returns whether `holder` holds it.
   * Expiry is measured on the database's clock, the one clock every node shares. A single-process store
   * leaves it out: its one server always holds every lease.
   */
  claimLease?(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up at once if `holder` holds it (a clean shutdown), so another node takes over now. */
  releaseLease?(name: string, holder: string): Promise<void>;
}

/**
 * Lambda event source mappings (core/event-source/), each kept as the core's JSON document under its UUID:
 * the store keeps them and their order, the core reads them.
 */
export interface EventSourceMappingStore {
  /** Every mapping's document, oldest first. */
  eventSourceMappings(): Promise<{ uuid: string; document: string }[]>;
  /** Adds the mapping, or replaces the document of its UUID (keeping its place in the order). */
  saveEventSourceMapping(uuid: string, document: string): Promise<void>;
  /**
   * Adds a new mapping unless a kept one `conflicts` with it (Lambda's one mapping per queue and function),
   * checked and added as one step for every server sharing the store: answers the UUID of the kept one that
   * conflicts, else adds it and answers undefined.
   */
  /**
   * Replaces the document of `uuid` with what `change` makes of the kept one, read and written as one step
   * for every server sharing the store (two changes at once each see the other's); `change` answering
   * undefined leaves it. Answers the document written, or undefined (no such mapping, or left as it was).
   */
  changeEventSourceMapping(
    uuid: string,
    change: (document: string) => string | undefined,
  ): Promise<string | undefined>;
  addEventSourceMapping(
    uuid: string,
    document: string,
    conflicts: (document: string) => boolean,
  ): Promise<string | undefined>;
  deleteEventSourceMapping(uuid: string): Promise<void>;
}

/** The store as a whole: its size, its health, a reset, its end. */
export interface StoreLifecycle {
  /**
   * Bytes the store's data takes, for `--max-stored-bytes`; optional, so a backend without a cheap answer
   * can leave it out (the cap then cannot be set on it).
   */
  storedBytes?(): Promise<number>;
  /**
   * What keeps the store from working normally now, for `/health`; undefined when nothing does. Optional: a
   * store that cannot tell leaves it out and is reported ok.
   */
  condition?(): Promise<StoreCondition | undefined>;
  /**
   * Forgets everything, as a fresh store would hold nothing: queues, messages, deleted-queue names, purge
   * times, deduplication and attempt ids, move tasks, history samples, activity and cluster state (test
   * mode's reset). Ids keep growing, so a request that found a queue before the reset names none after it.
   * A store shared by several nodes leaves it out: their other nodes would not know.
   */
  reset?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * SNS topics and their subscriptions, and publishing: a publication's deliveries into every matching
 * subscription's queue are stored in one transaction (docs/decisions/sns-topics.md).
 */
export interface TopicStore {
  /** Creates the topic, or returns the one of that name as it is (checked and created atomically). */
  createTopic(topic: NewTopic): Promise<TopicRecord>;
  getTopic(name: string): Promise<TopicRecord | undefined>;
  /** Names in ascending order, after `afterName` when given, at most `limit`. */
  listTopics(options: { afterName?: string; limit: number }): Promise<TopicRecord[]>;
  /** Replaces the attributes or tags given; undefined when the topic does not exist. */
  updateTopic(name: string, changes: TopicChanges): Promise<TopicRecord | undefined>;
  /** Deletes the topic, its subscriptions and its deduplication ids; false when it did not exist. */
  deleteTopic(name: string): Promise<boolean>;
  /**
   * Creates the subscription, or returns the topic's subscription to the same protocol and endpoint as it is
   * (checked and created atomically); undefined when the topic does not exist.
   */
  createSubscription(subscription: NewSubscription): Promise<SubscriptionRecord | undefined>;
  getSubscription(arn: string): Promise<SubscriptionRecord | undefined>;
  /** By ARN in ascending order (of one topic when `topicName` is given), after `afterArn`, at most `limit`. */
  listSubscriptions(options: {
    topicName?: string;
    afterArn?: string;
    limit: number;
  }): Promise<SubscriptionRecord[]>;
  /** Replaces the subscription's attributes; undefined when it does not exist. */
  updateSubscription(
    arn: string,
    attributes: Record<string, string>,
  ): Promise<SubscriptionRecord | undefined>;
  /** false when it did not exist. */
  deleteSubscription(arn: string): Promise<boolean>;
  /**
   * Stores each publication's deliveries, all of them in ONE transaction, and resolves once it is durable.
   * A FIFO topic's publication (`sequenced`) takes the topic's next sequence number; one whose
   * `deduplication` id was published to the topic within its window is not delivered again: its outcome is
   * the original's. `deliveries` is called inside the transaction with the publication's sequence number (0
   * for a standard topic) and must not fail. undefined when the topic no longer exists (nothing stored).
   * `onVisible` is told the queues that received messages, as soon as receivers can see them.
   */
  publish(
    topicName: string,
    publications: Publication[],
    onVisible?: (queueIds: number[]) => void,
  ): Promise<PublishOutcome[] | undefined>;
  /**
   * Endpoint (HTTP/HTTPS) deliveries due at `now`, at most `limit`, each claimed until `claimUntil` (its due
   * time moves there, so no other worker sends it meanwhile; a worker that dies leaves it due again then).
   */
  claimEndpointDeliveries(now: number, claimUntil: number, limit: number): Promise<EndpointDeliveryRecord[]>;
  /** The endpoint answered 2xx, or the delivery was given up: it is gone. */
  finishEndpointDelivery(id: string): Promise<void>;
  /**
   * A failed attempt: `attempts` failed so far, due again at `dueAt`; `lastError` is what went wrong (a status
   * or an error's class, never the answer's body), left as it was when undefined (a throttled delivery).
   */
  retryEndpointDelivery(id: string, attempts: number, dueAt: number, lastError?: string): Promise<void>;
  /** A subscription's stored deliveries, the next due first (for the operators: the console, `sluice stats`). */
  listEndpointDeliveries(subscriptionArn: string, limit: number): Promise<EndpointDeliveryRecord[]>;
  /** An operator's "retry now": the delivery is due at `now`; false when it is not (or no longer) stored. */
  retryEndpointDeliveryNow(subscriptionArn: string, id: string, now: number): Promise<boolean>;
  /** An operator's "drop": the delivery deleted, as it was; undefined when it is not (or no longer) stored. */
  dropEndpointDelivery(subscriptionArn: string, id: string): Promise<EndpointDeliveryRecord | undefined>;
}

/** Every part of the contract: what a backend implements and the server is wired with. */
export type Store = QueueStore &
  MessageStore &
  MoveTaskStore &
  HistoryStore &
  ClusterStore &
  EventSourceMappingStore &
  TopicStore &
  StoreLifecycle;

export interface NewTopic {
  name: string;
  fifo: boolean;
  /** The attributes set on the topic, as the API gives them (defaults and counts are the core's). */
  attributes: Record<string, string>;
  tags: Record<string, string>;
  now: number;
}

export interface TopicRecord {
  name: string;
  fifo: boolean;
  attributes: Record<string, string>;
  tags: Record<string, string>;
  createdAt: number;
}

export interface TopicChanges {
  attributes?: Record<string, string>;
  tags?: Record<string, string>;
}

export interface NewSubscription {
  arn: string;
  topicName: string;
  /** `sqs`, `http` or `https`. */
  protocol: string;
  endpoint: string;
  /** The account that subscribed. */
  owner: string;
  attributes: Record<string, string>;
  now: number;
}

export interface SubscriptionRecord extends Omit<NewSubscription, 'now'> {
  createdAt: number;
}

/** One published message. */
export interface Publication {
  messageId: string;
  /** FIFO topics: take the topic's next sequence number. */
  sequenced: boolean;
  /** FIFO topics: the key that makes a later publication within `expiresAt` a duplicate of this one. */
  deduplication: { id: string; now: number; expiresAt: number } | undefined;
  /** The messages to store, in the queues they go to, given the publication's sequence number. */
  deliveries(sequenceNumber: number): QueueDelivery[];
  /** Its deliveries to HTTP/HTTPS subscriptions, stored in the same transaction as the queue deliveries. */
  endpointDeliveries?: NewEndpointDelivery[];
}

/** One message for an HTTP/HTTPS subscription, ready to POST (body signed when it is an envelope). */
export interface NewEndpointDelivery {
  id: string;
  subscriptionArn: string;
  topicName: string;
  endpoint: string;
  messageId: string;
  /** x-amz-sns-message-type: Notification (the confirmations are sent at once, not stored). */
  messageType: string;
  body: string;
  raw: boolean;
  dueAt: number;
  createdAt: number;
}

export interface EndpointDeliveryRecord extends NewEndpointDelivery {
  /** Attempts that failed so far. */
  attempts: number;
  /** The last failed attempt's outcome (`HTTP 500`, `timed out`, ...); never the answer's body. */
  lastError: string | undefined;
}

export interface QueueDelivery {
  queueId: number;
  message: NewMessage;
}

export interface PublishOutcome {
  messageId: string;
  /** The topic's sequence number for it; 0 on a standard topic. */
  sequenceNumber: number;
  /** A duplicate within the deduplication window: the id and number are the original's, nothing stored. */
  duplicate: boolean;
}

export interface NewQueue {
  name: string;
  fifo: boolean;
  /** See QueueRecord; false when left out. */
  deduplicatesPerGroup?: boolean;
  attributes: QueueAttributes;
  tags: Record<string, string>;
  now: number;
}

export interface QueueRecord {
  id: number;
  name: string;
  fifo: boolean;
  /**
   * A FIFO queue's deduplication is per message group: set when the queue is created and kept for its life,
   * whatever its DeduplicationScope attribute says later.
   */
  deduplicatesPerGroup: boolean;
  attributes: QueueAttributes;
  tags: Record<string, string>;
  createdAt: number;
  lastModifiedAt: number;
}

export interface QueueChanges {
  attributes?: QueueAttributes;
  tags?: Record<string, string>;
  waitingDelayMs?: number;
  now: number;
}

export interface NewMessage {
  messageId: string;
  body: string;
  messageAttributes: MessageAttributes | undefined;
  /** AWSTraceHeader and other message system attributes given on send. */
  systemAttributes: MessageAttributes | undefined;
  md5OfBody: string;
  md5OfMessageAttributes: string | undefined;
  md5OfSystemAttributes: string | undefined;
  senderId: string;
  sentAt: number;
  visibleAt: number;
  expiresAt: number;
  /** FIFO group, or fair-queue tenant on a standard queue. */
  groupId: string | undefined;
  /** FIFO only: the key that makes a later send within `expiresAt` a duplicate of this one. */
  deduplication: { scope: string; id: string; expiresAt: number } | undefined;
}

export interface SentMessage {
  messageId: string;
  seq: number;
  /** The message was a duplicate: the id and seq are the original's. */
  duplicate: boolean;
}

/** What a client's receipt handle names: a message, which of its receives issued the handle, its token. */
export interface MessageReceipt {
  seq: number;
  receiveCount: number;
  receiptToken: string;
}

/**
 * Which receipt handles of a message that still exists a delete or a visibility change honours; the core
 * chooses by the queue's kind.
 * - `anyIssued`: every handle issued for the message, superseded or lapsed (SQS standard queues);
 * - `latest`: only the latest receive's handle; a visibility change also needs the message in flight;
 * - `inFlight`: the latest receive's handle while its visibility timeout lasts (SQS FIFO deletes).
 * A receipt whose token is not the message's, or that names a receive the message has not had, was never
 * issued: 'invalid' under every rule.
 */
export type ReceiptRule = 'anyIssued' | 'latest' | 'inFlight';

export interface ReceiptCheck {
  rule: ReceiptRule;
  now: number;
}

/** 'stale': a later receive superseded the handle; 'expired': its visibility timeout lapsed. */
export type DeleteOutcome = 'deleted' | 'missing' | 'invalid' | 'stale' | 'expired';

export interface StoredMessage extends Omit<NewMessage, 'deduplication'> {
  deduplicationId: string | undefined;
  /** The store's own increasing id within the queue, used in receipt handles. */
  seq: number;
  receiveCount: number;
  firstReceivedAt: number | undefined;
  receiptToken: string | undefined;
  /** When the receive that started the current delivery happened (the 12 h visibility limit counts from it). */
  deliveryStartedAt: number | undefined;
  deadLetterSourceArn: string | undefined;
}

export interface ReceiveRequest {
  queueId: number;
  now: number;
  max: number;
  visibleUntil: number;
  /** Draws the receipt token of a message received for the first time (it keeps it from then on). */
  newReceiptToken: () => string;
  /** Refuse the receive (return overLimit) when at least this many messages are in flight. */
  maxInFlight: number;
  /** FIFO's ReceiveRequestAttemptId; what this receive claims is remembered for it until `expiresAt`. */
  attempt?: { id: string; expiresAt: number };
  /**
   * Asked before each message is claimed, with its size (messageRowBytes): false ends the receive there,
   * with what it claimed so far. The server bounds the message bytes its answers hold at once with it.
   */
  admit?: (bytes: number) => boolean;
  deadLetter?: DeadLetterTarget;
}

/** Where a receive moves the messages received `maxReceiveCount` times already (the queue's redrive policy). */
export interface DeadLetterTarget {
  queueId: number;
  maxReceiveCount: number;
  sourceArn: string;
  /** FIFO DLQs restart the retention clock; standard ones keep the original send time. */
  resetSentAt: boolean;
  /** The DLQ's retention period: the message expires that long after its (kept or restarted) send time. */
  retentionMs: number;
}

export interface ReceiveResult {
  messages: StoredMessage[];
  overLimit: boolean;
  movedToDeadLetter: number;
}

export interface ChangeVisibilityRequest extends ReceiptCheck {
  queueId: number;
  receipt: MessageReceipt;
  visibleAt: number;
  /** Refuse when the delivery would stay in flight beyond this long after its receive. */
  maxDeliveryMs: number;
}

export type ChangeVisibilityOutcome =
  | 'changed'
  | 'notInFlight'
  | 'stale'
  | 'missing'
  | 'invalid'
  | 'beyondLimit';

export type MoveTaskStatus = 'RUNNING' | 'COMPLETED' | 'CANCELLING' | 'CANCELLED' | 'FAILED';

export interface NewMoveTask {
  handle: string;
  sourceArn: string;
  sourceQueueId: number;
  destinationArn: string | undefined;
  /** As given to StartMessageMoveTask; without it the server's default rate and backlog pause apply. */
  maxPerSecond: number | undefined;
  toMove: number;
  upToSeq: number;
  startedAt: number;
}

export interface MoveTaskRecord extends NewMoveTask {
  status: MoveTaskStatus;
  moved: number;
  failureReason: string | undefined;
  endedAt: number | undefined;
}

export interface MoveTaskChange {
  status: MoveTaskStatus;
  failureReason?: string;
  now: number;
}

export interface MoveDestination {
  queueId: number;
  fifo: boolean;
  visibleAt: number;
  expiresAt: number;
}

export interface MoveRequest {
  handle: string;
  now: number;
  max: number;
  /** Where a message goes, by the queue it was dead-lettered from (undefined when it was sent to the DLQ). */
  route: (deadLetterSourceArn: string | undefined) => MoveDestination | undefined;
  newMessageId: () => string;
}

export interface MoveOutcome {
  moved: number;
  /** Destination queue ids that received messages. */
  destinations: number[];
  /** Whether movable messages of the task may be left after this batch. */
  more: boolean;
  /** The batch stopped at a message `route` had no destination for; its DeadLetterQueueSourceArn. */
  unroutable: { origin: string | undefined } | undefined;
  task: MoveTaskRecord | undefined;
}

export interface MessageCounts {
  visible: number;
  notVisible: number;
  delayed: number;
  /** The send time of the oldest unexpired message, any state (CloudWatch's ApproximateAgeOfOldestMessage). */
  oldestSentAt: number | undefined;
}

/** A queue's state at `at`, and what happened to it in the `periodMs` before. */
export interface QueueSample {
  queue: string;
  at: number;
  periodMs: number;
  visible: number;
  notVisible: number;
  delayed: number;
  /** Seconds; 0 when the queue was empty. */
  oldestAgeSeconds: number;
  sent: number;
  received: number;
  deleted: number;
  emptyReceives: number;
  sentBytes: number;
}

/** What clients did to a queue over some time: the history's and CloudWatch's activity counters. */
export interface ActivityCounts {
  sent: number;
  received: number;
  deleted: number;
  emptyReceives: number;
  sentBytes: number;
}

export interface QueueActivityCounts extends ActivityCounts {
  queue: string;
}
