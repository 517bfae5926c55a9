import type { MessageCounts, NewMessage } from '../contract.ts';
import { DeliveryState } from '../delivery-state.ts';
import type { MessageTable } from '../message-table.ts';
import { type AttemptClaims, deleteOneByOne, type StoreSteps } from '../planner.ts';
import type { MessageState } from '../receipts.ts';
import { type MessageRow, type MoveTaskRow, newMessageRow, type QueueRow } from '../rows.ts';
import type { Statements } from './statements.ts';

/**
 * The steps the shared plans (planner.ts) decide with, over the statements of statements.ts, and what the
 * store, the database's one writer, keeps in memory to answer them with fewer statements: the queues' kinds,
 * which queues have no fair-queue tenant, in-flight bounds and standard queues' delivery states. Every step
 * runs inside the store's open write transaction.
 */
export class SqliteSteps implements MessageTable {
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
  constructor(
    private readonly statements: Statements,
    private readonly warmUpRows: number,
  ) {
    this.tenantTurn = (statements.lastTenantTurn.get() as { turn: number }).turn;
  }

  /** The statements the shared plans (planner.ts) decide with, inside the open transaction. */
  readonly plan: StoreSteps = {
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
    deduplicated: (queueId, messages) =>
      messages.flatMap((message) => {
        const { scope, id } = message.deduplication!;
        const original = this.statements.deduplicated.get(queueId, scope, id, message.sentAt) as
          | { message_id: string; seq: number }
          | undefined;
        return original ? [{ scope, id, messageId: original.message_id, seq: original.seq }] : [];
      }),
    insertMessages: (queueId, messages) => messages.map((message) => this.insertMessage(queueId, message)),
    rememberDeduplication: (queueId, sent) => {
      for (const { message, seq } of sent) {
        const { scope, id, expiresAt } = message.deduplication!;
        this.statements.rememberDeduplication.run(queueId, scope, id, message.messageId, seq, expiresAt);
      }
    },
    triageRow: (queueId, seq) => {
      const row = this.statements.rowBySeq.get(seq);
      return row?.queue_id === queueId ? row : undefined;
    },
    // One process: its long polls are woken by the store's caller.
    wake: () => {},
    // One writer: nothing to lock against.
    lockGroupsOf: () => {},
    deleteByReceipts: (queueId, receipts, fifo) =>
      deleteOneByOne(
        receipts,
        (seq) => this.messageState(queueId, seq),
        (receipt) => {
          const byReceipt = { ...receipt, queueId };
          if (fifo) {
            const row = this.statements.deleteGroupMessage.get(byReceipt);
            return row && { groupId: row.group_id };
          }
          if (this.statements.deleteMessage.run(byReceipt).changes === 0) return undefined;
          this.deliveryStates.get(queueId)?.remove(receipt.seq);
          return {};
        },
      ),
    messageStates: (queueId, seqs) =>
      seqs.flatMap((seq) => {
        const state = this.messageState(queueId, seq);
        return state ? [{ ...state, seq }] : [];
      }),
    lockGroupOf: () => {},
    messageState: (queueId, seq) => this.messageState(queueId, seq),
    setVisibleAt: (queueId, seq, visibleAt, was, now) => {
      this.statements.setVisibleAt.run(visibleAt, seq);
      this.deliveryStates.get(queueId)?.setVisibleAt(seq, visibleAt);
      // A lapsed handle (standard queues) can hide a message that was visible again.
      if (was.visible_at <= now && visibleAt > now) this.notePutInFlight(queueId);
    },
    lastPurgedAt: (queueId) =>
      (this.statements.queueById.get(queueId) as QueueRow | undefined)?.last_purged_at,
    purge: (queueId, now) => {
      this.statements.purgeMessages.run(queueId, now);
      this.deliveryStates.delete(queueId);
      this.statements.forgetDeduplication.run(queueId);
      this.statements.setPurgedAt.run(now, queueId);
    },
    deleteExpired: (now, limit) => {
      const deleted = this.statements.deleteExpired.all(now, limit) as Array<{
        seq: number;
        queue_id: number;
        group_id: string | null;
      }>;
      for (const row of deleted) this.deliveryStates.get(row.queue_id)?.remove(row.seq);
      return deleted;
    },
    forgetExpired: (now) => {
      this.statements.forgetExpiredDeduplication.run(now);
      this.statements.forgetExpiredAttempts.run(now);
    },
  };

  isFifo(queueId: number): boolean {
    let fifo = this.fifoById.get(queueId);
    if (fifo === undefined) {
      const row = this.statements.queueKind.get(queueId) as { fifo: number } | undefined;
      fifo = row?.fifo === 1;
      if (row) this.fifoById.set(queueId, fifo);
    }
    return fifo;
  }

  /** Whether the queue is a fair queue (some message named a tenant), answered from memory when it is not. */
  hasTenants(queueId: number): boolean {
    if (this.queuesWithoutTenants.has(queueId)) return false;
    if (this.statements.anyTenant.get(queueId) !== undefined) return true;
    this.queuesWithoutTenants.add(queueId);
    return false;
  }

  /**
   * A fair queue's tenants, and '' for its messages without a group, once any message names a tenant; the
   * queue's messages without a group join the tenant '' then.
   */
  noteTenant(queueId: number, tenant: string): void {
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
  deliveryOf(queueId: number): DeliveryState | undefined {
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
  warmUp(queueId: number): Promise<void> | undefined {
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
  deliveryAdded(queueId: number, seq: number, visibleAt: number, expiresAt: number, sentAt: number): void {
    this.deliveryStates.get(queueId)?.add(seq, visibleAt, expiresAt, sentAt, false);
  }

  /** Deletes a message by row id, and from its queue's delivery state. */
  deleteRow(seq: number): void {
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
  notePutInFlight(queueId: number): void {
    const bound = this.inFlightBound.get(queueId);
    if (bound !== undefined) this.inFlightBound.set(queueId, bound + 1);
  }

  /** Inserts a new message with its FIFO group or fair-queue tenant; returns its seq. */
  insertMessage(queueId: number, message: NewMessage): number {
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

  private messageState(queueId: number, seq: number): MessageState | undefined {
    return this.statements.messageStateBySeq.get(seq, queueId) as MessageState | undefined;
  }

  counts(queueId: number, now: number): MessageCounts {
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

  nextVisibleAt(queueId: number, now: number): number | undefined {
    const delivery = this.deliveryOf(queueId);
    if (delivery) return delivery.nextVisibleAt(now);
    return (this.statements.nextVisibleAt.get(queueId, now) as { at: number | null }).at ?? undefined;
  }

  nextExpiryAt(queueId: number, now: number): number | undefined {
    return (this.statements.nextExpiryAt.get(queueId, now) as { at: number | null }).at ?? undefined;
  }

  lastSeq(queueId: number): number {
    return (this.statements.lastSeq.get(queueId) as { seq: number }).seq;
  }

  page(queueId: number, options: { afterSeq: number; limit: number; now: number }): MessageRow[] {
    return this.statements.messagePage.all(queueId, options.afterSeq, options.now, options.limit);
  }

  redelayWaiting(queueId: number, delayMs: number): void {
    this.statements.redelayWaiting.run(delayMs, queueId);
    this.deliveryStates.delete(queueId);
  }

  deleteQueue(queueId: number): void {
    this.statements.deleteQueueMessages.run(queueId);
    for (const statement of this.statements.forgetQueueState) statement.run(queueId);
    this.fifoById.delete(queueId);
    this.inFlightBound.delete(queueId);
    this.deliveryStates.delete(queueId);
  }

  // The store empties the tables; what memory learned of them goes.
  reset(): void {
    this.forget();
  }

  // Every message is in the database.
  bytesInMemory(): number {
    return 0;
  }

  /**
   * Drops what memory learned of the tables: inside a transaction that is being rolled back (in whole or to a
   * savepoint), or before a reset.
   */
  forget(): void {
    this.queuesWithoutTenants.clear();
    this.inFlightBound.clear();
    this.fifoById.clear();
    this.deliveryStates.clear();
  }
}
