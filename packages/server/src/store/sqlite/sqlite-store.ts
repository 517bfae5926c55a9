import { ActivityTally } from '../activity-tally.ts';
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
import { MemoryMessageTable } from '../memory/message-table.ts';
import type { MessageTable } from '../message-table.ts';
import { runNow } from '../plan.ts';
import {
  changeVisibilityPlan,
  deletePlan,
  expiryPlan,
  moveBatchPlan,
  purgePlan,
  rebuildGroups,
  receivePlan,
} from '../planner.ts';
import { type PublishSteps, publishPlan } from '../publish-plan.ts';
import {
  type MoveTaskRow,
  type QueueRow,
  type SampleRow,
  sampleRow,
  toMessage,
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
import type { WriteKind } from './connection.ts';
import { SqliteConnection } from './connection.ts';
import type { ConnectionOptions } from './options.ts';
import { IN_MEMORY } from './options.ts';
import { SqliteSteps } from './plan-steps.ts';
import type { Statements } from './statements.ts';
import { SqliteTopics } from './topics.ts';
import { inWrites, SqliteTriage } from './triage.ts';

export interface SqliteStoreOptions extends ConnectionOptions {
  /**
   * Rows of a standard queue's delivery state read per turn of the event loop when it is built (default
   * 20,000, about 50 ms on a small machine); tests make it small to interleave writes with the build.
   */
  warmUpRows?: number;
}

/**
 * The embedded SQLite store: one process, the database's only writer. Its writes are group commits of
 * connection.ts; the receive, the move batch and the groups' rows are decided by the shared plans over the
 * steps of plan-steps.ts.
 */
export class SqliteStore implements Store, TriageStore {
  private readonly connection: SqliteConnection;
  private readonly statements: Statements;
  /** The messages: in the database, or in memory with `--in-memory` (message-table.ts). */
  private readonly messages: MessageTable;
  /**
   * Queue records by name. Every request looks its queue up, and this process is the database's only writer,
   * so the cache is dropped exactly when a write changes a queue. Records handed out are never mutated.
   */
  private readonly queueCache = new Map<string, QueueRecord>();
  private readonly activity = new ActivityTally();
  private readonly triage: SqliteTriage;
  private readonly topics: SqliteTopics;
  private readonly publishSteps: PublishSteps;

  constructor(options: SqliteStoreOptions) {
    this.connection = new SqliteConnection(options, () => this.forgetCachedState());
    this.statements = this.connection.statements;
    this.messages =
      options.dataDir === IN_MEMORY
        ? new MemoryMessageTable(this.statements)
        : new SqliteSteps(this.statements, options.warmUpRows ?? 20_000);
    const db = this.connection.db;
    this.triage = new SqliteTriage(db);
    this.topics = new SqliteTopics(db);
    this.publishSteps = {
      ...this.messages.plan,
      ...this.topics.publishSteps,
      existingQueues: (queueIds) =>
        new Set(queueIds.filter((queueId) => this.statements.queueKind.get(queueId) !== undefined)),
    };
  }

  async createQueue(queue: NewQueue): Promise<QueueRecord> {
    return this.write('adds', () => {
      const row = this.statements.insertQueue.get({
        name: queue.name,
        fifo: queue.fifo ? 1 : 0,
        deduplicatesPerGroup: queue.deduplicatesPerGroup ? 1 : 0,
        attributes: JSON.stringify(queue.attributes),
        tags: JSON.stringify(queue.tags),
        now: queue.now,
      }) as QueueRow;
      this.statements.forgetDeletedQueue.run(queue.name);
      this.queueCache.delete(queue.name);
      return toQueue(row);
    });
  }

  async getQueue(name: string): Promise<QueueRecord | undefined> {
    const cached = this.queueCache.get(name);
    if (cached) return cached;
    const row = this.statements.queueByName.get(name) as QueueRow | undefined;
    if (!row) return undefined;
    const queue = toQueue(row);
    this.queueCache.set(name, queue);
    return queue;
  }

  async listQueues(options: { prefix?: string; afterName?: string; limit: number }): Promise<QueueRecord[]> {
    const rows = this.statements.listQueues.all({
      prefix: options.prefix ?? '',
      after: options.afterName ?? '',
      limit: options.limit,
    }) as QueueRow[];
    return rows.map(toQueue);
  }

  async updateQueue(id: number, changes: QueueChanges): Promise<QueueRecord | undefined> {
    return this.write('durable', () => {
      const current = this.statements.queueById.get(id) as QueueRow | undefined;
      if (!current) return undefined;
      const row = this.statements.updateQueue.get({
        id,
        attributes: changes.attributes ? JSON.stringify(changes.attributes) : current.attributes,
        tags: changes.tags ? JSON.stringify(changes.tags) : current.tags,
        now: changes.now,
      }) as QueueRow;
      if (changes.waitingDelayMs !== undefined) {
        this.messages.redelayWaiting(id, changes.waitingDelayMs);
        runNow(rebuildGroups(this.messages.plan, id));
      }
      this.queueCache.delete(current.name);
      return toQueue(row);
    });
  }

  async deleteQueue(id: number, now: number): Promise<void> {
    await this.write('durable', () => {
      const current = this.statements.queueById.get(id) as QueueRow | undefined;
      if (!current) return;
      this.messages.deleteQueue(id);
      this.statements.deleteQueue.run(id);
      this.statements.rememberDeletedQueue.run(current.name, now);
      this.queueCache.delete(current.name);
    });
  }

  async queueDeletedAt(name: string): Promise<number | undefined> {
    const row = this.statements.deletedQueue.get(name) as { deleted_at: number } | undefined;
    return row?.deleted_at;
  }

  async sendMessages(
    queueId: number,
    messages: NewMessage[],
    onVisible?: () => void,
  ): Promise<SentMessage[]> {
    return this.write('adds', onVisible, () =>
      runNow(sendPlan(this.messages.plan, queueId, messages, this.messages.isFifo(queueId))),
    );
  }

  // ---- Topics (TopicStore) ----------------------------------------------------------------------------

  async createTopic(topic: NewTopic): Promise<TopicRecord> {
    return this.write('durable', () => this.topics.createTopic(topic));
  }

  async getTopic(name: string): Promise<TopicRecord | undefined> {
    return this.topics.getTopic(name);
  }

  async listTopics(options: { afterName?: string; limit: number }): Promise<TopicRecord[]> {
    return this.topics.listTopics(options);
  }

  async updateTopic(name: string, changes: TopicChanges): Promise<TopicRecord | undefined> {
    return this.write('durable', () => this.topics.updateTopic(name, changes));
  }

  async deleteTopic(name: string): Promise<boolean> {
    return this.write('durable', () => this.topics.deleteTopic(name));
  }

  async createSubscription(subscription: NewSubscription): Promise<SubscriptionRecord | undefined> {
    return this.write('durable', () => this.topics.createSubscription(subscription));
  }

  async getSubscription(arn: string): Promise<SubscriptionRecord | undefined> {
    return this.topics.getSubscription(arn);
  }

  async listSubscriptions(options: {
    topicName?: string;
    afterArn?: string;
    limit: number;
  }): Promise<SubscriptionRecord[]> {
    return this.topics.listSubscriptions(options);
  }

  async updateSubscription(
    arn: string,
    attributes: Record<string, string>,
  ): Promise<SubscriptionRecord | undefined> {
    return this.write('durable', () => this.topics.updateSubscription(arn, attributes));
  }

  async deleteSubscription(arn: string): Promise<boolean> {
    return this.write('durable', () => this.topics.deleteSubscription(arn));
  }

  async publish(
    topicName: string,
    publications: Publication[],
    onVisible?: (queueIds: number[]) => void,
  ): Promise<PublishOutcome[] | undefined> {
    const touched = new Set<number>();
    return this.write(
      'adds',
      () => onVisible?.([...touched]),
      () => runNow(publishPlan(this.publishSteps, topicName, publications, touched)),
    );
  }

  async claimEndpointDeliveries(
    now: number,
    claimUntil: number,
    limit: number,
  ): Promise<EndpointDeliveryRecord[]> {
    return this.write('durable', () => this.topics.claimEndpointDeliveries(now, claimUntil, limit));
  }

  async finishEndpointDelivery(id: string): Promise<void> {
    await this.write('durable', () => this.topics.finishEndpointDelivery(id));
  }

  async retryEndpointDelivery(
    id: string,
    attempts: number,
    dueAt: number,
    lastError?: string,
  ): Promise<void> {
    await this.write('durable', () => this.topics.retryEndpointDelivery(id, attempts, dueAt, lastError));
  }

  async listEndpointDeliveries(subscriptionArn: string, limit: number): Promise<EndpointDeliveryRecord[]> {
    return this.topics.listEndpointDeliveries(subscriptionArn, limit);
  }

  async retryEndpointDeliveryNow(subscriptionArn: string, id: string, now: number): Promise<boolean> {
    return this.write('durable', () => this.topics.retryEndpointDeliveryNow(subscriptionArn, id, now));
  }

  async dropEndpointDelivery(
    subscriptionArn: string,
    id: string,
  ): Promise<EndpointDeliveryRecord | undefined> {
    return this.write('durable', () => this.topics.dropEndpointDelivery(subscriptionArn, id));
  }

  async browseMessages(
    queueId: number,
    options: { afterSeq: number; limit: number; now: number },
  ): Promise<StoredMessage[]> {
    return this.messages.page(queueId, options).map(toMessage);
  }

  async replayMessages(request: ReplayRequest): Promise<TriageOutcome[]> {
    // A replayed message is a new one in its queue: as durable as a send.
    return inWrites(request.seqs, (seqs) =>
      this.write('adds', () => seqs.map((seq) => runNow(triageReplayPlan(this.messages.plan, request, seq)))),
    );
  }

  async deleteMessagesBySeq(queueId: number, seqs: readonly number[], now: number): Promise<TriageOutcome[]> {
    return inWrites(seqs, (page) =>
      this.write('redeliverable', () =>
        page.map((seq) => runNow(triageDeletePlan(this.messages.plan, queueId, seq, now))),
      ),
    );
  }

  async appendAudit(entry: AuditEntry, keep: AuditKeep): Promise<AuditRecord> {
    return this.write('durable', () => this.triage.appendAudit(entry, keep));
  }

  async pruneAudit(keep: AuditKeep): Promise<number> {
    return this.write('durable', () => this.triage.pruneAudit(keep));
  }

  async listAudit(options: { beforeId?: number; limit: number }): Promise<AuditRecord[]> {
    return this.triage.listAudit(options);
  }

  async receiveMessages(request: ReceiveRequest): Promise<ReceiveResult> {
    // No await when the delivery state is whole: a long poll woken by a send's commit (run from the send's
    // onApplied) then queues its write at once, and it joins that commit instead of waiting for the next.
    const warming = this.messages.warmUp(request.queueId);
    if (warming) await warming;
    return this.write('redeliverable', () => {
      const kinds = {
        fifo: this.messages.isFifo(request.queueId),
        deadLetterFifo: request.deadLetter !== undefined && this.messages.isFifo(request.deadLetter.queueId),
      };
      return runNow(receivePlan(this.messages.plan, request, kinds));
    });
  }

  async deleteMessage(queueId: number, receipt: MessageReceipt, check: ReceiptCheck): Promise<DeleteOutcome> {
    const [outcome] = await this.deleteMessages(queueId, [receipt], check);
    return outcome!;
  }

  async deleteMessages(
    queueId: number,
    receipts: ReadonlyArray<MessageReceipt>,
    check: ReceiptCheck,
  ): Promise<DeleteOutcome[]> {
    return this.write('redeliverable', () =>
      runNow(deletePlan(this.messages.plan, queueId, receipts, check, this.messages.isFifo(queueId))),
    );
  }

  async changeVisibility(request: ChangeVisibilityRequest): Promise<ChangeVisibilityOutcome> {
    return this.write('redeliverable', () =>
      runNow(changeVisibilityPlan(this.messages.plan, request, this.messages.isFifo(request.queueId))),
    );
  }

  async purgeQueue(queueId: number, now: number, windowMs: number): Promise<boolean> {
    return this.write('durable', () => {
      const purged = runNow(purgePlan(this.messages.plan, queueId, now, windowMs));
      // The queue's record carries when it was last purged.
      if (purged) this.queueCache.clear();
      return purged;
    });
  }

  async countMessages(queueId: number, now: number): Promise<MessageCounts> {
    await this.messages.warmUp(queueId);
    return this.messages.counts(queueId, now);
  }

  async nextVisibleAt(queueId: number, now: number): Promise<number | undefined> {
    await this.messages.warmUp(queueId);
    return this.messages.nextVisibleAt(queueId, now);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    return this.write('redeliverable', () => runNow(expiryPlan(this.messages.plan, now, limit)));
  }

  async nextExpiryAt(queueId: number, now: number): Promise<number | undefined> {
    return this.messages.nextExpiryAt(queueId, now);
  }

  async createMoveTask(task: NewMoveTask): Promise<MoveTaskRecord | undefined> {
    return this.write('durable', () => {
      const row = this.statements.insertMoveTask.get({
        handle: task.handle,
        source_arn: task.sourceArn,
        source_queue_id: task.sourceQueueId,
        destination_arn: task.destinationArn ?? null,
        max_per_second: task.maxPerSecond ?? null,
        to_move: task.toMove,
        up_to_seq: task.upToSeq,
        started_at: task.startedAt,
      }) as MoveTaskRow | undefined;
      return row && toMoveTask(row);
    });
  }

  async listMoveTasks(sourceArn: string, limit: number): Promise<MoveTaskRecord[]> {
    return (this.statements.moveTasksOfSource.all(sourceArn, limit) as MoveTaskRow[]).map(toMoveTask);
  }

  async activeMoveTasks(): Promise<MoveTaskRecord[]> {
    return (this.statements.activeMoveTasks.all() as MoveTaskRow[]).map(toMoveTask);
  }

  async getMoveTask(handle: string): Promise<MoveTaskRecord | undefined> {
    const row = this.statements.moveTaskByHandle.get(handle) as MoveTaskRow | undefined;
    return row && toMoveTask(row);
  }

  async setMoveTaskStatus(handle: string, change: MoveTaskChange): Promise<MoveTaskRecord | undefined> {
    return this.write('durable', () => {
      const row = this.statements.setMoveTaskStatus.get({
        handle,
        status: change.status,
        failure_reason: change.failureReason ?? null,
        now: change.now,
      }) as MoveTaskRow | undefined;
      return row && toMoveTask(row);
    });
  }

  async moveMessages(request: MoveRequest): Promise<MoveOutcome> {
    return this.write('durable', () => runNow(moveBatchPlan(this.messages.plan, request)));
  }

  async lastSeq(queueId: number): Promise<number> {
    return this.messages.lastSeq(queueId);
  }

  async recordQueueSamples(samples: QueueSample[]): Promise<void> {
    // History waits while the disk is full: the room left is for the writes that free space.
    if (samples.length === 0 || this.connection.diskFull) return;
    // History only: losing the last samples in a power cut loses no message.
    await this.write('redeliverable', () => {
      for (const sample of samples) this.statements.insertSample.run(sampleRow(sample));
    });
  }

  async queueSamples(queue: string, since: number): Promise<QueueSample[]> {
    return (this.statements.samplesOfQueue.all(queue, since) as SampleRow[]).map(toSample);
  }

  async deleteQueueSamplesBefore(time: number): Promise<number> {
    return this.write('redeliverable', () => this.statements.deleteSamplesBefore.run(time).changes);
  }

  // One process shares nothing with other nodes: what nodes share waits in memory for this one.
  async addQueueActivity(activity: QueueActivityCounts[]): Promise<void> {
    for (const { queue, ...counts } of activity) this.activity.add(queue, counts);
  }

  async takeQueueActivity(): Promise<QueueActivityCounts[]> {
    return this.activity.take();
  }

  // Kept in the database so that a restarted server goes on from its alarm states instead of announcing
  // them again; a save lost in a power cut only repeats a notification, so it waits for the next fsync.
  async saveClusterState(name: string, value: string): Promise<void> {
    await this.write('redeliverable', () => this.statements.saveClusterState.run(name, value));
  }

  async clusterState(name: string): Promise<string | undefined> {
    return (this.statements.clusterState.get(name) as { value: string } | undefined)?.value;
  }

  async eventSourceMappings(): Promise<{ uuid: string; document: string }[]> {
    return this.statements.eventSourceMappings.all() as { uuid: string; document: string }[];
  }

  // A mapping is configuration a client was told was made: durable as a queue is.
  async saveEventSourceMapping(uuid: string, document: string): Promise<void> {
    await this.write('durable', () => this.statements.saveEventSourceMapping.run(uuid, document));
  }

  async changeEventSourceMapping(
    uuid: string,
    change: (document: string) => string | undefined,
  ): Promise<string | undefined> {
    return this.write('durable', () => {
      const kept = (this.statements.eventSourceMappings.all() as { uuid: string; document: string }[]).find(
        (mapping) => mapping.uuid === uuid,
      );
      const next = kept && change(kept.document);
      if (next !== undefined) this.statements.saveEventSourceMapping.run(uuid, next);
      return next;
    });
  }

  // The check and the insert run in one synchronous write: no other request comes between them.
  async addEventSourceMapping(
    uuid: string,
    document: string,
    conflicts: (document: string) => boolean,
  ): Promise<string | undefined> {
    return this.write('durable', () => {
      const kept = this.statements.eventSourceMappings.all() as { uuid: string; document: string }[];
      const conflict = kept.find((mapping) => conflicts(mapping.document));
      if (conflict) return conflict.uuid;
      this.statements.saveEventSourceMapping.run(uuid, document);
      return undefined;
    });
  }

  async deleteEventSourceMapping(uuid: string): Promise<void> {
    await this.write('durable', () => this.statements.deleteEventSourceMapping.run(uuid));
  }

  async reset(): Promise<void> {
    await this.write('durable', () => {
      for (const statement of this.statements.emptyTables) statement.run();
      this.forgetCachedState();
      this.messages.reset();
    });
    this.activity.clear();
  }

  async storedBytes(): Promise<number> {
    return (await this.connection.storedBytes()) + this.messages.bytesInMemory();
  }

  async condition(): Promise<StoreCondition | undefined> {
    return this.connection.condition();
  }

  async close(): Promise<void> {
    await this.connection.close();
  }

  /** Queues `run` for the next group commit (connection.ts). */
  private write<T>(kind: WriteKind, run: () => T): Promise<T>;
  private write<T>(kind: WriteKind, onApplied: (() => void) | undefined, run: () => T): Promise<T>;
  private write<T>(kind: WriteKind, ...rest: [() => T] | [(() => void) | undefined, () => T]): Promise<T> {
    return rest.length === 1
      ? this.connection.write(kind, rest[0])
      : this.connection.write(kind, rest[0], rest[1]);
  }

  /** Drops what memory learned of the tables: when a transaction is rolled back, or before a reset. */
  private forgetCachedState(): void {
    this.queueCache.clear();
    this.messages.forget();
  }
}
