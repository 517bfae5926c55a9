import type { Clock } from '#toolkit/clock';
import type { DeleteOutcome, MessageReceipt, MessageStore, QueueRecord } from '../store/contract.ts';
import type {
  ChangeMessageVisibilityBatchRequest,
  ChangeMessageVisibilityRequest,
  DeleteMessageBatchRequest,
  DeleteMessageRequest,
} from './api-types.ts';
import { type BatchEntryResult, batchFailure, batchOutput } from './batch.ts';
import { errors } from './errors.ts';
import { batchEntries, optionalInteger, requiredString } from './input.ts';
import { LIMITS } from './limits.ts';
import type { LongPoll } from './long-poll.ts';
import type { QueueActivity } from './queue-activity.ts';
import type { QueueDirectory } from './queue-directory.ts';
import type { CallerScope } from './queue-reference.ts';
import { decodeReceiptHandle } from './receipt-handle.ts';
import type { ReceiptAction, ReceiptRules } from './receipt-rules.ts';

/** What the receipt actions need of the service. */
export interface ReceiptActionDependencies {
  readonly store: MessageStore;
  readonly clock: Clock;
  readonly queues: QueueDirectory;
  readonly receiptRules: ReceiptRules;
  readonly longPoll: LongPoll;
  readonly activity: QueueActivity;
}

/**
 * The SQS actions on messages already received, by their receipt handles: DeleteMessage,
 * ChangeMessageVisibility and their batches. Each public method is one action.
 */
export class ReceiptActions {
  private readonly store: MessageStore;
  private readonly clock: Clock;
  private readonly queues: QueueDirectory;
  private readonly receiptRules: ReceiptRules;
  private readonly longPoll: LongPoll;
  private readonly activity: QueueActivity;

  constructor(deps: ReceiptActionDependencies) {
    ({
      store: this.store,
      clock: this.clock,
      queues: this.queues,
      receiptRules: this.receiptRules,
      longPoll: this.longPoll,
      activity: this.activity,
    } = deps);
  }

  async DeleteMessage(input: DeleteMessageRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    const receiptHandle = requiredString(input, 'ReceiptHandle');
    const outcome = await this.store.deleteMessage(
      queue.id,
      this.receiptOf(queue, receiptHandle),
      this.deleteCheck(queue),
    );
    this.receiptRules.refuseStale(queue, 'DeleteMessage', outcome, receiptHandle);
    const deleted = wasDeleted(outcome, receiptHandle);
    if (deleted) this.groupMayBeFree(queue);
    this.activity.deleted(queue.name, deleted ? 1 : 0);
    return {};
  }

  async DeleteMessageBatch(input: DeleteMessageBatchRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    const entries = batchEntries(input.Entries, 'DeleteMessageBatchRequestEntry');
    // Each handle is checked on its own (a bad one fails only its entry); the valid ones reach the store in
    // one write, and each outcome is then judged on its own again.
    const results: BatchEntryResult[] = new Array(entries.length);
    const valid: Array<{ index: number; receiptHandle: string }> = [];
    const receipts: MessageReceipt[] = [];
    entries.forEach((entry, index) => {
      try {
        const receiptHandle = requiredString(entry, 'ReceiptHandle');
        receipts.push(this.receiptOf(queue, receiptHandle));
        valid.push({ index, receiptHandle });
      } catch (error) {
        results[index] = batchFailure(entry.Id, error);
      }
    });
    const outcomes =
      receipts.length === 0
        ? []
        : await this.store
            .deleteMessages(queue.id, receipts, this.deleteCheck(queue))
            // A store that fails fails every entry it was given, as each entry's own failure.
            .catch((failure: unknown) => ({ failure }));
    let deleted = 0;
    valid.forEach(({ index, receiptHandle }, position) => {
      const id = entries[index]!.Id;
      try {
        if ('failure' in outcomes) throw outcomes.failure;
        const outcome = outcomes[position]!;
        this.receiptRules.refuseStale(queue, 'DeleteMessageBatch', outcome, receiptHandle);
        if (wasDeleted(outcome, receiptHandle)) deleted++;
        results[index] = { Id: id };
      } catch (error) {
        results[index] = batchFailure(id, error);
      }
    });
    if (deleted > 0) this.groupMayBeFree(queue);
    this.activity.deleted(queue.name, deleted);
    return batchOutput(results);
  }

  async ChangeMessageVisibility(input: ChangeMessageVisibilityRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    await this.changeOne(queue, input, 'ChangeMessageVisibility');
    return {};
  }

  async ChangeMessageVisibilityBatch(input: ChangeMessageVisibilityBatchRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    const entries = batchEntries(input.Entries, 'ChangeMessageVisibilityBatchRequestEntry');
    return this.runBatch(entries, (entry) => this.changeOne(queue, entry, 'ChangeMessageVisibilityBatch'));
  }

  /** A FIFO group blocked by a message just deleted may be receivable now: let a waiting receive look. */
  private groupMayBeFree(queue: QueueRecord): void {
    if (queue.fifo) this.longPoll.notify(queue.id);
  }

  private deleteCheck(queue: QueueRecord) {
    return { rule: this.receiptRules.deleteRule(queue), now: this.clock.now() };
  }

  /** The message a client's receipt handle names, which must be a handle in the form Sluice issues for this queue. */
  private receiptOf(queue: QueueRecord, receiptHandle: string): MessageReceipt {
    const handle = decodeReceiptHandle(receiptHandle);
    if (handle.queueId !== queue.id) throw errors.receiptHandleIsInvalid(receiptHandle);
    return { seq: handle.seq, receiveCount: handle.receiveCount, receiptToken: handle.token };
  }

  private async changeOne(
    queue: QueueRecord,
    input: ChangeMessageVisibilityRequest,
    action: ReceiptAction,
  ): Promise<void> {
    const receiptHandle = requiredString(input, 'ReceiptHandle');
    const timeout = optionalInteger(input, 'VisibilityTimeout', 0, LIMITS.maxVisibilityTimeout);
    if (timeout === undefined) throw errors.missingParameter('VisibilityTimeout');
    const receipt = this.receiptOf(queue, receiptHandle);
    const now = this.clock.now();
    const outcome = await this.store.changeVisibility({
      queueId: queue.id,
      receipt,
      rule: this.receiptRules.changeRule(queue),
      now,
      visibleAt: now + timeout * 1000,
      maxDeliveryMs: LIMITS.maxInFlightSecondsPerDelivery * 1000,
    });
    this.receiptRules.refuseStale(queue, action, outcome, receiptHandle);
    switch (outcome) {
      case 'changed':
        if (timeout === 0) this.longPoll.notify(queue.id);
        else this.longPoll.notifyAt(queue.id, now + timeout * 1000);
        return;
      case 'notInFlight':
        throw errors.messageNotInflight();
      case 'beyondLimit':
        throw errors.invalidParameter(
          'VisibilityTimeout',
          timeout,
          `Total VisibilityTimeout for the message is beyond the limit [${LIMITS.maxInFlightSecondsPerDelivery} seconds]`,
        );
      case 'invalid':
        throw errors.receiptHandleIsInvalid(receiptHandle);
      case 'stale':
      case 'missing':
        throw errors.invalidParameter(
          'ReceiptHandle',
          receiptHandle,
          'Message does not exist or is not available for visibility timeout change.',
        );
    }
  }

  private async runBatch<Entry extends { Id: string }>(
    entries: Entry[],
    run: (entry: Entry) => Promise<void>,
  ) {
    const results: BatchEntryResult[] = new Array(entries.length);
    await Promise.all(
      entries.map(async (entry, index) => {
        try {
          await run(entry);
          results[index] = { Id: entry.Id };
        } catch (error) {
          results[index] = batchFailure(entry.Id, error);
        }
      }),
    );
    return batchOutput(results);
  }
}

/**
 * Whether a delete removed the message. A message already gone is no error (SQS); a handle Sluice never
 * issued is ReceiptHandleIsInvalid; a superseded or lapsed one (FIFO) has expired, in SQS's words.
 */
function wasDeleted(outcome: DeleteOutcome, receiptHandle: string): boolean {
  switch (outcome) {
    case 'deleted':
      return true;
    case 'missing':
      return false;
    case 'invalid':
      throw errors.receiptHandleIsInvalid(receiptHandle);
    case 'stale':
    case 'expired':
      throw errors.invalidParameter('ReceiptHandle', receiptHandle, 'The receipt handle has expired.');
  }
}
