import { NO_ACTIVITY } from '../activity-tally.ts';
import type {
  ChangeVisibilityOutcome,
  ChangeVisibilityRequest,
  DeleteOutcome,
  EndpointDeliveryRecord,
  MessageCounts,
  MessageReceipt,
  MoveOutcome,
  MoveRequest,
  MoveTaskChange,
  MoveTaskRecord,
  NewMessage,
  NewMoveTask,
  NewQueue,
  NewSubscription,
  NewTopic,
  Publication,
  PublishOutcome,
  QueueActivityCounts,
  QueueChanges,
  QueueRecord,
  QueueSample,
  ReceiptCheck,
  ReceiveRequest,
  ReceiveResult,
  SentMessage,
  Store,
  StoreCondition,
  StoredMessage,
  SubscriptionRecord,
  TopicChanges,
  TopicRecord,
} from '../contract.ts';
import { StoreUnavailableError } from '../contract.ts';
import { runAwaiting } from '../plan.ts';
import {
  changeVisibilityPlan,
  deletePlan,
  expiryPlan,
  moveBatchPlan,
  purgePlan,
  rebuildGroups,
  receivePlan,
  type StoreSteps,
} from '../planner.ts';
import { type PublishSteps, publishPlan } from '../publish-plan.ts';
import {
  type MoveTaskRow,
  type QueueRow,
  type SampleRow,
  sampleRow,
  toMoveTask,
  toQueue,
  toSample,
} from '../rows.ts';
import { sendPlan } from '../send-plan.ts';
import type {
  AuditEntry,
  AuditKeep,
  AuditRecord,
  ReplayRequest,
  TriageOutcome,
  TriageStore,
} from '../triage.ts';
import { triageDeletePlan, triageReplayPlan } from '../triage.ts';
import { type Db, PostgresConnection, run } from './connection.ts';
import type { ConnectionOptions } from './options.ts';
import { planSteps } from './plan-steps.ts';
import { ACTIVITY_COLUMNS, insertSamples, SQL } from './statements.ts';
import { postgresTopics as topics } from './topics.ts';
import { PostgresTriage } from './triage.ts';

export type PostgresStoreOptions = ConnectionOptions;

/** pg_advisory_xact_lock key under which nodes take turns to add event source mappings. */
const MAPPING_ADD_LOCK = 7_405_931_002;

/**
 * The PostgreSQL store: any number of Sluice nodes share one database. Every state change is one statement
 * or one transaction; receives claim with FOR UPDATE SKIP LOCKED, so receivers on different nodes never
 * wait for each other and never claim the same message; a FIFO group is held by a row lock on its
 * fifo_groups row while a receive takes from it. Deduplication ids and receive attempt ids live in tables,
 * so every node sees them.
 */
export class PostgresStore implements Store, TriageStore {
  /** Whether each queue id is FIFO; a queue's kind never changes and ids are never reused. */
  private readonly fifoById = new Map<number, boolean>();
  private readonly direct: Db;
  private readonly triage: PostgresTriage;

  private constructor(private readonly connection: PostgresConnection) {
    this.direct = connection.direct;
    this.triage = new PostgresTriage({
      direct: this.direct,
      transaction: (work) => this.transaction(work),
    });
  }

  /** Connects and runs the migrations this database lacks (one node at a time). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const connection = new PostgresConnection(options);
    try {
      await connection.ready;
    } catch (error) {
      await connection.pool.end();
      // At start the database's own words (a wrong password, no such database) say more than "unreachable".
      throw error instanceof StoreUnavailableError ? error.cause : error;
    }
    return new PostgresStore(connection);
  }

  onRemoteWake(wake: (queueId: number | undefined) => void): void {
    this.connection.onRemoteWake(wake);
  }

  async createQueue(queue: NewQueue): Promise<QueueRecord> {
    return this.transaction(async (db) => {
      const { rows } = await run<QueueRow>(db, SQL.insertQueue, [
        queue.name,
        queue.fifo,
        queue.deduplicatesPerGroup ?? false,
        JSON.stringify(queue.attributes),
        JSON.stringify(queue.tags),
        queue.now,
      ]);
      await run(db, SQL.forgetDeletedQueue, [queue.name]);
      return toQueue(rows[0]!);
    });
  }

  async getQueue(name: string): Promise<QueueRecord | undefined> {
    // Not cached: another node may change the queue at any time.
    const { rows } = await run<QueueRow>(this.direct, SQL.queueByName, [name]);
    return rows[0] && toQueue(rows[0]);
  }

  async listQueues(options: { prefix?: string; afterName?: string; limit: number }): Promise<QueueRecord[]> {
    const { rows } = await run<QueueRow>(this.direct, SQL.listQueues, [
      options.prefix ?? '',
      options.afterName ?? '',
      options.limit,
    ]);
    return rows.map(toQueue);
  }

  async updateQueue(id: number, changes: QueueChanges): Promise<QueueRecord | undefined> {
    return this.transaction(async (db) => {
      const { rows } = await run<QueueRow>(db, SQL.updateQueue, [
        id,
        changes.attributes ? JSON.stringify(changes.attributes) : null,
        changes.tags ? JSON.stringify(changes.tags) : null,
        changes.now,
      ]);
      if (!rows[0]) return undefined;
      if (changes.waitingDelayMs !== undefined) {
        await run(db, SQL.redelayWaiting, [changes.waitingDelayMs, id]);
        await runAwaiting(rebuildGroups(this.steps(db), id));
        await this.announce(db, [id]);
      }
      return toQueue(rows[0]);
    });
  }

  async deleteQueue(id: number, now: number): Promise<void> {
    await this.transaction(async (db) => {
      const { rows } = await run<{ name: string }>(db, SQL.deleteQueue, [id]);
      if (!rows[0]) return;
      await run(db, SQL.deleteQueueMessages, [id]);
      for (const statement of SQL.forgetQueueState) await run(db, statement, [id]);
      await run(db, SQL.rememberDeletedQueue, [rows[0].name, now]);
    });
    this.fifoById.delete(id);
  }

  async queueDeletedAt(name: string): Promise<number | undefined> {
    const { rows } = await run<{ deleted_at: number }>(this.direct, SQL.deletedQueue, [name]);
    return rows[0]?.deleted_at;
  }

  async sendMessages(
    queueId: number,
    messages: NewMessage[],
    onVisible?: () => void,
  ): Promise<SentMessage[]> {
    // A standard queue's batch is one statement (its wake of other nodes in it), outside a transaction.
    const sent = (await this.isFifo(queueId))
      ? await this.transaction(async (db) => {
          const results = await this.send(db, queueId, messages);
          if (results.some((result) => !result.duplicate)) await this.announce(db, [queueId]);
          return results;
        })
      : await this.send(this.direct, queueId, messages);
    onVisible?.();
    return sent;
  }

  // ---- Topics (TopicStore) ----------------------------------------------------------------------------

  createTopic(topic: NewTopic): Promise<TopicRecord> {
    return this.track(() => topics.createTopic(this.direct, topic));
  }

  getTopic(name: string): Promise<TopicRecord | undefined> {
    return this.track(() => topics.getTopic(this.direct, name));
  }

  listTopics(options: { afterName?: string; limit: number }): Promise<TopicRecord[]> {
    return this.track(() => topics.listTopics(this.direct, options));
  }

  updateTopic(name: string, changes: TopicChanges): Promise<TopicRecord | undefined> {
    return this.track(() => topics.updateTopic(this.direct, name, changes));
  }

  deleteTopic(name: string): Promise<boolean> {
    return this.track(() => topics.deleteTopic(this.direct, name));
  }

  createSubscription(subscription: NewSubscription): Promise<SubscriptionRecord | undefined> {
    return this.transaction((db) => topics.createSubscription(db, subscription));
  }

  getSubscription(arn: string): Promise<SubscriptionRecord | undefined> {
    return this.track(() => topics.getSubscription(this.direct, arn));
  }

  listSubscriptions(options: {
    topicName?: string;
    afterArn?: string;
    limit: number;
  }): Promise<SubscriptionRecord[]> {
    return this.track(() => topics.listSubscriptions(this.direct, options));
  }

  updateSubscription(
    arn: string,
    attributes: Record<string, string>,
  ): Promise<SubscriptionRecord | undefined> {
    return this.track(() => topics.updateSubscription(this.direct, arn, attributes));
  }

  deleteSubscription(arn: string): Promise<boolean> {
    return this.track(() => topics.deleteSubscription(this.direct, arn));
  }

  /**
   * Every publication's deliveries in one transaction, through the send's own steps (FIFO queues' dedup and
   * groups, fair queues' tenants), with the topic locked so its sequence numbers and deduplication ids are
   * taken in order.
   */
  async publish(
    topicName: string,
    publications: Publication[],
    onVisible?: (queueIds: number[]) => void,
  ): Promise<PublishOutcome[] | undefined> {
    const touched = new Set<number>();
    const outcomes = await this.transaction(async (db) => {
      touched.clear();
      const published = await runAwaiting(
        publishPlan(this.publishSteps(db), topicName, publications, touched),
      );
      if (published) await this.announce(db, touched);
      return published;
    });
    onVisible?.([...touched]);
    return outcomes;
  }

  claimEndpointDeliveries(now: number, claimUntil: number, limit: number): Promise<EndpointDeliveryRecord[]> {
    return this.track(() => topics.claimEndpointDeliveries(this.direct, now, claimUntil, limit));
  }

  finishEndpointDelivery(id: string): Promise<void> {
    return this.track(() => topics.finishEndpointDelivery(this.direct, id));
  }

  retryEndpointDelivery(id: string, attempts: number, dueAt: number, lastError?: string): Promise<void> {
    return this.track(() => topics.retryEndpointDelivery(this.direct, id, attempts, dueAt, lastError));
  }

  listEndpointDeliveries(subscriptionArn: string, limit: number): Promise<EndpointDeliveryRecord[]> {
    return this.track(() => topics.listEndpointDeliveries(this.direct, subscriptionArn, limit));
  }

  retryEndpointDeliveryNow(subscriptionArn: string, id: string, now: number): Promise<boolean> {
    return this.track(() => topics.retryEndpointDeliveryNow(this.direct, subscriptionArn, id, now));
  }

  dropEndpointDelivery(subscriptionArn: string, id: string): Promise<EndpointDeliveryRecord | undefined> {
    return this.track(() => topics.dropEndpointDelivery(this.direct, subscriptionArn, id));
  }

  /** The send plan (planner.ts) over the steps of `db`. */
  private async send(db: Db, queueId: number, messages: NewMessage[]): Promise<SentMessage[]> {
    return runAwaiting(sendPlan(this.steps(db), queueId, messages, await this.isFifo(queueId)));
  }

  async receiveMessages(request: ReceiveRequest): Promise<ReceiveResult> {
    // Known before the transaction, so that it does not wait for another connection.
    const kinds = {
      fifo: await this.isFifo(request.queueId),
      deadLetterFifo: request.deadLetter !== undefined && (await this.isFifo(request.deadLetter.queueId)),
    };
    return this.transaction(async (db) => {
      const result = await runAwaiting(receivePlan(this.steps(db), request, kinds));
      if (result.movedToDeadLetter > 0 && request.deadLetter)
        await this.announce(db, [request.deadLetter.queueId]);
      return result;
    });
  }

  /** The statements the shared plans decide with, in the transaction `db` (plan-steps.ts). */
  /** A publish's steps (publish-plan.ts), inside the transaction `db`. */
  private publishSteps(db: Db): PublishSteps {
    return {
      ...this.steps(db),
      lockTopic: (name, now) => topics.lockTopic(db, name, now),
      publishedOriginal: (name, id, now) => topics.publishedOriginal(db, name, id, now),
      nextSequence: (name) => topics.nextSequence(db, name),
      rememberPublication: (name, id, original, expiresAt) =>
        topics.rememberPublication(db, name, id, original, expiresAt),
      insertEndpointDeliveries: (deliveries) => topics.insertEndpointDeliveries(db, deliveries),
      existingQueues: (queueIds) => topics.existingQueues(db, queueIds),
    };
  }

  private steps(db: Db): StoreSteps {
    return planSteps(db, {
      isFifo: (queueId) => this.isFifo(queueId),
      announce: (queueIds) => this.announce(db, queueIds),
      wakeOf: (queueId) => this.connection.wakeOf(queueId),
    });
  }

  private async isFifo(queueId: number): Promise<boolean> {
    let fifo = this.fifoById.get(queueId);
    if (fifo === undefined) {
      const { rows } = await run<{ fifo: boolean }>(this.direct, SQL.queueKind, [queueId]);
      fifo = rows[0]?.fifo === true;
      if (rows[0]) this.fifoById.set(queueId, fifo);
    }
    return fifo;
  }

  async deleteMessage(queueId: number, receipt: MessageReceipt, check: ReceiptCheck): Promise<DeleteOutcome> {
    return (await this.deleteMessages(queueId, [receipt], check))[0]!;
  }

  /** A standard queue's batch is one statement, outside a transaction; a FIFO queue's locks its groups first. */
  async deleteMessages(
    queueId: number,
    receipts: ReadonlyArray<MessageReceipt>,
    check: ReceiptCheck,
  ): Promise<DeleteOutcome[]> {
    if (!(await this.isFifo(queueId)))
      return runAwaiting(deletePlan(this.steps(this.direct), queueId, receipts, check, false));
    return this.transaction((db) => runAwaiting(deletePlan(this.steps(db), queueId, receipts, check, true)));
  }

  async changeVisibility(request: ChangeVisibilityRequest): Promise<ChangeVisibilityOutcome> {
    const fifo = await this.isFifo(request.queueId);
    return this.transaction((db) => runAwaiting(changeVisibilityPlan(this.steps(db), request, fifo)));
  }

  async purgeQueue(queueId: number, now: number, windowMs: number): Promise<boolean> {
    return this.transaction((db) => runAwaiting(purgePlan(this.steps(db), queueId, now, windowMs)));
  }

  async countMessages(queueId: number, now: number): Promise<MessageCounts> {
    const { rows } = await run<{
      visible: number;
      not_visible: number;
      delayed: number;
      oldest_sent_at: number | null;
    }>(this.direct, SQL.countMessages, [queueId, now]);
    const row = rows[0]!;
    return {
      visible: row.visible,
      notVisible: row.not_visible,
      delayed: row.delayed,
      oldestSentAt: row.oldest_sent_at ?? undefined,
    };
  }

  async nextVisibleAt(queueId: number, now: number): Promise<number | undefined> {
    const { rows } = await run<{ at: number | null }>(this.direct, SQL.nextVisibleAt, [queueId, now]);
    return rows[0]?.at ?? undefined;
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    return this.transaction((db) => runAwaiting(expiryPlan(this.steps(db), now, limit)));
  }

  async nextExpiryAt(queueId: number, now: number): Promise<number | undefined> {
    const { rows } = await run<{ at: number | null }>(this.direct, SQL.nextExpiryAt, [queueId, now]);
    return rows[0]?.at ?? undefined;
  }

  async createMoveTask(task: NewMoveTask): Promise<MoveTaskRecord | undefined> {
    // The partial unique index allows one active task per source; a second insert does nothing.
    const { rows } = await run<MoveTaskRow>(this.direct, SQL.insertMoveTask, [
      task.handle,
      task.sourceArn,
      task.sourceQueueId,
      task.destinationArn ?? null,
      task.maxPerSecond ?? null,
      task.toMove,
      task.upToSeq,
      task.startedAt,
    ]);
    return rows[0] && toMoveTask(rows[0]);
  }

  async listMoveTasks(sourceArn: string, limit: number): Promise<MoveTaskRecord[]> {
    const { rows } = await run<MoveTaskRow>(this.direct, SQL.moveTasksOfSource, [sourceArn, limit]);
    return rows.map(toMoveTask);
  }

  async activeMoveTasks(): Promise<MoveTaskRecord[]> {
    const { rows } = await run<MoveTaskRow>(this.direct, SQL.activeMoveTasks);
    return rows.map(toMoveTask);
  }

  async getMoveTask(handle: string): Promise<MoveTaskRecord | undefined> {
    const { rows } = await run<MoveTaskRow>(this.direct, SQL.moveTaskByHandle, [handle]);
    return rows[0] && toMoveTask(rows[0]);
  }

  async setMoveTaskStatus(handle: string, change: MoveTaskChange): Promise<MoveTaskRecord | undefined> {
    const { rows } = await run<MoveTaskRow>(this.direct, SQL.setMoveTaskStatus, [
      handle,
      change.status,
      change.failureReason ?? null,
      change.now,
    ]);
    return rows[0] && toMoveTask(rows[0]);
  }

  async moveMessages(request: MoveRequest): Promise<MoveOutcome> {
    return this.transaction(async (db) => {
      const outcome = await runAwaiting(moveBatchPlan(this.steps(db), request));
      await this.announce(db, outcome.destinations);
      return outcome;
    });
  }

  async browseMessages(
    queueId: number,
    options: { afterSeq: number; limit: number; now: number },
  ): Promise<StoredMessage[]> {
    return this.triage.browse(queueId, options);
  }

  // Each message in a transaction of its own.
  async replayMessages(request: ReplayRequest): Promise<TriageOutcome[]> {
    const outcomes: TriageOutcome[] = [];
    for (const seq of request.seqs)
      outcomes.push(
        await this.transaction((db) => runAwaiting(triageReplayPlan(this.steps(db), request, seq))),
      );
    return outcomes;
  }

  async deleteMessagesBySeq(queueId: number, seqs: readonly number[], now: number): Promise<TriageOutcome[]> {
    const outcomes: TriageOutcome[] = [];
    for (const seq of seqs)
      outcomes.push(
        await this.transaction((db) => runAwaiting(triageDeletePlan(this.steps(db), queueId, seq, now))),
      );
    return outcomes;
  }

  async appendAudit(entry: AuditEntry, keep: AuditKeep): Promise<AuditRecord> {
    return this.triage.appendAudit(entry, keep);
  }

  async pruneAudit(keep: AuditKeep): Promise<number> {
    return this.triage.pruneAudit(keep);
  }

  async listAudit(options: { beforeId?: number; limit: number }): Promise<AuditRecord[]> {
    return this.triage.listAudit(options);
  }

  async lastSeq(queueId: number): Promise<number> {
    const { rows } = await run<{ seq: number }>(this.direct, SQL.lastSeq, [queueId]);
    return rows[0]!.seq;
  }

  async recordQueueSamples(samples: QueueSample[]): Promise<void> {
    if (samples.length === 0) return;
    const columns = Object.keys(sampleRow(samples[0]!)) as Array<keyof SampleRow>;
    const rows = samples.map(sampleRow);
    // One statement for the whole set: a column array each, unnested into rows.
    await run(
      this.direct,
      insertSamples(columns),
      columns.map((column) => rows.map((row) => row[column])),
    );
  }

  async queueSamples(queue: string, since: number): Promise<QueueSample[]> {
    const { rows } = await run<SampleRow>(this.direct, SQL.samplesOfQueue, [queue, since]);
    return rows.map(toSample);
  }

  async deleteQueueSamplesBefore(time: number): Promise<number> {
    const { rowCount } = await run(this.direct, SQL.deleteSamplesBefore, [time]);
    return rowCount ?? 0;
  }

  async addQueueActivity(activity: QueueActivityCounts[]): Promise<void> {
    if (activity.length === 0) return;
    const columns = ACTIVITY_COLUMNS.map(([, key]) => activity.map((counts) => counts[key]));
    // One statement for every queue; a concurrent take either sees the whole add or none of it.
    await run(this.direct, SQL.addActivity, [activity.map((counts) => counts.queue), ...columns]);
  }

  async takeQueueActivity(): Promise<QueueActivityCounts[]> {
    const { rows } = await run<Record<string, number> & { queue: string }>(this.direct, SQL.takeActivity);
    return rows.map((row) => {
      const counts: QueueActivityCounts = { queue: row.queue, ...NO_ACTIVITY };
      for (const [column, key] of ACTIVITY_COLUMNS) counts[key] = row[column]!;
      return counts;
    });
  }

  async saveClusterState(name: string, value: string): Promise<void> {
    await run(this.direct, SQL.saveClusterState, [name, value]);
  }

  async clusterState(name: string): Promise<string | undefined> {
    const { rows } = await run<{ value: string }>(this.direct, SQL.clusterState, [name]);
    return rows[0]?.value;
  }

  async eventSourceMappings(): Promise<{ uuid: string; document: string }[]> {
    const { rows } = await run<{ uuid: string; document: string }>(this.direct, SQL.eventSourceMappings, []);
    return rows;
  }

  async saveEventSourceMapping(uuid: string, document: string): Promise<void> {
    await run(this.direct, SQL.saveEventSourceMapping, [uuid, document]);
  }

  async changeEventSourceMapping(
    uuid: string,
    change: (document: string) => string | undefined,
  ): Promise<string | undefined> {
    return this.transaction(async (db) => {
      const { rows } = await run<{ document: string }>(db, SQL.lockEventSourceMapping, [uuid]);
      const next = rows[0] && change(rows[0].document);
      if (next !== undefined) await run(db, SQL.updateEventSourceMapping, [uuid, next]);
      return next;
    });
  }

  /**
   * Nodes adding mappings take turns (a transaction-scoped advisory lock), so two creates of the same queue
   * and function at once, on one node or two, cannot both find none and both add theirs. The read after the
   * lock sees every add committed before it.
   */
  async addEventSourceMapping(
    uuid: string,
    document: string,
    conflicts: (document: string) => boolean,
  ): Promise<string | undefined> {
    return this.transaction(async (db) => {
      await run(db, SQL.advisoryLock, [MAPPING_ADD_LOCK]);
      const { rows } = await run<{ uuid: string; document: string }>(db, SQL.allEventSourceMappings, []);
      const conflict = rows.find((mapping) => conflicts(mapping.document));
      if (conflict) return conflict.uuid;
      await run(db, SQL.insertEventSourceMapping, [uuid, document]);
      return undefined;
    });
  }

  async deleteEventSourceMapping(uuid: string): Promise<void> {
    await run(this.direct, SQL.deleteEventSourceMapping, [uuid]);
  }

  async claimLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const { rowCount } = await run(this.direct, SQL.claimLease, [name, holder, ttlMs]);
    return (rowCount ?? 0) > 0;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await run(this.direct, SQL.releaseLease, [name, holder]);
  }

  /**
   * The bytes of the messages' bodies and attributes, and of the audit trail's rows. PostgreSQL compresses
   * large values and keeps the space of deleted rows for reuse, so its file sizes tell neither what is stored
   * nor when a purge made room. A scan of both tables (lengths come from the row headers, values are not
   * read); the service reads it at most once a second, and only with --max-stored-bytes.
   */
  async storedBytes(): Promise<number> {
    const { rows } = await run<{ bytes: number }>(this.direct, SQL.storedBytes);
    return rows[0]!.bytes;
  }

  async condition(): Promise<StoreCondition | undefined> {
    return this.connection.condition();
  }

  async close(): Promise<void> {
    await this.connection.close();
  }

  /** Resolves when no statement is under way; true when it had to wait for some. */
  idle(): Promise<boolean> {
    return this.connection.idle();
  }

  private transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.connection.transaction(work);
  }

  private track<T>(work: () => Promise<T>): Promise<T> {
    return this.connection.track(work);
  }

  private announce(db: Db, queueIds: Iterable<number>): Promise<void> {
    return this.connection.announce(db, queueIds);
  }
}
