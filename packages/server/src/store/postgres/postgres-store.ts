import { NO_ACTIVITY } from '../activity-tally.ts';
import type {
  ActivityCounts,
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
  moveBatchPlan,
  type PlanSteps,
  rebuildGroups,
  receivePlan,
  refreshGroup,
  refreshGroupsOf,
} from '../planner.ts';
import { type MessageState, receiptRefusal, visibilityChangeRefusal } from '../receipts.ts';
import {
  type MoveTaskRow,
  type NewMessageRow,
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
import { type ConnectionOptions, type Db, PostgresConnection, run } from './connection.ts';
import { lockGroup, planSteps } from './plan-steps.ts';
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
      removeRow: async (db, row) => {
        await run(db, 'DELETE FROM messages WHERE seq = $1', [row.seq]);
        if (row.group_id !== null && (await this.isFifo(row.queue_id)))
          await runAwaiting(refreshGroup(this.steps(db), row.queue_id, row.group_id));
      },
      insertMessage: async (db, queueId, message) => {
        if (await this.isFifo(queueId)) {
          await this.sendFifo(db, queueId, [message]);
        } else {
          const tenants = message.groupId === undefined ? [] : [message.groupId, ''];
          await this.insertMessages(db, queueId, [message], { tenants, announce: false });
        }
        await this.announce(db, [queueId]);
      },
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
      const { rows } = await run<QueueRow>(
        db,
        `INSERT INTO queues (name, fifo, deduplicates_per_group, attributes, tags, created_at, last_modified_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING *`,
        [
          queue.name,
          queue.fifo,
          queue.deduplicatesPerGroup ?? false,
          JSON.stringify(queue.attributes),
          JSON.stringify(queue.tags),
          queue.now,
        ],
      );
      await run(db, 'DELETE FROM deleted_queues WHERE name = $1', [queue.name]);
      return toQueue(rows[0]!);
    });
  }

  async getQueue(name: string): Promise<QueueRecord | undefined> {
    // Not cached: another node may change the queue at any time.
    const { rows } = await run<QueueRow>(this.direct, 'SELECT * FROM queues WHERE name = $1', [name]);
    return rows[0] && toQueue(rows[0]);
  }

  async listQueues(options: { prefix?: string; afterName?: string; limit: number }): Promise<QueueRecord[]> {
    const { rows } = await run<QueueRow>(
      this.direct,
      'SELECT * FROM queues WHERE starts_with(name, $1) AND name > $2 ORDER BY name LIMIT $3',
      [options.prefix ?? '', options.afterName ?? '', options.limit],
    );
    return rows.map(toQueue);
  }

  async updateQueue(id: number, changes: QueueChanges): Promise<QueueRecord | undefined> {
    return this.transaction(async (db) => {
      const { rows } = await run<QueueRow>(
        db,
        `UPDATE queues SET attributes = coalesce($2, attributes), tags = coalesce($3, tags), last_modified_at = $4
         WHERE id = $1 RETURNING *`,
        [
          id,
          changes.attributes ? JSON.stringify(changes.attributes) : null,
          changes.tags ? JSON.stringify(changes.tags) : null,
          changes.now,
        ],
      );
      if (!rows[0]) return undefined;
      if (changes.waitingDelayMs !== undefined) {
        await run(
          db,
          'UPDATE messages SET visible_at = sent_at + $1 WHERE queue_id = $2 AND receive_count = 0',
          [changes.waitingDelayMs, id],
        );
        await runAwaiting(rebuildGroups(this.steps(db), id));
        await this.announce(db, [id]);
      }
      return toQueue(rows[0]);
    });
  }

  async deleteQueue(id: number, now: number): Promise<void> {
    await this.transaction(async (db) => {
      const { rows } = await run<{ name: string }>(db, 'DELETE FROM queues WHERE id = $1 RETURNING name', [
        id,
      ]);
      if (!rows[0]) return;
      await run(db, 'DELETE FROM messages WHERE queue_id = $1', [id]);
      for (const table of ['fifo_groups', 'fifo_deduplication', 'receive_attempts', 'fair_tenants'])
        await run(db, `DELETE FROM ${table} WHERE queue_id = $1`, [id]);
      await run(
        db,
        `INSERT INTO deleted_queues (name, deleted_at) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET deleted_at = excluded.deleted_at`,
        [rows[0].name, now],
      );
    });
    this.fifoById.delete(id);
  }

  async queueDeletedAt(name: string): Promise<number | undefined> {
    const { rows } = await run<{ deleted_at: number }>(
      this.direct,
      'SELECT deleted_at FROM deleted_queues WHERE name = $1',
      [name],
    );
    return rows[0]?.deleted_at;
  }

  async sendMessages(
    queueId: number,
    messages: NewMessage[],
    onVisible?: () => void,
  ): Promise<SentMessage[]> {
    const fifo = await this.isFifo(queueId);
    const sent = fifo
      ? await this.transaction(async (db) => {
          const results = await this.sendFifo(db, queueId, messages);
          if (results.some((result) => !result.duplicate)) await this.announce(db, [queueId]);
          return results;
        })
      : await this.sendStandard(queueId, messages);
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
      const now = publications.find((publication) => publication.deduplication)?.deduplication?.now ?? 0;
      if (!(await topics.lockTopic(db, topicName, now))) return undefined;
      const results: PublishOutcome[] = [];
      for (const publication of publications) {
        const { deduplication } = publication;
        const original = deduplication && (await topics.deduplicated(db, topicName, deduplication.id, now));
        if (original) {
          results.push({ ...original, duplicate: true });
          continue;
        }
        const sequenceNumber = publication.sequenced ? await topics.nextSequence(db, topicName) : 0;
        const byQueue = new Map<number, NewMessage[]>();
        for (const { queueId, message } of publication.deliveries(sequenceNumber)) {
          const messages = byQueue.get(queueId);
          if (messages) messages.push(message);
          else byQueue.set(queueId, [message]);
        }
        // A queue deleted since the publisher looked it up receives nothing (as if deleted just before).
        const existing = await topics.existingQueues(db, [...byQueue.keys()]);
        for (const [queueId, messages] of byQueue) {
          if (!existing.has(queueId)) continue;
          if (await this.isFifo(queueId)) await this.sendFifo(db, queueId, messages);
          else {
            const tenants = [...new Set(messages.flatMap((message) => message.groupId ?? []))];
            await this.insertMessages(db, queueId, messages, {
              tenants: tenants.length > 0 ? [...tenants, ''] : [],
              announce: false,
            });
          }
          touched.add(queueId);
        }
        await topics.insertEndpointDeliveries(db, publication.endpointDeliveries ?? []);
        if (deduplication)
          await topics.rememberDeduplication(
            db,
            topicName,
            deduplication.id,
            publication.messageId,
            sequenceNumber,
            deduplication.expiresAt,
          );
        results.push({ messageId: publication.messageId, sequenceNumber, duplicate: false });
      }
      await this.announce(db, touched);
      return results;
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

  /**
   * Standard queues: the batch, its tenants (fair queues: messages without a group in a queue with tenants
   * are the tenant '') and the other nodes' wake, all in one statement.
   */
  private async sendStandard(queueId: number, messages: NewMessage[]): Promise<SentMessage[]> {
    const tenants = [...new Set(messages.flatMap((message) => message.groupId ?? []))];
    const seqs = await this.insertMessages(this.direct, queueId, messages, {
      tenants: tenants.length > 0 ? [...tenants, ''] : [],
      announce: true,
    });
    return messages.map((message, index) => ({
      messageId: message.messageId,
      seq: seqs[index]!,
      duplicate: false,
    }));
  }

  /**
   * FIFO queues: the batch checked against the deduplication window, its groups locked and its new messages
   * inserted, a statement for each step rather than five for each message. Locks are taken in sorted order
   * (deduplication ids, then groups), so two sends naming the same ones in other orders wait instead of
   * deadlocking.
   */
  private async sendFifo(db: Db, queueId: number, messages: NewMessage[]): Promise<SentMessage[]> {
    const keyOf = (deduplication: { scope: string; id: string }) =>
      `${deduplication.scope}\n${deduplication.id}`;
    const keys = [...new Set(messages.flatMap(({ deduplication: d }) => (d ? [keyOf(d)] : [])))].sort();
    // Two nodes sending the same id at once: the second waits here and then finds the first's.
    await run(
      db,
      `SELECT pg_advisory_xact_lock($1, hashtext('dedup' || chr(10) || key))
       FROM unnest($2::text[]) WITH ORDINALITY AS k(key, n) ORDER BY n`,
      [queueId, keys],
    );
    const originals = new Map<string, SentMessage>();
    const checked = messages.filter((message) => message.deduplication);
    const { rows: found } = await run<{
      scope: string;
      deduplication_id: string;
      message_id: string;
      seq: number;
    }>(
      db,
      `SELECT d.scope, d.deduplication_id, d.message_id, d.seq
       FROM unnest($2::text[], $3::text[], $4::bigint[]) AS k(scope, id, sent_at)
       JOIN fifo_deduplication d
         ON d.queue_id = $1 AND d.scope = k.scope AND d.deduplication_id = k.id AND d.expires_at > k.sent_at`,
      [
        queueId,
        checked.map((message) => message.deduplication!.scope),
        checked.map((message) => message.deduplication!.id),
        checked.map((message) => message.sentAt),
      ],
    );
    for (const row of found)
      originals.set(keyOf({ scope: row.scope, id: row.deduplication_id }), {
        messageId: row.message_id,
        seq: row.seq,
        duplicate: true,
      });
    // A message repeating an earlier one's id, in the window or in this batch, is that one's duplicate.
    const fresh: NewMessage[] = [];
    const freshKeys = new Set<string>();
    for (const message of messages) {
      const key = message.deduplication && keyOf(message.deduplication);
      if (key === undefined || (!originals.has(key) && !freshKeys.has(key))) {
        fresh.push(message);
        if (key !== undefined) freshKeys.add(key);
      }
    }
    const sent = new Map<NewMessage, SentMessage>();
    const resultOf = (message: NewMessage) =>
      sent.get(message) ?? originals.get(keyOf(message.deduplication!))!;
    if (fresh.length === 0) return messages.map(resultOf);
    // The groups' rows are locked before the messages take their seqs, so that concurrent sends to one group
    // commit in seq order and a receive never sees a later message of the group before an earlier one.
    const groups = new Map<string, number>();
    for (const message of fresh)
      if (message.groupId !== undefined && !groups.has(message.groupId))
        groups.set(message.groupId, message.visibleAt);
    // In name order, as the database sorts them: the lock order every writer keeps.
    await run(
      db,
      `INSERT INTO fifo_groups (queue_id, group_id, available_at)
       SELECT $1, g.group_id, g.available_at FROM unnest($2::text[], $3::bigint[]) AS g(group_id, available_at)
       ORDER BY g.group_id
       ON CONFLICT (queue_id, group_id) DO UPDATE SET available_at = fifo_groups.available_at`,
      [queueId, [...groups.keys()], [...groups.values()]],
    );
    const seqs = await this.insertMessages(db, queueId, fresh, { tenants: [], announce: false });
    for (const [index, message] of fresh.entries())
      sent.set(message, { messageId: message.messageId, seq: seqs[index]!, duplicate: false });
    const remembered = fresh.filter((message) => message.deduplication);
    await run(
      db,
      `INSERT INTO fifo_deduplication (queue_id, scope, deduplication_id, message_id, seq, expires_at)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
       ON CONFLICT (queue_id, scope, deduplication_id)
       DO UPDATE SET message_id = excluded.message_id, seq = excluded.seq, expires_at = excluded.expires_at`,
      [
        queueId,
        remembered.map((message) => message.deduplication!.scope),
        remembered.map((message) => message.deduplication!.id),
        remembered.map((message) => message.messageId),
        remembered.map((message) => sent.get(message)!.seq),
        remembered.map((message) => message.deduplication!.expiresAt),
      ],
    );
    // A later message of the batch with the same id answers with this one's ids.
    for (const message of remembered)
      originals.set(keyOf(message.deduplication!), { ...sent.get(message)!, duplicate: true });
    return messages.map(resultOf);
  }

  /**
   * Inserts the messages in one statement, in order, and returns their seqs in the same order. In the same
   * statement: `tenants` become the queue's fair-queue tenants (the queue's messages without a group join the
   * tenant '' when it is new), a message without a group is the tenant '' once the queue has tenants, and with
   * `announce` the other nodes are told (at commit) that the queue has new messages.
   */
  private async insertMessages(
    db: Db,
    queueId: number,
    messages: NewMessage[],
    options: { tenants: string[]; announce: boolean },
  ): Promise<number[]> {
    const rows = messages.map(newMessageRow);
    const column = <T>(pick: (row: NewMessageRow) => T) => rows.map(pick);
    const inserted = await run<{ seq: number }>(
      db,
      `WITH added AS (
         INSERT INTO fair_tenants (queue_id, tenant, served_at) SELECT $1, unnest($15::text[]), 0
         ON CONFLICT DO NOTHING RETURNING tenant),
       joined AS (
         UPDATE messages SET group_id = '', tenant = '' WHERE queue_id = $1 AND group_id IS NULL
           AND EXISTS (SELECT 1 FROM added WHERE tenant = '')),
       fair AS (
         SELECT cardinality($15::text[]) > 0 OR EXISTS (SELECT 1 FROM fair_tenants WHERE queue_id = $1) AS yes),
       announced AS (SELECT CASE WHEN $18::boolean THEN pg_notify($16, $17) END AS n)
       INSERT INTO messages (queue_id, message_id, body, message_attributes, system_attributes, md5_of_body,
         md5_of_message_attributes, md5_of_system_attributes, sender_id, sent_at, visible_at, expires_at,
         group_id, tenant, deduplication_id)
       SELECT $1, message_id, body, message_attributes, system_attributes, md5_of_body, md5_of_message_attributes,
         md5_of_system_attributes, sender_id, sent_at, visible_at, expires_at,
         CASE WHEN m.group_id IS NULL AND fair.yes THEN '' ELSE m.group_id END,
         CASE WHEN fair.yes THEN coalesce(m.group_id, '') END, deduplication_id
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
         $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[], $14::text[])
         WITH ORDINALITY AS m(message_id, body, message_attributes, system_attributes, md5_of_body,
           md5_of_message_attributes, md5_of_system_attributes, sender_id, sent_at, visible_at, expires_at,
           group_id, deduplication_id, position)
         CROSS JOIN fair CROSS JOIN announced
       ORDER BY position
       RETURNING seq`,
      [
        queueId,
        column((r) => r.message_id),
        column((r) => r.body),
        column((r) => r.message_attributes),
        column((r) => r.system_attributes),
        column((r) => r.md5_of_body),
        column((r) => r.md5_of_message_attributes),
        column((r) => r.md5_of_system_attributes),
        column((r) => r.sender_id),
        column((r) => r.sent_at),
        column((r) => r.visible_at),
        column((r) => r.expires_at),
        column((r) => r.group_id),
        column((r) => r.deduplication_id),
        options.tenants,
        ...this.connection.wakeOf(queueId),
        options.announce,
      ],
    );
    // Seqs come from one sequence in insertion order, which ORDER BY position makes the batch's order.
    return inserted.rows.map((row) => row.seq).sort((a, b) => a - b);
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
  private steps(db: Db): PlanSteps {
    return planSteps(db, (queueId) => this.isFifo(queueId));
  }

  private async isFifo(queueId: number): Promise<boolean> {
    let fifo = this.fifoById.get(queueId);
    if (fifo === undefined) {
      const { rows } = await run<{ fifo: boolean }>(this.direct, 'SELECT fifo FROM queues WHERE id = $1', [
        queueId,
      ]);
      fifo = rows[0]?.fifo === true;
      if (rows[0]) this.fifoById.set(queueId, fifo);
    }
    return fifo;
  }

  async deleteMessage(queueId: number, receipt: MessageReceipt, check: ReceiptCheck): Promise<DeleteOutcome> {
    return (await this.deleteMessages(queueId, [receipt], check))[0]!;
  }

  async deleteMessages(
    queueId: number,
    receipts: ReadonlyArray<MessageReceipt>,
    check: ReceiptCheck,
  ): Promise<DeleteOutcome[]> {
    if (receipts.length === 0) return [];
    const seqs = receipts.map((receipt) => receipt.seq);
    // One statement for every receipt, with the receipt rules of receipts.ts (receiptRefusal) in SQL; a message
    // several receipts pass for is deleted once.
    const remove = (db: Db) =>
      run<MessageState & { seq: number }>(
        db,
        `DELETE FROM messages m USING unnest($2::bigint[], $3::integer[], $4::text[]) AS r(seq, receive_count, token)
         WHERE m.queue_id = $1 AND m.seq = r.seq AND m.receipt_token = r.token
           AND CASE $5::text
             WHEN 'anyIssued' THEN m.receive_count >= r.receive_count
             WHEN 'latest' THEN m.receive_count = r.receive_count
             ELSE m.receive_count = r.receive_count AND m.visible_at > $6 END
         RETURNING m.seq, m.receipt_token, m.receive_count, m.visible_at, m.delivery_started_at, m.group_id`,
        [
          queueId,
          seqs,
          receipts.map((receipt) => receipt.receiveCount),
          receipts.map((receipt) => receipt.receiptToken),
          check.rule,
          check.now,
        ],
      );
    // Only a refused receipt reads its message again, to tell why.
    const outcome = async (db: Db, deletedRows: ReadonlyArray<MessageState & { seq: number }>) => {
      const deleted = new Map(deletedRows.map((row) => [row.seq, row]));
      const refused = seqs.filter((seq) => !deleted.has(seq));
      const { rows: left } =
        refused.length === 0
          ? { rows: [] }
          : await run<MessageState & { seq: number }>(
              db,
              `SELECT seq, receipt_token, receive_count, visible_at, delivery_started_at, group_id FROM messages
               WHERE queue_id = $1 AND seq = ANY($2::bigint[])`,
              [queueId, refused],
            );
      const remaining = new Map(left.map((row) => [row.seq, row]));
      return receipts.map((receipt): DeleteOutcome => {
        const row = deleted.get(receipt.seq) ?? remaining.get(receipt.seq);
        const refusal = row && receiptRefusal(row, receipt, check);
        if (!row || refusal) return refusal ?? 'missing';
        // The first receipt that passes for a deleted message deleted it; any later one finds it gone.
        return deleted.delete(receipt.seq) ? 'deleted' : 'missing';
      });
    };
    if (!(await this.isFifo(queueId))) return outcome(this.direct, (await remove(this.direct)).rows);
    return this.transaction(async (db) => {
      const { rows: groups } = await run<{ group_id: string }>(
        db,
        `SELECT DISTINCT group_id FROM messages WHERE queue_id = $1 AND seq = ANY($2::bigint[])
         AND group_id IS NOT NULL ORDER BY group_id`,
        [queueId, seqs],
      );
      // Groups first, then messages, each group in name order: the lock order every writer keeps.
      for (const { group_id } of groups) await lockGroup(db, queueId, group_id);
      const { rows } = await remove(db);
      const touched = new Set(rows.flatMap((row) => (row.group_id === null ? [] : [row.group_id])));
      for (const groupId of [...touched].sort())
        await runAwaiting(refreshGroup(this.steps(db), queueId, groupId));
      return outcome(db, rows);
    });
  }

  /** A FIFO message's group, read before taking the group's lock (locks go group first, then messages). */
  private async groupOf(db: Db, queueId: number, seq: number): Promise<string | undefined> {
    const { rows } = await run<{ group_id: string | null }>(
      db,
      'SELECT group_id FROM messages WHERE seq = $1 AND queue_id = $2',
      [seq, queueId],
    );
    return rows[0]?.group_id ?? undefined;
  }

  async changeVisibility(request: ChangeVisibilityRequest): Promise<ChangeVisibilityOutcome> {
    const fifo = await this.isFifo(request.queueId);
    const { seq } = request.receipt;
    return this.transaction(async (db) => {
      if (fifo) {
        const groupId = await this.groupOf(db, request.queueId, seq);
        if (groupId !== undefined) await lockGroup(db, request.queueId, groupId);
      }
      const { rows } = await run<MessageState>(
        db,
        `SELECT receipt_token, receive_count, visible_at, delivery_started_at, group_id FROM messages
         WHERE seq = $1 AND queue_id = $2 FOR UPDATE`,
        [seq, request.queueId],
      );
      const row = rows[0];
      if (!row) return 'missing';
      const refusal = visibilityChangeRefusal(row, request);
      if (refusal) return refusal;
      await run(db, 'UPDATE messages SET visible_at = $1 WHERE seq = $2', [request.visibleAt, seq]);
      if (request.visibleAt <= request.now) await this.announce(db, [request.queueId]);
      if (row.group_id !== null && fifo)
        await runAwaiting(refreshGroup(this.steps(db), request.queueId, row.group_id));
      return 'changed';
    });
  }

  async purgeQueue(queueId: number, now: number, windowMs: number): Promise<boolean> {
    return this.transaction(async (db) => {
      const { rowCount } = await run(
        db,
        `UPDATE queues SET last_purged_at = $2
         WHERE id = $1 AND (last_purged_at IS NULL OR $2 - last_purged_at >= $3)`,
        [queueId, now, windowMs],
      );
      if (rowCount === 0) return false;
      await run(db, 'DELETE FROM messages WHERE queue_id = $1 AND sent_at <= $2', [queueId, now]);
      await run(db, 'DELETE FROM fifo_deduplication WHERE queue_id = $1', [queueId]);
      await runAwaiting(rebuildGroups(this.steps(db), queueId));
      return true;
    });
  }

  async countMessages(queueId: number, now: number): Promise<MessageCounts> {
    const { rows } = await run<{
      visible: number;
      not_visible: number;
      delayed: number;
      oldest_sent_at: number | null;
    }>(
      this.direct,
      `SELECT
         count(*) FILTER (WHERE visible_at <= $2) AS visible,
         count(*) FILTER (WHERE visible_at > $2 AND receive_count > 0) AS not_visible,
         count(*) FILTER (WHERE visible_at > $2 AND receive_count = 0) AS delayed,
         min(sent_at) AS oldest_sent_at
       FROM messages WHERE queue_id = $1 AND expires_at > $2`,
      [queueId, now],
    );
    const row = rows[0]!;
    return {
      visible: row.visible,
      notVisible: row.not_visible,
      delayed: row.delayed,
      oldestSentAt: row.oldest_sent_at ?? undefined,
    };
  }

  async nextVisibleAt(queueId: number, now: number): Promise<number | undefined> {
    const { rows } = await run<{ at: number | null }>(
      this.direct,
      'SELECT min(visible_at) AS at FROM messages WHERE queue_id = $1 AND visible_at > $2',
      [queueId, now],
    );
    return rows[0]?.at ?? undefined;
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    return this.transaction(async (db) => {
      const { rows } = await run<{ queue_id: number; group_id: string | null }>(
        db,
        `DELETE FROM messages WHERE seq IN
           (SELECT seq FROM messages WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING queue_id, group_id`,
        [now, limit],
      );
      await runAwaiting(refreshGroupsOf(this.steps(db), rows));
      await run(db, 'DELETE FROM fifo_deduplication WHERE expires_at <= $1', [now]);
      await run(db, 'DELETE FROM receive_attempts WHERE expires_at <= $1', [now]);
      return rows.length;
    });
  }

  async nextExpiryAt(queueId: number, now: number): Promise<number | undefined> {
    const { rows } = await run<{ at: number | null }>(
      this.direct,
      'SELECT min(expires_at) AS at FROM messages WHERE queue_id = $1 AND expires_at > $2',
      [queueId, now],
    );
    return rows[0]?.at ?? undefined;
  }

  async createMoveTask(task: NewMoveTask): Promise<MoveTaskRecord | undefined> {
    // The partial unique index allows one active task per source; a second insert does nothing.
    const { rows } = await run<MoveTaskRow>(
      this.direct,
      `INSERT INTO move_tasks (handle, source_arn, source_queue_id, destination_arn, max_per_second, status,
         to_move, up_to_seq, started_at)
       VALUES ($1, $2, $3, $4, $5, 'RUNNING', $6, $7, $8)
       ON CONFLICT DO NOTHING RETURNING *`,
      [
        task.handle,
        task.sourceArn,
        task.sourceQueueId,
        task.destinationArn ?? null,
        task.maxPerSecond ?? null,
        task.toMove,
        task.upToSeq,
        task.startedAt,
      ],
    );
    return rows[0] && toMoveTask(rows[0]);
  }

  async listMoveTasks(sourceArn: string, limit: number): Promise<MoveTaskRecord[]> {
    const { rows } = await run<MoveTaskRow>(
      this.direct,
      'SELECT * FROM move_tasks WHERE source_arn = $1 ORDER BY started_at DESC, handle DESC LIMIT $2',
      [sourceArn, limit],
    );
    return rows.map(toMoveTask);
  }

  async activeMoveTasks(): Promise<MoveTaskRecord[]> {
    const { rows } = await run<MoveTaskRow>(
      this.direct,
      "SELECT * FROM move_tasks WHERE status IN ('RUNNING', 'CANCELLING') ORDER BY started_at",
    );
    return rows.map(toMoveTask);
  }

  async getMoveTask(handle: string): Promise<MoveTaskRecord | undefined> {
    const { rows } = await run<MoveTaskRow>(this.direct, 'SELECT * FROM move_tasks WHERE handle = $1', [
      handle,
    ]);
    return rows[0] && toMoveTask(rows[0]);
  }

  async setMoveTaskStatus(handle: string, change: MoveTaskChange): Promise<MoveTaskRecord | undefined> {
    const { rows } = await run<MoveTaskRow>(
      this.direct,
      `UPDATE move_tasks SET status = $2, failure_reason = $3,
         ended_at = CASE WHEN $2 IN ('RUNNING', 'CANCELLING') THEN NULL ELSE $4::bigint END
       WHERE handle = $1 AND status IN ('RUNNING', 'CANCELLING') RETURNING *`,
      [handle, change.status, change.failureReason ?? null, change.now],
    );
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

  async replayMessages(request: ReplayRequest): Promise<TriageOutcome[]> {
    return this.triage.replay(request);
  }

  async deleteMessagesBySeq(queueId: number, seqs: readonly number[], now: number): Promise<TriageOutcome[]> {
    return this.triage.delete(queueId, seqs, now);
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
    const { rows } = await run<{ seq: number }>(
      this.direct,
      'SELECT coalesce(max(seq), 0) AS seq FROM messages WHERE queue_id = $1',
      [queueId],
    );
    return rows[0]!.seq;
  }

  async recordQueueSamples(samples: QueueSample[]): Promise<void> {
    if (samples.length === 0) return;
    const columns = Object.keys(sampleRow(samples[0]!)) as Array<keyof SampleRow>;
    const rows = samples.map(sampleRow);
    // One statement for the whole set: a column array each, unnested into rows.
    await run(
      this.direct,
      `INSERT INTO queue_samples (${columns.join(', ')})
       SELECT * FROM unnest($1::text[], ${columns
         .slice(1)
         .map((_, index) => `$${index + 2}::bigint[]`)
         .join(', ')})
       ON CONFLICT (queue, at) DO UPDATE SET ${columns
         .slice(2)
         .map((column) => `${column} = excluded.${column}`)
         .join(', ')}`,
      columns.map((column) => rows.map((row) => row[column])),
    );
  }

  async queueSamples(queue: string, since: number): Promise<QueueSample[]> {
    const { rows } = await run<SampleRow>(
      this.direct,
      'SELECT * FROM queue_samples WHERE queue = $1 AND at >= $2 ORDER BY at',
      [queue, since],
    );
    return rows.map(toSample);
  }

  async deleteQueueSamplesBefore(time: number): Promise<number> {
    const { rowCount } = await run(this.direct, 'DELETE FROM queue_samples WHERE at < $1', [time]);
    return rowCount ?? 0;
  }

  async addQueueActivity(activity: QueueActivityCounts[]): Promise<void> {
    if (activity.length === 0) return;
    const columns = ACTIVITY_COLUMNS.map(([, key]) => activity.map((counts) => counts[key]));
    // One statement for every queue; a concurrent take either sees the whole add or none of it.
    await run(
      this.direct,
      `INSERT INTO queue_activity (queue, ${ACTIVITY_COLUMNS.map(([column]) => column).join(', ')})
       SELECT * FROM unnest($1::text[], ${ACTIVITY_COLUMNS.map((_, index) => `$${index + 2}::bigint[]`).join(', ')})
       ON CONFLICT (queue) DO UPDATE SET ${ACTIVITY_COLUMNS.map(
         ([column]) => `${column} = queue_activity.${column} + excluded.${column}`,
       ).join(', ')}`,
      [activity.map((counts) => counts.queue), ...columns],
    );
  }

  async takeQueueActivity(): Promise<QueueActivityCounts[]> {
    const { rows } = await run<Record<string, number> & { queue: string }>(
      this.direct,
      'DELETE FROM queue_activity RETURNING *',
    );
    return rows.map((row) => {
      const counts: QueueActivityCounts = { queue: row.queue, ...NO_ACTIVITY };
      for (const [column, key] of ACTIVITY_COLUMNS) counts[key] = row[column]!;
      return counts;
    });
  }

  async saveClusterState(name: string, value: string): Promise<void> {
    await run(
      this.direct,
      `INSERT INTO cluster_state (name, value) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      [name, value],
    );
  }

  async clusterState(name: string): Promise<string | undefined> {
    const { rows } = await run<{ value: string }>(
      this.direct,
      'SELECT value FROM cluster_state WHERE name = $1',
      [name],
    );
    return rows[0]?.value;
  }

  async eventSourceMappings(): Promise<{ uuid: string; document: string }[]> {
    const { rows } = await run<{ uuid: string; document: string }>(
      this.direct,
      'SELECT uuid, document FROM event_source_mappings ORDER BY id',
      [],
    );
    return rows;
  }

  async saveEventSourceMapping(uuid: string, document: string): Promise<void> {
    await run(
      this.direct,
      `INSERT INTO event_source_mappings (uuid, document) VALUES ($1, $2)
       ON CONFLICT (uuid) DO UPDATE SET document = excluded.document`,
      [uuid, document],
    );
  }

  async changeEventSourceMapping(
    uuid: string,
    change: (document: string) => string | undefined,
  ): Promise<string | undefined> {
    return this.transaction(async (db) => {
      const { rows } = await run<{ document: string }>(
        db,
        'SELECT document FROM event_source_mappings WHERE uuid = $1 FOR UPDATE',
        [uuid],
      );
      const next = rows[0] && change(rows[0].document);
      if (next !== undefined)
        await run(db, 'UPDATE event_source_mappings SET document = $2 WHERE uuid = $1', [uuid, next]);
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
      await run(db, 'SELECT pg_advisory_xact_lock($1)', [MAPPING_ADD_LOCK]);
      const { rows } = await run<{ uuid: string; document: string }>(
        db,
        'SELECT uuid, document FROM event_source_mappings',
        [],
      );
      const conflict = rows.find((mapping) => conflicts(mapping.document));
      if (conflict) return conflict.uuid;
      await run(db, 'INSERT INTO event_source_mappings (uuid, document) VALUES ($1, $2)', [uuid, document]);
      return undefined;
    });
  }

  async deleteEventSourceMapping(uuid: string): Promise<void> {
    await run(this.direct, 'DELETE FROM event_source_mappings WHERE uuid = $1', [uuid]);
  }

  async claimLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const { rowCount } = await run(
      this.direct,
      `WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)
       INSERT INTO leases (name, holder, expires_at) SELECT $1, $2, ms + $3 FROM now
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE leases.holder = excluded.holder OR leases.expires_at <= (SELECT ms FROM now)
       RETURNING holder`,
      [name, holder, ttlMs],
    );
    return (rowCount ?? 0) > 0;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await run(this.direct, 'DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]);
  }

  /**
   * The bytes of the messages' bodies and attributes, and of the audit trail's rows. PostgreSQL compresses
   * large values and keeps the space of deleted rows for reuse, so its file sizes tell neither what is stored
   * nor when a purge made room. A scan of both tables (lengths come from the row headers, values are not
   * read); the service reads it at most once a second, and only with --max-stored-bytes.
   */
  async storedBytes(): Promise<number> {
    const { rows } = await run<{ bytes: number }>(
      this.direct,
      `SELECT ((SELECT coalesce(sum(octet_length(body) + coalesce(octet_length(message_attributes), 0)), 0)
                FROM messages)
            + (SELECT coalesce(sum(pg_column_size(a.*)), 0) FROM audit_log a))::bigint AS bytes`,
    );
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

/** queue_activity's columns and the counts they hold. */
const ACTIVITY_COLUMNS: ReadonlyArray<readonly [string, keyof ActivityCounts]> = [
  ['sent', 'sent'],
  ['received', 'received'],
  ['deleted', 'deleted'],
  ['empty_receives', 'emptyReceives'],
  ['sent_bytes', 'sentBytes'],
];
