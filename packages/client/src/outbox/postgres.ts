import type { ClientBase, Pool } from 'pg';
import { listenForDroppedConnections } from '../pool-errors.ts';
import {
  byId,
  checkTableName,
  claimable,
  DEFAULT_OUTBOX_TABLE,
  fromRecord,
  type OutboxMessage,
  type OutboxRecord,
  type OutboxRow,
  type OutboxStore,
  type PublishFailure,
  pendingIndexes,
  toColumns,
} from './message.ts';

/** Anything that runs a query: a pool, a client, or a pool client inside the caller's BEGIN. */
type Queryable = Pick<ClientBase, 'query'> | Pool;

/**
 * Creates the outbox table and its pending-row index if they are missing. Times are milliseconds on the
 * relay's clock (bigint), not `now()`, so relays and tests share one time source.
 */
export async function migratePostgresOutbox(db: Queryable, table = DEFAULT_OUTBOX_TABLE): Promise<void> {
  const t = checkTableName(table);
  await db.query(`
    CREATE TABLE IF NOT EXISTS ${t} (
      id bigserial PRIMARY KEY,
      queue text NOT NULL,
      body text NOT NULL,
      attributes text,
      delay_seconds integer,
      group_id text,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at bigint NOT NULL DEFAULT 0,
      claimed_until bigint,
      sent_at bigint,
      last_error text
    );
    ${pendingIndexes(t)}
  `);
}

export interface PostgresOutboxOptions {
  /**
   * The pool relays use for claiming and marking rows (never for `add`, which uses the caller's client). The
   * outbox listens for 'error' on it and on the clients it opens, so that a connection the database ends fails
   * its statement instead of ending the process.
   */
  pool: Pool;
  /** Default `sluice_outbox`. */
  table?: string;
}

/**
 * The outbox on PostgreSQL. `add` inserts with the caller's client inside the caller's transaction, and
 * NOTIFYs a channel named after the table (delivered only on commit), which wakes the CDC relay.
 */
export class PostgresOutbox implements OutboxStore {
  readonly table: string;
  readonly pool: Pool;

  constructor(options: PostgresOutboxOptions) {
    this.pool = options.pool;
    listenForDroppedConnections(this.pool);
    this.table = checkTableName(options.table ?? DEFAULT_OUTBOX_TABLE);
  }

  /** The LISTEN/NOTIFY channel `add` signals on. */
  get channel(): string {
    return this.table;
  }

  /**
   * Records `message` in the caller's open transaction (`tx` must be inside BEGIN); it is published only if
   * that transaction commits. Returns the row id.
   */
  async add(tx: Pick<ClientBase, 'query'>, message: OutboxMessage): Promise<string> {
    const c = toColumns(message);
    const result = await tx.query<{ id: string }>(
      `WITH added AS (
         INSERT INTO ${this.table} (queue, body, attributes, delay_seconds, group_id)
         VALUES ($1, $2, $3, $4, $5) RETURNING id
       )
       SELECT id, pg_notify($6, '') FROM added`,
      [c.queue, c.body, c.attributes, c.delay_seconds, c.group_id, this.channel],
    );
    return String(result.rows[0]!.id);
  }

  async claim(limit: number, now: number, leaseUntil: number): Promise<OutboxRow[]> {
    // SKIP LOCKED lets concurrent relays pass over rows another relay is leasing this instant; the lease
    // column keeps them passed over after that relay's statement commits.
    return this.leased(
      `SELECT id FROM ${this.table} AS candidate WHERE ${claimable(this.table, '$1')}
       ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [now, leaseUntil, limit],
    );
  }

  async claimIds(ids: readonly string[], now: number, leaseUntil: number): Promise<OutboxRow[]> {
    if (ids.length === 0) return [];
    return this.leased(
      `SELECT id FROM ${this.table} AS candidate
       WHERE id = ANY($3::bigint[]) AND ${claimable(this.table, '$1')}
       FOR UPDATE SKIP LOCKED`,
      [now, leaseUntil, ids],
    );
  }

  private async leased(select: string, params: unknown[]): Promise<OutboxRow[]> {
    const result = await this.pool.query<OutboxRecord>(
      `UPDATE ${this.table} SET claimed_until = $2 WHERE id IN (${select})
       RETURNING id, queue, body, attributes, delay_seconds, group_id, attempts`,
      params,
    );
    return result.rows.map(fromRecord).sort(byId);
  }

  async markSent(ids: readonly string[], now: number): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(
      `UPDATE ${this.table} SET sent_at = $2, claimed_until = NULL WHERE id = ANY($1::bigint[])`,
      [ids, now],
    );
  }

  async release(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(`UPDATE ${this.table} SET claimed_until = NULL WHERE id = ANY($1::bigint[])`, [
      ids,
    ]);
  }

  async markFailed(failures: readonly PublishFailure[]): Promise<void> {
    if (failures.length === 0) return;
    await this.pool.query(
      `UPDATE ${this.table} AS t
       SET attempts = t.attempts + 1, next_attempt_at = f.retry_at, last_error = f.error, claimed_until = NULL
       FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS f(id, retry_at, error)
       WHERE t.id = f.id`,
      [failures.map((f) => f.id), failures.map((f) => f.retryAt), failures.map((f) => f.error)],
    );
  }
}
