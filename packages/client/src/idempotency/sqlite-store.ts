import type Database from 'better-sqlite3';
import {
  checkTableName,
  claimOrRead,
  type IdempotencyRecord,
  type IdempotencyStore,
  type RecordRow,
  recordFromRow,
} from './store.ts';

export interface SqliteIdempotencyStoreOptions {
  /** Default `sluice_idempotency`; created if missing. */
  table?: string;
}

/**
 * Idempotency records in a SQLite database (better-sqlite3), typically the file that holds the business
 * tables. Several processes may share the file: each claim is one conditional upsert.
 */
export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly claimStatement: Database.Statement;
  private readonly readStatement: Database.Statement<[string], RecordRow>;
  private readonly completeStatement: Database.Statement;
  private readonly releaseStatement: Database.Statement;
  private readonly purgeStatement: Database.Statement;

  constructor(db: Database.Database, options: SqliteIdempotencyStoreOptions = {}) {
    const table = checkTableName(options.table ?? 'sluice_idempotency');
    db.exec(`CREATE TABLE IF NOT EXISTS ${table} (
      key TEXT PRIMARY KEY,
      token TEXT NOT NULL,
      status TEXT NOT NULL,
      result TEXT,
      expires_at INTEGER NOT NULL
    )`);
    // The insert takes the key when it is free or its record has expired (a crashed worker's lock, or a
    // result past its TTL); otherwise it changes nothing.
    this.claimStatement = db.prepare(`INSERT INTO ${table} (key, token, status, result, expires_at)
      VALUES (@key, @token, 'in-progress', NULL, @expiresAt)
      ON CONFLICT (key) DO UPDATE SET token = excluded.token, status = excluded.status, result = NULL,
        expires_at = excluded.expires_at
      WHERE ${table}.expires_at <= @now`);
    this.readStatement = db.prepare(`SELECT status, result, expires_at FROM ${table} WHERE key = ?`);
    this.completeStatement = db.prepare(`UPDATE ${table}
      SET status = 'completed', result = @result, expires_at = @expiresAt WHERE key = @key AND token = @token`);
    this.releaseStatement = db.prepare(`DELETE FROM ${table} WHERE key = ? AND token = ?`);
    this.purgeStatement = db.prepare(`DELETE FROM ${table} WHERE expires_at <= ?`);
  }

  async claim(
    key: string,
    token: string,
    now: number,
    expiresAt: number,
  ): Promise<IdempotencyRecord | undefined> {
    return claimOrRead(
      key,
      now,
      async () => this.claimStatement.run({ key, token, now, expiresAt }).changes === 1,
      async () => recordFromRow(this.readStatement.get(key)),
    );
  }

  async complete(
    key: string,
    token: string,
    result: string | undefined,
    expiresAt: number,
  ): Promise<boolean> {
    return this.completeStatement.run({ key, token, result: result ?? null, expiresAt }).changes === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    return this.releaseStatement.run(key, token).changes === 1;
  }

  async purgeExpired(now: number): Promise<number> {
    return this.purgeStatement.run(now).changes;
  }
}
