import type pg from 'pg';
import type { NewMessage } from '../contract.ts';
import type { AttemptClaims, StoreSteps } from '../planner.ts';
import type { MessageState } from '../receipts.ts';
import { type MessageRow, type MoveTaskRow, type NewMessageRow, newMessageRow } from '../rows.ts';
import { type Db, run } from './connection.ts';
import { SQL } from './statements.ts';

/** What the store lends its steps: the queues' kinds it caches, and the wake of other nodes. */
export interface StepsHost {
  isFifo(queueId: number): Promise<boolean>;
  announce(queueIds: Iterable<number>): Promise<void>;
  /** The channel and payload of a wake of the queue, for a statement that notifies on its own. */
  wakeOf(queueId: number): [channel: string, payload: string];
}

/**
 * The statements the shared plans (planner.ts) decide with, in the transaction `db` (or, for a single
 * statement, the pool). Receivers on several nodes never wait for each other: they skip the message and group
 * rows another one holds.
 */
export function planSteps(db: Db, store: StepsHost): StoreSteps {
  const rows = async <R extends pg.QueryResultRow>(text: string, values: unknown[]) =>
    (await run<R>(db, text, values)).rows;
  const count = async (text: string, queueId: number, now: number, limit: number) =>
    (await rows<{ n: number }>(text, [queueId, now, limit]))[0]!.n;
  const done = async (text: string, values: unknown[]) => {
    await run(db, text, values);
  };
  return {
    // Counting invisible index entries first bounds the in-flight count from above without reading rows.
    inFlightUpperBound: (queueId, now, limit) => count(SQL.countInvisible, queueId, now, limit),
    countInFlight: (queueId, now, limit) => count(SQL.countInFlight, queueId, now, limit),
    visible: (queueId, now, limit) => rows<MessageRow>(SQL.selectVisible, [queueId, now, limit]),
    visibleOfTenant: (queueId, tenant, now, limit) =>
      rows<MessageRow>(SQL.selectVisibleOfTenant, [queueId, tenant, now, limit]),
    tenantsToServe: async (queueId, limit) =>
      (await rows<{ tenant: string }>(SQL.leastRecentlyServedTenants, [queueId, limit])).map(
        (row) => row.tenant,
      ),
    serveTenant: (queueId, tenant) => done(SQL.serveTenant, [queueId, tenant]),
    tenantHasMessages: async (queueId, tenant) =>
      (await rows(SQL.tenantHasMessages, [queueId, tenant])).length > 0,
    forgetTenant: (queueId, tenant) => done(SQL.forgetTenant, [queueId, tenant]),
    // One statement.
    noteTenant: (queueId, tenant) => done(SQL.noteTenant, [queueId, [tenant, '']]),
    joinTenantless: (queueId, seq) => done(SQL.joinTenantless, [queueId, seq]),
    hasTenants: async (queueId) => (await rows(SQL.anyTenant, [queueId])).length > 0,
    availableGroups: async (queueId, now, limit, taken) =>
      (await rows<{ group_id: string }>(SQL.availableGroups, [queueId, now, limit, taken])).map(
        (row) => row.group_id,
      ),
    groupMessages: (queueId, groupId, limit) => rows<MessageRow>(SQL.groupInOrder, [queueId, groupId, limit]),
    lockGroup: (queueId, groupId) => lockGroup(db, queueId, groupId),
    groupHeadVisibleAt: async (queueId, groupId) =>
      (await rows<{ visible_at: number }>(SQL.groupHead, [queueId, groupId]))[0]?.visible_at,
    setGroupAvailableAt: (queueId, groupId, at) => done(SQL.upsertGroup, [queueId, groupId, at]),
    addGroupIfAbsent: (queueId, groupId, at) => done(SQL.insertGroupIfAbsent, [queueId, groupId, at]),
    forgetGroup: (queueId, groupId) => done(SQL.forgetGroup, [queueId, groupId]),
    rebuildGroupRows: async (queueId) => {
      await done(SQL.forgetGroups, [queueId]);
      await done(SQL.rebuildGroups, [queueId]);
    },
    isFifo: (queueId) => store.isFifo(queueId),
    // One statement for all the receive's claims.
    writeClaims: (request, claimed) =>
      done(SQL.claim, [
        request.visibleUntil,
        request.now,
        claimed.map((message) => message.seq),
        claimed.map((message) => message.receiveCount),
        claimed.map((message) => message.firstReceivedAt),
        claimed.map((message) => message.receiptToken),
      ]),
    moveToDeadLetter: (seq, deadLetter, now) =>
      done(SQL.moveToDeadLetter, [
        seq,
        deadLetter.queueId,
        now,
        deadLetter.sourceArn,
        deadLetter.resetSentAt,
        deadLetter.retentionMs,
      ]),
    attemptClaims: async (queueId, attemptId, now) => {
      // Two nodes retrying one attempt at once: the second waits here and then finds the first's claims.
      await done(SQL.lockAttempt, [queueId, `attempt\n${attemptId}`]);
      const [record] = await rows<{ claims: string }>(SQL.attemptClaims, [queueId, attemptId, now]);
      return record && (JSON.parse(record.claims) as AttemptClaims);
    },
    reclaim: (queueId, claims, visibleUntil) =>
      rows<MessageRow>(SQL.reclaim, [
        queueId,
        visibleUntil,
        claims.map(([seq]) => seq),
        claims.map(([, receiveCount]) => receiveCount),
      ]),
    rememberAttempt: (queueId, attempt, claims) =>
      done(SQL.rememberAttempt, [queueId, attempt.id, JSON.stringify(claims), attempt.expiresAt]),
    lockMoveTask: async (handle) => (await rows<MoveTaskRow>(SQL.lockMoveTask, [handle]))[0],
    movable: (queueId, options) =>
      rows<MessageRow>(options.fifo ? SQL.movableOfFifo : SQL.movable, [
        queueId,
        options.upToSeq,
        options.now,
        options.limit,
      ]),
    insertMoved: (seq, destination, moved) =>
      done(SQL.insertMoved, [
        seq,
        destination.queueId,
        moved.messageId,
        moved.now,
        destination.visibleAt,
        destination.expiresAt,
        moved.groupId,
        destination.fifo ? null : moved.groupId,
      ]),
    deleteMessage: (seq) => done(SQL.deleteBySeq, [seq]),
    // Locks are taken in sorted order (deduplication ids, then groups), so two sends naming the same ones in
    // other orders wait instead of deadlocking. Two nodes sending the same id at once: the second waits for
    // the first's lock and then finds its message.
    deduplicated: async (queueId, messages) => {
      const keys = [...new Set(messages.map(({ deduplication: d }) => `${d!.scope}\n${d!.id}`))].sort();
      await done(SQL.lockDeduplicationIds, [queueId, keys]);
      const found = await rows<{ scope: string; deduplication_id: string; message_id: string; seq: number }>(
        SQL.deduplicated,
        [
          queueId,
          messages.map((message) => message.deduplication!.scope),
          messages.map((message) => message.deduplication!.id),
          messages.map((message) => message.sentAt),
        ],
      );
      return found.map((row) => ({
        scope: row.scope,
        id: row.deduplication_id,
        messageId: row.message_id,
        seq: row.seq,
      }));
    },
    insertMessages: async (queueId, messages, fifo) => {
      if (!fifo) {
        // Fair queues: the batch's groups are tenants, and '' (messages without a group) with them.
        const tenants = [...new Set(messages.flatMap((message) => message.groupId ?? []))];
        return insertMessages(db, queueId, messages, {
          tenants: tenants.length > 0 ? [...tenants, ''] : [],
          wake: store.wakeOf(queueId),
        });
      }
      // The groups' rows are locked before the messages take their seqs, so that concurrent sends to one group
      // commit in seq order and a receive never sees a later message of the group before an earlier one.
      const groups = new Map<string, number>();
      for (const message of messages)
        if (message.groupId !== undefined && !groups.has(message.groupId))
          groups.set(message.groupId, message.visibleAt);
      // In name order, as the database sorts them: the lock order every writer keeps.
      await done(SQL.insertGroupsIfAbsent, [queueId, [...groups.keys()], [...groups.values()]]);
      return insertMessages(db, queueId, messages, { tenants: [] });
    },
    rememberDeduplication: (queueId, sent) =>
      done(SQL.rememberDeduplication, [
        queueId,
        sent.map(({ message }) => message.deduplication!.scope),
        sent.map(({ message }) => message.deduplication!.id),
        sent.map(({ message }) => message.messageId),
        sent.map(({ seq }) => seq),
        sent.map(({ message }) => message.deduplication!.expiresAt),
      ]),
    // SKIP LOCKED: a message a receive on another node is claiming at that instant counts as in flight, and
    // is not waited for.
    triageRow: async (queueId, seq) => {
      const [row] = await rows<MessageRow>(SQL.lockTriageRow, [seq, queueId]);
      if (row) return row;
      const [held] = await rows<{ message_id: string; expires_at: number }>(SQL.heldRow, [seq, queueId]);
      return held && { held };
    },
    wake: (queueId) => store.announce([queueId]),
    lockGroupsOf: async (queueId, seqs) => {
      // In name order: the lock order every writer keeps.
      for (const { group_id } of await rows<{ group_id: string }>(SQL.groupsOfMessages, [queueId, seqs]))
        await lockGroup(db, queueId, group_id);
    },
    // One statement for every receipt; a message several receipts pass for is deleted once.
    deleteByReceipts: async (queueId, receipts) =>
      (
        await rows<MessageState & { seq: number }>(SQL.deleteByReceipts, [
          queueId,
          receipts.map((receipt) => receipt.seq),
          receipts.map((receipt) => receipt.token),
          receipts.map((receipt) => receipt.minReceiveCount),
          receipts.map((receipt) => receipt.maxReceiveCount),
          receipts.map((receipt) => receipt.visibleAfter),
        ])
      ).map((row) => ({ seq: row.seq, groupId: row.group_id, before: row })),
    messageStates: (queueId, seqs) =>
      rows<MessageState & { seq: number }>(SQL.messageStates, [queueId, seqs]),
    lockGroupOf: async (queueId, seq) => {
      const [message] = await rows<{ group_id: string | null }>(SQL.groupOf, [seq, queueId]);
      const groupId = message?.group_id ?? undefined;
      if (groupId !== undefined) await lockGroup(db, queueId, groupId);
    },
    messageState: async (queueId, seq) => (await rows<MessageState>(SQL.lockMessageState, [seq, queueId]))[0],
    setVisibleAt: async (queueId, seq, visibleAt, _was, now) => {
      await done(SQL.setVisibleAt, [visibleAt, seq]);
      // Long polls on other nodes learn of a message visible again.
      if (visibleAt <= now) await store.announce([queueId]);
    },
    lastPurgedAt: async (queueId) =>
      (await rows<{ last_purged_at: number | null }>(SQL.lockPurgedAt, [queueId]))[0]?.last_purged_at,
    purge: async (queueId, now) => {
      await done(SQL.purgeMessages, [queueId, now]);
      await done(SQL.forgetDeduplication, [queueId]);
      await done(SQL.setPurgedAt, [queueId, now]);
    },
    deleteExpired: (now, limit) =>
      rows<{ queue_id: number; group_id: string | null }>(SQL.deleteExpired, [now, limit]),
    forgetExpired: async (now) => {
      await done(SQL.forgetExpiredDeduplication, [now]);
      await done(SQL.forgetExpiredAttempts, [now]);
    },
    addMoved: async (handle, moved) => (await rows<MoveTaskRow>(SQL.addMoved, [moved, handle]))[0]!,
  };
}

/** Waits for the FIFO group's row lock (held by a receive taking from it); a group without a row locks nothing. */
export async function lockGroup(db: Db, queueId: number, groupId: string): Promise<void> {
  await run(db, SQL.lockGroup, [queueId, groupId]);
}

/**
 * Inserts the messages in one statement, in order, and returns their seqs in the same order. In the same
 * statement: `tenants` become the queue's fair-queue tenants (the queue's messages without a group join the
 * tenant '' when it is new), a message without a group is the tenant '' once the queue has tenants, and with
 * `wake` the other nodes are told (at commit) that the queue has new messages.
 */
async function insertMessages(
  db: Db,
  queueId: number,
  messages: readonly NewMessage[],
  options: { tenants: string[]; wake?: [channel: string, payload: string] },
): Promise<number[]> {
  const rows = messages.map(newMessageRow);
  const column = <T>(pick: (row: NewMessageRow) => T) => rows.map(pick);
  const inserted = await run<{ seq: number }>(db, SQL.insertMessages, [
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
    ...(options.wake ?? [null, null]),
    options.wake !== undefined,
  ]);
  // Seqs come from one sequence in insertion order, which ORDER BY position makes the batch's order.
  return inserted.rows.map((row) => row.seq).sort((a, b) => a - b);
}
