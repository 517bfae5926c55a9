/**
 * What happened to each queue since the server started: the counters behind CloudWatch's
 * NumberOfMessagesSent/Received/Deleted, NumberOfEmptyReceives and SentMessageSize. SqsService reports each
 * action here; /metrics and the history sampler read the totals.
 */
export interface ActivityTotals {
  sent: number;
  received: number;
  deleted: number;
  emptyReceives: number;
  sentBytes: number;
}

/** Nothing happened yet. */
export const NO_ACTIVITY: Readonly<ActivityTotals> = {
  sent: 0,
  received: 0,
  deleted: 0,
  emptyReceives: 0,
  sentBytes: 0,
};

export type ActivityListener = (queue: string, event: 'sent', sizes: readonly number[]) => void;

export class QueueActivity {
  private readonly byQueue = new Map<string, ActivityTotals>();
  private readonly listeners: ActivityListener[] = [];

  /** Told of every send with its message sizes (the SentMessageSize histogram needs each one). */
  onSent(listener: ActivityListener): void {
    this.listeners.push(listener);
  }

  sent(queue: string, sizes: readonly number[]): void {
    if (sizes.length === 0) return;
    const totals = this.of(queue);
    totals.sent += sizes.length;
    for (const size of sizes) totals.sentBytes += size;
    for (const listener of this.listeners) listener(queue, 'sent', sizes);
  }

  /** A receive that returned `count` messages; 0 is an empty receive. */
  received(queue: string, count: number): void {
    const totals = this.of(queue);
    if (count === 0) totals.emptyReceives++;
    else totals.received += count;
  }

  deleted(queue: string, count: number): void {
    if (count > 0) this.of(queue).deleted += count;
  }

  /** A deleted queue's counters go with it, so a later queue of that name starts from zero. */
  forget(queue: string): void {
    this.byQueue.delete(queue);
  }

  totals(queue: string): ActivityTotals {
    return { ...this.of(queue) };
  }

  private of(queue: string): ActivityTotals {
    let totals = this.byQueue.get(queue);
    if (!totals) {
      totals = { ...NO_ACTIVITY };
      this.byQueue.set(queue, totals);
    }
    return totals;
  }
}
