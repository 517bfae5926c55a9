import type { MessageCounts, NewMessage } from '../contract.ts';
import { DeliveryState } from '../delivery-state.ts';
import type { MessageTable } from '../message-table.ts';
import { type AttemptClaims, deleteOneByOne, type StoreSteps } from '../planner.ts';
import type { MessageState } from '../receipts.ts';
import { type MessageRow, type MoveTaskRow, messageRowBytes, newMessageRow, type QueueRow } from '../rows.ts';
import type { Statements } from '../sqlite/statements.ts';
import { SeqList } from './seq-list.ts';

/**
 * The messages of `--in-memory`, held in memory: the rows themselves, and per queue the indexes the plans ask
 * through (a delivery state of every message, FIFO groups in seq order, fair-queue tenants), so that a send,
 * a receive and a delete run no statement. The same plans decide as over the database (planner.ts), and the
 * same store contract suites run on it (test/store, test/contract: "SQLite in memory"). It is the record:
 * nothing is cached, every step changes the rows and their indexes together. Queues, move tasks and the rest
 * stay in the in-memory database (`statements`): no message waits on them.
 *
 * A write that failed half way is not undone here, as the database's part of it is: in memory there is no
 * crash to survive, and no step throws once it has changed something (none reads what may be missing after
 * its first change).
 */
export class MemoryMessageTable implements MessageTable {
  private readonly rows = new Map<number, HeldMessage>();
  private readonly queues = new Map<number, QueueMessages>();
  /** Seqs are never reused, across queues and resets: a receipt handle never names another message. */
  private nextSeq = 1;
  /** Increases with every fair-queue tenant turn; tenants with the lowest last turn are served first. */
  private tenantTurn = 0;
  private heldBytes = 0;

  constructor(private readonly statements: Statements) {}

  readonly plan: StoreSteps = {
    inFlightUpperBound: (queueId, now) => this.queueOf(queueId).all.inFlight(now),
    countInFlight: (queueId, now) => this.queueOf(queueId).all.inFlight(now),
    visible: (queueId, now, limit) => this.rowsOf(this.queueOf(queueId).all.visibleSeqs(now, limit)),
    visibleOfTenant: (queueId, tenant, now, limit) => {
      const messages = this.queueOf(queueId).tenantMessages.get(tenant);
      return messages ? this.rowsOf(messages.visibleSeqs(now, limit)) : [];
    },
    tenantsToServe: (queueId, limit) =>
      [...this.queueOf(queueId).tenantTurns]
        .sort(([a, aTurn], [b, bTurn]) => aTurn - bTurn || compareText(a, b))
        .slice(0, limit)
        .map(([tenant]) => tenant),
    serveTenant: (queueId, tenant) => {
      const turns = this.queueOf(queueId).tenantTurns;
      if (turns.has(tenant)) turns.set(tenant, ++this.tenantTurn);
    },
    tenantHasMessages: (queueId, tenant) => (this.queueOf(queueId).tenantMessages.get(tenant)?.size ?? 0) > 0,
    forgetTenant: (queueId, tenant) => {
      this.queueOf(queueId).tenantTurns.delete(tenant);
    },
    noteTenant: (queueId, tenant) => this.noteTenant(queueId, tenant),
    joinTenantless: (queueId, seq) => {
      const row = this.rows.get(seq);
      if (row && row.group_id === null) this.joinTenant(this.queueOf(row.queue_id), row, '');
      const turns = this.queueOf(queueId).tenantTurns;
      if (!turns.has('')) turns.set('', 0);
    },
    hasTenants: (queueId) => this.queueOf(queueId).tenantTurns.size > 0,
    availableGroups: (queueId, now, limit, taken) => {
      const available: Array<[string, number]> = [];
      for (const entry of this.queueOf(queueId).groupAvailableAt)
        if (entry[1] <= now && !taken.includes(entry[0])) available.push(entry);
      return available
        .sort(([a, aAt], [b, bAt]) => aAt - bAt || compareText(a, b))
        .slice(0, limit)
        .map(([groupId]) => groupId);
    },
    groupMessages: (queueId, groupId, limit) =>
      this.rowsOf(this.queueOf(queueId).groupMembers.get(groupId)?.first(limit) ?? []),
    // One writer: nothing to lock against.
    lockGroup: () => {},
    groupHeadVisibleAt: (queueId, groupId) => {
      const head = this.queueOf(queueId).groupMembers.get(groupId)?.head();
      return head === undefined ? undefined : this.rows.get(head)?.visible_at;
    },
    setGroupAvailableAt: (queueId, groupId, at) => {
      this.queueOf(queueId).groupAvailableAt.set(groupId, at);
    },
    addGroupIfAbsent: (queueId, groupId, at) => {
      const groups = this.queueOf(queueId).groupAvailableAt;
      if (!groups.has(groupId)) groups.set(groupId, at);
    },
    forgetGroup: (queueId, groupId) => {
      this.queueOf(queueId).groupAvailableAt.delete(groupId);
    },
    rebuildGroupRows: (queueId) => {
      const queue = this.queueOf(queueId);
      queue.groupAvailableAt.clear();
      for (const [groupId, members] of queue.groupMembers) {
        const head = members.head();
        if (head !== undefined) queue.groupAvailableAt.set(groupId, this.rows.get(head)!.visible_at);
      }
    },
    isFifo: (queueId) => this.isFifo(queueId),
    writeClaims: (_request, claimed) => {
      for (const message of claimed) {
        const row = this.rows.get(message.seq)!;
        row.receive_count = message.receiveCount;
        row.first_received_at = message.firstReceivedAt ?? null;
        row.receipt_token = message.receiptToken ?? null;
        row.delivery_started_at = message.deliveryStartedAt ?? null;
        this.setVisibleAt(row, message.visibleAt, true);
      }
    },
    moveToDeadLetter: (seq, deadLetter, now) => {
      const row = this.rows.get(seq)!;
      this.leaveQueue(row);
      // A dead-letter queue is of its source's type (queue-actions.ts), so the message keeps its tenant.
      row.queue_id = deadLetter.queueId;
      row.visible_at = now;
      row.receipt_token = null;
      row.delivery_started_at = null;
      row.dead_letter_source_arn = deadLetter.sourceArn;
      if (deadLetter.resetSentAt) row.sent_at = now;
      row.expires_at = row.sent_at + deadLetter.retentionMs;
      this.joinQueue(row);
    },
    attemptClaims: (queueId, attemptId, now) => {
      const attempt = this.queueOf(queueId).attempts.get(attemptId);
      return attempt && attempt.expiresAt > now ? attempt.claims : undefined;
    },
    reclaim: (queueId, claims, visibleUntil) => {
      const rows: MessageRow[] = [];
      for (const [seq, receiveCount] of claims) {
        const row = this.rows.get(seq);
        if (row?.queue_id !== queueId || row.receive_count !== receiveCount) continue;
        this.setVisibleAt(row, visibleUntil, false);
        rows.push({ ...row });
      }
      return rows;
    },
    rememberAttempt: (queueId, attempt, claims) => {
      this.queueOf(queueId).attempts.set(attempt.id, { claims, expiresAt: attempt.expiresAt });
    },
    lockMoveTask: (handle) => this.statements.moveTaskByHandle.get(handle) as MoveTaskRow | undefined,
    movable: (queueId, { upToSeq, now, limit, fifo }) => {
      const movable: MessageRow[] = [];
      // FIFO: a group is held back from its first message not visible on (in flight or delayed).
      const heldBack = new Set<string | null>();
      for (const seq of this.queueOf(queueId).all.seqs()) {
        if (seq > upToSeq || movable.length === limit) break;
        const row = this.rows.get(seq)!;
        if (row.visible_at > now) {
          if (fifo) heldBack.add(row.group_id);
          continue;
        }
        if (row.expires_at > now && !(fifo && heldBack.has(row.group_id))) movable.push(row);
      }
      return movable;
    },
    insertMoved: (seq, destination, moved) => {
      const source = this.rows.get(seq)!;
      this.hold({
        ...source,
        seq: this.nextSeq++,
        queue_id: destination.queueId,
        message_id: moved.messageId,
        sent_at: moved.now,
        visible_at: destination.visibleAt,
        expires_at: destination.expiresAt,
        receive_count: 0,
        first_received_at: null,
        receipt_token: null,
        delivery_started_at: null,
        dead_letter_source_arn: null,
        group_id: moved.groupId,
        tenant: destination.fifo ? null : moved.groupId,
      });
    },
    deleteMessage: (seq) => {
      const row = this.rows.get(seq);
      if (row) this.release(row);
    },
    addMoved: (handle, count) => this.statements.addMoved.get(count, handle) as MoveTaskRow,
    deduplicated: (queueId, messages) => {
      const kept = this.queueOf(queueId).deduplication;
      return messages.flatMap((message) => {
        const { scope, id } = message.deduplication!;
        const original = kept.get(deduplicationKey(scope, id));
        return original && original.expiresAt > message.sentAt
          ? [{ scope, id, messageId: original.messageId, seq: original.seq }]
          : [];
      });
    },
    insertMessages: (queueId, messages) => messages.map((message) => this.insertMessage(queueId, message)),
    rememberDeduplication: (queueId, sent) => {
      const kept = this.queueOf(queueId).deduplication;
      for (const { message, seq } of sent) {
        const { scope, id, expiresAt } = message.deduplication!;
        kept.set(deduplicationKey(scope, id), { messageId: message.messageId, seq, expiresAt });
      }
    },
    triageRow: (queueId, seq) => {
      const row = this.rows.get(seq);
      return row?.queue_id === queueId ? row : undefined;
    },
    // One process: its long polls are woken by the store's caller.
    wake: () => {},
    lockGroupsOf: () => {},
    deleteByReceipts: (queueId, receipts, fifo) =>
      deleteOneByOne(
        receipts,
        (seq) => this.messageState(queueId, seq),
        (receipt) => {
          const row = this.rows.get(receipt.seq);
          if (
            row?.queue_id !== queueId ||
            row.receipt_token !== receipt.token ||
            row.receive_count < receipt.minReceiveCount ||
            row.receive_count > receipt.maxReceiveCount ||
            row.visible_at <= receipt.visibleAfter
          )
            return undefined;
          this.release(row);
          return fifo ? { groupId: row.group_id } : {};
        },
      ),
    messageStates: (queueId, seqs) =>
      seqs.flatMap((seq) => {
        const state = this.messageState(queueId, seq);
        return state ? [{ ...state, seq }] : [];
      }),
    lockGroupOf: () => {},
    messageState: (queueId, seq) => this.messageState(queueId, seq),
    setVisibleAt: (_queueId, seq, visibleAt) => {
      const row = this.rows.get(seq);
      if (row) this.setVisibleAt(row, visibleAt, false);
    },
    lastPurgedAt: (queueId) =>
      (this.statements.queueById.get(queueId) as QueueRow | undefined)?.last_purged_at,
    purge: (queueId, now) => {
      const queue = this.queueOf(queueId);
      for (const seq of queue.all.seqs()) {
        const row = this.rows.get(seq)!;
        if (row.sent_at <= now) this.release(row);
      }
      queue.deduplication.clear();
      this.statements.setPurgedAt.run(now, queueId);
    },
    deleteExpired: (now, limit) => {
      const deleted: Array<{ queue_id: number; group_id: string | null }> = [];
      for (const queue of this.queues.values()) {
        for (const seq of queue.all.expiredSeqs(now, limit - deleted.length)) {
          const row = this.rows.get(seq)!;
          this.release(row);
          deleted.push({ queue_id: row.queue_id, group_id: row.group_id });
        }
        if (deleted.length === limit) break;
      }
      return deleted;
    },
    forgetExpired: (now) => {
      for (const queue of this.queues.values()) {
        for (const [key, original] of queue.deduplication)
          if (original.expiresAt <= now) queue.deduplication.delete(key);
        for (const [id, attempt] of queue.attempts) if (attempt.expiresAt <= now) queue.attempts.delete(id);
      }
    },
  };

  isFifo(queueId: number): boolean {
    const queue = this.queues.get(queueId);
    if (queue) return queue.fifo;
    return (this.statements.queueKind.get(queueId) as { fifo: number } | undefined)?.fifo === 1;
  }

  // Nothing to read: the messages are all in memory from the start.
  warmUp(): undefined {
    return undefined;
  }

  counts(queueId: number, now: number): MessageCounts {
    return this.queueOf(queueId).all.counts(now);
  }

  nextVisibleAt(queueId: number, now: number): number | undefined {
    return this.queueOf(queueId).all.nextVisibleAt(now);
  }

  nextExpiryAt(queueId: number, now: number): number | undefined {
    return this.queueOf(queueId).all.nextExpiryAt(now);
  }

  lastSeq(queueId: number): number {
    return this.queueOf(queueId).all.lastSeq();
  }

  page(
    queueId: number,
    { afterSeq, limit, now }: { afterSeq: number; limit: number; now: number },
  ): MessageRow[] {
    const page: MessageRow[] = [];
    for (const seq of this.queueOf(queueId).all.seqs()) {
      if (page.length === limit) break;
      const row = this.rows.get(seq)!;
      if (seq > afterSeq && row.expires_at > now) page.push(row);
    }
    return page;
  }

  redelayWaiting(queueId: number, delayMs: number): void {
    for (const seq of this.queueOf(queueId).all.seqs()) {
      const row = this.rows.get(seq)!;
      if (row.receive_count === 0) this.setVisibleAt(row, row.sent_at + delayMs, false);
    }
  }

  deleteQueue(queueId: number): void {
    const queue = this.queues.get(queueId);
    if (!queue) return;
    for (const seq of queue.all.seqs()) this.release(this.rows.get(seq)!);
    this.queues.delete(queueId);
  }

  // The table is the record, not a cache of the database's: a rollback there leaves nothing to forget here.
  forget(): void {}

  reset(): void {
    this.rows.clear();
    this.queues.clear();
    this.heldBytes = 0;
  }

  bytesInMemory(): number {
    return this.heldBytes;
  }

  /** The queue's messages, an empty set for a queue with none yet. */
  private queueOf(queueId: number): QueueMessages {
    let queue = this.queues.get(queueId);
    if (!queue) {
      queue = new QueueMessages(this.isFifo(queueId));
      this.queues.set(queueId, queue);
    }
    return queue;
  }

  private rowsOf(seqs: readonly number[]): MessageRow[] {
    return seqs.map((seq) => this.rows.get(seq)!);
  }

  private messageState(queueId: number, seq: number): MessageState | undefined {
    const row = this.rows.get(seq);
    if (row?.queue_id !== queueId) return undefined;
    return {
      receipt_token: row.receipt_token,
      receive_count: row.receive_count,
      visible_at: row.visible_at,
      delivery_started_at: row.delivery_started_at,
      group_id: row.group_id,
    };
  }

  /** Stores a new message with its FIFO group or fair-queue tenant; returns its seq. */
  private insertMessage(queueId: number, message: NewMessage): number {
    const queue = this.queueOf(queueId);
    // In a fair queue, messages without a group are the tenant ''.
    const groupId = message.groupId ?? (!queue.fifo && queue.tenantTurns.size > 0 ? '' : null);
    const seq = this.nextSeq++;
    this.hold({
      seq,
      queue_id: queueId,
      ...newMessageRow(message),
      receive_count: 0,
      first_received_at: null,
      receipt_token: null,
      delivery_started_at: null,
      dead_letter_source_arn: null,
      group_id: groupId,
      tenant: queue.fifo ? null : groupId,
    });
    if (message.groupId !== undefined) {
      // A FIFO group with messages already has its row, and its oldest message is not this one.
      if (queue.fifo) this.plan.addGroupIfAbsent(queueId, message.groupId, message.visibleAt);
      else this.noteTenant(queueId, message.groupId);
    }
    return seq;
  }

  /**
   * `tenant` and '' (messages without a group) become tenants of the queue, if not yet; when '' is new, the
   * queue's messages without a group join it.
   */
  private noteTenant(queueId: number, tenant: string): void {
    const queue = this.queueOf(queueId);
    if (!queue.tenantTurns.has(tenant)) queue.tenantTurns.set(tenant, 0);
    if (queue.tenantTurns.has('')) return;
    queue.tenantTurns.set('', 0);
    for (const seq of queue.all.seqs()) {
      const row = this.rows.get(seq)!;
      if (row.group_id === null) this.joinTenant(queue, row, '');
    }
  }

  /** A message without a group joins a fair queue's tenant. */
  private joinTenant(queue: QueueMessages, row: HeldMessage, tenant: string): void {
    row.group_id = tenant;
    row.tenant = tenant;
    queue.tenantOf(tenant).add(row.seq, row.visible_at, row.expires_at, row.sent_at, row.receive_count > 0);
  }

  private hold(row: HeldMessage): void {
    this.rows.set(row.seq, row);
    this.heldBytes += messageRowBytes(row);
    this.joinQueue(row);
  }

  private release(row: HeldMessage): void {
    this.rows.delete(row.seq);
    this.heldBytes -= messageRowBytes(row);
    this.leaveQueue(row);
  }

  /** Enters the message in its queue's indexes. */
  private joinQueue(row: HeldMessage): void {
    const queue = this.queueOf(row.queue_id);
    const received = row.receive_count > 0;
    queue.all.add(row.seq, row.visible_at, row.expires_at, row.sent_at, received);
    if (queue.fifo) {
      if (row.group_id !== null) queue.membersOf(row.group_id).insert(row.seq);
    } else if (row.tenant !== null) {
      queue.tenantOf(row.tenant).add(row.seq, row.visible_at, row.expires_at, row.sent_at, received);
    }
  }

  /** Takes the message out of its queue's indexes. */
  private leaveQueue(row: HeldMessage): void {
    const queue = this.queueOf(row.queue_id);
    queue.all.remove(row.seq);
    if (queue.fifo) {
      if (row.group_id === null) return;
      const members = queue.groupMembers.get(row.group_id);
      members?.remove(row.seq);
      if (members?.size === 0) queue.groupMembers.delete(row.group_id);
    } else if (row.tenant !== null) {
      const messages = queue.tenantMessages.get(row.tenant);
      messages?.remove(row.seq);
      if (messages?.size === 0) queue.tenantMessages.delete(row.tenant);
    }
  }

  /** The message becomes visible at `visibleAt`; `claimed`: a receive took it (it counts as received). */
  private setVisibleAt(row: HeldMessage, visibleAt: number, claimed: boolean): void {
    row.visible_at = visibleAt;
    const queue = this.queueOf(row.queue_id);
    const tenant = row.tenant === null || queue.fifo ? undefined : queue.tenantMessages.get(row.tenant);
    if (claimed) {
      queue.all.claim(row.seq, visibleAt);
      tenant?.claim(row.seq, visibleAt);
    } else {
      queue.all.setVisibleAt(row.seq, visibleAt);
      tenant?.setVisibleAt(row.seq, visibleAt);
    }
  }
}

/** A message as held: its row, and the fair-queue tenant it is taken by (a standard queue's group). */
interface HeldMessage extends MessageRow {
  tenant: string | null;
}

/** One queue's messages: its indexes, and what its sends and receives remember. */
class QueueMessages {
  /** Every message of the queue: visibility order, in-flight count, counts, expiry. */
  readonly all = new DeliveryState();
  /** FIFO: each group's messages, in seq order. */
  readonly groupMembers = new Map<string, SeqList>();
  /** FIFO: when each group's oldest message is (or was) visible; the plans keep it (planner.ts). */
  readonly groupAvailableAt = new Map<string, number>();
  /** Fair queues: the tenants, each with the turn it was last served at (0: never). */
  readonly tenantTurns = new Map<string, number>();
  /** Fair queues: each tenant's messages. */
  readonly tenantMessages = new Map<string, DeliveryState>();
  /** Deduplication ids still in their window, by scope and id. */
  readonly deduplication = new Map<string, { messageId: string; seq: number; expiresAt: number }>();
  /** FIFO receive attempts still remembered, by ReceiveRequestAttemptId. */
  readonly attempts = new Map<string, { claims: AttemptClaims; expiresAt: number }>();

  constructor(readonly fifo: boolean) {}

  membersOf(groupId: string): SeqList {
    let members = this.groupMembers.get(groupId);
    if (!members) {
      members = new SeqList();
      this.groupMembers.set(groupId, members);
    }
    return members;
  }

  tenantOf(tenant: string): DeliveryState {
    let messages = this.tenantMessages.get(tenant);
    if (!messages) {
      messages = new DeliveryState();
      this.tenantMessages.set(tenant, messages);
    }
    return messages;
  }
}

function deduplicationKey(scope: string, id: string): string {
  return `${scope}\n${id}`;
}

/** SQLite's ORDER BY on text: by code unit (BINARY collation). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
