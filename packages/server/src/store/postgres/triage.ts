import type { StoredMessage } from '../contract.ts';
import { type MessageRow, toMessage } from '../rows.ts';
import {
  type AuditEntry,
  type AuditKeep,
  type AuditRecord,
  type AuditRow,
  toAuditColumns,
  toAuditRecord,
} from '../triage.ts';
import type { Db } from './connection.ts';

/** What the PostgreSQL store lends its triage: its transactions and the writes that keep groups and tenants right. */
export interface PostgresTriageHost {
  direct: Db;
  transaction<T>(work: (db: Db) => Promise<T>): Promise<T>;
}

/**
 * The PostgreSQL side of TriageStore. Each message is its own transaction; its row is locked with SKIP LOCKED,
 * so a message a receive on another node is claiming at that instant counts as in flight, and is not waited for.
 */
export class PostgresTriage {
  constructor(private readonly host: PostgresTriageHost) {}

  async browse(
    queueId: number,
    options: { afterSeq: number; limit: number; now: number },
  ): Promise<StoredMessage[]> {
    const { rows } = await this.host.direct.query<MessageRow>({
      text: `SELECT * FROM messages WHERE queue_id = $1 AND seq > $2 AND expires_at > $3 ORDER BY seq LIMIT $4`,
      values: [queueId, options.afterSeq, options.now, options.limit],
    });
    return rows.map(toMessage);
  }

  async appendAudit(entry: AuditEntry, keep: AuditKeep): Promise<AuditRecord> {
    const columns = toAuditColumns(entry);
    return this.host.transaction(async (db) => {
      const { rows } = await db.query<AuditRow>({
        text: `INSERT INTO audit_log (at, actor, via, action, source, destination, count, skipped, detail, edit, messages)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
        values: [
          columns.at,
          columns.actor,
          columns.via,
          columns.action,
          columns.source,
          columns.destination,
          columns.count,
          columns.skipped,
          columns.detail,
          columns.edit,
          columns.messages,
        ],
      });
      await this.pruneAuditIn(db, keep);
      return toAuditRecord(rows[0]!);
    });
  }

  pruneAudit(keep: AuditKeep): Promise<number> {
    return this.pruneAuditIn(this.host.direct, keep);
  }

  private async pruneAuditIn(db: Db, keep: AuditKeep): Promise<number> {
    const { rowCount } = await db.query({
      text: `DELETE FROM audit_log
             WHERE at < $1 OR id <= (SELECT max(id) FROM audit_log) - $2`,
      values: [keep.since, keep.newest],
    });
    return rowCount ?? 0;
  }

  async listAudit(options: { beforeId?: number; limit: number }): Promise<AuditRecord[]> {
    const { rows } = await this.host.direct.query<AuditRow>({
      text: 'SELECT * FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2',
      values: [options.beforeId ?? Number.MAX_SAFE_INTEGER, options.limit],
    });
    return rows.map(toAuditRecord);
  }
}
