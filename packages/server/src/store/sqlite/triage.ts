import type Database from 'better-sqlite3';
import {
  type AuditEntry,
  type AuditKeep,
  type AuditRecord,
  type AuditRow,
  type TriageOutcome,
  toAuditColumns,
  toAuditRecord,
} from '../triage.ts';

/** The SQLite side of TriageStore; each method runs inside the store's write (or read) as the store calls it. */
export class SqliteTriage {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      appendAudit: db.prepare(
        `INSERT INTO audit_log (at, actor, via, action, source, destination, count, skipped, detail, edit, messages)
         VALUES (@at, @actor, @via, @action, @source, @destination, @count, @skipped, @detail, @edit, @messages)
         RETURNING *`,
      ),
      pruneAuditByTime: db.prepare('DELETE FROM audit_log WHERE at < ?'),
      pruneAuditById: db.prepare(
        'DELETE FROM audit_log WHERE id <= (SELECT max(id) FROM audit_log) - CAST(? AS INTEGER)',
      ),
      listAudit: db.prepare('SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT CAST(? AS INTEGER)'),
    };
  }

  appendAudit(entry: AuditEntry, keep: AuditKeep): AuditRecord {
    const row = this.statements.appendAudit.get(toAuditColumns(entry)) as AuditRow;
    this.pruneAudit(keep);
    return toAuditRecord(row);
  }

  pruneAudit(keep: AuditKeep): number {
    return (
      this.statements.pruneAuditByTime.run(keep.since).changes +
      this.statements.pruneAuditById.run(keep.newest).changes
    );
  }

  listAudit(options: { beforeId?: number; limit: number }): AuditRecord[] {
    const rows = this.statements.listAudit.all(
      options.beforeId ?? Number.MAX_SAFE_INTEGER,
      options.limit,
    ) as AuditRow[];
    return rows.map(toAuditRecord);
  }
}

/** Messages one write replays or deletes: a selection of 1,000 is ten writes, other work running between them. */
const WRITE_PAGE = 100;

/** `write` over the seqs a page at a time, each page committed before the next starts; the outcomes in order. */
export async function inWrites(
  seqs: readonly number[],
  write: (page: readonly number[]) => Promise<TriageOutcome[]>,
): Promise<TriageOutcome[]> {
  const outcomes: TriageOutcome[] = [];
  for (let start = 0; start < seqs.length; start += WRITE_PAGE)
    outcomes.push(...(await write(seqs.slice(start, start + WRITE_PAGE))));
  return outcomes;
}
