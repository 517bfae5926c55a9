import type { Clock } from '#toolkit/clock';
import type { MessageCounts } from '../store/contract.ts';
import type { QueueDirectory } from './queue-directory.ts';

/**
 * The latest counts of every queue, as last read from the store. The history sampler reads them all every
 * 10 s (it needs them anyway); /metrics serves from here, re-reading only the queues this node's clients
 * touched, so a scrape does not cost a store read per queue.
 */
/** What the counts need: time, and the queues with their counts. */
export interface CountsDependencies {
  readonly clock: Clock;
  readonly queues: Pick<QueueDirectory, 'allQueues' | 'counts' | 'queueByName'>;
}

export class QueueCounts {
  private counts = new Map<string, MessageCounts>();
  private fullReadAt: number | undefined;
  /** Names read one by one while a full read is under way: their newer counts must survive its end. */
  private readDuringFullRead: Set<string> | undefined;

  constructor(private readonly deps: CountsDependencies) {}

  get latest(): ReadonlyMap<string, MessageCounts> {
    return this.counts;
  }

  /** When `readAll` last finished reading (service clock), undefined before the first. */
  get readAllAt(): number | undefined {
    return this.fullReadAt;
  }

  /** Reads every queue's counts at `now`; a queue gone since the last read goes from the map. */
  async readAll(now = this.deps.clock.now()): Promise<ReadonlyMap<string, MessageCounts>> {
    const readDuring = new Set<string>();
    this.readDuringFullRead = readDuring;
    const counts = new Map<string, MessageCounts>();
    try {
      for await (const queue of this.deps.queues.allQueues())
        counts.set(queue.name, await this.deps.queues.counts(queue, now));
    } finally {
      this.readDuringFullRead = undefined;
    }
    for (const name of readDuring) {
      const fresher = this.counts.get(name);
      if (fresher) counts.set(name, fresher);
      else counts.delete(name);
    }
    this.counts = counts;
    this.fullReadAt = now;
    return counts;
  }

  /** Re-reads the named queues now (a name no queue has any more is dropped). */
  async read(names: Iterable<string>): Promise<void> {
    const now = this.deps.clock.now();
    for (const name of names) {
      this.readDuringFullRead?.add(name);
      const queue = await this.deps.queues.queueByName(name);
      if (queue) this.counts.set(name, await this.deps.queues.counts(queue, now));
      else this.counts.delete(name);
    }
  }
}
