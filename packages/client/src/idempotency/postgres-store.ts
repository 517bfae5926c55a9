import type { Pool } from 'pg';
import { listenForDroppedConnections } from '../pool-errors.ts';
import {
  checkTableName,
  claimOrRead,
  type IdempotencyRecord,
  type IdempotencyStore,
  type RecordRow,
  recordFromRow,
} from './store.ts';

export interface PostgresIdempotencyStoreOptions {
  /** Default `sluice_idempotency` (may be schema-qualified); created on first use if missing. */
  table?: string;
}

/**
 * Idempotency records in PostgreSQL through a `pg` Pool; each claim is one conditional upsert. The store
 * listens for 'error' on the pool and on the clients it opens, so that a connection the database ends fails
 * its statement instead of ending the process.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  private readonly table: string;
  private ready: Promise<unknown> | undefined;

  constructor(
    private readonly pool: Pool,
    options: PostgresIdempotencyStoreOptions = {},
  ) {
    this.table = checkTableName(options.table ?? 'sluice_idempotency');
    listenForDroppedConnections(pool);
  }

  /** Creates the table if missing; every other call runs it first, so calling it is optional. */
  init(): Promise<unknown> {
    this.ready ??= this.pool
      .query(`CREATE TABLE IF NOT EXISTS ${this.table} (
        key TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        expires_at BIGINT NOT NULL
      )`)
      .catch((error: unknown) => {
        // Two processes creating the table at once: PostgreSQL's IF NOT EXISTS is not atomic, and the loser
        // gets a unique violation on its catalogue (23505) or duplicate_table (42P07). The table exists.
        const code = (error as { code?: unknown }).code;
        if (code === '23505' || code === '42P07') return;
        this.ready = undefined;
        throw error;
      });
    return this.ready;
  }

  async claim(
    key: string,
    token: string,
    now: number,
    expiresAt: number,
  ): Promise<IdempotencyRecord | undefined> {
    await this.init();
    return claimOrRead(
      key,
      now,
      async () => {
        // Takes the key when it is free or its record has expired; otherwise the row is left as it is.
        const claimed = await this.pool.query(
          `INSERT INTO ${this.table} AS existing (key, token, status, result, expires_at)
           VALUES ($1, $2, 'in-progress', NULL, $4)
           ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, status = EXCLUDED.status, result = NULL,
             expires_at = EXCLUDED.expires_at
           WHERE existing.expires_at <= $3`,
          [key, token, now, expiresAt],
        );
        return claimed.rowCount === 1;
      },
      async () => {
        const { rows } = await this.pool.query<RecordRow>(
          `SELECT status, result, expires_at FROM ${this.table} WHERE key = $1`,
          [key],
        );
        return recordFromRow(rows[0]);
      },
    );
  }

  async complete(
    key: string,
    token: string,
    result: string | undefined,
    expiresAt: number,
  ): Promise<boolean> {
    await this.init();
    const updated = await this.pool.query(
      `UPDATE ${this.table} SET status = 'completed', result = $3, expires_at = $4
       WHERE key = $1 AND token = $2`,
      [key, token, result ?? null, expiresAt],
    );
    return updated.rowCount === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    await this.init();
    const deleted = await this.pool.query(`DELETE FROM ${this.table} WHERE key = $1 AND token = $2`, [
      key,
      token,
    ]);
    return deleted.rowCount === 1;
  }

  async purgeExpired(now: number): Promise<number> {
    await this.init();
    const deleted = await this.pool.query(`DELETE FROM ${this.table} WHERE expires_at <= $1`, [now]);
    return deleted.rowCount ?? 0;
  }
}
