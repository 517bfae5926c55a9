import type { NewMessage, StoredMessage } from './contract.ts';
import { answer, type Plan } from './plan.ts';
import { type GroupSteps, refreshGroup, type TriageSteps } from './planner.ts';
import { type MessageRow, toMessage } from './rows.ts';
import { type SendSteps, sendPlan } from './send-plan.ts';

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
  /** Appends the entry and, in the same write, removes the entries `keep` no longer keeps. */
  appendAudit(entry: AuditEntry, keep: AuditKeep): Promise<AuditRecord>;
  /** Removes the entries `keep` no longer keeps; returns how many. */
  pruneAudit(keep: AuditKeep): Promise<number>;
  /** Entries with id below `beforeId` (all when absent), newest first, at most `limit`. */
  listAudit(options: { beforeId?: number; limit: number }): Promise<AuditRecord[]>;
}

/** Which audit entries stay: those written at or after `since`, and of those only the newest `newest` ids. */
export interface AuditKeep {
  since: number;
  newest: number;
}

export interface ReplayRequest {
  queueId: number;
  seqs: readonly number[];
  now: number;
  /** The message that replaces `original`, and its queue; or why it cannot be replayed (nothing changes). */
  copy: (original: StoredMessage) => { queueId: number; message: NewMessage } | { refused: string };
}

export type TriageOutcome =
  | { seq: number; outcome: 'done'; messageId: string; queueId?: number; newMessageId?: string }
  | { seq: number; outcome: 'inFlight' | 'missing'; messageId?: string }
  | { seq: number; outcome: 'refused'; messageId: string; reason: string };

export type AuditAction =
  | 'replay'
  | 'delete'
  | 'purge'
  | 'delete-queue'
  | 'move-task'
  | 'cancel-move-task'
  /** An SNS HTTP/HTTPS delivery an operator dropped; its source is the topic's name. */
  | 'drop-sns-delivery';

/**
 * How the request was authenticated: a SigV4 signature, the console's session cookie, or neither (a server
 * without credentials checks none).
 */
export type AuditVia = 'signature' | 'console-session' | 'unauthenticated';
/** What entries written before the audit recorded authentication say: what the client named itself. */
export type ClientNamedVia = 'console' | 'cli' | 'api';

/** What a replay's new body or attributes were, without their content. */
export interface ContentDigest {
  bytes: number;
  sha256: string;
}

/** What a replay changed in the messages it replayed. */
export interface AuditEdit {
  body?: ContentDigest;
  messageAttributes?: ContentDigest;
}

/** A message an action took out of its queue, and the new message a replay made of it. */
export interface AuditedMessage {
  messageId: string;
  newMessageId?: string;
}

/** One operator action: who, through what, what, on how many messages, from where to where. */
export interface AuditEntry {
  at: number;
  /** The console session's or the request's access key id; "anonymous" without credentials configured. */
  actor: string;
  via: AuditVia;
  action: AuditAction;
  source: string;
  destination: string | undefined;
  /** Messages acted on (replayed, deleted); for purges and move tasks, the queue's count at the start. */
  count: number;
  /** Messages skipped (in flight, gone, refused); 0 for purges and move tasks. */
  skipped: number;
  /** Free text: the selection (ids, search, summarized when long), a move task's handle. */
  detail: string | undefined;
  /** A replay's new body or attributes; absent when it kept the messages' own. */
  edit?: AuditEdit;
  /** The first messages acted on (a few, not all: `count` says how many). */
  messages?: AuditedMessage[];
}

export interface AuditRecord extends Omit<AuditEntry, 'via'> {
  id: number;
  via: AuditVia | ClientNamedVia;
}

/** Received and not visible again yet: a consumer holds it (a delayed message was never received). */
export function isInFlight(row: Pick<MessageRow, 'receive_count' | 'visible_at'>, now: number): boolean {
  return row.receive_count > 0 && row.visible_at > now;
}

type TriagePlanSteps = TriageSteps & GroupSteps & SendSteps;

/** TriageStore.deleteMessagesBySeq (see its contract), for one message. */
export function* triageDeletePlan(
  steps: TriagePlanSteps,
  queueId: number,
  seq: number,
  now: number,
): Plan<TriageOutcome> {
  const row = yield* available(steps, queueId, seq, now);
  if ('outcome' in row) return row;
  yield* remove(steps, row);
  return { seq, outcome: 'done', messageId: row.message_id };
}

/** TriageStore.replayMessages (see its contract), for one message. */
export function* triageReplayPlan(
  steps: TriagePlanSteps,
  request: ReplayRequest,
  seq: number,
): Plan<TriageOutcome> {
  const row = yield* available(steps, request.queueId, seq, request.now);
  if ('outcome' in row) return row;
  const copy = request.copy(toMessage(row));
  if ('refused' in copy) return { seq, outcome: 'refused', messageId: row.message_id, reason: copy.refused };
  yield* remove(steps, row);
  // As a send would store it (groups, tenants); its deduplication is none.
  const fifo = yield* answer(steps.isFifo(copy.queueId));
  yield* sendPlan(steps, copy.queueId, [copy.message], fifo);
  yield* answer(steps.wake(copy.queueId));
  return {
    seq,
    outcome: 'done',
    messageId: row.message_id,
    queueId: copy.queueId,
    newMessageId: copy.message.messageId,
  };
}

/** The message's row, unless it is gone or a consumer holds it (or is claiming it now). */
function* available(
  steps: TriagePlanSteps,
  queueId: number,
  seq: number,
  now: number,
): Plan<MessageRow | TriageOutcome> {
  const found = yield* answer(steps.triageRow(queueId, seq));
  if (!found) return { seq, outcome: 'missing' };
  if ('held' in found)
    return found.held.expires_at > now
      ? { seq, outcome: 'inFlight', messageId: found.held.message_id }
      : { seq, outcome: 'missing' };
  if (found.expires_at <= now) return { seq, outcome: 'missing' };
  if (isInFlight(found, now)) return { seq, outcome: 'inFlight', messageId: found.message_id };
  return found;
}

/** Deletes the message, and updates its FIFO group's row. */
function* remove(steps: TriagePlanSteps, row: MessageRow): Plan<void> {
  yield* answer(steps.deleteMessage(row.seq));
  if (row.group_id !== null && (yield* answer(steps.isFifo(row.queue_id))))
    yield* refreshGroup(steps, row.queue_id, row.group_id);
}

/** audit_log's columns, in both stores. */
export interface AuditRow {
  id: number;
  at: number;
  actor: string;
  via: AuditRecord['via'];
  action: AuditAction;
  source: string;
  destination: string | null;
  count: number;
  skipped: number;
  detail: string | null;
  /** JSON of AuditEdit */
  edit: string | null;
  /** JSON of AuditedMessage[] */
  messages: string | null;
}

/** The row's columns of an entry (JSON text for its structured fields). */
export function toAuditColumns(entry: AuditEntry) {
  return {
    ...entry,
    destination: entry.destination ?? null,
    detail: entry.detail ?? null,
    edit: entry.edit === undefined ? null : JSON.stringify(entry.edit),
    messages: entry.messages === undefined ? null : JSON.stringify(entry.messages),
  };
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
    ...(row.edit !== null && { edit: JSON.parse(row.edit) as AuditEdit }),
    ...(row.messages !== null && { messages: JSON.parse(row.messages) as AuditedMessage[] }),
  };
}

/** Both stores of Sluice triage; a store given to the server by a test or another backend may not. */
export function isTriageStore(store: object): store is TriageStore {
  return 'replayMessages' in store && 'appendAudit' in store;
}
