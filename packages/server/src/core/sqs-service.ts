import type { Clock } from '#toolkit/clock';
import type { Store } from '../store/contract.ts';
import { type ActionTable, actionTable } from './actions.ts';
import { type CapacityLimits, DEFAULT_CAPACITY } from './limits.ts';
import { LongPoll } from './long-poll.ts';
import { type MoveTaskEvents, type MoveTaskSettings, MoveTasks } from './move-tasks.ts';
import { QueueActions } from './queue-actions.ts';
import { QueueActivity } from './queue-activity.ts';
import { QueueDirectory } from './queue-directory.ts';
import { ReceiptActions } from './receipt-actions.ts';
import { type ReceiptHandleSettings, ReceiptRules } from './receipt-rules.ts';
import { ReceiveActions } from './receive-actions.ts';
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

/**
 * What background jobs, triage and the console's pages read: the service's shared parts beside the store.
 * Each of them declares the narrow part it uses; none reaches the actions, or the store, through the service.
 */
export function serviceReads(service: SqsService, store: Store) {
  const { clock, queues, activity, longPoll, accountId } = service;
  return { store, clock, queues, activity, longPoll, accountId };
}

/**
 * The core's shared parts, wired once: the queue directory, long polls, activity counts, limits, move tasks,
 * and the action table (`actions.ts`) that dispatch runs each SQS action from. It has no action of its own:
 * each action is a method of the module that carries it out, reached through `actions`.
 */
export class SqsService {
  readonly clock: Clock;
  readonly accountId: string;
  readonly region: string;
  readonly longPoll: LongPoll;
  readonly moveTasks: MoveTasks;
  /** Where the queues are found, by name, URL or ARN, with the caller's access checked. */
  readonly queues: QueueDirectory;
  /** Every SQS action, by name, to the method of the module that carries it out. */
  readonly actions: ActionTable;
  /** Counts of sends, receives and deletes per queue, for /metrics and the history. */
  readonly activity = new QueueActivity();
  /** Which receipt handles each queue honours, and the stale ones refused (for /metrics). */
  readonly receiptRules: ReceiptRules;
  readonly limits: CapacityLimits;
  /** How topics deliver into queues: through the send's own checks (SNS, core/sns/). */
  readonly deliveries: SendActions;

  constructor(options: ServiceOptions) {
    this.limits = { ...DEFAULT_CAPACITY, ...options.limits };
    const store = options.store;
    this.clock = options.clock;
    this.accountId = options.accountId ?? DEFAULT_ACCOUNT_ID;
    this.region = options.region ?? DEFAULT_REGION;
    this.queues = new QueueDirectory(store, this.region, this.accountId);
    this.longPoll = new LongPoll(this.clock);
    options.store.onRemoteWake?.((queueId) =>
      queueId === undefined ? this.longPoll.notifyAll() : this.longPoll.notify(queueId),
    );
    const wake = (queueId: number) => this.longPoll.notify(queueId);
    this.moveTasks = new MoveTasks(
      { store, clock: this.clock, queues: this.queues, wake },
      options.moveTasks,
      options.moveTaskEvents,
    );
    this.receiptRules = new ReceiptRules(options.receiptHandles);
    const shared = {
      store,
      clock: this.clock,
      queues: this.queues,
      limits: this.limits,
      longPoll: this.longPoll,
      activity: this.activity,
    };
    this.deliveries = new SendActions(shared);
    this.actions = actionTable({
      queueActions: new QueueActions({
        ...shared,
        accountId: this.accountId,
        receiptRules: this.receiptRules,
        warn: options.warn ?? (() => {}),
      }),
      sendActions: this.deliveries,
      receiveActions: new ReceiveActions(shared),
      receiptActions: new ReceiptActions({ ...shared, receiptRules: this.receiptRules }),
      moveTasks: this.moveTasks,
    });
  }
}
