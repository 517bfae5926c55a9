import type { ActivityCounts } from '../contract.ts';

/** queue_activity's columns and the counts they hold. */
export const ACTIVITY_COLUMNS: ReadonlyArray<readonly [string, keyof ActivityCounts]> = [
  ['sent', 'sent'],
  ['received', 'received'],
  ['deleted', 'deleted'],
  ['empty_receives', 'emptyReceives'],
  ['sent_bytes', 'sentBytes'],
];

/**
 * Every statement of the PostgreSQL store's operations and of the plans' steps, by name (topics and triage
 * keep theirs beside them, as SQLite's do). Each runs as a named prepared statement (connection.ts `run`),
 * so a connection parses and plans it once.
 */
export const SQL = {
  deleteBySeq: 'DELETE FROM messages WHERE seq = $1',
  insertQueue: `INSERT INTO queues (name, fifo, deduplicates_per_group, attributes, tags, created_at, last_modified_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING *`,
  forgetDeletedQueue: 'DELETE FROM deleted_queues WHERE name = $1',
  queueByName: 'SELECT * FROM queues WHERE name = $1',
  listQueues: 'SELECT * FROM queues WHERE starts_with(name, $1) AND name > $2 ORDER BY name LIMIT $3',
  updateQueue: `UPDATE queues SET attributes = coalesce($2, attributes), tags = coalesce($3, tags), last_modified_at = $4
         WHERE id = $1 RETURNING *`,
  redelayWaiting: 'UPDATE messages SET visible_at = sent_at + $1 WHERE queue_id = $2 AND receive_count = 0',
  deleteQueue: 'DELETE FROM queues WHERE id = $1 RETURNING name',
  deleteQueueMessages: 'DELETE FROM messages WHERE queue_id = $1',
  rememberDeletedQueue: `INSERT INTO deleted_queues (name, deleted_at) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET deleted_at = excluded.deleted_at`,
  deletedQueue: 'SELECT deleted_at FROM deleted_queues WHERE name = $1',
  lockDeduplicationIds: `SELECT pg_advisory_xact_lock($1, hashtext('dedup' || chr(10) || key))
       FROM unnest($2::text[]) WITH ORDINALITY AS k(key, n) ORDER BY n`,
  deduplicated: `SELECT d.scope, d.deduplication_id, d.message_id, d.seq
       FROM unnest($2::text[], $3::text[], $4::bigint[]) AS k(scope, id, sent_at)
       JOIN fifo_deduplication d
         ON d.queue_id = $1 AND d.scope = k.scope AND d.deduplication_id = k.id AND d.expires_at > k.sent_at`,
  insertGroupsIfAbsent: `INSERT INTO fifo_groups (queue_id, group_id, available_at)
       SELECT $1, g.group_id, g.available_at FROM unnest($2::text[], $3::bigint[]) AS g(group_id, available_at)
       ORDER BY g.group_id
       ON CONFLICT (queue_id, group_id) DO UPDATE SET available_at = fifo_groups.available_at`,
  rememberDeduplication: `INSERT INTO fifo_deduplication (queue_id, scope, deduplication_id, message_id, seq, expires_at)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
       ON CONFLICT (queue_id, scope, deduplication_id)
       DO UPDATE SET message_id = excluded.message_id, seq = excluded.seq, expires_at = excluded.expires_at`,
  insertMessages: `WITH added AS (
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
  queueKind: 'SELECT fifo FROM queues WHERE id = $1',
  deleteByReceipts: `DELETE FROM messages m
    USING unnest($2::bigint[], $3::text[], $4::integer[], $5::integer[], $6::bigint[])
      AS r(seq, token, min_receive_count, max_receive_count, visible_after)
    WHERE m.queue_id = $1 AND m.seq = r.seq AND m.receipt_token = r.token
      AND m.receive_count BETWEEN r.min_receive_count AND r.max_receive_count AND m.visible_at > r.visible_after
    RETURNING m.seq, m.receipt_token, m.receive_count, m.visible_at, m.delivery_started_at, m.group_id`,
  messageStates: `SELECT seq, receipt_token, receive_count, visible_at, delivery_started_at, group_id FROM messages
               WHERE queue_id = $1 AND seq = ANY($2::bigint[])`,
  groupsOfMessages: `SELECT DISTINCT group_id FROM messages WHERE queue_id = $1 AND seq = ANY($2::bigint[])
         AND group_id IS NOT NULL ORDER BY group_id`,
  groupOf: 'SELECT group_id FROM messages WHERE seq = $1 AND queue_id = $2',
  lockMessageState: `SELECT receipt_token, receive_count, visible_at, delivery_started_at, group_id FROM messages
         WHERE seq = $1 AND queue_id = $2 FOR UPDATE`,
  setVisibleAt: 'UPDATE messages SET visible_at = $1 WHERE seq = $2',
  lockPurgedAt: 'SELECT last_purged_at FROM queues WHERE id = $1 FOR UPDATE',
  setPurgedAt: 'UPDATE queues SET last_purged_at = $2 WHERE id = $1',
  purgeMessages: 'DELETE FROM messages WHERE queue_id = $1 AND sent_at <= $2',
  forgetDeduplication: 'DELETE FROM fifo_deduplication WHERE queue_id = $1',
  countMessages: `SELECT
         count(*) FILTER (WHERE visible_at <= $2) AS visible,
         count(*) FILTER (WHERE visible_at > $2 AND receive_count > 0) AS not_visible,
         count(*) FILTER (WHERE visible_at > $2 AND receive_count = 0) AS delayed,
         min(sent_at) AS oldest_sent_at
       FROM messages WHERE queue_id = $1 AND expires_at > $2`,
  nextVisibleAt: 'SELECT min(visible_at) AS at FROM messages WHERE queue_id = $1 AND visible_at > $2',
  deleteExpired: `DELETE FROM messages WHERE seq IN
           (SELECT seq FROM messages WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING queue_id, group_id`,
  forgetExpiredDeduplication: 'DELETE FROM fifo_deduplication WHERE expires_at <= $1',
  forgetExpiredAttempts: 'DELETE FROM receive_attempts WHERE expires_at <= $1',
  nextExpiryAt: 'SELECT min(expires_at) AS at FROM messages WHERE queue_id = $1 AND expires_at > $2',
  insertMoveTask: `INSERT INTO move_tasks (handle, source_arn, source_queue_id, destination_arn, max_per_second, status,
         to_move, up_to_seq, started_at)
       VALUES ($1, $2, $3, $4, $5, 'RUNNING', $6, $7, $8)
       ON CONFLICT DO NOTHING RETURNING *`,
  moveTasksOfSource:
    'SELECT * FROM move_tasks WHERE source_arn = $1 ORDER BY started_at DESC, handle DESC LIMIT $2',
  activeMoveTasks: "SELECT * FROM move_tasks WHERE status IN ('RUNNING', 'CANCELLING') ORDER BY started_at",
  moveTaskByHandle: 'SELECT * FROM move_tasks WHERE handle = $1',
  setMoveTaskStatus: `UPDATE move_tasks SET status = $2, failure_reason = $3,
         ended_at = CASE WHEN $2 IN ('RUNNING', 'CANCELLING') THEN NULL ELSE $4::bigint END
       WHERE handle = $1 AND status IN ('RUNNING', 'CANCELLING') RETURNING *`,
  lastSeq: 'SELECT coalesce(max(seq), 0) AS seq FROM messages WHERE queue_id = $1',
  samplesOfQueue: 'SELECT * FROM queue_samples WHERE queue = $1 AND at >= $2 ORDER BY at',
  deleteSamplesBefore: 'DELETE FROM queue_samples WHERE at < $1',
  takeActivity: 'DELETE FROM queue_activity RETURNING *',
  saveClusterState: `INSERT INTO cluster_state (name, value) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
  clusterState: 'SELECT value FROM cluster_state WHERE name = $1',
  eventSourceMappings: 'SELECT uuid, document FROM event_source_mappings ORDER BY id',
  saveEventSourceMapping: `INSERT INTO event_source_mappings (uuid, document) VALUES ($1, $2)
       ON CONFLICT (uuid) DO UPDATE SET document = excluded.document`,
  lockEventSourceMapping: 'SELECT document FROM event_source_mappings WHERE uuid = $1 FOR UPDATE',
  updateEventSourceMapping: 'UPDATE event_source_mappings SET document = $2 WHERE uuid = $1',
  advisoryLock: 'SELECT pg_advisory_xact_lock($1)',
  allEventSourceMappings: 'SELECT uuid, document FROM event_source_mappings',
  insertEventSourceMapping: 'INSERT INTO event_source_mappings (uuid, document) VALUES ($1, $2)',
  deleteEventSourceMapping: 'DELETE FROM event_source_mappings WHERE uuid = $1',
  claimLease: `WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)
       INSERT INTO leases (name, holder, expires_at) SELECT $1, $2, ms + $3 FROM now
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE leases.holder = excluded.holder OR leases.expires_at <= (SELECT ms FROM now)
       RETURNING holder`,
  releaseLease: 'DELETE FROM leases WHERE name = $1 AND holder = $2',
  storedBytes: `SELECT ((SELECT coalesce(sum(octet_length(body) + coalesce(octet_length(message_attributes), 0)), 0)
                FROM messages)
            + (SELECT coalesce(sum(pg_column_size(a.*)), 0) FROM audit_log a))::bigint AS bytes`,
  lockTriageRow: 'SELECT * FROM messages WHERE seq = $1 AND queue_id = $2 FOR UPDATE SKIP LOCKED',
  heldRow: 'SELECT message_id, expires_at FROM messages WHERE seq = $1 AND queue_id = $2',
  // The plans' steps (plan-steps.ts).
  selectVisible: `SELECT * FROM messages WHERE queue_id = $1 AND visible_at <= $2 AND expires_at > $2
         ORDER BY visible_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED`,
  selectVisibleOfTenant: `SELECT * FROM messages WHERE queue_id = $1 AND tenant = $2 AND visible_at <= $3 AND expires_at > $3
         ORDER BY visible_at, seq LIMIT $4 FOR UPDATE SKIP LOCKED`,
  leastRecentlyServedTenants:
    'SELECT tenant FROM fair_tenants WHERE queue_id = $1 ORDER BY served_at, tenant LIMIT $2',
  serveTenant:
    "UPDATE fair_tenants SET served_at = nextval('fair_tenant_turns') WHERE queue_id = $1 AND tenant = $2",
  tenantHasMessages: 'SELECT 1 FROM messages WHERE queue_id = $1 AND tenant = $2 LIMIT 1',
  forgetTenant: 'DELETE FROM fair_tenants WHERE queue_id = $1 AND tenant = $2',
  noteTenant: `WITH added AS (
           INSERT INTO fair_tenants (queue_id, tenant, served_at) SELECT $1, unnest($2::text[]), 0
           ON CONFLICT DO NOTHING RETURNING tenant)
         UPDATE messages SET group_id = '', tenant = '' WHERE queue_id = $1 AND group_id IS NULL
           AND EXISTS (SELECT 1 FROM added WHERE tenant = '')`,
  joinTenantless: `WITH added AS (
           INSERT INTO fair_tenants (queue_id, tenant, served_at) VALUES ($1, '', 0) ON CONFLICT DO NOTHING)
         UPDATE messages SET group_id = '', tenant = '' WHERE seq = $2 AND group_id IS NULL`,
  anyTenant: 'SELECT 1 FROM fair_tenants WHERE queue_id = $1 LIMIT 1',
  availableGroups: `SELECT group_id FROM fifo_groups
           WHERE queue_id = $1 AND available_at <= $2 AND group_id <> ALL($4::text[])
           ORDER BY available_at, group_id LIMIT $3 FOR UPDATE SKIP LOCKED`,
  groupInOrder: 'SELECT * FROM messages WHERE queue_id = $1 AND group_id = $2 ORDER BY seq LIMIT $3',
  groupHead: 'SELECT visible_at FROM messages WHERE queue_id = $1 AND group_id = $2 ORDER BY seq LIMIT 1',
  upsertGroup: `INSERT INTO fifo_groups (queue_id, group_id, available_at) VALUES ($1, $2, $3)
         ON CONFLICT (queue_id, group_id) DO UPDATE SET available_at = excluded.available_at`,
  insertGroupIfAbsent: `INSERT INTO fifo_groups (queue_id, group_id, available_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING`,
  forgetGroup: 'DELETE FROM fifo_groups WHERE queue_id = $1 AND group_id = $2',
  forgetGroups: 'DELETE FROM fifo_groups WHERE queue_id = $1',
  rebuildGroups: `INSERT INTO fifo_groups (queue_id, group_id, available_at)
         SELECT DISTINCT ON (group_id) queue_id, group_id, visible_at FROM messages
         WHERE queue_id = $1 AND group_id IS NOT NULL ORDER BY group_id, seq`,
  claim: `UPDATE messages m SET visible_at = $1, delivery_started_at = $2, receive_count = c.receive_count,
           first_received_at = c.first_received_at, receipt_token = c.receipt_token
         FROM unnest($3::bigint[], $4::integer[], $5::bigint[], $6::text[])
           AS c(seq, receive_count, first_received_at, receipt_token)
         WHERE m.seq = c.seq`,
  moveToDeadLetter: `UPDATE messages SET queue_id = $2, visible_at = $3, receipt_token = NULL, delivery_started_at = NULL,
           dead_letter_source_arn = $4,
           sent_at = CASE WHEN $5 THEN $3 ELSE sent_at END,
           expires_at = CASE WHEN $5 THEN $3 ELSE sent_at END + $6
         WHERE seq = $1`,
  lockAttempt: 'SELECT pg_advisory_xact_lock($1, hashtext($2))',
  attemptClaims:
    'SELECT claims FROM receive_attempts WHERE queue_id = $1 AND attempt_id = $2 AND expires_at > $3',
  reclaim: `UPDATE messages m SET visible_at = $2
         FROM unnest($3::bigint[], $4::integer[]) AS c(seq, receive_count)
         WHERE m.seq = c.seq AND m.queue_id = $1 AND m.receive_count = c.receive_count
         RETURNING m.*`,
  rememberAttempt: `INSERT INTO receive_attempts (queue_id, attempt_id, claims, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (queue_id, attempt_id) DO UPDATE SET claims = excluded.claims, expires_at = excluded.expires_at`,
  lockMoveTask: 'SELECT * FROM move_tasks WHERE handle = $1 FOR UPDATE',
  insertMoved: `INSERT INTO messages (queue_id, message_id, body, message_attributes, system_attributes, md5_of_body,
           md5_of_message_attributes, md5_of_system_attributes, sender_id, sent_at, visible_at, expires_at,
           group_id, tenant, deduplication_id)
         SELECT $2, $3, body, message_attributes, system_attributes, md5_of_body, md5_of_message_attributes,
           md5_of_system_attributes, sender_id, $4, $5, $6, $7, $8, deduplication_id
         FROM messages WHERE seq = $1`,
  addMoved: 'UPDATE move_tasks SET moved = moved + $1 WHERE handle = $2 RETURNING *',
  lockGroup: 'SELECT 1 FROM fifo_groups WHERE queue_id = $1 AND group_id = $2 FOR UPDATE',
  countInvisible: `SELECT count(*) AS n FROM (SELECT 1 FROM messages WHERE queue_id = $1 AND visible_at > $2
         LIMIT $3) AS invisible`,
  countInFlight: `SELECT count(*) AS n FROM (SELECT 1 FROM messages WHERE queue_id = $1 AND visible_at > $2 AND receive_count > 0
         LIMIT $3) AS invisible`,
  movable: `SELECT * FROM messages m WHERE queue_id = $1 AND seq <= $2 AND visible_at <= $3 AND expires_at > $3
         ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED`,
  movableOfFifo: `SELECT * FROM messages m WHERE queue_id = $1 AND seq <= $2 AND visible_at <= $3 AND expires_at > $3
         AND NOT EXISTS (SELECT 1 FROM messages e WHERE e.queue_id = m.queue_id AND e.group_id = m.group_id
                  AND e.seq < m.seq AND e.visible_at > $3)
         ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED`,
  /** What a deleted queue leaves besides its messages. */
  forgetQueueState: ['fifo_groups', 'fifo_deduplication', 'receive_attempts', 'fair_tenants'].map(
    (table) => `DELETE FROM ${table} WHERE queue_id = $1`,
  ),
  /** One statement for every queue's counts: a column array each, unnested into rows. */
  addActivity: `INSERT INTO queue_activity (queue, ${ACTIVITY_COLUMNS.map(([column]) => column).join(', ')})
    SELECT * FROM unnest($1::text[], ${ACTIVITY_COLUMNS.map((_, index) => `$${index + 2}::bigint[]`).join(', ')})
    ON CONFLICT (queue) DO UPDATE SET ${ACTIVITY_COLUMNS.map(
      ([column]) => `${column} = queue_activity.${column} + excluded.${column}`,
    ).join(', ')}`,
};

/** One statement for a set of history samples: a column array each (the queue's name first), unnested into rows. */
export function insertSamples(columns: readonly string[]): string {
  return `INSERT INTO queue_samples (${columns.join(', ')})
    SELECT * FROM unnest($1::text[], ${columns
      .slice(1)
      .map((_, index) => `$${index + 2}::bigint[]`)
      .join(', ')})
    ON CONFLICT (queue, at) DO UPDATE SET ${columns
      .slice(2)
      .map((column) => `${column} = excluded.${column}`)
      .join(', ')}`;
}
