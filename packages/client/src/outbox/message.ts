import type { MessageAttributeValue } from '@aws-sdk/client-sqs';

/** What `outbox.add` records: one SendMessage, to be made after the caller's transaction commits. */
export interface OutboxMessage {
  /** The queue, as a URL or as a name (resolved by the relay with GetQueueUrl). */
  queue: string;
  body: string;
  /** Message attributes, as SendMessage takes them. */
  attributes?: Record<string, MessageAttributeValue>;
  /** Per-message delay, 0-900 s (standard queues only: SQS refuses it on FIFO queues). */
  delaySeconds?: number;
  /** MessageGroupId; required by FIFO queues. */
  groupId?: string;
}

/** A pending row as a relay claimed it. `id` is the row id, a decimal string (PostgreSQL's bigint). */
export interface OutboxRow extends OutboxMessage {
  id: string;
  /** Failed publish attempts so far. */
  attempts: number;
}

export interface PublishFailure {
  id: string;
  /** When the row may be claimed again (ms since the epoch, on the relay's clock). */
  retryAt: number;
  error: string;
}

/**
 * What a relay needs from an outbox table. Every method is one statement, so a relay that dies between
 * two of them leaves the table in a state the next relay can continue from.
 */
export interface OutboxStore {
  /**
   * Leases up to `limit` pending rows, lowest id first, whose retry time has come and whose lease (if any)
   * expired. A leased row is invisible to other relays until `leaseUntil`, so two relays never hold one row.
   */
  claim(limit: number, now: number, leaseUntil: number): Promise<OutboxRow[]>;
  /** The same lease, restricted to the given ids (the CDC relay learns ids from the replication slot). */
  claimIds(ids: readonly string[], now: number, leaseUntil: number): Promise<OutboxRow[]>;
  markSent(ids: readonly string[], now: number): Promise<void>;
  /** Ends the lease of rows this pass did not send (no attempt counted), so the next pass may take them. */
  release(ids: readonly string[]): Promise<void>;
  /** Counts the attempt, records the error, and frees the row for a retry at `retryAt`. */
  markFailed(failures: readonly PublishFailure[]): Promise<void>;
}

/** The columns a message is stored in, shared by the PostgreSQL and SQLite outboxes. */
export interface OutboxColumns {
  queue: string;
  body: string;
  attributes: string | null;
  delay_seconds: number | null;
  group_id: string | null;
}

export interface OutboxRecord extends OutboxColumns {
  id: string | number | bigint;
  attempts: number;
}

export function toColumns(message: OutboxMessage): OutboxColumns {
  if (!message.queue) throw new TypeError('outbox message needs a queue (URL or name)');
  if (typeof message.body !== 'string') throw new TypeError('outbox message body must be a string');
  return {
    queue: message.queue,
    body: message.body,
    attributes: message.attributes ? JSON.stringify(message.attributes) : null,
    delay_seconds: message.delaySeconds ?? null,
    group_id: message.groupId ?? null,
  };
}

export function fromRecord(record: OutboxRecord): OutboxRow {
  const row: OutboxRow = {
    id: String(record.id),
    queue: record.queue,
    body: record.body,
    attempts: Number(record.attempts),
  };
  if (record.attributes !== null) row.attributes = JSON.parse(record.attributes);
  if (record.delay_seconds !== null) row.delaySeconds = Number(record.delay_seconds);
  if (record.group_id !== null) row.groupId = record.group_id;
  return row;
}

/** Row ids compare as numbers, not strings ('10' sorts after '9'). */
export function byId(a: { id: string }, b: { id: string }): number {
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The SQL condition for a row (aliased `candidate`) a relay may lease at time `now` (a placeholder). A row
 * of a FIFO group also waits while an earlier row of its group is backing off or leased elsewhere, so
 * a refused or slow row is never overtaken within its group.
 */
export function claimable(table: string, now: string): string {
  return `candidate.sent_at IS NULL AND candidate.next_attempt_at <= ${now}
    AND (candidate.claimed_until IS NULL OR candidate.claimed_until <= ${now})
    AND (candidate.group_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM ${table} AS earlier
      WHERE earlier.queue = candidate.queue AND earlier.group_id = candidate.group_id
        AND earlier.id < candidate.id AND earlier.sent_at IS NULL
        AND (earlier.next_attempt_at > ${now} OR earlier.claimed_until > ${now})))`;
}

/** The same partial indexes in both dialects: pending rows by id, and by FIFO group for `claimable`. */
export function pendingIndexes(table: string): string {
  return `CREATE INDEX IF NOT EXISTS ${table}_pending ON ${table} (id) WHERE sent_at IS NULL;
    CREATE INDEX IF NOT EXISTS ${table}_pending_groups ON ${table} (queue, group_id, id) WHERE sent_at IS NULL;`;
}

/** Table names go into SQL text, so only plain identifiers are accepted. */
export function checkTableName(table: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new TypeError(`invalid outbox table name: ${table}`);
  return table;
}

export const DEFAULT_OUTBOX_TABLE = 'sluice_outbox';
