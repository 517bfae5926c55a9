import { formatQueueArn } from '#toolkit/arn';
import type { MessageCounts, QueueRecord, Store } from '../store/contract.ts';
import { errors } from './errors.ts';
import { requiredString } from './input.ts';
import {
  type AccessedQueue,
  type CallerScope,
  isQueueName,
  queueNameOfArn,
  queueNameOfUrl,
} from './queue-reference.ts';
import { parseRedrivePolicy } from './redrive-policy.ts';

const QUEUE_URL_CACHE_SIZE = 1000;

/**
 * Where the queues are found: by name, URL or ARN, with the caller's access checked on each queue a
 * request reaches, and the dead-letter sources of a queue. The actions and the background jobs
 * (move tasks, alarms, history, the console) look queues up here, never in the store directly.
 */
export class QueueDirectory {
  /** QueueUrl -> queue name, so a request does not parse the same URL again (a name, not a queue record). */
  private readonly queueNamesByUrl = new Map<string, string>();

  constructor(
    private readonly store: Pick<Store, 'getQueue' | 'listQueues' | 'countMessages'>,
    readonly region: string,
    readonly accountId: string,
  ) {}

  /** The queue of that name, for the server's own work (no access check). */
  queueByName(name: string): Promise<QueueRecord | undefined> {
    return this.store.getQueue(name);
  }

  /** A queue's message counts at `now`. */
  counts(queue: QueueRecord, now: number): Promise<MessageCounts> {
    return this.store.countMessages(queue.id, now);
  }

  queueArn(name: string): string {
    return formatQueueArn({ region: this.region, accountId: this.accountId, name });
  }

  /**
   * The queue an ARN of this server's account and region names, if it exists, for the server's own work
   * (a request's ARNs go through accessQueueByArn, which checks the caller's access).
   */
  async queueByArn(arn: string): Promise<QueueRecord | undefined> {
    const name = queueNameOfArn(arn, this.region, this.accountId);
    return name === undefined ? undefined : this.store.getQueue(name);
  }

  /** Every queue (or those named with `prefix`, after `afterName`), in name order, a page at a time. */
  async *allQueues(filter: { prefix?: string; afterName?: string } = {}): AsyncGenerator<QueueRecord> {
    let after = filter.afterName;
    for (;;) {
      const page = await this.store.listQueues({ prefix: filter.prefix, afterName: after, limit: 500 });
      yield* page;
      if (page.length < 500) return;
      after = page.at(-1)!.name;
    }
  }

  /** The queues whose RedrivePolicy names `deadLetterArn`, in name order. */
  async deadLetterSources(deadLetterArn: string, afterName?: string): Promise<QueueRecord[]> {
    const sources: QueueRecord[] = [];
    for await (const queue of this.allQueues()) {
      if (afterName !== undefined && queue.name <= afterName) continue;
      const policy = queue.attributes.RedrivePolicy;
      if (policy && parseRedrivePolicy(policy).deadLetterTargetArn === deadLetterArn) sources.push(queue);
    }
    return sources;
  }

  /** The queue's URL on the address the client used (`baseUrl`: scheme, host and port). */
  queueUrl(baseUrl: string, name: string): string {
    return `${baseUrl}/${this.accountId}/${name}`;
  }

  // ---- Queues -------------------------------------------------------------------------------------

  /**
   * The queue a request names (undefined if none has that name), once the caller's access to exactly that
   * name is checked. Every queue a request reaches comes through here or accessQueueByArn, so what is
   * authorized is what is touched. The check comes before the missing-queue error, so a caller learns
   * nothing about queues it may not use; a string that cannot be a queue name names none and is not checked.
   */
  async accessQueue(name: string, caller: CallerScope, action?: string): Promise<QueueRecord | undefined> {
    if (!isQueueName(name)) return undefined;
    const queue = await this.store.getQueue(name);
    caller.access?.require(this.accessed(name, queue), action);
    return queue;
  }

  /** accessQueue for an ARN a request gives; an ARN of another account or region names no queue here. */
  async accessQueueByArn(
    arn: string,
    caller: CallerScope,
    action?: string,
  ): Promise<QueueRecord | undefined> {
    const name = queueNameOfArn(arn, this.region, this.accountId);
    return name === undefined ? undefined : this.accessQueue(name, caller, action);
  }

  /** The caller's access check on a queue already found (a move task's sources). */
  requireAccess(caller: CallerScope, queue: QueueRecord, action?: string): void {
    caller.access?.require(this.accessed(queue.name, queue), action);
  }

  /** Whether a list output may show `queue` to the caller. */
  allows(caller: CallerScope, queue: QueueRecord): boolean {
    return caller.access?.allows(this.accessed(queue.name, queue)) ?? true;
  }

  private accessed(name: string, queue: QueueRecord | undefined): AccessedQueue {
    return { name, arn: this.queueArn(name), policy: queue?.attributes.Policy };
  }

  queueNameFromUrl(url: string): string | undefined {
    const known = this.queueNamesByUrl.get(url);
    if (known !== undefined) return known;
    const name = queueNameOfUrl(url, this.accountId);
    if (name === undefined) return undefined;
    // Clients repeat the same few URLs on every request; the bound keeps a caller of endless URLs small.
    if (this.queueNamesByUrl.size >= QUEUE_URL_CACHE_SIZE) this.queueNamesByUrl.clear();
    this.queueNamesByUrl.set(url, name);
    return name;
  }

  /** The queue a request's QueueUrl names, once the caller's access to it is checked; else QueueDoesNotExist. */
  async resolveQueue(input: { QueueUrl?: string }, caller: CallerScope): Promise<QueueRecord> {
    const name = this.queueNameFromUrl(requiredString(input, 'QueueUrl'));
    const queue = name === undefined ? undefined : await this.accessQueue(name, caller);
    if (!queue) throw errors.queueDoesNotExist();
    return queue;
  }
}
