import type { NewEndpointDelivery, NewMessage, Publication, PublishOutcome } from './contract.ts';
import { type Answer, answer, type Plan } from './plan.ts';
import type { GroupSteps } from './planner.ts';
import { type SendSteps, sendPlan } from './send-plan.ts';

/**
 * A topic's publish, decided once for both stores (as the send is in send-plan.ts): which publications are
 * duplicates within the topic's deduplication window, their sequence numbers, and each queue's messages,
 * sent into it once for the whole request, in publication order. The stores give the steps.
 */

/** A publication's original, still in its topic's deduplication window. */
export interface PublishedOriginal {
  messageId: string;
  sequenceNumber: number;
}

/** A publish's reads and writes, besides the sends into queues. */
export interface PublishSteps extends SendSteps, Pick<GroupSteps, 'isFifo'> {
  /**
   * Holds the topic until the transaction ends (its sequence numbers and deduplication ids are taken one
   * publisher at a time), and with `now` forgets its deduplication ids expired then; false when it is gone.
   */
  lockTopic(topicName: string, now: number | undefined): Answer<boolean>;
  /** The publication the id names, if it was published to the topic within the window (before `now`'s expiry). */
  publishedOriginal(topicName: string, id: string, now: number): Answer<PublishedOriginal | undefined>;
  /** The topic's next sequence number. */
  nextSequence(topicName: string): Answer<number>;
  /** The id now names the publication until `expiresAt`. */
  rememberPublication(
    topicName: string,
    id: string,
    original: PublishedOriginal,
    expiresAt: number,
  ): Answer<void>;
  insertEndpointDeliveries(deliveries: readonly NewEndpointDelivery[]): Answer<void>;
  /** Of `queueIds`, those that still exist, held against deletion until the transaction ends. */
  existingQueues(queueIds: readonly number[]): Answer<ReadonlySet<number>>;
}

/**
 * TopicStore.publish (see its contract): every publication of the request, or none (the topic is gone);
 * `touched` is given the queues that received messages.
 */
export function* publishPlan(
  steps: PublishSteps,
  topicName: string,
  publications: readonly Publication[],
  touched: Set<number>,
): Plan<PublishOutcome[] | undefined> {
  const deduplicatedAt = publications.find((publication) => publication.deduplication)?.deduplication?.now;
  if (!(yield* answer(steps.lockTopic(topicName, deduplicatedAt)))) return undefined;
  // Every publication's messages for a queue, in publication order: one send into each queue per request.
  const byQueue = new Map<number, NewMessage[]>();
  const outcomes: PublishOutcome[] = [];
  for (const publication of publications) {
    const { deduplication } = publication;
    const original =
      deduplication &&
      (yield* answer(steps.publishedOriginal(topicName, deduplication.id, deduplication.now)));
    if (original) {
      outcomes.push({ ...original, duplicate: true });
      continue;
    }
    const sequenceNumber = publication.sequenced ? yield* answer(steps.nextSequence(topicName)) : 0;
    for (const { queueId, message } of publication.deliveries(sequenceNumber)) {
      const messages = byQueue.get(queueId);
      if (messages) messages.push(message);
      else byQueue.set(queueId, [message]);
    }
    const endpointDeliveries = publication.endpointDeliveries ?? [];
    if (endpointDeliveries.length > 0) yield* answer(steps.insertEndpointDeliveries(endpointDeliveries));
    if (deduplication)
      yield* answer(
        steps.rememberPublication(
          topicName,
          deduplication.id,
          { messageId: publication.messageId, sequenceNumber },
          deduplication.expiresAt,
        ),
      );
    outcomes.push({ messageId: publication.messageId, sequenceNumber, duplicate: false });
  }
  if (byQueue.size === 0) return outcomes;
  // A queue deleted since the publisher looked it up receives nothing (as if deleted just before).
  const existing = yield* answer(steps.existingQueues([...byQueue.keys()]));
  for (const [queueId, messages] of byQueue) {
    if (!existing.has(queueId)) continue;
    yield* sendPlan(steps, queueId, messages, yield* answer(steps.isFifo(queueId)));
    touched.add(queueId);
  }
  return outcomes;
}
