import type { MessageCounts } from './contract.ts';
import type { StoreSteps } from './planner.ts';
import type { MessageRow } from './rows.ts';

/**
 * Where the embedded store (sqlite/sqlite-store.ts) keeps its messages: in its database's tables
 * (sqlite/plan-steps.ts), or, with `--in-memory`, in memory/message-table.ts, which holds them in memory and
 * answers the same steps without a statement. Queues, topics, move tasks and the rest stay in the database
 * either way: they are not on a message's path. Every method runs inside the store's write (or read), whose
 * one writer is this process.
 */
export interface MessageTable {
  /** The steps the shared plans decide with (planner.ts, send-plan.ts, triage.ts). */
  readonly plan: StoreSteps;
  isFifo(queueId: number): boolean;
  /**
   * Resolves once the queue's messages can answer a receive, a count or a wake without holding other
   * requests back; undefined when they can at once.
   */
  warmUp(queueId: number): Promise<void> | undefined;
  counts(queueId: number, now: number): MessageCounts;
  /** The earliest time after `now` at which a message of the queue becomes visible, if any. */
  nextVisibleAt(queueId: number, now: number): number | undefined;
  /** When the queue's next message to expire does so, if any. */
  nextExpiryAt(queueId: number, now: number): number | undefined;
  /** The seq of the queue's newest message, 0 if it has none. */
  lastSeq(queueId: number): number;
  /** Up to `limit` unexpired messages of the queue after `afterSeq`, in seq order (the console's browsing). */
  page(queueId: number, options: { afterSeq: number; limit: number; now: number }): MessageRow[];
  /** The queue's messages never received become visible `delayMs` after their send (a FIFO queue's new delay). */
  redelayWaiting(queueId: number, delayMs: number): void;
  /** Deletes the queue's messages and what is kept for them (groups, tenants, deduplication ids, attempts). */
  deleteQueue(queueId: number): void;
  /** Drops what memory learned of the tables: a rollback of the database, or a reset. */
  forget(): void;
  /** Empties the table (test mode's reset); seqs keep growing. */
  reset(): void;
  /** Bytes of messages held outside the database, which its page count does not show. */
  bytesInMemory(): number;
}
