import type { NewMessage, StoredMessage } from './contract.ts';
import type { MessageRow } from './rows.ts';

/**
 * DLQ triage (docs/guide/dead-letter-queues.md): reading a queue's messages without receiving them, and
 * replaying or deleting chosen ones, each message on its own and atomically; plus the audit trail of what
 * operators did. Kept apart from Store, which clients' traffic uses: only the console, its API and the CLI
 * call these. A message is in flight while a consumer holds it: received and not yet visible again. Triage
 * never touches a message in flight; it reports it as `inFlight` instead.
 */
export interface TriageStore {
  /**
   * Up to `limit` of the queue's unexpired messages with seq above `afterSeq`, lowest seq first, as they are:
   * no receive is counted and no visibility changes.
   */
  browseMessages(
    queueId: number,
    options: { afterSeq: number; limit: number; now: number },
  ): Promise<StoredMessage[]>;
  /**
   * For each of `seqs`, in one transaction per message: if the message is in the queue and not in flight at
   * `now`, asks `copy` for its replacement; unless refused, deletes it and stores the copy in the copy's queue
   * (no deduplication: a replay is never a duplicate).
   */
  replayMessages(request: ReplayRequest): Promise<TriageOutcome[]>;
  /** Deletes each of `seqs` that is in the queue and not in flight at `now`, each atomically. */
  deleteMessagesBySeq(queueId: number, seqs: readonly number[], now: number): Promise<TriageOutcome[]>;
  appendAudit(entry: AuditEntry): Promise<AuditRecord>;
  /** Entries with id below `beforeId` (all when absent), newest first, at most `limit`. */
  listAudit(options: { beforeId?: number; limit: number }): Promise<AuditRecord[]>;
}

export interface ReplayRequest {
  queueId: number;
  seqs: readonly number[];
  now: number;
  /** The message that replaces `original`, and its queue; or why it cannot be replayed (nothing changes). */
  copy: (original: StoredMessage) => { queueId: number; message: NewMessage } | { refused: string };
}

export type TriageOutcome =
  | { seq: number; outcome: 'done'; messageId: string; queueId?: number }
  | { seq: number; outcome: 'inFlight' | 'missing'; messageId?: string }
  | { seq: number; outcome: 'refused'; messageId: string; reason: string };

export type AuditAction = 'replay' | 'delete' | 'purge' | 'move-task' | 'cancel-move-task';

/** One operator action: who, through what, what, on how many messages, from where to where. */
export interface AuditEntry {
  at: number;
  /** The console session's or the request's access key id; "anonymous" without credentials configured. */
  actor: string;
  via: 'console' | 'cli' | 'api';
  action: AuditAction;
  source: string;
  destination: string | undefined;
  /** Messages acted on (replayed, deleted); for purges and move tasks, the queue's count at the start. */
  count: number;
  /** Messages skipped (in flight, gone, refused); 0 for purges and move tasks. */
  skipped: number;
  /** Free text: the selection (ids, search), a move task's handle. */
  detail: string | undefined;
}

export interface AuditRecord extends AuditEntry {
  id: number;
}

/** Received and not visible again yet: a consumer holds it (a delayed message was never received). */
export function isInFlight(row: Pick<MessageRow, 'receive_count' | 'visible_at'>, now: number): boolean {
  return row.receive_count > 0 && row.visible_at > now;
}

/** audit_log's columns, in both stores. */
export interface AuditRow {
  id: number;
  at: number;
  actor: string;
  via: AuditEntry['via'];
  action: AuditAction;
  source: string;
  destination: string | null;
  count: number;
  skipped: number;
  detail: string | null;
}

export function toAuditRecord(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    at: row.at,
    actor: row.actor,
    via: row.via,
    action: row.action,
    source: row.source,
    destination: row.destination ?? undefined,
    count: row.count,
    skipped: row.skipped,
    detail: row.detail ?? undefined,
  };
}

/** Both stores of Sluice triage; a store given to the server by a test or another backend may not. */
export function isTriageStore(store: object): store is TriageStore {
  return 'replayMessages' in store && 'appendAudit' in store;
}
