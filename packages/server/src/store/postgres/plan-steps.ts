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
  const count = async (condition: string, queueId: number, now: number, limit: number) =>
    (
      await rows<{ n: number }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM messages WHERE queue_id = $1 AND visible_at > $2 ${condition}
         LIMIT $3) AS invisible`,
        [queueId, now, limit],
      )
    )[0]!.n;
  const done = async (text: string, values: unknown[]) => {
    await run(db, text, values);
  };
  return {
    // Counting invisible index entries first bounds the in-flight count from above without reading rows.
    inFlightUpperBound: (queueId, now, limit) => count('', queueId, now, limit),
    countInFlight: (queueId, now, limit) => count('AND receive_count > 0', queueId, now, limit),
    visible: (queueId, now, limit) =>
      rows<MessageRow>(
        `SELECT * FROM messages WHERE queue_id = $1 AND visible_at <= $2 AND expires_at > $2
         ORDER BY visible_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [queueId, now, limit],
      ),
    visibleOfTenant: (queueId, tenant, now, limit) =>
      rows<MessageRow>(
        `SELECT * FROM messages WHERE queue_id = $1 AND tenant = $2 AND visible_at <= $3 AND expires_at > $3
         ORDER BY visible_at, seq LIMIT $4 FOR UPDATE SKIP LOCKED`,
        [queueId, tenant, now, limit],
      ),
    tenantsToServe: async (queueId, limit) =>
      (
        await rows<{ tenant: string }>(
          'SELECT tenant FROM fair_tenants WHERE queue_id = $1 ORDER BY served_at, tenant LIMIT $2',
          [queueId, limit],
        )
      ).map((row) => row.tenant),
    serveTenant: (queueId, tenant) =>
      done(
        "UPDATE fair_tenants SET served_at = nextval('fair_tenant_turns') WHERE queue_id = $1 AND tenant = $2",
        [queueId, tenant],
      ),
    tenantHasMessages: async (queueId, tenant) =>
      (await rows('SELECT 1 FROM messages WHERE queue_id = $1 AND tenant = $2 LIMIT 1', [queueId, tenant]))
        .length > 0,
    forgetTenant: (queueId, tenant) =>
      done('DELETE FROM fair_tenants WHERE queue_id = $1 AND tenant = $2', [queueId, tenant]),
    // One statement.
    noteTenant: (queueId, tenant) =>
      done(
        `WITH added AS (
           INSERT INTO fair_tenants (queue_id, tenant, served_at) SELECT $1, unnest($2::text[]), 0
           ON CONFLICT DO NOTHING RETURNING tenant)
         UPDATE messages SET group_id = '', tenant = '' WHERE queue_id = $1 AND group_id IS NULL
           AND EXISTS (SELECT 1 FROM added WHERE tenant = '')`,
        [queueId, [tenant, '']],
      ),
    joinTenantless: (queueId, seq) =>
      done(
        `WITH added AS (
           INSERT INTO fair_tenants (queue_id, tenant, served_at) VALUES ($1, '', 0) ON CONFLICT DO NOTHING)
         UPDATE messages SET group_id = '', tenant = '' WHERE seq = $2 AND group_id IS NULL`,
        [queueId, seq],
      ),
    hasTenants: async (queueId) =>
      (await rows('SELECT 1 FROM fair_tenants WHERE queue_id = $1 LIMIT 1', [queueId])).length > 0,
    availableGroups: async (queueId, now, limit, taken) =>
      (
        await rows<{ group_id: string }>(
          `SELECT group_id FROM fifo_groups
           WHERE queue_id = $1 AND available_at <= $2 AND group_id <> ALL($4::text[])
           ORDER BY available_at, group_id LIMIT $3 FOR UPDATE SKIP LOCKED`,
          [queueId, now, limit, taken],
        )
      ).map((row) => row.group_id),
    groupMessages: (queueId, groupId, limit) =>
      rows<MessageRow>('SELECT * FROM messages WHERE queue_id = $1 AND group_id = $2 ORDER BY seq LIMIT $3', [
        queueId,
        groupId,
        limit,
      ]),
    lockGroup: (queueId, groupId) => lockGroup(db, queueId, groupId),
    groupHeadVisibleAt: async (queueId, groupId) =>
      (
        await rows<{ visible_at: number }>(
          'SELECT visible_at FROM messages WHERE queue_id = $1 AND group_id = $2 ORDER BY seq LIMIT 1',
          [queueId, groupId],
        )
      )[0]?.visible_at,
    setGroupAvailableAt: (queueId, groupId, at) =>
      done(
        `INSERT INTO fifo_groups (queue_id, group_id, available_at) VALUES ($1, $2, $3)
         ON CONFLICT (queue_id, group_id) DO UPDATE SET available_at = excluded.available_at`,
        [queueId, groupId, at],
      ),
    addGroupIfAbsent: (queueId, groupId, at) =>
      done(
        `INSERT INTO fifo_groups (queue_id, group_id, available_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING`,
        [queueId, groupId, at],
      ),
    forgetGroup: (queueId, groupId) =>
      done('DELETE FROM fifo_groups WHERE queue_id = $1 AND group_id = $2', [queueId, groupId]),
    rebuildGroupRows: async (queueId) => {
      await done('DELETE FROM fifo_groups WHERE queue_id = $1', [queueId]);
      await done(
        `INSERT INTO fifo_groups (queue_id, group_id, available_at)
         SELECT DISTINCT ON (group_id) queue_id, group_id, visible_at FROM messages
         WHERE queue_id = $1 AND group_id IS NOT NULL ORDER BY group_id, seq`,
        [queueId],
      );
    },
    isFifo: (queueId) => store.isFifo(queueId),
    // One statement for all the receive's claims.
    writeClaims: (request, claimed) =>
      done(
        `UPDATE messages m SET visible_at = $1, delivery_started_at = $2, receive_count = c.receive_count,
           first_received_at = c.first_received_at, receipt_token = c.receipt_token
         FROM unnest($3::bigint[], $4::integer[], $5::bigint[], $6::text[])
           AS c(seq, receive_count, first_received_at, receipt_token)
         WHERE m.seq = c.seq`,
        [
          request.visibleUntil,
          request.now,
          claimed.map((message) => message.seq),
          claimed.map((message) => message.receiveCount),
          claimed.map((message) => message.firstReceivedAt),
          claimed.map((message) => message.receiptToken),
        ],
      ),
    moveToDeadLetter: (seq, deadLetter, now) =>
      done(
        `UPDATE messages SET queue_id = $2, visible_at = $3, receipt_token = NULL, delivery_started_at = NULL,
           dead_letter_source_arn = $4,
           sent_at = CASE WHEN $5 THEN $3 ELSE sent_at END,
           expires_at = CASE WHEN $5 THEN $3 ELSE sent_at END + $6
         WHERE seq = $1`,
        [seq, deadLetter.queueId, now, deadLetter.sourceArn, deadLetter.resetSentAt, deadLetter.retentionMs],
      ),
    attemptClaims: async (queueId, attemptId, now) => {
      // Two nodes retrying one attempt at once: the second waits here and then finds the first's claims.
      await done('SELECT pg_advisory_xact_lock($1, hashtext($2))', [queueId, `attempt\n${attemptId}`]);
      const [record] = await rows<{ claims: string }>(
        'SELECT claims FROM receive_attempts WHERE queue_id = $1 AND attempt_id = $2 AND expires_at > $3',
        [queueId, attemptId, now],
      );
      return record && (JSON.parse(record.claims) as AttemptClaims);
    },
    reclaim: (queueId, claims, visibleUntil) =>
      rows<MessageRow>(
        `UPDATE messages m SET visible_at = $2
         FROM unnest($3::bigint[], $4::integer[]) AS c(seq, receive_count)
         WHERE m.seq = c.seq AND m.queue_id = $1 AND m.receive_count = c.receive_count
         RETURNING m.*`,
        [queueId, visibleUntil, claims.map(([seq]) => seq), claims.map(([, receiveCount]) => receiveCount)],
      ),
    rememberAttempt: (queueId, attempt, claims) =>
      done(
        `INSERT INTO receive_attempts (queue_id, attempt_id, claims, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (queue_id, attempt_id) DO UPDATE SET claims = excluded.claims, expires_at = excluded.expires_at`,
        [queueId, attempt.id, JSON.stringify(claims), attempt.expiresAt],
      ),
    lockMoveTask: async (handle) =>
      (await rows<MoveTaskRow>('SELECT * FROM move_tasks WHERE handle = $1 FOR UPDATE', [handle]))[0],
    movable: (queueId, options) =>
      rows<MessageRow>(
        `SELECT * FROM messages m WHERE queue_id = $1 AND seq <= $2 AND visible_at <= $3 AND expires_at > $3
         ${
           options.fifo
             ? `AND NOT EXISTS (SELECT 1 FROM messages e WHERE e.queue_id = m.queue_id AND e.group_id = m.group_id
                  AND e.seq < m.seq AND e.visible_at > $3)`
             : ''
         }
         ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED`,
        [queueId, options.upToSeq, options.now, options.limit],
      ),
    insertMoved: (seq, destination, moved) =>
      done(
        `INSERT INTO messages (queue_id, message_id, body, message_attributes, system_attributes, md5_of_body,
           md5_of_message_attributes, md5_of_system_attributes, sender_id, sent_at, visible_at, expires_at,
           group_id, tenant, deduplication_id)
         SELECT $2, $3, body, message_attributes, system_attributes, md5_of_body, md5_of_message_attributes,
           md5_of_system_attributes, sender_id, $4, $5, $6, $7, $8, deduplication_id
         FROM messages WHERE seq = $1`,
        [
          seq,
          destination.queueId,
          moved.messageId,
          moved.now,
          destination.visibleAt,
          destination.expiresAt,
          moved.groupId,
          destination.fifo ? null : moved.groupId,
        ],
      ),
    deleteMessage: (seq) => done('DELETE FROM messages WHERE seq = $1', [seq]),
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
    addMoved: async (handle, moved) =>
      (
        await rows<MoveTaskRow>('UPDATE move_tasks SET moved = moved + $1 WHERE handle = $2 RETURNING *', [
          moved,
          handle,
        ])
      )[0]!,
  };
}

/** Waits for the FIFO group's row lock (held by a receive taking from it); a group without a row locks nothing. */
export async function lockGroup(db: Db, queueId: number, groupId: string): Promise<void> {
  await run(db, 'SELECT 1 FROM fifo_groups WHERE queue_id = $1 AND group_id = $2 FOR UPDATE', [
    queueId,
    groupId,
  ]);
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
