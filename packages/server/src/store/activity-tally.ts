import type { ActivityCounts, QueueActivityCounts } from './contract.ts';

export const NO_ACTIVITY: Readonly<ActivityCounts> = {
  sent: 0,
  received: 0,
  deleted: 0,
  emptyReceives: 0,
  sentBytes: 0,
};

/** Adds `counts` to the queue's entry of `map`. */
export function addActivity(
  map: Map<string, ActivityCounts>,
  queue: string,
  counts: Partial<ActivityCounts>,
): void {
  let totals = map.get(queue);
  if (!totals) {
    totals = { ...NO_ACTIVITY };
    map.set(queue, totals);
  }
  for (const key of Object.keys(counts) as Array<keyof ActivityCounts>) totals[key] += counts[key] ?? 0;
}

/** Activity counts per queue, added up until taken: a node's unflushed activity, and a one-process store's shared one. */
export class ActivityTally {
  private readonly byQueue = new Map<string, ActivityCounts>();

  add(queue: string, counts: Partial<ActivityCounts>): void {
    addActivity(this.byQueue, queue, counts);
  }

  forget(queue: string): void {
    this.byQueue.delete(queue);
  }

  clear(): void {
    this.byQueue.clear();
  }

  /** Everything added since the previous take, per queue that saw any. */
  take(): QueueActivityCounts[] {
    const taken = [...this.byQueue].map(([queue, counts]) => ({ queue, ...counts }));
    this.byQueue.clear();
    return taken;
  }
}
