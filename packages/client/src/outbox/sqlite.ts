import type { Database, Statement } from 'better-sqlite3';
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

/** Creates the outbox table and its pending-row index if they are missing (times: ms on the relay's clock). */
export function migrateSqliteOutbox(db: Database, table = DEFAULT_OUTBOX_TABLE): void {
  const t = checkTableName(table);
  db.exec(`
    CREATE TABLE IF NOT EXISTS ${t} (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      queue TEXT NOT NULL,
      body TEXT NOT NULL,
      attributes TEXT,
      delay_seconds INTEGER,
      group_id TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_at INTEGER NOT NULL DEFAULT 0,
      claimed_until INTEGER,
      sent_at INTEGER,
      last_error TEXT
    );
    ${pendingIndexes(t)}
  `);
}

export interface SqliteOutboxOptions {
  /** The connection relays claim and mark rows with (each relay process normally has its own). */
  db: Database;
  /** Default `sluice_outbox`. */
  table?: string;
}

const RETURNED = 'RETURNING id, queue, body, attributes, delay_seconds, group_id, attempts';

/**
 * The outbox on SQLite (better-sqlite3). SQLite runs one writer at a time, so each claim — a single
 * UPDATE ... RETURNING — is atomic across connections and processes without row locks.
 */
export class SqliteOutbox implements OutboxStore {
  readonly table: string;
  private readonly db: Database;
  /** The INSERT prepared once per caller connection (`add` may be given any connection to the file). */
  private readonly inserts = new WeakMap<Database, Statement>();

  constructor(options: SqliteOutboxOptions) {
    this.db = options.db;
    this.table = checkTableName(options.table ?? DEFAULT_OUTBOX_TABLE);
  }

  /**
   * Records `message` inside the transaction open on `tx` (e.g. within `db.transaction(fn)`); refuses to
   * run outside one, since the message would then commit on its own. Returns the row id.
   */
  add(tx: Database, message: OutboxMessage): string {
    if (!tx.inTransaction) throw new Error('outbox.add must run inside the caller’s transaction');
    let insert = this.inserts.get(tx);
    if (!insert) {
      insert = tx.prepare(
        `INSERT INTO ${this.table} (queue, body, attributes, delay_seconds, group_id)
         VALUES (@queue, @body, @attributes, @delay_seconds, @group_id)`,
      );
      this.inserts.set(tx, insert);
    }
    const result = insert.run(toColumns(message));
    return String(result.lastInsertRowid);
  }

  async claim(limit: number, now: number, leaseUntil: number): Promise<OutboxRow[]> {
    const records = this.db
      .prepare(
        `UPDATE ${this.table} SET claimed_until = @leaseUntil WHERE id IN (
           SELECT id FROM ${this.table} AS candidate WHERE ${claimable(this.table, '@now')}
           ORDER BY id LIMIT @limit) ${RETURNED}`,
      )
      .all({ now, leaseUntil, limit }) as OutboxRecord[];
    return records.map(fromRecord).sort(byId);
  }

  async claimIds(ids: readonly string[], now: number, leaseUntil: number): Promise<OutboxRow[]> {
    if (ids.length === 0) return [];
    const records = this.db
      .prepare(
        `UPDATE ${this.table} SET claimed_until = @leaseUntil
         WHERE id IN (SELECT id FROM ${this.table} AS candidate
           WHERE id IN (SELECT value FROM json_each(@ids)) AND ${claimable(this.table, '@now')}) ${RETURNED}`,
      )
      .all({ now, leaseUntil, ids: JSON.stringify(ids.map(Number)) }) as OutboxRecord[];
    return records.map(fromRecord).sort(byId);
  }

  async markSent(ids: readonly string[], now: number): Promise<void> {
    if (ids.length === 0) return;
    this.db
      .prepare(
        `UPDATE ${this.table} SET sent_at = @now, claimed_until = NULL
         WHERE id IN (SELECT value FROM json_each(@ids))`,
      )
      .run({ now, ids: JSON.stringify(ids.map(Number)) });
  }

  async release(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    this.db
      .prepare(
        `UPDATE ${this.table} SET claimed_until = NULL WHERE id IN (SELECT value FROM json_each(@ids))`,
      )
      .run({ ids: JSON.stringify(ids.map(Number)) });
  }

  async markFailed(failures: readonly PublishFailure[]): Promise<void> {
    if (failures.length === 0) return;
    this.db
      .prepare(
        `UPDATE ${this.table}
         SET attempts = attempts + 1, next_attempt_at = f.value ->> 'retryAt', last_error = f.value ->> 'error',
             claimed_until = NULL
         FROM json_each(@failures) AS f WHERE ${this.table}.id = CAST(f.value ->> 'id' AS INTEGER)`,
      )
      .run({ failures: JSON.stringify(failures) });
  }
}
