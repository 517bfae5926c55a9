import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '#toolkit/clock';
import { parseJsonObject } from '../shared/json-object.ts';
import type { MoveDestination, MoveTaskRecord, QueueRecord, Store } from '../store/contract.ts';
import type {
  CancelMessageMoveTaskRequest,
  ListMessageMoveTasksRequest,
  StartMessageMoveTaskRequest,
} from './api-types.ts';
import { ERROR_SPECS, errors } from './errors.ts';
import { optionalInteger, requiredString } from './input.ts';
import { integerAttribute } from './queue-attributes.ts';
import type { CallerScope } from './queue-reference.ts';

/** How a move task runs when StartMessageMoveTask gives no MaxNumberOfMessagesPerSecond. */
export interface MoveTaskSettings {
  /** Messages per second (1-500). SQS picks a "system-optimized" rate; Sluice a stated, modest one. */
  defaultRate: number;
  /**
   * The task pauses while a destination queue has at least this many visible messages, and resumes as
   * consumers drain it, so a redrive never buries a recovering consumer. 0 turns the pause off.
   */
  backlogLimit: number;
}

export const MOVE_TASK_DEFAULTS: MoveTaskSettings = { defaultRate: 100, backlogLimit: 1000 };

/** SQS ends a task that is still running after 36 hours. */
export const MAX_TASK_MS = 36 * 60 * 60 * 1000;
const MAX_RATE = 500;
/** How often a task paused on a backlog looks again. */
const BACKLOG_RECHECK_MS = 1000;
/** After a store error, a task tries again this much later. */
const RETRY_AFTER_ERROR_MS = 1000;
/** SQS gives the error code, not a sentence, as the FailureReason of a task that lost a queue. */
const QUEUE_GONE = ERROR_SPECS.QueueDoesNotExist.queryCode;

const missingResource = (parameter: 'SourceArn' | 'DestinationArn') =>
  errors.resourceNotFound(`The resource that you specified for the ${parameter} parameter doesn't exist.`);

/** A task handle is, as in SQS, the base64 of a JSON object naming the task and its source queue. */
function encodeTaskHandle(sourceArn: string): string {
  return Buffer.from(JSON.stringify({ taskId: randomUUID(), sourceArn })).toString('base64');
}

/** The source queue ARN a task handle names; a string that is not a task handle is refused. */
function sourceArnOfHandle(handle: string): string {
  const decoded = parseJsonObject(Buffer.from(handle, 'base64').toString('utf8'));
  if (typeof decoded?.taskId !== 'string' || typeof decoded.sourceArn !== 'string')
    throw errors.invalidParameterValue('Value for parameter TaskHandle is invalid.');
  return decoded.sourceArn;
}

/**
 * How a rate becomes moves: `batch` messages at a time, at least `intervalMs` apart (counted from the end of
 * one move to the start of the next). Any one-second window then holds at most `rate` moves, so the limit
 * holds in every second, not only on average; ten batches a second keep each burst small.
 */
export function pace(rate: number): { batch: number; intervalMs: number } {
  const batch = Math.max(1, Math.ceil(rate / 10));
  return { batch, intervalMs: Math.ceil((batch * 1000) / rate) };
}

export interface MoveTaskEvents {
  /** A task ended (COMPLETED, CANCELLED, FAILED), or paused or resumed on a destination backlog. */
  onChange?: (task: MoveTaskRecord, event: 'ended' | 'paused' | 'resumed') => void;
  onError?: (error: unknown) => void;
}

interface RunningTask {
  timer: Timer | undefined;
  busy: Promise<void> | undefined;
  paused: boolean;
}

/**
 * StartMessageMoveTask, ListMessageMoveTasks and CancelMessageMoveTask, and the runner that carries tasks out
 * at their rate. The task's state lives in the store, moved count included, so a restarted server resumes
 * each task where it was (`resume()`).
 */
/** The queues a move task reads, found by ARN with the caller's access checked; the service provides them. */
export interface MoveTaskQueues {
  accessQueueByArn(arn: string, caller: CallerScope, action?: string): Promise<QueueRecord | undefined>;
  requireAccess(caller: CallerScope, queue: QueueRecord, action?: string): void;
  /** For the server's own work: no access check. */
  queueByArn(arn: string): Promise<QueueRecord | undefined>;
  deadLetterSources(deadLetterArn: string): Promise<QueueRecord[]>;
}

/** What move tasks need, and nothing more: the store, time, the queues, and the long polls to wake. */
export interface MoveTaskDependencies {
  readonly store: Pick<
    Store,
    | 'activeMoveTasks'
    | 'countMessages'
    | 'createMoveTask'
    | 'getMoveTask'
    | 'lastSeq'
    | 'listMoveTasks'
    | 'moveMessages'
    | 'setMoveTaskStatus'
  >;
  readonly clock: Clock;
  readonly queues: MoveTaskQueues;
  /** Wakes the long polls waiting on a queue that messages were moved to. */
  wake(queueId: number): void;
}

export class MoveTasks {
  private readonly running = new Map<string, RunningTask>();
  private stopped = false;

  constructor(
    private readonly deps: MoveTaskDependencies,
    readonly settings: MoveTaskSettings = MOVE_TASK_DEFAULTS,
    private readonly events: MoveTaskEvents = {},
  ) {
    if (
      !Number.isInteger(settings.defaultRate) ||
      settings.defaultRate < 1 ||
      settings.defaultRate > MAX_RATE
    )
      throw new Error(`the default redrive rate must be an integer from 1 to ${MAX_RATE}`);
    if (!Number.isInteger(settings.backlogLimit) || settings.backlogLimit < 0)
      throw new Error('the redrive backlog limit must be a whole number');
  }

  async StartMessageMoveTask(input: StartMessageMoveTaskRequest, caller: CallerScope = {}) {
    const sourceArn = requiredString(input, 'SourceArn');
    const destinationArn = input.DestinationArn;
    const maxPerSecond = optionalInteger(input, 'MaxNumberOfMessagesPerSecond', 1, MAX_RATE);
    const source = await this.deps.queues.accessQueueByArn(sourceArn, caller);
    if (!source) throw missingResource('SourceArn');
    const deadLetterSources = await this.deps.queues.deadLetterSources(sourceArn);
    if (deadLetterSources.length === 0)
      throw errors.invalidParameterValue('Source queue must be configured as a Dead Letter Queue.');
    // The task sends into its destination, or back into the queues whose dead-letter queue this is (as
    // SQS does, the caller needs sqs:SendMessage there).
    if (destinationArn === undefined) {
      for (const queue of deadLetterSources) this.deps.queues.requireAccess(caller, queue, 'SendMessage');
    } else {
      const destination = await this.deps.queues.accessQueueByArn(destinationArn, caller, 'SendMessage');
      if (!destination) throw missingResource('DestinationArn');
      if (destination.id === source.id)
        throw errors.invalidParameterValue('Source queue arn and destination queue arn cannot be the same.');
      if (destination.fifo !== source.fifo)
        throw errors.invalidParameterValue('The source and destination queues must be of the same type.');
    }
    const store = this.deps.store;
    const now = this.deps.clock.now();
    const counts = await store.countMessages(source.id, now);
    const task = await store.createMoveTask({
      handle: encodeTaskHandle(sourceArn),
      sourceArn,
      sourceQueueId: source.id,
      destinationArn,
      maxPerSecond,
      toMove: counts.visible + counts.notVisible,
      upToSeq: await store.lastSeq(source.id),
      startedAt: now,
    });
    if (!task)
      throw errors.invalidParameterValue(
        'There is already a task running. Only one active task is allowed for a source queue arn at a given time.',
      );
    this.run(task.handle, 0);
    return { TaskHandle: task.handle };
  }

  async ListMessageMoveTasks(input: ListMessageMoveTasksRequest, caller: CallerScope = {}) {
    const sourceArn = requiredString(input, 'SourceArn');
    const max = optionalInteger(input, 'MaxResults', 1, 10) ?? 1;
    if (!(await this.deps.queues.accessQueueByArn(sourceArn, caller))) throw missingResource('SourceArn');
    const tasks = await this.deps.store.listMoveTasks(sourceArn, max);
    return { Results: tasks.map(describeTask) };
  }

  async CancelMessageMoveTask(input: CancelMessageMoveTaskRequest, caller: CallerScope = {}) {
    const handle = requiredString(input, 'TaskHandle');
    // The handle names the task's source queue, which the caller must be allowed on.
    if (!(await this.deps.queues.accessQueueByArn(sourceArnOfHandle(handle), caller)))
      throw missingResource('SourceArn');
    const store = this.deps.store;
    const task = await store.getMoveTask(handle);
    if (!task) throw errors.resourceNotFound('Task does not exist.');
    if (task.status !== 'RUNNING')
      throw errors.unsupported(`Only a RUNNING task can be cancelled; this one is ${task.status}.`);
    const cancelling = await store.setMoveTaskStatus(handle, {
      status: 'CANCELLING',
      now: this.deps.clock.now(),
    });
    // The runner turns CANCELLING into CANCELLED at its next step; make that step now.
    this.run(handle, 0);
    return { ApproximateNumberOfMessagesMoved: (cancelling ?? task).moved };
  }

  /** The task with that handle, for the server's own work (the operator audit names its queues). */
  task(handle: string): Promise<MoveTaskRecord | undefined> {
    return this.deps.store.getMoveTask(handle);
  }

  /**
   * Picks up the tasks left RUNNING or CANCELLING by a previous run of the server, or (several nodes on one
   * store) started through or abandoned by another node; tasks this runner already carries out keep their pace.
   */
  async resume(): Promise<void> {
    this.stopped = false;
    for (const task of await this.deps.store.activeMoveTasks())
      if (!this.running.has(task.handle)) this.run(task.handle, 0);
  }

  /** Stops every runner; tasks stay RUNNING in the store and resume with the next `resume()`. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const task of this.running.values()) task.timer?.cancel();
    await Promise.all([...this.running.values()].map((task) => task.busy));
    this.running.clear();
  }

  /** Runs the task's next step `delayMs` from now (sooner if one is already due sooner). */
  private run(handle: string, delayMs: number): void {
    if (this.stopped) return;
    let state = this.running.get(handle);
    if (!state) {
      state = { timer: undefined, busy: undefined, paused: false };
      this.running.set(handle, state);
    }
    const task = state;
    task.timer?.cancel();
    task.timer = this.deps.clock.setTimer(delayMs, () => {
      task.timer = undefined;
      if (task.busy) return; // the step under way schedules the next one
      task.busy = this.step(handle, task)
        .catch((error: unknown) => {
          this.events.onError?.(error);
          return RETRY_AFTER_ERROR_MS;
        })
        .then((next) => {
          task.busy = undefined;
          // The delay counts from the end of this step's move, so moves are always at least that far apart.
          if (next === undefined) this.running.delete(handle);
          else if (!task.timer) this.run(handle, next);
        });
      return task.busy;
    });
  }

  /** One batch of a task. Returns the delay to its next step, or undefined once it has ended. */
  private async step(handle: string, state: RunningTask): Promise<number | undefined> {
    const { store, clock } = this.deps;
    const task = await store.getMoveTask(handle);
    if (!task) return undefined;
    const now = clock.now();
    if (task.status === 'CANCELLING') return this.end(task, 'CANCELLED');
    if (task.status !== 'RUNNING') return undefined;
    if (now - task.startedAt >= MAX_TASK_MS)
      return this.end(task, 'FAILED', 'The task ran for 36 hours, the longest a move task may run.');
    const source = await this.deps.queues.queueByArn(task.sourceArn);
    if (source?.id !== task.sourceQueueId) return this.end(task, 'FAILED', QUEUE_GONE);

    const destinations = new Map<string | undefined, QueueRecord>();
    if (task.destinationArn !== undefined) {
      const destination = await this.deps.queues.queueByArn(task.destinationArn);
      if (!destination) return this.end(task, 'FAILED', QUEUE_GONE);
      destinations.set(undefined, destination);
    }
    const rate = task.maxPerSecond ?? this.settings.defaultRate;
    if (task.maxPerSecond === undefined && (await this.backlogged(task, destinations))) {
      if (!state.paused) this.events.onChange?.(task, 'paused');
      state.paused = true;
      return BACKLOG_RECHECK_MS;
    }
    if (state.paused) this.events.onChange?.(task, 'resumed');
    state.paused = false;

    const { batch, intervalMs } = pace(rate);
    let left = batch;
    for (;;) {
      const outcome = await store.moveMessages({
        handle,
        now,
        max: left,
        route: (origin) => {
          const queue = destinations.get(task.destinationArn === undefined ? origin : undefined);
          return queue && moveDestination(queue, now);
        },
        newMessageId: randomUUID,
      });
      for (const queueId of outcome.destinations) this.deps.wake(queueId);
      left -= outcome.moved;
      // Cancelled meanwhile: the next step, at once, finishes the cancel.
      if (outcome.task?.status !== 'RUNNING') return 0;
      if (outcome.unroutable) {
        // A message from a source queue this step had not looked up yet; a missing one fails the task.
        const { origin } = outcome.unroutable;
        const queue = origin === undefined ? undefined : await this.deps.queues.queueByArn(origin);
        if (!queue)
          return this.end(
            outcome.task,
            'FAILED',
            origin === undefined
              ? 'A message in the queue was not moved there from a source queue; give a DestinationArn.'
              : QUEUE_GONE,
          );
        destinations.set(origin, queue);
        if (left > 0) continue;
        return intervalMs;
      }
      if (!outcome.more) return this.end(outcome.task, 'COMPLETED');
      return intervalMs;
    }
  }

  private async backlogged(task: MoveTaskRecord, destinations: Map<string | undefined, QueueRecord>) {
    if (this.settings.backlogLimit === 0) return false;
    const queues =
      task.destinationArn !== undefined
        ? [...destinations.values()]
        : await this.deps.queues.deadLetterSources(task.sourceArn);
    const now = this.deps.clock.now();
    for (const queue of queues) {
      const counts = await this.deps.store.countMessages(queue.id, now);
      if (counts.visible >= this.settings.backlogLimit) return true;
    }
    return false;
  }

  private async end(task: MoveTaskRecord, status: 'COMPLETED' | 'CANCELLED' | 'FAILED', reason?: string) {
    const ended = await this.deps.store.setMoveTaskStatus(task.handle, {
      status,
      failureReason: reason,
      now: this.deps.clock.now(),
    });
    if (ended) this.events.onChange?.(ended, 'ended');
    return undefined;
  }
}

/** A redriven message is a new message of its destination: that queue's delay and retention apply. */
export function moveDestination(queue: QueueRecord, now: number): MoveDestination {
  return {
    queueId: queue.id,
    fifo: queue.fifo,
    visibleAt: now + integerAttribute(queue.attributes, 'DelaySeconds') * 1000,
    expiresAt: now + integerAttribute(queue.attributes, 'MessageRetentionPeriod') * 1000,
  };
}

/** ListMessageMoveTasks's entry; SQS gives the TaskHandle only while the task can still be cancelled. */
function describeTask(task: MoveTaskRecord) {
  return {
    ...(task.status === 'RUNNING' ? { TaskHandle: task.handle } : {}),
    Status: task.status,
    SourceArn: task.sourceArn,
    ...(task.destinationArn !== undefined ? { DestinationArn: task.destinationArn } : {}),
    ...(task.maxPerSecond !== undefined ? { MaxNumberOfMessagesPerSecond: task.maxPerSecond } : {}),
    ApproximateNumberOfMessagesMoved: task.moved,
    ApproximateNumberOfMessagesToMove: task.toMove,
    ...(task.failureReason !== undefined ? { FailureReason: task.failureReason } : {}),
    StartedTimestamp: task.startedAt,
  };
}
