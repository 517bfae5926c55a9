import { accessSync, closeSync, constants, fdatasync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type Database from 'better-sqlite3';
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
import { StoreUnavailableError, UNAVAILABLE_CONDITIONS } from '../contract.ts';
import { runNow } from '../plan.ts';
import {
  type AttemptClaims,
  moveBatchPlan,
  type PlanSteps,
  rebuildGroups,
  receivePlan,
  refreshGroup,
  refreshGroupsOf,
} from '../planner.ts';
import { type MessageState, receiptRefusal, visibilityChangeRefusal } from '../receipts.ts';
import {
  type MessageRow,
  type MoveTaskRow,
  newMessageRow,
  type QueueRow,
  type SampleRow,
  sampleRow,
  toMoveTask,
  toQueue,
  toSample,
} from '../rows.ts';
import type {
  AuditEntry,
  AuditKeep,
  AuditRecord,
  ReplayRequest,
  TriageOutcome,
  TriageStore,
} from '../triage.ts';
import { DeliveryState } from './delivery-state.ts';
import { DiskReserve, fileBytes } from './disk-reserve.ts';
import { openDatabase } from './native-binding.ts';
import { MIGRATIONS } from './schema.ts';
import { prepareStatements, type Statements } from './statements.ts';
import { SqliteTopics } from './topics.ts';
import { inWrites, SqliteTriage } from './triage.ts';

/**
 * How much a write may risk for speed (docs/guide/durability.md has the table, as measured):
 * - `full`: every commit is fsynced (WAL, synchronous=FULL) before its requests are answered.
 * - `durable` (default): commits that could lose an acknowledged message or queue change (sends, queue
 *   changes, purges) are fsynced; commits of only receives, visibility changes, deletes and expiry are
 *   written to the WAL but fsynced with the next durable commit or checkpoint. A power cut can undo those,
 *   which at worst delivers a message again (at-least-once, as SQS) and never loses one; kill -9 undoes nothing.
 * - `normal`: nothing fsynced before the answer (synchronous=NORMAL); survives kill -9, a power cut may lose
 *   the last acknowledged sends.
 * - `off`: no fsync at all (synchronous=OFF); survives kill -9, a power cut may corrupt recent data.
 */
export type Durability = 'full' | 'durable' | 'normal' | 'off';

/**
 * Whether losing a write in a power cut would lose something acknowledged (`durable`), or only cause a
 * redelivery (`redeliverable`). `adds` is durable and adds data (sends, new queues): what fills a disk, so it
 * is refused while the disk is full, and the room left goes to the writes that free space.
 */
type WriteKind = 'adds' | 'durable' | 'redeliverable';

/** The reserve is the default's 64 MiB: twice the WAL's size at a checkpoint (8,192 pages of 4 KiB). */
export const DEFAULT_DISK_RESERVE_BYTES = 64 * 1024 * 1024;
/** Sends and queue changes fsynced before the answer (docs/decisions/durable-default.md). */
export const DEFAULT_DURABILITY: Durability = 'durable';
/** Room the disk must have besides the reserve before sends resume after it was full, so they do not flap. */
const ROOM_TO_RESUME_BYTES = 1024 * 1024;

export interface SqliteStoreOptions {
  /** Data directory; the database is `sluice.db` inside it. `:memory:` for a throwaway store. */
  dataDir: string;
  durability?: Durability;
  /**
   * Bytes held back in the data directory (the file `sluice.reserve`) to recover from a full disk with. Default
   * 0, none; `sluice serve` passes DEFAULT_DISK_RESERVE_BYTES unless `--disk-reserve-bytes` says otherwise.
   */
  diskReserveBytes?: number;
  /**
   * Rows of a standard queue's delivery state read per turn of the event loop when it is built (default
   * 20,000, about 50 ms on a small machine); tests make it small to interleave writes with the build.
   */
  warmUpRows?: number;
}

interface PendingWrite {
  kind: WriteKind;
  run: () => unknown;
  /** Runs inside the transaction right after `run` succeeded; writes it queues join the same commit. */
  onApplied: (() => void) | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The embedded SQLite store. better-sqlite3 is synchronous, so writes are queued and run together in one
 * transaction per turn of the event loop (group commit), and no caller is answered before its write is
 * committed.
 *
 * Commits run with synchronous=NORMAL, which keeps the database consistent across a power cut, and the
 * fsync that makes a commit durable is done here, asynchronously on libuv's thread pool (fdatasync of the
 * WAL file, which is what synchronous=FULL would do inside the commit). The event loop keeps serving
 * requests while the disk syncs, and every commit made meanwhile shares the next fsync.
 */
export class SqliteStore implements Store, TriageStore {
  private readonly db: Database.Database;
  private pending: PendingWrite[] = [];
  private flushScheduled = false;
  private readonly statements: Statements;
  /**
   * Queue records by name. Every request looks its queue up, and this process is the database's only writer,
   * so the cache is dropped exactly when a write changes a queue. Records handed out are never mutated.
   */
  private readonly queueCache = new Map<string, QueueRecord>();
  private readonly durability: Durability;
  private readonly dbFile: string | undefined;
  private readonly walFile: string | undefined;
  private walFd: number | undefined;
  /** Writes committed but waiting for an fsync started after their commit. */
  private awaitingSync: Array<{ done: () => void; fail: (error: unknown) => void }> = [];
  private syncing: Promise<void> | undefined;
  private readonly reserve: DiskReserve | undefined;
  /**
   * Why the last write failed for a reason of the machine, for `condition()`. A read-only or failing disk is
   * forgotten at the next commit; a full disk once the reserve is taken back (`resumeAfterFullDisk`).
   */
  private unavailable: StoreUnavailableError['reason'] | undefined;
  /** Whether each queue id is FIFO; a queue's kind never changes. */
  private readonly fifoById = new Map<number, boolean>();
  /** Increases with every fair-queue tenant turn; tenants with the lowest last turn are served first. */
  private tenantTurn: number;
  /**
   * Queues seen to have no fair-queue tenant, so a receive or send on an ordinary queue skips the tenant
   * query (one more SQLite statement per receive and per send batch). Only a query that found none adds a
   * queue; noting a tenant removes it, and any rollback clears the set, so a stale entry never hides one.
   */
  private readonly queuesWithoutTenants = new Set<number>();
  private readonly activity = new ActivityTally();
  /**
   * Per queue, a number the queue's in-flight count cannot exceed: the last count read, plus every message
   * put in flight since. Only claims, and visibility changes through a lapsed handle, put a message in flight
   * (dead-letter and move-task writes leave it visible or never received), and time only takes messages out,
   * so while the bound is under the limit a receive skips the count. Any rollback clears it (a rolled-back claim would
   * only have made it too high, but a rolled-back count is no longer a count).
   */
  private readonly inFlightBound = new Map<number, number>();
  /**
   * Standard queues' delivery states (delivery-state.ts), built from the table on a queue's first receive,
   * count or wake look-up. FIFO and fair queues have none: they take their messages by group and by tenant in
   * SQL. Every write to a queue's messages updates its state exactly or drops it, to be built again.
   */
  private readonly deliveryStates = new Map<number, DeliveryState>();
  private readonly warmUpRows: number;
  private readonly triage: SqliteTriage;
  private readonly topics: SqliteTopics;

  constructor(options: SqliteStoreOptions) {
    const file = options.dataDir === ':memory:' ? ':memory:' : join(ensureDir(options.dataDir), 'sluice.db');
    this.db = openDatabase(file);
    this.warmUpRows = options.warmUpRows ?? 20_000;
    // One server owns a data directory: the exclusive lock refuses a second one at start (instead of two
    // processes interleaving claims), and skips the shared-memory index, which makes each commit cheaper.
    this.db.pragma('locking_mode = EXCLUSIVE');
    try {
      this.db.pragma('journal_mode = WAL');
    } catch (error) {
      this.db.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') {
        throw new Error(
          `the data directory ${options.dataDir} is in use by another Sluice server (database is locked)`,
        );
      }
      // SQLite says only "disk I/O error" when WAL mode cannot create its files; name the real cause.
      if (file !== ':memory:' && !isWritable(options.dataDir)) {
        throw new Error(
          `the data directory ${options.dataDir} is not writable (read-only filesystem or permissions); Sluice must write there to open its database`,
        );
      }
      throw error;
    }
    this.durability = options.durability ?? DEFAULT_DURABILITY;
    this.db.pragma(`synchronous = ${this.durability === 'off' ? 'OFF' : 'NORMAL'}`);
    this.dbFile = file === ':memory:' ? undefined : file;
    this.walFile = file === ':memory:' ? undefined : `${file}-wal`;
    // In memory means nothing on disk, SQLite's temporary files (statement journals, big sorts) included.
    if (file === ':memory:') this.db.pragma('temp_store = MEMORY');
    // A 32 MiB page cache keeps the hot end of big queues in memory while RSS stays bounded; checkpoints every
    // 8,192 pages (32 MiB of WAL) instead of 1,000 mean fewer of the fsyncs a checkpoint makes on the event loop.
    this.db.pragma('cache_size = -32768');
    this.db.pragma('wal_autocheckpoint = 8192');
    migrate(this.db);
    this.statements = prepareStatements(this.db);
    this.triage = new SqliteTriage(this.db, {
      removeRow: (row) => {
        this.deleteRow(row.seq);
        if (row.group_id !== null && this.isFifo(row.queue_id))
          runNow(refreshGroup(this.steps, row.queue_id, row.group_id));
      },
      insertMessage: (queueId, message) => this.insertMessage(queueId, message),
    });
    this.topics = new SqliteTopics(this.db, {
      // A queue deleted since the publisher looked it up receives nothing (as if deleted just before).
      sendInWrite: (queueId, messages) =>
        this.statements.queueById.get(queueId) === undefined ? [] : this.sendInWrite(queueId, messages),
    });
    this.tenantTurn = (this.statements.lastTenantTurn.get() as { turn: number }).turn;
    if (file !== ':memory:') {
      this.reserve = new DiskReserve(options.dataDir, options.diskReserveBytes ?? 0);
      if (!this.resumeAfterFullDisk()) this.unavailable = 'full';
    }
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
        this.statements.redelayWaiting.run(changes.waitingDelayMs, id);
        this.deliveryStates.delete(id);
        runNow(rebuildGroups(this.steps, id));
      }
      this.queueCache.delete(current.name);
      return toQueue(row);
    });
  }

  async deleteQueue(id: number, now: number): Promise<void> {
    await this.write('durable', () => {
      const current = this.statements.queueById.get(id) as QueueRow | undefined;
      if (!current) return;
      this.statements.deleteQueueMessages.run(id);
      for (const statement of this.statements.forgetQueueState) statement.run(id);
      this.statements.deleteQueue.run(id);
      this.fifoById.delete(id);
      this.inFlightBound.delete(id);
      this.deliveryStates.delete(id);
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
    return this.write('adds', onVisible, () => this.sendInWrite(queueId, messages));
  }

  /** sendMessages' work, inside a write: a send, or a topic's delivery into one queue. */
  private sendInWrite(queueId: number, messages: NewMessage[]): SentMessage[] {
    return messages.map((message) => {
      const deduplication = message.deduplication;
      if (deduplication) {
        const original = this.statements.deduplicated.get(
          queueId,
          deduplication.scope,
          deduplication.id,
          message.sentAt,
        ) as { message_id: string; seq: number } | undefined;
        if (original) return { messageId: original.message_id, seq: original.seq, duplicate: true };
      }
      const seq = this.insertMessage(queueId, message);
      if (deduplication) {
        this.statements.rememberDeduplication.run(
          queueId,
          deduplication.scope,
          deduplication.id,
          message.messageId,
          seq,
          deduplication.expiresAt,
        );
      }
      return { messageId: message.messageId, seq, duplicate: false };
    });
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
      () => this.topics.publish(topicName, publications, touched),
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

  /** Inserts a new message with its FIFO group or fair-queue tenant; returns its seq. */
  private insertMessage(queueId: number, message: NewMessage): number {
    const fifo = this.isFifo(queueId);
    const row = newMessageRow(message);
    // In a fair queue, messages without a group are the tenant ''.
    const groupId = message.groupId ?? (!fifo && this.hasTenants(queueId) ? '' : null);
    const seq = Number(
      this.statements.insertMessage.run(
        queueId,
        row.message_id,
        row.body,
        row.message_attributes,
        row.system_attributes,
        row.md5_of_body,
        row.md5_of_message_attributes,
        row.md5_of_system_attributes,
        row.sender_id,
        row.sent_at,
        row.visible_at,
        row.expires_at,
        groupId,
        fifo ? null : groupId,
        row.deduplication_id,
      ).lastInsertRowid,
    );
    this.deliveryAdded(queueId, seq, row.visible_at, row.expires_at, row.sent_at);
    if (message.groupId !== undefined) {
      // A FIFO group with messages already has its row, and its oldest message is not this one.
      if (fifo) this.statements.insertGroupIfAbsent.run(queueId, message.groupId, message.visibleAt);
      else this.noteTenant(queueId, message.groupId);
    }
    return seq;
  }

  async browseMessages(
    queueId: number,
    options: { afterSeq: number; limit: number; now: number },
  ): Promise<StoredMessage[]> {
    return this.triage.browse(queueId, options);
  }

  async replayMessages(request: ReplayRequest): Promise<TriageOutcome[]> {
    // A replayed message is a new one in its queue: as durable as a send.
    return inWrites(request.seqs, (seqs) =>
      this.write('adds', () => seqs.map((seq) => this.triage.replay(request, seq))),
    );
  }

  async deleteMessagesBySeq(queueId: number, seqs: readonly number[], now: number): Promise<TriageOutcome[]> {
    return inWrites(seqs, (page) =>
      this.write('redeliverable', () => page.map((seq) => this.triage.delete(queueId, seq, now))),
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
    const warming = this.warmUp(request.queueId);
    if (warming) await warming;
    return this.write('redeliverable', () => {
      const kinds = {
        fifo: this.isFifo(request.queueId),
        deadLetterFifo: request.deadLetter !== undefined && this.isFifo(request.deadLetter.queueId),
      };
      return runNow(receivePlan(this.steps, request, kinds));
    });
  }

  /** The statements the shared plans (planner.ts) decide with, inside the open transaction. */
  private readonly steps: PlanSteps = {
    inFlightUpperBound: (queueId, now, limit) => {
      const delivery = this.deliveryOf(queueId);
      if (delivery) return delivery.inFlight(now);
      const bound = this.inFlightBound.get(queueId);
      if (bound !== undefined && bound < limit) return bound;
      // Counting invisible index entries needs no row reads.
      const invisible = (this.statements.countInvisible.get(queueId, now, limit) as { n: number }).n;
      if (invisible < limit) this.inFlightBound.set(queueId, invisible);
      return invisible;
    },
    countInFlight: (queueId, now, limit) => {
      const delivery = this.deliveryOf(queueId);
      if (delivery) return delivery.inFlight(now);
      const inFlight = (this.statements.countInFlight.get(queueId, now, limit) as { n: number }).n;
      // At the limit the count stopped early, so it bounds nothing: count again next time.
      if (inFlight < limit) this.inFlightBound.set(queueId, inFlight);
      else this.inFlightBound.delete(queueId);
      return inFlight;
    },
    visible: (queueId, now, limit) => {
      const delivery = this.deliveryOf(queueId);
      if (!delivery) return this.statements.selectVisible.all(queueId, now, now, limit);
      return this.rowsInOrder(delivery.visibleSeqs(now, limit));
    },
    visibleOfTenant: (queueId, tenant, now, limit) =>
      this.statements.selectVisibleOfTenant.all(queueId, tenant, now, now, limit),
    tenantsToServe: (queueId, limit) =>
      this.hasTenants(queueId)
        ? (this.statements.leastRecentlyServedTenants.all(queueId, limit) as Array<{ tenant: string }>).map(
            (row) => row.tenant,
          )
        : [],
    serveTenant: (queueId, tenant) => {
      this.statements.serveTenant.run(++this.tenantTurn, queueId, tenant);
    },
    tenantHasMessages: (queueId, tenant) =>
      this.statements.tenantHasMessages.get(queueId, tenant) !== undefined,
    forgetTenant: (queueId, tenant) => {
      this.statements.forgetTenant.run(queueId, tenant);
    },
    noteTenant: (queueId, tenant) => this.noteTenant(queueId, tenant),
    joinTenantless: (queueId, seq) => {
      this.statements.joinTenantlessRow.run(seq);
      this.statements.insertTenant.run(queueId, '');
    },
    hasTenants: (queueId) => this.hasTenants(queueId),
    // The groups taken are few (the plan asks for one first): read past them rather than list them in SQL.
    availableGroups: (queueId, now, limit, taken) =>
      this.statements.availableGroups
        .all(queueId, now, limit + taken.length)
        .filter((groupId) => !taken.includes(groupId))
        .slice(0, limit),
    groupMessages: (queueId, groupId, limit) => this.statements.groupInOrder.all(queueId, groupId, limit),
    // One writer: nothing to lock against.
    lockGroup: () => {},
    groupHeadVisibleAt: (queueId, groupId) =>
      (this.statements.groupHead.get(queueId, groupId) as { visible_at: number } | undefined)?.visible_at,
    setGroupAvailableAt: (queueId, groupId, at) => {
      this.statements.upsertGroup.run(queueId, groupId, at);
    },
    addGroupIfAbsent: (queueId, groupId, at) => {
      this.statements.insertGroupIfAbsent.run(queueId, groupId, at);
    },
    forgetGroup: (queueId, groupId) => {
      this.statements.forgetGroup.run(queueId, groupId);
    },
    rebuildGroupRows: (queueId) => {
      this.statements.forgetGroups.run(queueId);
      this.statements.rebuildGroups.run(queueId);
    },
    isFifo: (queueId) => this.isFifo(queueId),
    writeClaims: (request, claimed) => {
      for (const message of claimed) {
        this.statements.claim.run(
          message.visibleAt,
          message.receiveCount,
          message.firstReceivedAt,
          message.receiptToken,
          message.deliveryStartedAt,
          message.seq,
        );
        this.notePutInFlight(request.queueId);
      }
      const delivery = this.deliveryStates.get(request.queueId);
      if (delivery) for (const message of claimed) delivery.claim(message.seq, message.visibleAt);
    },
    moveToDeadLetter: (seq, deadLetter, now) => {
      const source = this.statements.queueOfMessage.get(seq) as number | undefined;
      const moved = this.statements.moveToDeadLetter.get({
        seq,
        queue_id: deadLetter.queueId,
        now,
        source_arn: deadLetter.sourceArn,
        reset_sent_at: deadLetter.resetSentAt ? 1 : 0,
        retention_ms: deadLetter.retentionMs,
      }) as { sent_at: number; expires_at: number; receive_count: number };
      if (source !== undefined) this.deliveryStates.get(source)?.remove(seq);
      this.deliveryStates
        .get(deadLetter.queueId)
        ?.add(seq, now, moved.expires_at, moved.sent_at, moved.receive_count > 0);
    },
    attemptClaims: (queueId, attemptId, now) => {
      const record = this.statements.attemptClaims.get(queueId, attemptId, now) as
        | { claims: string }
        | undefined;
      return record && (JSON.parse(record.claims) as AttemptClaims);
    },
    reclaim: (queueId, claims, visibleUntil) => {
      const rows: MessageRow[] = [];
      for (const [seq, receiveCount] of claims) {
        const row = this.statements.messageAtReceive.get(seq, queueId, receiveCount);
        if (!row) continue;
        this.statements.setVisibleAt.run(visibleUntil, seq);
        this.notePutInFlight(queueId);
        rows.push({ ...row, visible_at: visibleUntil });
      }
      return rows;
    },
    rememberAttempt: (queueId, attempt, claims) => {
      this.statements.rememberAttempt.run(queueId, attempt.id, JSON.stringify(claims), attempt.expiresAt);
    },
    lockMoveTask: (handle) => this.statements.moveTaskByHandle.get(handle) as MoveTaskRow | undefined,
    movable: (queueId, options) =>
      (options.fifo ? this.statements.movableOfFifo : this.statements.movable).all({
        queue_id: queueId,
        up_to_seq: options.upToSeq,
        now: options.now,
        limit: options.limit,
      }),
    insertMoved: (seq, destination, moved) => {
      const inserted = this.statements.insertMoved.run({
        seq,
        queue_id: destination.queueId,
        message_id: moved.messageId,
        now: moved.now,
        visible_at: destination.visibleAt,
        expires_at: destination.expiresAt,
        group_id: moved.groupId,
        tenant: destination.fifo ? null : moved.groupId,
      });
      const newSeq = Number(inserted.lastInsertRowid);
      this.deliveryAdded(
        destination.queueId,
        newSeq,
        destination.visibleAt,
        destination.expiresAt,
        moved.now,
      );
    },
    deleteMessage: (seq) => this.deleteRow(seq),
    addMoved: (handle, count) => this.statements.addMoved.get(count, handle) as MoveTaskRow,
  };

  private isFifo(queueId: number): boolean {
    let fifo = this.fifoById.get(queueId);
    if (fifo === undefined) {
      const row = this.statements.queueKind.get(queueId) as { fifo: number } | undefined;
      fifo = row?.fifo === 1;
      if (row) this.fifoById.set(queueId, fifo);
    }
    return fifo;
  }

  /** Whether the queue is a fair queue (some message named a tenant), answered from memory when it is not. */
  private hasTenants(queueId: number): boolean {
    if (this.queuesWithoutTenants.has(queueId)) return false;
    if (this.statements.anyTenant.get(queueId) !== undefined) return true;
    this.queuesWithoutTenants.add(queueId);
    return false;
  }

  /**
   * A fair queue's tenants, and '' for its messages without a group, once any message names a tenant; the
   * queue's messages without a group join the tenant '' then.
   */
  private noteTenant(queueId: number, tenant: string): void {
    this.queuesWithoutTenants.delete(queueId);
    // A fair queue takes its messages by tenant, in SQL.
    this.deliveryStates.delete(queueId);
    this.statements.insertTenant.run(queueId, tenant);
    if (this.statements.insertTenant.run(queueId, '').changes > 0)
      this.statements.joinTenantless.run(queueId);
  }

  /**
   * The queue's whole delivery state, the rest of its rows read now if need be; undefined for FIFO and fair
   * queues. Receives, counts and wakes first let `warmUp` read it in parts, so this reads nothing for them.
   */
  private deliveryOf(queueId: number): DeliveryState | undefined {
    this.loadDelivery(queueId, -1);
    return this.deliveryStates.get(queueId);
  }

  /**
   * Reads the queue's delivery state in parts of `warmUpRows` rows, a turn of the event loop each, so that a
   * queue of millions of messages (seconds of reading after a restart) does not hold every other request,
   * `/health` included. Writes between the parts keep the state exact: see DeliveryState.loadedUpTo.
   * Undefined when the state is whole after the first part (almost always), so a caller need not wait a
   * microtask: a receive woken inside a send's transaction then joins that commit.
   */
  private warmUp(queueId: number): Promise<void> | undefined {
    if (this.loadDelivery(queueId, this.warmUpRows)) return undefined;
    return (async () => {
      do await new Promise<void>((resolve) => setImmediate(resolve));
      while (!this.loadDelivery(queueId, this.warmUpRows));
    })();
  }

  /**
   * Reads up to `limit` more rows (-1: all) of the queue's delivery state, starting it if need be; true once
   * it holds the whole queue, or for a FIFO or fair queue, which has none.
   */
  private loadDelivery(queueId: number, limit: number): boolean {
    let delivery = this.deliveryStates.get(queueId);
    if (delivery?.complete) return true;
    if (!delivery) {
      if (this.isFifo(queueId) || this.hasTenants(queueId)) return true;
      delivery = DeliveryState.loading();
      this.deliveryStates.set(queueId, delivery);
    }
    let read = 0;
    for (const row of this.statements.deliveryRows.iterate(queueId, delivery.loadedUpTo, limit)) {
      const [seq, visibleAt, expiresAt, sentAt, received] = row as [number, number, number, number, number];
      delivery.load(seq, visibleAt, expiresAt, sentAt, received === 1);
      read++;
    }
    if (limit >= 0 && read === limit) return false;
    delivery.loadedAll();
    return true;
  }

  /** A new row of the queue: its delivery state, if built, takes it. */
  private deliveryAdded(
    queueId: number,
    seq: number,
    visibleAt: number,
    expiresAt: number,
    sentAt: number,
  ): void {
    this.deliveryStates.get(queueId)?.add(seq, visibleAt, expiresAt, sentAt, false);
  }

  /** Deletes a message by row id, and from its queue's delivery state. */
  private deleteRow(seq: number): void {
    const deleted = this.statements.deleteBySeq.get(seq) as { queue_id: number } | undefined;
    if (deleted) this.deliveryStates.get(deleted.queue_id)?.remove(seq);
  }

  /**
   * The rows of `seqs`, in that order, each read only when the receive asks for it: a receive that stops
   * early (its answer full, or no room left for a large message) reads no row it does not take.
   */
  private *rowsInOrder(seqs: readonly number[]): Generator<MessageRow> {
    for (const seq of seqs) {
      const row = this.statements.rowBySeq.get(seq);
      if (row) yield row;
    }
  }

  /** Called for every message a receive or a visibility change puts (or puts back) in flight. */
  private notePutInFlight(queueId: number): void {
    const bound = this.inFlightBound.get(queueId);
    if (bound !== undefined) this.inFlightBound.set(queueId, bound + 1);
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
    return this.write('redeliverable', () => {
      const groups = new Set<string>();
      const outcomes = receipts.map((receipt) => this.deleteOne(queueId, receipt, check, groups));
      // Once per FIFO group the batch deleted from, not once per message: a group's row needs only its state
      // after the batch's last delete.
      for (const groupId of groups) runNow(refreshGroup(this.steps, queueId, groupId));
      return outcomes;
    });
  }

  /** Deletes by receipt; a FIFO message's group goes into `groups`, whose rows the caller refreshes. */
  private deleteOne(
    queueId: number,
    receipt: MessageReceipt,
    check: ReceiptCheck,
    groups: Set<string>,
  ): DeleteOutcome {
    const byReceipt = {
      seq: receipt.seq,
      queue_id: queueId,
      token: receipt.receiptToken,
      receive_count: receipt.receiveCount,
      rule: check.rule,
      now: check.now,
    };
    if (this.isFifo(queueId)) {
      const deleted = this.statements.deleteGroupMessage.get(byReceipt);
      if (deleted) {
        if (deleted.group_id !== null) groups.add(deleted.group_id);
        return 'deleted';
      }
    } else if (this.statements.deleteMessage.run(byReceipt).changes > 0) {
      this.deliveryStates.get(queueId)?.remove(receipt.seq);
      return 'deleted';
    }
    const row = this.statements.messageStateBySeq.get(receipt.seq, queueId) as MessageState | undefined;
    return row ? (receiptRefusal(row, receipt, check) ?? 'missing') : 'missing';
  }

  async changeVisibility(request: ChangeVisibilityRequest): Promise<ChangeVisibilityOutcome> {
    return this.write('redeliverable', () => {
      const { seq } = request.receipt;
      const row = this.statements.messageStateBySeq.get(seq, request.queueId) as MessageState | undefined;
      if (!row) return 'missing';
      const refusal = visibilityChangeRefusal(row, request);
      if (refusal) return refusal;
      this.statements.setVisibleAt.run(request.visibleAt, seq);
      this.deliveryStates.get(request.queueId)?.setVisibleAt(seq, request.visibleAt);
      // A lapsed handle (standard queues) can hide a message that was visible again.
      if (row.visible_at <= request.now && request.visibleAt > request.now)
        this.notePutInFlight(request.queueId);
      if (row.group_id !== null && this.isFifo(request.queueId))
        runNow(refreshGroup(this.steps, request.queueId, row.group_id));
      return 'changed';
    });
  }

  async purgeQueue(queueId: number, now: number, windowMs: number): Promise<boolean> {
    return this.write('durable', () => {
      const row = this.statements.queueById.get(queueId) as QueueRow | undefined;
      if (!row || (row.last_purged_at !== null && now - row.last_purged_at < windowMs)) return false;
      this.statements.purgeMessages.run(queueId, now);
      this.deliveryStates.delete(queueId);
      this.statements.forgetDeduplication.run(queueId);
      runNow(rebuildGroups(this.steps, queueId));
      this.statements.setPurgedAt.run(now, queueId);
      this.queueCache.delete(row.name);
      return true;
    });
  }

  async countMessages(queueId: number, now: number): Promise<MessageCounts> {
    await this.warmUp(queueId);
    const delivery = this.deliveryOf(queueId);
    if (delivery) return delivery.counts(now);
    const row = this.statements.countMessages.get({ queue_id: queueId, now }) as {
      visible: number | null;
      not_visible: number | null;
      delayed: number | null;
      oldest_sent_at: number | null;
    };
    return {
      visible: row.visible ?? 0,
      notVisible: row.not_visible ?? 0,
      delayed: row.delayed ?? 0,
      oldestSentAt: row.oldest_sent_at ?? undefined,
    };
  }

  async nextVisibleAt(queueId: number, now: number): Promise<number | undefined> {
    await this.warmUp(queueId);
    const delivery = this.deliveryOf(queueId);
    if (delivery) return delivery.nextVisibleAt(now);
    const row = this.statements.nextVisibleAt.get(queueId, now) as { at: number | null };
    return row.at ?? undefined;
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    return this.write('redeliverable', () => {
      const deleted = this.statements.deleteExpired.all(now, limit) as Array<{
        seq: number;
        queue_id: number;
        group_id: string | null;
      }>;
      for (const row of deleted) this.deliveryStates.get(row.queue_id)?.remove(row.seq);
      runNow(refreshGroupsOf(this.steps, deleted));
      this.statements.forgetExpiredDeduplication.run(now);
      this.statements.forgetExpiredAttempts.run(now);
      return deleted.length;
    });
  }

  async nextExpiryAt(queueId: number, now: number): Promise<number | undefined> {
    const row = this.statements.nextExpiryAt.get(queueId, now) as { at: number | null };
    return row.at ?? undefined;
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
    return this.write('durable', () => runNow(moveBatchPlan(this.steps, request)));
  }

  async lastSeq(queueId: number): Promise<number> {
    return (this.statements.lastSeq.get(queueId) as { seq: number }).seq;
  }

  async recordQueueSamples(samples: QueueSample[]): Promise<void> {
    // History waits while the disk is full: the room left is for the writes that free space.
    if (samples.length === 0 || this.unavailable === 'full') return;
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
    });
    this.activity.clear();
  }

  /**
   * What the database's files take on disk, its WAL's included, less the free pages SQLite fills first: what
   * a full disk is made of. The WAL keeps its size once grown (up to a checkpoint's 32 MiB, more under
   * bursts); the reserve is not counted. In memory, the pages are what it takes. Constant time.
   */
  async storedBytes(): Promise<number> {
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const taken =
      this.dbFile === undefined || this.walFile === undefined
        ? (this.db.pragma('page_count', { simple: true }) as number) * pageSize
        : fileBytes(this.dbFile) + fileBytes(this.walFile);
    return Math.max(0, taken - free * pageSize);
  }

  async condition(): Promise<StoreCondition | undefined> {
    if (this.unavailable === 'full' && this.resumeAfterFullDisk()) this.unavailable = undefined;
    return this.unavailable && UNAVAILABLE_CONDITIONS[this.unavailable];
  }

  /**
   * Takes the reserve back if the disk has room for it and, besides it, for some sends (free disk and free
   * pages together); otherwise releases what is left of it. Returns whether sends may resume.
   */
  private resumeAfterFullDisk(): boolean {
    const reserve = this.reserve!;
    const held = reserve.held();
    const free = reserve.freeBytes();
    const freePages = this.db.pragma('freelist_count', { simple: true }) as number;
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const roomBesides = free + held - reserve.bytes + freePages * pageSize;
    if (free + held >= reserve.bytes && roomBesides >= Math.max(reserve.bytes, ROOM_TO_RESUME_BYTES)) {
      if (reserve.fill() >= reserve.bytes) return true;
    }
    reserve.release();
    return false;
  }

  /**
   * Notes why a write failed. Returns true when the disk just filled and a reserve was released for it: the
   * writes that free space can then run again at once.
   */
  private noteUnavailable(error: unknown): boolean {
    const failure = unavailableOrSelf(error);
    if (!(failure instanceof StoreUnavailableError)) return false;
    const newlyFull = failure.reason === 'full' && this.unavailable !== 'full';
    this.unavailable = failure.reason;
    if (!newlyFull || this.reserve === undefined) return false;
    const released = this.reserve.held() > 0;
    this.reserve.release();
    return released;
  }

  async close(): Promise<void> {
    // A full disk: take back what room there is before SQLite's closing checkpoint, which would otherwise
    // fill it (a checkpoint that fails half way keeps the space it wrote) and leave none for the receives and
    // deletes that make room after a restart.
    if (this.unavailable === 'full') this.reserve?.fill();
    if (this.pending.length > 0) this.flush();
    while (this.syncing) await this.syncing;
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.db.close();
  }

  /** Queues `run` for the next group commit; resolves with its result once the commit is done. */
  private write<T>(kind: WriteKind, run: () => T): Promise<T>;
  private write<T>(kind: WriteKind, onApplied: (() => void) | undefined, run: () => T): Promise<T>;
  private write<T>(kind: WriteKind, ...rest: [() => T] | [(() => void) | undefined, () => T]): Promise<T> {
    const [onApplied, run] = rest.length === 1 ? [undefined, rest[0]] : rest;
    if (kind === 'adds' && this.unavailable === 'full') {
      if (!this.resumeAfterFullDisk())
        return Promise.reject(new StoreUnavailableError('full', { cause: 'the disk reserve is released' }));
      this.unavailable = undefined;
    }
    return new Promise<T>((resolve, reject) => {
      const fail = (error: unknown) => reject(unavailableOrSelf(error));
      this.pending.push({ kind, run, onApplied, resolve: resolve as (value: unknown) => void, reject: fail });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const batch: PendingWrite[] = [];
    let outcomes: WriteOutcome[] | undefined;
    try {
      const { begin, rollback, commit } = this.statements;
      begin.run();
      // First without savepoints: a savepoint copies every page its write changes to a statement journal (a
      // temporary file past 64 KiB), which was a third of the store's disk writes under load. Writes rarely
      // fail; when one does, the whole transaction is rolled back and the batch runs again isolated.
      outcomes = this.applyBatch(batch, false);
      if (outcomes === undefined) {
        rollback.run();
        this.forgetCachedState();
        begin.run();
        outcomes = this.applyBatch(batch, true)!;
      }
      commit.run();
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.forgetCachedState();
      // A BEGIN that fails (read-only, full) leaves writes still pending; they fail with the batch, or
      // they would wait for a flush that nothing schedules.
      const failed = [...batch, ...this.pending.splice(0)];
      if (this.noteUnavailable(error)) {
        // The reserve was just released: what does not add data runs again in the room it gave back.
        for (const write of failed) {
          if (write.kind === 'adds') write.reject(error);
          else this.pending.push(write);
        }
        this.flush();
        return;
      }
      for (const write of failed) write.reject(error);
      return;
    }
    if (this.unavailable !== 'full') this.unavailable = undefined;
    batch.forEach((write, index) => {
      const outcome = outcomes[index]!;
      if (!outcome.ok) write.reject(outcome.error);
      else if (this.needsSync(write.kind)) this.afterSync(() => write.resolve(outcome.value), write.reject);
      else write.resolve(outcome.value);
    });
  }

  /**
   * Runs the writes of `batch`, then those still pending (moving them into `batch`), in the open transaction.
   * Writes queued meanwhile (a long poll woken by a send of the batch) join it too, so a woken receiver is
   * answered after one commit, not after the next turn of the event loop. `isolated` gives each write a
   * savepoint, so a failing one rolls back alone and the others still commit; without it, the first failure
   * returns undefined and the caller must roll the transaction back.
   */
  private applyBatch(batch: PendingWrite[], isolated: boolean): WriteOutcome[] | undefined {
    const { savepoint, release, rollbackTo } = this.statements;
    const outcomes: WriteOutcome[] = [];
    for (let index = 0; index < batch.length || this.pending.length > 0; index++) {
      if (index === batch.length) batch.push(this.pending.shift()!);
      const write = batch[index]!;
      if (isolated) savepoint.run();
      try {
        const value = write.run();
        if (isolated) release.run();
        outcomes.push({ ok: true, value });
        write.onApplied?.();
      } catch (error) {
        if (!isolated) return undefined;
        rollbackTo.run();
        release.run();
        this.forgetCachedState();
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }

  /**
   * Drops what memory learned of the tables: inside a transaction that is being rolled back (in whole or to a
   * savepoint), or before a reset.
   */
  private forgetCachedState(): void {
    this.queuesWithoutTenants.clear();
    this.inFlightBound.clear();
    this.queueCache.clear();
    this.fifoById.clear();
    this.deliveryStates.clear();
  }

  private needsSync(kind: WriteKind): boolean {
    if (this.walFile === undefined) return false;
    return this.durability === 'full' || (this.durability === 'durable' && kind !== 'redeliverable');
  }

  /** Runs `done` once an fsync that started after this call has finished. */
  private afterSync(done: () => void, fail: (error: unknown) => void): void {
    this.awaitingSync.push({ done, fail });
    this.syncing ??= this.syncLoop();
  }

  /**
   * Fsyncs the WAL until no write waits for it. Each fsync starts at the event loop's next check phase, once
   * the answers released by the last commit (or fsync) are written: handing it to the thread pool wakes
   * another thread, which on a 2-core VM cost the event loop about 0.2 ms that a long poll woken at the commit
   * waited for. The commits made until then share the fsync.
   */
  private async syncLoop(): Promise<void> {
    while (this.awaitingSync.length > 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const waiting = this.awaitingSync.splice(0);
      try {
        this.walFd ??= openSync(this.walFile!, 'r+');
        await fdatasyncAsync(this.walFd);
        for (const write of waiting) write.done();
      } catch (error) {
        for (const write of waiting) write.fail(error);
      }
    }
    this.syncing = undefined;
  }
}

/**
 * SQLite's and the OS's "cannot write" errors (full disk, read-only files, failing device) become the
 * store's StoreUnavailableError; any other error (a bug, a constraint) stays as it is.
 */
function unavailableOrSelf(error: unknown): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return error;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') {
    return new StoreUnavailableError('full', { cause: error });
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
    return new StoreUnavailableError('read-only', { cause: error });
  }
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN' || code === 'EIO') {
    return new StoreUnavailableError('io', { cause: error });
  }
  return error;
}

const fdatasyncAsync = promisify(fdatasync);

function isWritable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes the data directory, and fsyncs the parent of each directory it made: a directory's name is durable
 * only once its parent is fsynced, and SQLite fsyncs only the data directory itself. Without this, a power
 * cut soon after a first start could take the directory with every acknowledged send in it.
 */
function ensureDir(dir: string): string {
  const firstMade = mkdirSync(dir, { recursive: true });
  if (firstMade === undefined || process.platform === 'win32') return dir;
  for (let made = resolve(dir); ; made = dirname(made)) {
    const parent = openSync(dirname(made), 'r');
    try {
      fsyncSync(parent);
    } finally {
      closeSync(parent);
    }
    if (made === resolve(firstMade)) return dir;
  }
}

function migrate(db: Database.Database): void {
  const applied = db.pragma('user_version', { simple: true }) as number;
  for (let version = applied; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
