import { randomUUID } from 'node:crypto';
import type { Clock } from '#toolkit/clock';
import type { MessageAttributes } from '../shared/sqs-values.ts';
import type {
  MessageStore,
  NewMessage,
  QueueRecord,
  SentMessage,
  StoreLifecycle,
} from '../store/contract.ts';
import type {
  MessageAttributeValue,
  SendMessageBatchRequest,
  SendMessageBatchRequestEntry,
  SendMessageBatchResult,
  SendMessageBatchResultEntry,
  SendMessageRequest,
  SendMessageResult,
} from './api-types.ts';
import { type BatchFailure, batchAnswer, batchFailure } from './batch.ts';
import { errors, type SqsError } from './errors.ts';
import {
  checkFifoBatch,
  DEDUPLICATION_WINDOW_MS,
  deduplicationOf,
  messageGroupIdOf,
  sequenceNumberOf,
} from './fifo.ts';
import { batchEntries, optionalInteger } from './input.ts';
import { type CapacityLimits, hasOnlyAllowedCharacters, LIMITS } from './limits.ts';
import type { LongPoll } from './long-poll.ts';
import { attributesSize, checkMessageAttributes, md5Hex, md5OfAttributes } from './message-attributes.ts';
import type { QueueActivity } from './queue-activity.ts';
import { integerAttribute } from './queue-attributes.ts';
import type { QueueDirectory } from './queue-directory.ts';
import type { RequestContext } from './request-context.ts';

/** The store's size is read at most this often for the cap on stored bytes. */
const STORED_BYTES_REFRESH_MS = 1000;

/** What the send actions need of the service. */
export interface SendActionDependencies {
  readonly store: MessageStore & Pick<StoreLifecycle, 'storedBytes'>;
  readonly clock: Clock;
  readonly queues: QueueDirectory;
  readonly limits: CapacityLimits;
  readonly longPoll: LongPoll;
  readonly activity: QueueActivity;
}

/** What a message takes of the request that sends it: who sent it, and the trace header it carries. */
export type DeliverySender = Pick<RequestContext, 'senderId' | 'traceHeader'>;

/** A send's fields as SendMessage and each SendMessageBatch entry give them. */
type MessageToSend = SendMessageRequest | SendMessageBatchRequestEntry;

/** A message checked and ready to store, with what its answer says once it is stored. */
interface PreparedMessage {
  stored: NewMessage;
  /** Bytes SQS counts towards MaximumMessageSize: the body and the message attributes. */
  size: number;
  output(sent: SentMessage): SendMessageBatchResultEntryFields;
}

type SendMessageBatchResultEntryFields = Omit<SendMessageBatchResultEntry, 'Id'>;

/** The SQS actions that add messages to a queue: SendMessage and SendMessageBatch. */
export class SendActions {
  private readonly deps: SendActionDependencies;
  /** The store's size as last read, and when. */
  private storedBytes = { bytes: 0, readAt: Number.NEGATIVE_INFINITY };

  constructor(deps: SendActionDependencies) {
    if (deps.limits.maxStoredBytes !== undefined && !deps.store.storedBytes) {
      throw new Error('this store cannot report its size, so a cap on stored bytes cannot be set');
    }
    this.deps = deps;
  }

  async SendMessage(input: SendMessageRequest, context: RequestContext): Promise<SendMessageResult> {
    const queue = await this.deps.queues.resolveQueue(input, context);
    await this.checkStoredBytes();
    const message = this.prepareMessage(queue, input, context, tooLongAlone);
    const [sent] = await this.deps.store.sendMessages(queue.id, [message.stored], () =>
      this.wakeReceivers(queue, [message.stored.visibleAt]),
    );
    this.deps.activity.sent(queue.name, [message.size]);
    return message.output(sent!);
  }

  async SendMessageBatch(
    input: SendMessageBatchRequest,
    context: RequestContext,
  ): Promise<SendMessageBatchResult> {
    const queue = await this.deps.queues.resolveQueue(input, context);
    await this.checkStoredBytes();
    const entries = batchEntries(input.Entries, 'SendMessageBatchRequestEntry');
    // The whole request has SQS's fixed cap; the queue's MaximumMessageSize applies to each entry alone.
    const totalSize = entries.reduce((sum, entry) => sum + entrySize(entry), 0);
    if (totalSize > LIMITS.maxBatchBytes) throw errors.batchTooLong(totalSize, LIMITS.maxBatchBytes);
    if (queue.fifo) checkFifoBatch(entries, queue.attributes);
    const failed: BatchFailure[] = [];
    const accepted: Array<{ id: string; message: PreparedMessage }> = [];
    for (const entry of entries) {
      try {
        accepted.push({ id: entry.Id, message: this.prepareMessage(queue, entry, context, tooLongInBatch) });
      } catch (error) {
        failed.push(batchFailure(entry.Id, error));
      }
    }
    const stored = accepted.map(({ message }) => message.stored);
    const sent =
      stored.length === 0
        ? []
        : await this.deps.store.sendMessages(queue.id, stored, () =>
            this.wakeReceivers(
              queue,
              stored.map((message) => message.visibleAt),
            ),
          );
    this.deps.activity.sent(
      queue.name,
      accepted.map(({ message }) => message.size),
    );
    const successful = accepted.map(({ id, message }, index) => ({
      Id: id,
      ...message.output(sent[index]!),
    }));
    return batchAnswer(successful, failed);
  }

  /**
   * A topic's delivery into `queue`, checked by the queue's own rules as a SendMessage would be (size,
   * attributes, delay, retention, FIFO group and deduplication): the message to store, or the SqsError a send
   * would get.
   */
  prepareDelivery(
    queue: QueueRecord,
    content: DeliveryContent,
    input: Pick<SendMessageRequest, 'MessageGroupId' | 'MessageDeduplicationId'>,
    sender: DeliverySender,
  ): NewMessage {
    return this.prepareMessage(queue, input, sender, tooLongAlone, content).stored;
  }

  /** After a topic's deliveries are stored: long polls wake, and the queue counts the sends. */
  delivered(queue: QueueRecord, messages: readonly NewMessage[]): void {
    this.wakeReceivers(
      queue,
      messages.map((message) => message.visibleAt),
    );
    this.deps.activity.sent(
      queue.name,
      messages.map((message) => Buffer.byteLength(message.body)),
    );
  }

  /**
   * `maxStoredBytes`: refuses sends once the store is that big. The size is read at most once a second,
   * so the cap can be passed by one second's worth of sends; it guards a disk, not an exact quota.
   */
  private async checkStoredBytes(): Promise<void> {
    const max = this.deps.limits.maxStoredBytes;
    const { store, clock } = this.deps;
    if (max === undefined || !store.storedBytes) return;
    const now = clock.now();
    if (now - this.storedBytes.readAt >= STORED_BYTES_REFRESH_MS) {
      this.storedBytes = { bytes: await store.storedBytes(), readAt: now };
    }
    if (this.storedBytes.bytes >= max) {
      throw errors.overLimit(
        `The server's storage cap of ${max} bytes is reached (${this.storedBytes.bytes} stored); receive and delete messages, or raise --max-stored-bytes.`,
      );
    }
  }

  /** `content`: a topic delivery's, checked once for all its queues; a send's own body and attributes otherwise. */
  private prepareMessage(
    queue: QueueRecord,
    input: MessageToSend,
    context: DeliverySender,
    tooLong: (maxSize: number) => SqsError,
    content?: DeliveryContent,
  ): PreparedMessage {
    const { body, bytes, md5OfBody } = content ? content.body() : checkBody(input.MessageBody, false);
    const delaySeconds = optionalInteger(
      input,
      'DelaySeconds',
      0,
      LIMITS.maxDelaySeconds,
      `DelaySeconds must be >= 0 and <= ${LIMITS.maxDelaySeconds}`,
    );
    // FIFO queues delay only as a whole (SQS); 0 is accepted, as clients that always send it mean no delay.
    if (queue.fifo && delaySeconds !== undefined && delaySeconds !== 0) {
      throw errors.invalidParameter('DelaySeconds', delaySeconds, NOT_FOR_THIS_QUEUE_TYPE);
    }
    if (!queue.fifo && input.MessageDeduplicationId !== undefined) {
      throw errors.invalidParameter(
        'MessageDeduplicationId',
        input.MessageDeduplicationId,
        NOT_FOR_THIS_QUEUE_TYPE,
      );
    }
    const groupId = messageGroupIdOf(input, queue.fifo);
    const deduplication = queue.fifo ? deduplicationOf(input, queue, groupId!, body) : undefined;
    const user = content ? content.attributes() : checkUserAttributes(input.MessageAttributes);
    const given = checkSystemAttributes(nonEmpty(input.MessageSystemAttributes));
    const size = bytes + user.size;
    const maxSize = integerAttribute(queue.attributes, 'MaximumMessageSize');
    if (size > maxSize) throw tooLong(maxSize);
    // The request's trace header, unless the message names its own (SQS: the attribute wins); the sender's
    // digest covers only what it sent.
    const systemAttributes = given ?? traceHeaderAttribute(context.traceHeader);
    const now = this.deps.clock.now();
    // A FIFO message always takes the queue's delay: its own can only be 0, which means none was asked (SQS).
    const delay =
      queue.fifo || delaySeconds === undefined
        ? integerAttribute(queue.attributes, 'DelaySeconds')
        : delaySeconds;
    const { md5OfMessageAttributes } = user;
    const md5OfSystemAttributes = md5OfAttributes(given);
    const output = (sent: SentMessage) => {
      const result: SendMessageBatchResultEntryFields = {
        MessageId: sent.messageId,
        MD5OfMessageBody: md5OfBody,
      };
      if (md5OfMessageAttributes) result.MD5OfMessageAttributes = md5OfMessageAttributes;
      if (md5OfSystemAttributes) result.MD5OfMessageSystemAttributes = md5OfSystemAttributes;
      if (queue.fifo) result.SequenceNumber = sequenceNumberOf(sent.seq);
      return result;
    };
    const stored: NewMessage = {
      messageId: randomUUID(),
      body,
      messageAttributes: user.attributes,
      systemAttributes,
      md5OfBody,
      md5OfMessageAttributes,
      md5OfSystemAttributes,
      senderId: context.senderId,
      sentAt: now,
      visibleAt: now + delay * 1000,
      expiresAt: now + integerAttribute(queue.attributes, 'MessageRetentionPeriod') * 1000,
      groupId,
      deduplication: deduplication && { ...deduplication, expiresAt: now + DEDUPLICATION_WINDOW_MS },
    };
    return { stored, output, size };
  }

  /**
   * Long polls wake as soon as a send is committed, without waiting for its fsync: a receiver polling at that
   * moment would see the message anyway, and this keeps the disk's latency off the wake path.
   */
  private wakeReceivers(queue: QueueRecord, visibleAts: number[]): void {
    const { clock, longPoll } = this.deps;
    const now = clock.now();
    if (visibleAts.some((at) => at <= now)) longPoll.notify(queue.id);
    const later = visibleAts.filter((at) => at > now);
    if (later.length > 0) longPoll.notifyAt(queue.id, Math.min(...later));
  }
}

const NOT_FOR_THIS_QUEUE_TYPE = 'The request include parameter that is not valid for this queue type.';

/** SQS words a message over MaximumMessageSize one way when sent alone, another as a batch entry. */
const tooLongAlone = (maxSize: number) =>
  errors.invalidParameterValue(
    `One or more parameters are invalid. Reason: Message must be shorter than ${maxSize} bytes.`,
  );
const tooLongInBatch = (maxSize: number) =>
  errors.invalidParameterValue(
    `One or more parameters cannot be validated. Reason: Message must be shorter than ${maxSize} bytes.`,
  );

function traceHeaderAttribute(traceHeader: string | undefined): MessageAttributes | undefined {
  return traceHeader === undefined
    ? undefined
    : { AWSTraceHeader: { DataType: 'String', StringValue: traceHeader } };
}

/** A batch entry's size as SQS counts it against the whole request's cap, before any entry is checked. */
function entrySize(entry: SendMessageBatchRequestEntry): number {
  const body = entry.MessageBody === undefined ? 0 : Buffer.byteLength(entry.MessageBody);
  return body + attributesSize(entry.MessageAttributes);
}

/** The message system attributes a send may set: AWSTraceHeader alone, a non-empty String. */
function checkSystemAttributes(
  attributes: Record<string, MessageAttributeValue> | undefined,
): MessageAttributes | undefined {
  if (!attributes) return undefined;
  for (const [name, value] of Object.entries(attributes)) {
    if (name !== 'AWSTraceHeader') {
      throw errors.invalidParameterValue(`Message system attribute name '${name}' is invalid.`);
    }
    if (value.DataType !== 'String' || value.StringValue === undefined || value.StringValue === '') {
      throw errors.invalidParameterValue(
        `Message system attribute '${name}' must be of type String with a value.`,
      );
    }
  }
  return checkMessageAttributes(attributes, 'system').attributes;
}

/** A body as a send checks it (it must not be empty, and only characters SQS allows), with its size and digest. */
interface CheckedBody {
  body: string;
  bytes: number;
  md5OfBody: string;
}

/** Message attributes as a send checks them, with their size as SQS counts it and their digest. */
interface CheckedAttributes {
  attributes: MessageAttributes | undefined;
  size: number;
  md5OfMessageAttributes: string | undefined;
}

/** `charactersChecked`: the caller already knows every character is one SQS allows. */
function checkBody(body: string | undefined, charactersChecked: boolean): CheckedBody {
  if (body === undefined || body === '') throw errors.missingParameter('MessageBody');
  if (!charactersChecked && !hasOnlyAllowedCharacters(body)) throw errors.invalidMessageContents();
  return { body, bytes: Buffer.byteLength(body), md5OfBody: md5Hex(body) };
}

function checkUserAttributes(given: Record<string, MessageAttributeValue> | undefined): CheckedAttributes {
  const { attributes, size } = checkMessageAttributes(nonEmpty(given), 'message');
  return { attributes, size, md5OfMessageAttributes: md5OfAttributes(attributes) };
}

/** A check made once, and its answer given again: its value, or the same error thrown again. */
type Outcome<T> = { value: T } | { error: unknown };

function outcomeOf<T>(check: () => T): Outcome<T> {
  try {
    return { value: check() };
  } catch (error) {
    return { error };
  }
}

function answerOf<T>(outcome: Outcome<T>): T {
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

/**
 * A topic delivery's body and message attributes: a publication puts the same ones into every queue it
 * reaches, so the checks a send makes of them whatever the queue, and their sizes and digests, are made once
 * (when a send would make them, so the queue's own checks keep their order) and answered again for each queue.
 */
export class DeliveryContent {
  private checkedBody: Outcome<CheckedBody> | undefined;
  private checkedAttributes: Outcome<CheckedAttributes> | undefined;

  /** `charactersChecked`: the body is text Sluice wrote whose characters are already known to be allowed. */
  constructor(
    private readonly text: string,
    private readonly given: Record<string, MessageAttributeValue> | undefined,
    private readonly charactersChecked = false,
  ) {}

  body(): CheckedBody {
    this.checkedBody ??= outcomeOf(() => checkBody(this.text, this.charactersChecked));
    return answerOf(this.checkedBody);
  }

  attributes(): CheckedAttributes {
    this.checkedAttributes ??= outcomeOf(() => checkUserAttributes(this.given));
    return answerOf(this.checkedAttributes);
  }
}

function nonEmpty<T extends object>(value: T | undefined): T | undefined {
  return value && Object.keys(value).length > 0 ? value : undefined;
}
