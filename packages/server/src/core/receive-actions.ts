import type { Clock } from '#toolkit/clock';
import type { MessageStore, QueueRecord, StoredMessage } from '../store/contract.ts';
import type { Message, ReceiveMessageRequest, ReceiveMessageResult } from './api-types.ts';
import { errors } from './errors.ts';
import { RECEIVE_ATTEMPT_WINDOW_MS, receiveRequestAttemptIdOf, sequenceNumberOf } from './fifo.ts';
import { optionalInteger } from './input.ts';
import { type CapacityLimits, LIMITS } from './limits.ts';
import type { LongPoll } from './long-poll.ts';
import { md5OfAttributes, selectMessageAttributes } from './message-attributes.ts';
import type { QueueActivity } from './queue-activity.ts';
import { integerAttribute } from './queue-attributes.ts';
import type { QueueDirectory } from './queue-directory.ts';
import { encodeReceiptHandle, newReceiptToken } from './receipt-handle.ts';
import { parseRedrivePolicy } from './redrive-policy.ts';
import type { RequestContext } from './request-context.ts';

/** What ReceiveMessage needs of the service. */
export interface ReceiveActionDependencies {
  readonly store: MessageStore;
  readonly clock: Clock;
  readonly queues: QueueDirectory;
  readonly limits: CapacityLimits;
  readonly longPoll: LongPoll;
  readonly activity: QueueActivity;
}

/**
 * How long a receive that finds no room in the server's answers for even one message waits for it: its own
 * wait time, and a short poll this long, after which it answers with no messages (as SQS may).
 */
const ANSWER_ROOM_WAIT_MS = 2_000;

const SYSTEM_ATTRIBUTE_NAMES = [
  'ApproximateReceiveCount',
  'ApproximateFirstReceiveTimestamp',
  'SentTimestamp',
  'SenderId',
  'AWSTraceHeader',
  'MessageDeduplicationId',
  'MessageGroupId',
  'SequenceNumber',
  'DeadLetterQueueSourceArn',
] as const;

/** ReceiveMessage: short and long polls, the in-flight limit, moves to the dead-letter queue, FIFO retries. */
export class ReceiveActions {
  private readonly deps: ReceiveActionDependencies;

  constructor(deps: ReceiveActionDependencies) {
    this.deps = deps;
  }

  async ReceiveMessage(input: ReceiveMessageRequest, context: RequestContext): Promise<ReceiveMessageResult> {
    const { store, clock, longPoll, queues } = this.deps;
    const queue = await queues.resolveQueue(input, context);
    const max = optionalInteger(input, 'MaxNumberOfMessages', 1, LIMITS.maxReceiveMessages) ?? 1;
    const waitSeconds =
      optionalInteger(
        input,
        'WaitTimeSeconds',
        0,
        LIMITS.maxWaitTimeSeconds,
        `Must be >= 0 and <= ${LIMITS.maxWaitTimeSeconds}, if provided.`,
      ) ?? integerAttribute(queue.attributes, 'ReceiveMessageWaitTimeSeconds');
    const visibilityTimeout =
      optionalInteger(input, 'VisibilityTimeout', 0, LIMITS.maxVisibilityTimeout) ??
      integerAttribute(queue.attributes, 'VisibilityTimeout');
    const systemNames = [...(input.AttributeNames ?? []), ...(input.MessageSystemAttributeNames ?? [])];
    // A retry token for FIFO queues; standard queues ignore it, as SQS does.
    const attemptId = receiveRequestAttemptIdOf(input);
    const deadLetter = await this.deadLetterTarget(queue);
    const maxInFlight = queue.fifo ? this.deps.limits.maxInFlightFifo : this.deps.limits.maxInFlightStandard;

    let received: StoredMessage[] = [];
    const room = context.answerRoom;
    const messageBytes = integerAttribute(queue.attributes, 'MaximumMessageSize');
    const answerBy = clock.now() + Math.max(waitSeconds * 1000, ANSWER_ROOM_WAIT_MS);
    let refusedBytes = 0;
    const claim = (now: number) => {
      refusedBytes = 0;
      return store.receiveMessages({
        queueId: queue.id,
        now,
        // No more than there is room for: a look whose messages the room refuses reads them for nothing.
        max: room ? room.fits(max, messageBytes) : max,
        visibleUntil: now + visibilityTimeout * 1000,
        newReceiptToken,
        maxInFlight,
        deadLetter,
        attempt:
          queue.fifo && attemptId !== undefined
            ? { id: attemptId, expiresAt: now + RECEIVE_ATTEMPT_WINDOW_MS }
            : undefined,
        admit:
          room &&
          ((bytes) => {
            if (room.tryTake(bytes)) return true;
            refusedBytes = bytes;
            return false;
          }),
      });
    };
    const attempt = async (): Promise<number> => {
      let now = clock.now();
      let result = await claim(now);
      // Not even one message fitted in what the server's answers may hold: wait, oldest first, for room for
      // as many like it as were asked for, and look again.
      while (
        room &&
        refusedBytes > 0 &&
        result.messages.length === 0 &&
        (await room.waitFor(refusedBytes * max, answerBy - clock.now(), context.signal))
      ) {
        now = clock.now();
        result = await claim(now);
        room.releaseUnused();
      }
      if (result.overLimit) {
        throw errors.overLimit(
          `Too many messages in flight for this queue (${maxInFlight.toLocaleString('en-US')} at most).`,
        );
      }
      if (result.movedToDeadLetter > 0 && deadLetter) longPoll.notify(deadLetter.queueId);
      received = result.messages;
      // Others waiting on this queue wake when these messages' visibility runs out.
      if (received.length > 0) longPoll.notifyAt(queue.id, now + visibilityTimeout * 1000);
      if (received.length === 0 && longPoll.hasWaiters(queue.id)) {
        const next = await store.nextVisibleAt(queue.id, now);
        if (next !== undefined) longPoll.notifyAt(queue.id, next);
      }
      return received.length;
    };
    // A long poll that finds messages at once is answered as a short one is: no waiter, timer or abort signal,
    // nor a long-poll slot. One that finds none waits, and its wait begins with a second look, so a send that
    // committed during the first one is not missed.
    if ((await attempt()) === 0 && waitSeconds > 0) {
      let failure: unknown;
      const release = context.admitLongPoll?.();
      try {
        await longPoll.wait(queue.id, waitSeconds * 1000, context.signal, () =>
          attempt().catch((error: unknown) => {
            failure = error;
            throw error;
          }),
        );
      } finally {
        release?.();
      }
      if (failure) throw failure;
    }
    this.deps.activity.received(queue.name, received.length);
    if (received.length === 0) return {};
    return {
      Messages: received.map((message) =>
        renderMessage(queue, message, systemNames, input.MessageAttributeNames),
      ),
    };
  }

  private async deadLetterTarget(queue: QueueRecord) {
    const policy = queue.attributes.RedrivePolicy;
    if (!policy) return undefined;
    const { queues } = this.deps;
    const { deadLetterTargetArn, maxReceiveCount } = parseRedrivePolicy(policy);
    const target = await queues.queueByArn(deadLetterTargetArn);
    // A DLQ deleted after the policy was set: SQS keeps redelivering to the source; so do we. A queue that is
    // its own DLQ keeps redelivering too: a move to itself would hide the message for good.
    if (!target || target.id === queue.id) return undefined;
    return {
      queueId: target.id,
      maxReceiveCount,
      sourceArn: queues.queueArn(queue.name),
      resetSentAt: target.fifo,
      retentionMs: integerAttribute(target.attributes, 'MessageRetentionPeriod') * 1000,
    };
  }
}

/** A received message as ReceiveMessage answers it, with the attributes the receive asked for. */
function renderMessage(
  queue: QueueRecord,
  message: StoredMessage,
  systemNames: readonly string[],
  messageAttributeNames: readonly string[] | undefined,
): Message {
  const all = systemNames.includes('All');
  const attributes: Record<string, string> = {};
  const system: Record<(typeof SYSTEM_ATTRIBUTE_NAMES)[number], string | undefined> = {
    ApproximateReceiveCount: String(message.receiveCount),
    ApproximateFirstReceiveTimestamp:
      message.firstReceivedAt === undefined ? undefined : String(message.firstReceivedAt),
    SentTimestamp: String(message.sentAt),
    SenderId: message.senderId,
    AWSTraceHeader: message.systemAttributes?.AWSTraceHeader?.StringValue,
    MessageDeduplicationId: message.deduplicationId,
    MessageGroupId: message.groupId,
    SequenceNumber: queue.fifo ? sequenceNumberOf(message.seq) : undefined,
    DeadLetterQueueSourceArn: message.deadLetterSourceArn,
  };
  for (const name of SYSTEM_ATTRIBUTE_NAMES) {
    const value = system[name];
    if (value !== undefined && (all || systemNames.includes(name))) attributes[name] = value;
  }
  const selected = selectMessageAttributes(message.messageAttributes, messageAttributeNames);
  const rendered: Message = {
    MessageId: message.messageId,
    ReceiptHandle: encodeReceiptHandle({
      queueId: queue.id,
      seq: message.seq,
      receiveCount: message.receiveCount,
      token: message.receiptToken!,
    }),
    MD5OfBody: message.md5OfBody,
    Body: message.body,
  };
  if (Object.keys(attributes).length > 0) rendered.Attributes = attributes;
  if (selected) {
    rendered.MD5OfMessageAttributes = md5OfAttributes(selected);
    rendered.MessageAttributes = selected;
  }
  return rendered;
}
