import { hash } from 'node:crypto';
import type { Clock, Timer } from '#toolkit/clock';
import type { MessageAttributes } from '../shared/sqs-values.ts';
import type {
  AuditEdit,
  AuditEntry,
  AuditKeep,
  AuditRecord,
  ContentDigest,
  TriageStore,
} from '../store/triage.ts';
import { attributesEncoding, attributesSize } from './message-attributes.ts';

/** How much of the audit trail is kept: `--audit-retention-days` and `--audit-max-entries`. */
export interface AuditRetention {
  /** Entries older than this many days are removed. */
  days: number;
  /** Only this many of the newest entries are kept. */
  maxEntries: number;
}

export const AUDIT_RETENTION_DEFAULTS: AuditRetention = { days: 90, maxEntries: 100_000 };

/** UTF-8 bytes an entry keeps of a name (its actor, its queues). */
const NAME_BYTES = 200;
/** UTF-8 bytes an entry keeps of its detail (a selection's summary, a move task's handle). */
export const DETAIL_BYTES = 512;
/** UTF-8 bytes kept of one message id. */
const ID_BYTES = 100;
/** Messages an entry names at most: the first acted on; its count says how many there were. */
export const AUDITED_MESSAGES = 10;
/** Ids a selection's summary shows before saying how many more. */
const SUMMARY_IDS = 5;
/** UTF-8 bytes a selection's summary keeps of each filter. */
const SUMMARY_FILTER_BYTES = 200;

const DAY_MS = 24 * 60 * 60 * 1000;
/** How often the trail drops what its retention no longer keeps when nothing is written to it. */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The audit trail of operators' actions (docs/guide/dead-letter-queues.md#the-audit-trail). Every entry is of
 * bounded size whatever the request held: each text cut to its bound, a selection summarized (the first
 * ids, the filters, a digest of the whole), an edit recorded as digests and sizes, a few message ids. The
 * trail keeps `retention.maxEntries` entries of at most `retention.days`.
 */
export class AuditTrail {
  constructor(
    private readonly clock: Clock,
    private readonly store: Pick<TriageStore, 'appendAudit' | 'pruneAudit' | 'listAudit'>,
    private readonly retention: AuditRetention = AUDIT_RETENTION_DEFAULTS,
  ) {}

  /** Writes the entry, each field within its bound, and drops in the same write what is no longer kept. */
  record(entry: Omit<AuditEntry, 'at'>): Promise<AuditRecord> {
    const at = this.clock.now();
    return this.store.appendAudit(bounded({ ...entry, at }), this.keep(at));
  }

  /** Entries with id below `beforeId` (all when absent), newest first, at most `limit`. */
  list(options: { beforeId?: number; limit: number }): Promise<AuditRecord[]> {
    return this.store.listAudit(options);
  }

  /** Drops, every hour, the entries past the retention period, so that a trail nobody writes to ages too. */
  startPruning(onError: (error: unknown) => void): { stop(): void } {
    let timer: Timer | undefined;
    let stopped = false;
    const schedule = () => {
      if (stopped) return;
      timer = this.clock.setTimer(
        PRUNE_INTERVAL_MS,
        // Returned, so that a test clock's advance waits for it.
        () => this.store.pruneAudit(this.keep(this.clock.now())).catch(onError).finally(schedule),
        { periodic: true },
      );
    };
    schedule();
    return {
      stop() {
        stopped = true;
        timer?.cancel();
      },
    };
  }

  private keep(now: number): AuditKeep {
    return { since: now - this.retention.days * DAY_MS, newest: this.retention.maxEntries };
  }
}

/**
 * A replay's selection as its entry shows it: the first ids and the filters, each cut to a bound, and, when
 * anything was left out, the SHA-256 of the whole selection to compare selections by.
 */
export function selectionSummary(ids: readonly string[] | undefined, filters: readonly string[]): string {
  const parts: string[] = [];
  let whole = true;
  if (ids) {
    const shown = ids.slice(0, SUMMARY_IDS).map((id) => cut(id, ID_BYTES));
    const more = ids.length - shown.length;
    parts.push(`ids ${shown.join(',')}${more > 0 ? ` (+${more} more)` : ''}`);
    whole &&= more === 0 && shown.every((id, i) => id === ids[i]);
  }
  for (const filter of filters) {
    const shown = cut(filter, SUMMARY_FILTER_BYTES);
    parts.push(shown);
    whole &&= shown === filter;
  }
  const text = parts.join(' and ');
  if (whole && Buffer.byteLength(text) <= DETAIL_BYTES) return text;
  const suffix = ` (selection sha256 ${sha256Hex(JSON.stringify({ ids, filters }))})`;
  return `${cut(text, DETAIL_BYTES - Buffer.byteLength(suffix))}${suffix}`;
}

/** What a replay's new body and attributes were, as sizes and SHA-256 digests; undefined when it kept both. */
export function editOf(
  body: string | undefined,
  messageAttributes: MessageAttributes | undefined,
): AuditEdit | undefined {
  if (body === undefined && messageAttributes === undefined) return undefined;
  const digest = (bytes: number, data: string | Buffer): ContentDigest => ({
    bytes,
    sha256: sha256Hex(data),
  });
  return {
    ...(body !== undefined && { body: digest(Buffer.byteLength(body), body) }),
    ...(messageAttributes !== undefined && {
      // SQS's own encoding of attributes (that of MD5OfMessageAttributes), and their size as SQS counts it.
      messageAttributes: digest(
        attributesSize(messageAttributes),
        attributesEncoding(messageAttributes) ?? Buffer.alloc(0),
      ),
    }),
  };
}

function bounded(entry: AuditEntry): AuditEntry {
  return {
    ...entry,
    actor: cut(entry.actor, NAME_BYTES),
    source: cut(entry.source, NAME_BYTES),
    destination: entry.destination === undefined ? undefined : cut(entry.destination, NAME_BYTES),
    detail: entry.detail === undefined ? undefined : cut(entry.detail, DETAIL_BYTES),
    ...(entry.messages && {
      messages: entry.messages.slice(0, AUDITED_MESSAGES).map(({ messageId, newMessageId }) => ({
        messageId: cut(messageId, ID_BYTES),
        ...(newMessageId !== undefined && { newMessageId: cut(newMessageId, ID_BYTES) }),
      })),
    }),
  };
}

/** The text in at most `bytes` UTF-8 bytes, ending in "…" when it had to be cut (never inside a character). */
function cut(text: string, bytes: number): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most texts need no encoding to tell.
  if (text.length * 3 <= bytes || Buffer.byteLength(text) <= bytes) return text;
  const ellipsis = '…';
  const room = bytes - Buffer.byteLength(ellipsis);
  // At most `room` units hold at least `room` bytes; the decoder drops a character cut in two as U+FFFD.
  const head = Buffer.from(text.slice(0, room))
    .subarray(0, room)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return `${head}${ellipsis}`;
}

function sha256Hex(data: string | Buffer): string {
  return hash('sha256', data, 'hex');
}
