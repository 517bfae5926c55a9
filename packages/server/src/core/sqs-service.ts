import type { Clock } from 'sluice-client/clock';
import type { Store, StoreCondition } from '../store/contract.ts';
import type {
  ActionInputs,
  ActionName,
  ActionOutputs,
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
import { type CapacityLimits, DEFAULT_CAPACITY } from './limits.ts';
import { LongPoll } from './long-poll.ts';
import { type MoveTaskEvents, type MoveTaskSettings, MoveTasks } from './move-tasks.ts';
import { QueueActions } from './queue-actions.ts';
import { QueueActivity } from './queue-activity.ts';
import { QueueDirectory } from './queue-directory.ts';
import type { CallerScope } from './queue-reference.ts';
import { ReceiptActions } from './receipt-actions.ts';
import { type ReceiptHandleSettings, ReceiptRules } from './receipt-rules.ts';
import { ReceiveActions } from './receive-actions.ts';
import type { RequestContext } from './request-context.ts';
import { SendActions } from './send-actions.ts';

/** The account and region of queue URLs and ARNs unless told otherwise, as other local SQS servers use. */
export const DEFAULT_ACCOUNT_ID = '000000000000';
export const DEFAULT_REGION = 'us-east-1';

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

/** Every SQS action, with its typed input and output, as dispatch (actions.ts) calls it. */
export type SqsActions = {
  [Action in ActionName]: (
    input: ActionInputs[Action],
    context: RequestContext,
  ) => Promise<ActionOutputs[Action]>;
};

/**
 * What background jobs, triage and the console's pages read: the service's shared parts beside the store.
 * Each of them declares the narrow part it uses; none reaches the actions, or the store, through the service.
 */
export function serviceReads(service: SqsService, store: Store) {
  const { clock, queues, activity, longPoll, accountId } = service;
  return { store, clock, queues, activity, longPoll, accountId };
}

/**
 * The SQS API for both wire protocols: each public method is one action, taking its typed input and
 * returning its typed output. The rules live in the action modules it delegates to, one per group of
 * actions; it holds the parts they share (the queue directory, long polls, activity counts, limits).
 */
export class SqsService implements SqsActions {
  private readonly store: Store;
  readonly clock: Clock;
  readonly accountId: string;
  readonly region: string;
  readonly longPoll: LongPoll;
  readonly moveTasks: MoveTasks;
  /** Where the queues are found, by name, URL or ARN, with the caller's access checked. */
  readonly queues: QueueDirectory;
  /**
   * The actions on queues themselves: create, look up, list, attributes, tags, permissions, delete, purge.
   */
  private readonly queueActions: QueueActions;
  /** SendMessage and SendMessageBatch. */
  private readonly sendActions: SendActions;
  /** ReceiveMessage. */
  private readonly receiveActions: ReceiveActions;
  /** The actions on received messages by their receipt handles: delete, change visibility, one or a batch. */
  private readonly receiptActions: ReceiptActions;
  /** Counts of sends, receives and deletes per queue, for /metrics and the history. */
  readonly activity = new QueueActivity();
  /** Which receipt handles each queue honours, and the stale ones refused (for /metrics). */
  readonly receiptRules: ReceiptRules;
  readonly limits: CapacityLimits;

  constructor(options: ServiceOptions) {
    this.limits = { ...DEFAULT_CAPACITY, ...options.limits };
    this.store = options.store;
    this.clock = options.clock;
    this.accountId = options.accountId ?? DEFAULT_ACCOUNT_ID;
    this.region = options.region ?? DEFAULT_REGION;
    this.queues = new QueueDirectory(this.store, this.region, this.accountId);
    this.longPoll = new LongPoll(this.clock);
    options.store.onRemoteWake?.((queueId) =>
      queueId === undefined ? this.longPoll.notifyAll() : this.longPoll.notify(queueId),
    );
    const wake = (queueId: number) => this.longPoll.notify(queueId);
    this.moveTasks = new MoveTasks(
      { store: this.store, clock: this.clock, queues: this.queues, wake },
      options.moveTasks,
      options.moveTaskEvents,
    );
    this.receiptRules = new ReceiptRules(options.receiptHandles);
    const shared = {
      store: this.store,
      clock: this.clock,
      queues: this.queues,
      limits: this.limits,
      longPoll: this.longPoll,
      activity: this.activity,
    };
    this.sendActions = new SendActions(shared);
    this.receiveActions = new ReceiveActions(shared);
    this.receiptActions = new ReceiptActions({ ...shared, receiptRules: this.receiptRules });
    this.queueActions = new QueueActions({
      ...shared,
      accountId: this.accountId,
      receiptRules: this.receiptRules,
      warn: options.warn ?? (() => {}),
    });
  }

  /** Why the store is degraded (disk full, read-only…), as /health reports it; undefined when it is not. */
  async condition(): Promise<StoreCondition | undefined> {
    return this.store.condition?.();
  }

  // ---- The SQS actions, each passed on to the module that carries it out -----------------------------

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

  SendMessage(input: SendMessageRequest, context: RequestContext) {
    return this.sendActions.SendMessage(input, context);
  }

  SendMessageBatch(input: SendMessageBatchRequest, context: RequestContext) {
    return this.sendActions.SendMessageBatch(input, context);
  }

  ReceiveMessage(input: ReceiveMessageRequest, context: RequestContext) {
    return this.receiveActions.ReceiveMessage(input, context);
  }
}
