import type { ChangeVisibilityOutcome, DeleteOutcome, QueueRecord, ReceiptRule } from '../store/contract.ts';
import { errors } from './errors.ts';

/** The actions that act through a receipt handle; /metrics counts refused stale handles under these names. */
export type ReceiptAction =
  | 'DeleteMessage'
  | 'DeleteMessageBatch'
  | 'ChangeMessageVisibility'
  | 'ChangeMessageVisibilityBatch';

/** Which standard queues refuse stale receipt handles (docs/decisions/strict-receipt-handles.md). */
export interface ReceiptHandleSettings {
  /** `--strict-receipt-handles`: every standard queue. Default false, as AWS. */
  strict?: boolean;
  /** The config file's per-queue `strictReceiptHandles`, by queue name; wins over `strict`. */
  strictQueues?: ReadonlyMap<string, boolean>;
}

/**
 * Which receipt handles of a message that still exists DeleteMessage and ChangeMessageVisibility honour:
 * - a standard queue, as SQS: every handle issued for the message, superseded or lapsed;
 * - a strict standard queue: only the latest receive's handle, while its visibility timeout lasts, so a
 *   consumer whose lease ran out cannot act on a message another may hold;
 * - a FIFO queue, as SQS: a delete refuses a lapsed handle, a visibility change a message not in flight.
 */
const RULES = {
  standard: { delete: 'anyIssued', change: 'anyIssued' },
  strict: { delete: 'inFlight', change: 'inFlight' },
  fifo: { delete: 'inFlight', change: 'latest' },
} as const satisfies Record<string, { delete: ReceiptRule; change: ReceiptRule }>;

/** The store's outcomes that mean the handle was stale: superseded, or its visibility timeout lapsed. */
const STALE: Partial<Record<DeleteOutcome | ChangeVisibilityOutcome, 'superseded' | 'lapsed'>> = {
  stale: 'superseded',
  expired: 'lapsed',
  notInFlight: 'lapsed',
};

/** Chooses each queue's receipt rule, and counts the stale handles refused, per queue and action. */
export class ReceiptRules {
  private readonly refused = new Map<string, Map<ReceiptAction, number>>();

  constructor(private readonly settings: ReceiptHandleSettings = {}) {}

  deleteRule(queue: QueueRecord): ReceiptRule {
    return RULES[this.kindOf(queue)].delete;
  }

  changeRule(queue: QueueRecord): ReceiptRule {
    return RULES[this.kindOf(queue)].change;
  }

  /**
   * Counts a handle the store refused as stale, and on a strict queue answers ReceiptHandleIsInvalid; any
   * other outcome, and a FIFO queue's refusal (SQS's own errors), is left to the caller to answer.
   */
  refuseStale(
    queue: QueueRecord,
    action: ReceiptAction,
    outcome: DeleteOutcome | ChangeVisibilityOutcome,
    receiptHandle: string,
  ): void {
    const why = STALE[outcome];
    if (why === undefined) return;
    const byAction = this.refused.get(queue.name) ?? new Map<ReceiptAction, number>();
    byAction.set(action, (byAction.get(action) ?? 0) + 1);
    this.refused.set(queue.name, byAction);
    if (this.kindOf(queue) === 'strict') throw errors.staleReceiptHandle(receiptHandle, why);
  }

  /** Stale handles refused since the server started, per queue and action. */
  *refusedStale(): Generator<{ queue: string; action: ReceiptAction; count: number }> {
    for (const [queue, byAction] of this.refused)
      for (const [action, count] of byAction) yield { queue, action, count };
  }

  /** A deleted queue's counts go with it, so a later queue of that name starts from zero. */
  forget(queue: string): void {
    this.refused.delete(queue);
  }

  private kindOf(queue: QueueRecord): keyof typeof RULES {
    if (queue.fifo) return 'fifo';
    const strict = this.settings.strictQueues?.get(queue.name) ?? this.settings.strict ?? false;
    return strict ? 'strict' : 'standard';
  }
}
