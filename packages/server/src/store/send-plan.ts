import type { NewMessage, SentMessage } from './contract.ts';
import { type Answer, answer, type Plan } from './plan.ts';

/**
 * The send, decided once for both stores (as the receive is in planner.ts): which messages of a batch are
 * stored and which are duplicates of a message sent within the deduplication window, or of an earlier one of
 * the batch. `core/fifo.ts` gives the ids and the window; the stores give the steps.
 */

/** A deduplication id's original, still in its deduplication window. */
export interface DeduplicationOriginal {
  scope: string;
  id: string;
  messageId: string;
  seq: number;
}

/** A send's writes. */
export interface SendSteps {
  /**
   * The originals of the messages' deduplication ids, each still in its window at its message's sentAt; a
   * store with several writers holds the ids until the transaction ends, so a concurrent send of one waits.
   */
  deduplicated(queueId: number, messages: readonly NewMessage[]): Answer<DeduplicationOriginal[]>;
  /**
   * Inserts the messages, in order, into the queue (FIFO or not, `fifo`); answers their seqs in order. With
   * them: a FIFO queue's group rows (held, in a store with several writers, before the messages take their
   * seqs), or a fair queue's tenants (a message without a group is the tenant '' once the queue has tenants).
   */
  insertMessages(queueId: number, messages: readonly NewMessage[], fifo: boolean): Answer<number[]>;
  /** The messages' deduplication ids now name them, until each id's expiry. */
  rememberDeduplication(
    queueId: number,
    sent: ReadonlyArray<{ message: NewMessage; seq: number }>,
  ): Answer<void>;
}

/**
 * Store.sendMessages (see its contract), into a queue that is FIFO or not (`fifo`): a message whose
 * deduplication id names a message sent within the window, or an earlier message of the batch, is that one's
 * duplicate and is not stored again. A step for each stage of the batch, not one for each message.
 */
export function* sendPlan(
  steps: SendSteps,
  queueId: number,
  messages: readonly NewMessage[],
  fifo: boolean,
): Plan<SentMessage[]> {
  const checked = messages.filter((message) => message.deduplication);
  // Without deduplication ids (standard queues) every message is new: the hot path takes nothing more.
  if (checked.length === 0) {
    const seqs = yield* answer(steps.insertMessages(queueId, messages, fifo));
    return messages.map((message, index) => ({
      messageId: message.messageId,
      seq: seqs[index]!,
      duplicate: false,
    }));
  }
  const keyOf = (deduplication: { scope: string; id: string }) =>
    `${deduplication.scope}\n${deduplication.id}`;
  const originals = new Map<string, SentMessage>();
  for (const original of yield* answer(steps.deduplicated(queueId, checked)))
    originals.set(keyOf(original), { messageId: original.messageId, seq: original.seq, duplicate: true });
  // Each message's answer, by position; a repeat within the batch is the index of its first message.
  const results: Array<SentMessage | number> = [];
  const firstOf = new Map<string, number>();
  const fresh: NewMessage[] = [];
  const freshAt: number[] = [];
  for (const [index, message] of messages.entries()) {
    const key = message.deduplication && keyOf(message.deduplication);
    const original = key === undefined ? undefined : (originals.get(key) ?? firstOf.get(key));
    if (original !== undefined) {
      results.push(original);
      continue;
    }
    if (key !== undefined) firstOf.set(key, index);
    results.push(index); // its own answer, once inserted
    fresh.push(message);
    freshAt.push(index);
  }
  if (fresh.length > 0) {
    const seqs = yield* answer(steps.insertMessages(queueId, fresh, fifo));
    for (const [at, index] of freshAt.entries())
      results[index] = { messageId: fresh[at]!.messageId, seq: seqs[at]!, duplicate: false };
    const remembered = fresh.flatMap((message, at) =>
      message.deduplication ? [{ message, seq: seqs[at]! }] : [],
    );
    if (remembered.length > 0) yield* answer(steps.rememberDeduplication(queueId, remembered));
  }
  // A later message of the batch with an earlier one's id answers with that one's ids.
  return results.map((result) =>
    typeof result === 'number' ? { ...(results[result] as SentMessage), duplicate: true } : result,
  );
}
