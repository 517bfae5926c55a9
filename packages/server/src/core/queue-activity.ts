import { ActivityTally, addActivity, NO_ACTIVITY } from '../store/activity-tally.ts';
import type { ActivityCounts, QueueActivityCounts } from '../store/contract.ts';

/**
 * What happened to each queue since the server started: the counters behind CloudWatch's
 * NumberOfMessagesSent/Received/Deleted, NumberOfEmptyReceives and SentMessageSize. The send, receive and
 * receipt actions report each action here; /metrics reads this node's totals, and the history reads what
 * every node has not yet added to the store (takeUnflushed), so that a cluster's history counts all of its
 * nodes.
 */
export type ActivityTotals = ActivityCounts;

/** Nothing happened yet. */
export { NO_ACTIVITY };

export type ActivityListener = (queue: string, event: 'sent', sizes: readonly number[]) => void;

export class QueueActivity {
  private readonly byQueue = new Map<string, ActivityTotals>();
  /** What happened since the last takeUnflushed, per queue. */
  private readonly unflushed = new ActivityTally();
  private readonly listeners: ActivityListener[] = [];
  private readonly changeListeners: Array<(queue: string) => void> = [];

  /** Told of every send with its message sizes (the SentMessageSize histogram needs each one). */
  onSent(listener: ActivityListener): void {
    this.listeners.push(listener);
  }

  /** Told of every send, receive and delete, and of a queue's deletion (/metrics re-reads those queues). */
  onChange(listener: (queue: string) => void): void {
    this.changeListeners.push(listener);
  }

  sent(queue: string, sizes: readonly number[]): void {
    if (sizes.length === 0) return;
    let bytes = 0;
    for (const size of sizes) bytes += size;
    this.add(queue, { sent: sizes.length, sentBytes: bytes });
    for (const listener of this.listeners) listener(queue, 'sent', sizes);
  }

  /** A receive that returned `count` messages; 0 is an empty receive. */
  received(queue: string, count: number): void {
    this.add(queue, count === 0 ? { emptyReceives: 1 } : { received: count });
  }

  deleted(queue: string, count: number): void {
    if (count > 0) this.add(queue, { deleted: count });
  }

  /** A deleted queue's counters go with it, so a later queue of that name starts from zero. */
  forget(queue: string): void {
    this.byQueue.delete(queue);
    this.unflushed.forget(queue);
    for (const listener of this.changeListeners) listener(queue);
  }

  /** Every queue's counters go (test mode's reset). */
  clear(): void {
    for (const queue of [...this.byQueue.keys()]) this.forget(queue);
    this.unflushed.clear();
  }

  totals(queue: string): ActivityTotals {
    return { ...(this.byQueue.get(queue) ?? NO_ACTIVITY) };
  }

  /** What happened since the previous take, per queue that saw any; forgotten here until given back. */
  takeUnflushed(): QueueActivityCounts[] {
    return this.unflushed.take();
  }

  /** Gives a take back (its store write failed), so that the next take carries it. */
  restoreUnflushed(taken: readonly QueueActivityCounts[]): void {
    for (const { queue, ...counts } of taken) this.unflushed.add(queue, counts);
  }

  private add(queue: string, counts: Partial<ActivityTotals>): void {
    addActivity(this.byQueue, queue, counts);
    this.unflushed.add(queue, counts);
    for (const listener of this.changeListeners) listener(queue);
  }
}
