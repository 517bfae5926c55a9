import { randomUUID } from 'node:crypto';
import { parseQueueArn } from '#toolkit/arn';
import type { Clock } from '#toolkit/clock';
import type { MessageAttributes } from '../shared/sqs-values.ts';
import type { NewMessage, QueueRecord, StoredMessage } from '../store/contract.ts';
import type { AuditEdit, AuditRecord, AuditVia, TriageOutcome, TriageStore } from '../store/triage.ts';
import { type AuditTrail, editOf, selectionSummary } from './audit-trail.ts';
import { errors } from './errors.ts';
import { hasOnlyAllowedCharacters } from './limits.ts';
import type { LongPoll } from './long-poll.ts';
import { attributesSize, checkMessageAttributes, md5Hex, md5OfAttributes } from './message-attributes.ts';
import {
  FilterWorkError,
  MESSAGE_WORK_MAX,
  type MessageFilter,
  matchesAll,
  type WorkMeter,
} from './message-filter.ts';
import { moveDestination } from './move-tasks.ts';
import { integerAttribute } from './queue-attributes.ts';
import type { QueueDirectory } from './queue-directory.ts';
import { parseRedrivePolicy } from './redrive-policy.ts';

/** Most messages one browse answer holds. */
export const BROWSE_MAX = 100;
/** Rows one browse reads at most looking for matches; a search of a bigger queue goes on from its cursor. */
const BROWSE_SCAN_ROWS = 5_000;
/** Rows read from the store at a time; the scan lets the event loop run between pages. */
const SCAN_PAGE = 500;
/** Most messages one replay or delete acts on; a bigger selection is done in several. */
export const SELECTION_MAX = 1_000;

/** A message as triage shows it: what it holds, where it stands, and where it came from. */
export interface BrowsedMessage {
  messageId: string;
  body: string;
  messageAttributes: MessageAttributes | undefined;
  groupId: string | undefined;
  sentAt: number;
  receiveCount: number;
  firstReceivedAt: number | undefined;
  /** inFlight: a consumer holds it (triage leaves it alone); delayed: not yet visible, never received. */
  state: 'visible' | 'inFlight' | 'delayed';
  /** The queue a dead-letter move took it from (DeadLetterQueueSourceArn). */
  origin: { arn: string; queue: string } | undefined;
  /** Why it is here, as far as the server knows. */
  failureReason: string | undefined;
}

export interface BrowsePage {
  messages: BrowsedMessage[];
  /** Where the next page starts; absent once the queue's end was reached. */
  next: string | undefined;
}

/** Which messages of a queue: those with these ids, and (or only) those every filter matches. */
export interface Selection {
  messageIds?: readonly string[];
  filters?: readonly MessageFilter[];
}

export interface Actor {
  actor: string;
  via: AuditVia;
}

export interface ReplayOptions extends Actor {
  /** Where to; absent: each message back to the queue it was dead-lettered from. */
  destination?: QueueRecord;
  /**
   * Throws unless the replay may send to `queue`: asked, before anything moves, of every queue the selection
   * would go to, each message's origin included.
   */
  authorizeDestination: (queue: QueueRecord) => Promise<void>;
  /** The replayed messages' SenderId: whoever replays them. */
  senderId: string;
  /** A new body (one message only). */
  body?: string;
  /** New message attributes, replacing the message's own. */
  messageAttributes?: MessageAttributes;
}

export interface TriageReport {
  /** Messages replayed or deleted, with where each went and, for a replay, the new message's id. */
  done: Array<{ messageId: string; destination?: string; newMessageId?: string }>;
  /** Messages left as they were, and why: inFlight, missing, or the refusal's reason. */
  skipped: Array<{ messageId: string; reason: string }>;
  /** The selection matched more than SELECTION_MAX messages: only the first were acted on. */
  truncated: boolean;
  audit: AuditRecord;
}

/** What triage needs of the service: time, the queues, and the long polls to wake after a replay. */
export interface TriageDependencies {
  readonly clock: Clock;
  readonly queues: Pick<QueueDirectory, 'queueByArn'>;
  readonly longPoll: Pick<LongPoll, 'notify'>;
}

/**
 * DLQ triage: browse and search a queue's messages without receiving them, and replay or delete chosen ones,
 * each message atomically and never one a consumer holds. Every replay and delete is written to `audit`.
 */
export class MessageTriage {
  constructor(
    private readonly deps: TriageDependencies,
    private readonly store: TriageStore,
    readonly audit: AuditTrail,
  ) {}

  async browse(
    queue: QueueRecord,
    options: { after?: string; limit: number; filters: readonly MessageFilter[] },
  ): Promise<BrowsePage> {
    const now = this.deps.clock.now();
    let afterSeq = parseCursor(options.after);
    const found: StoredMessage[] = [];
    const meter: WorkMeter = { work: 0 };
    let scanned = 0;
    for (;;) {
      const rows = await this.store.browseMessages(queue.id, { afterSeq, limit: SCAN_PAGE, now });
      let full = false;
      for (const row of rows) {
        afterSeq = row.seq;
        scanned++;
        if (await matches(options.filters, row, meter)) found.push(row);
        full = found.length === options.limit;
        if (full) break;
      }
      const atEnd = !full && rows.length < SCAN_PAGE;
      if (atEnd || full || scanned >= BROWSE_SCAN_ROWS) {
        const messages = await Promise.all(found.map((row) => this.describe(row, now)));
        return { messages, next: atEnd ? undefined : String(afterSeq) };
      }
      await nextTurn();
    }
  }

  async replay(queue: QueueRecord, selection: Selection, options: ReplayOptions): Promise<TriageReport> {
    if (options.body !== undefined) checkBody(options.body);
    if (options.messageAttributes !== undefined) checkMessageAttributes(options.messageAttributes, 'message');
    if (options.destination?.id === queue.id)
      throw errors.invalidParameterValue('The destination is the queue the messages are in.');
    const { seqs, missing, truncated, rows } = await this.select(queue, selection);
    if (options.body !== undefined && seqs.length + missing.length > 1)
      throw errors.invalidParameterValue('A new body can be given for one message at a time.');
    const origins = new Map<string, QueueRecord | undefined>();
    for (const row of rows) {
      const arn = row.deadLetterSourceArn;
      if (!options.destination && arn !== undefined && !origins.has(arn))
        origins.set(arn, await this.deps.queues.queueByArn(arn));
    }
    const destinations = options.destination ? [options.destination] : [...origins.values()];
    for (const destination of new Set(destinations))
      if (destination) await options.authorizeDestination(destination);
    const now = this.deps.clock.now();
    const names = new Map<number, string>();
    const outcomes = await this.store.replayMessages({
      queueId: queue.id,
      seqs,
      now,
      copy: (original) => {
        const target =
          options.destination ??
          (original.deadLetterSourceArn === undefined
            ? undefined
            : origins.get(original.deadLetterSourceArn));
        if (!target)
          return {
            refused:
              original.deadLetterSourceArn === undefined
                ? 'it was not dead-lettered here, so it has no origin queue: name a destination'
                : `its origin queue ${original.deadLetterSourceArn} no longer exists: name a destination`,
          };
        if (target.fifo && original.groupId === undefined)
          return { refused: `${target.name} is a FIFO queue and the message has no message group id` };
        const body = options.body ?? original.body;
        const messageAttributes = options.messageAttributes ?? original.messageAttributes;
        // Checked already: the original's when it was sent, new ones above.
        const size = Buffer.byteLength(body) + attributesSize(messageAttributes);
        const maxSize = integerAttribute(target.attributes, 'MaximumMessageSize');
        if (size > maxSize)
          return {
            refused: `it would be ${size} bytes, over ${target.name}'s MaximumMessageSize of ${maxSize}`,
          };
        names.set(target.id, target.name);
        const destination = moveDestination(target, now);
        const message: NewMessage = {
          messageId: randomUUID(),
          body,
          messageAttributes,
          systemAttributes: original.systemAttributes,
          md5OfBody: md5Hex(body),
          md5OfMessageAttributes: md5OfAttributes(messageAttributes),
          md5OfSystemAttributes: original.md5OfSystemAttributes,
          senderId: options.senderId,
          sentAt: now,
          visibleAt: destination.visibleAt,
          expiresAt: destination.expiresAt,
          groupId: original.groupId,
          deduplication: undefined,
        };
        return { queueId: target.id, message };
      },
    });
    for (const queueId of names.keys()) this.deps.longPoll.notify(queueId);
    // A FIFO group held back by a replayed message may be receivable now.
    if (queue.fifo) this.deps.longPoll.notify(queue.id);
    return this.report(queue, selection, outcomes, missing, truncated, {
      ...options,
      action: 'replay',
      destination: options.destination?.name ?? 'origin',
      names,
      edit: editOf(options.body, options.messageAttributes),
    });
  }

  async delete(queue: QueueRecord, selection: Selection, actor: Actor): Promise<TriageReport> {
    const { seqs, missing, truncated } = await this.select(queue, selection);
    const outcomes = await this.store.deleteMessagesBySeq(queue.id, seqs, this.deps.clock.now());
    if (queue.fifo) this.deps.longPoll.notify(queue.id);
    return this.report(queue, selection, outcomes, missing, truncated, {
      ...actor,
      action: 'delete',
      destination: undefined,
      names: new Map(),
    });
  }

  /** The selected messages' seqs, in queue order, up to SELECTION_MAX; and the ids given that are not there. */
  private async select(queue: QueueRecord, selection: Selection) {
    const ids = selection.messageIds && new Set(selection.messageIds);
    const filters = selection.filters ?? [];
    if (!ids && filters.length === 0)
      throw errors.missingParameter('ids or filters (name the messages, or search for them)');
    if (ids && ids.size > SELECTION_MAX)
      throw errors.invalidParameterValue(`At most ${SELECTION_MAX} message ids can be given at once.`);
    const now = this.deps.clock.now();
    const rows: StoredMessage[] = [];
    const seen = new Set<string>();
    const meter: WorkMeter = { work: 0 };
    let truncated = false;
    let afterSeq = 0;
    scan: for (;;) {
      const page = await this.store.browseMessages(queue.id, { afterSeq, limit: SCAN_PAGE, now });
      for (const row of page) {
        afterSeq = row.seq;
        if (ids && !ids.has(row.messageId)) continue;
        if (!(await matches(filters, row, meter))) continue;
        if (rows.length === SELECTION_MAX) {
          truncated = true;
          break scan;
        }
        rows.push(row);
        seen.add(row.messageId);
        if (ids && seen.size === ids.size) break scan;
      }
      if (page.length < SCAN_PAGE) break;
      await nextTurn();
    }
    const missing = ids ? [...ids].filter((id) => !seen.has(id)) : [];
    return { seqs: rows.map((row) => row.seq), rows, missing, truncated };
  }

  private async report(
    queue: QueueRecord,
    selection: Selection,
    outcomes: TriageOutcome[],
    missing: string[],
    truncated: boolean,
    what: Actor & {
      action: 'replay' | 'delete';
      destination: string | undefined;
      names: Map<number, string>;
      edit?: AuditEdit;
    },
  ): Promise<TriageReport> {
    const done: TriageReport['done'] = [];
    const skipped: TriageReport['skipped'] = missing.map((messageId) => ({ messageId, reason: 'missing' }));
    for (const outcome of outcomes) {
      const messageId = outcome.messageId ?? `seq ${outcome.seq}`;
      if (outcome.outcome === 'done') {
        const destination = outcome.queueId === undefined ? undefined : what.names.get(outcome.queueId);
        done.push({
          messageId,
          ...(destination !== undefined && { destination }),
          ...(outcome.newMessageId !== undefined && { newMessageId: outcome.newMessageId }),
        });
      } else
        skipped.push({ messageId, reason: outcome.outcome === 'refused' ? outcome.reason : outcome.outcome });
    }
    const audit = await this.audit.record({
      actor: what.actor,
      via: what.via,
      action: what.action,
      source: queue.name,
      destination: what.destination,
      count: done.length,
      skipped: skipped.length,
      detail: selectionSummary(
        selection.messageIds,
        (selection.filters ?? []).map((filter) => filter.text),
      ),
      ...(what.edit && { edit: what.edit }),
      ...(done.length > 0 && {
        messages: done.map(({ messageId, newMessageId }) => ({
          messageId,
          ...(newMessageId !== undefined && { newMessageId }),
        })),
      }),
    });
    return { done, skipped, truncated, audit };
  }

  private async describe(row: StoredMessage, now: number): Promise<BrowsedMessage> {
    const arn = row.deadLetterSourceArn;
    const originQueue = arn === undefined ? undefined : await this.deps.queues.queueByArn(arn);
    const originName = arn === undefined ? undefined : parseQueueArn(arn)?.name;
    return {
      messageId: row.messageId,
      body: row.body,
      messageAttributes: row.messageAttributes,
      groupId: row.groupId,
      sentAt: row.sentAt,
      receiveCount: row.receiveCount,
      firstReceivedAt: row.firstReceivedAt,
      state: row.visibleAt <= now ? 'visible' : row.receiveCount > 0 ? 'inFlight' : 'delayed',
      origin: arn === undefined || originName === undefined ? undefined : { arn, queue: originName },
      failureReason: arn === undefined ? undefined : failureReason(row, originQueue),
    };
  }
}

/**
 * Sluice keeps no consumer's error, only what a dead-letter move knows: the receives, and the origin's
 * maxReceiveCount (as its RedrivePolicy says now).
 */
function failureReason(row: StoredMessage, origin: QueueRecord | undefined): string {
  const policy = origin?.attributes.RedrivePolicy;
  const limit = policy === undefined ? undefined : parseRedrivePolicy(policy).maxReceiveCount;
  const receives = `received ${row.receiveCount} time${row.receiveCount === 1 ? '' : 's'}`;
  return limit === undefined
    ? `${receives} without being deleted, then dead-lettered`
    : `${receives} without being deleted (maxReceiveCount ${limit}), then dead-lettered`;
}

/**
 * Whether every filter matches the row. A scan pauses for the event loop whenever its matching work since
 * the last pause reaches what one message may take, so a costly search never holds the server for long.
 */
async function matches(filters: readonly MessageFilter[], row: StoredMessage, meter: WorkMeter) {
  if (meter.work >= MESSAGE_WORK_MAX) {
    await nextTurn();
    meter.work = 0;
  }
  try {
    return matchesAll(
      filters,
      { MessageId: row.messageId, Body: row.body, MessageAttributes: row.messageAttributes },
      meter,
    );
  } catch (error) {
    if (error instanceof FilterWorkError) throw errors.invalidParameterValue(error.message);
    throw error;
  }
}

/** Lets the event loop run what waits (other requests, /health) before the next page of work. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function parseCursor(after: string | undefined): number {
  if (after === undefined) return 0;
  if (!/^\d{1,15}$/.test(after))
    throw errors.invalidParameterValue(
      `Value ${after} for parameter after is invalid: it is not a page cursor.`,
    );
  return Number(after);
}

function checkBody(body: string): void {
  if (body === '') throw errors.invalidParameterValue('The new body must not be empty.');
  if (!hasOnlyAllowedCharacters(body)) throw errors.invalidMessageContents();
}
