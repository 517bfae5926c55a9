import { createHash } from 'node:crypto';
import type { TopicRecord } from '../../store/contract.ts';
import { SqsError } from '../errors.ts';
import type { PublishedAttribute } from './envelope.ts';
import type {
  BatchResultErrorEntry,
  MessageAttributeValue,
  PublishBatchRequestEntry,
} from './sns-api-types.ts';
import { snsErrors } from './sns-errors.ts';

/** SNS's cap on a message with its attributes (262,144 bytes). */
export const MAX_MESSAGE_BYTES = 256 * 1024;

/** One message to publish, checked: what every subscription's delivery is made from. */
export interface CheckedPublication {
  /** The text SQS subscribers get (MessageStructure=json: the `sqs` entry, else `default`). */
  readonly message: string;
  /** MessageStructure=json: the text per protocol (its string entries, `default` among them). */
  readonly texts: Readonly<Record<string, string>> | undefined;
  readonly subject: string | undefined;
  readonly attributes: Record<string, PublishedAttribute>;
  readonly groupId: string | undefined;
  /** FIFO topics: the id the topic deduplicates by (given, or the message's SHA-256), in its scope. */
  readonly deduplication: { id: string; key: string } | undefined;
}

/** The fields Publish and each PublishBatch entry share. */
type PublishFields = Omit<PublishBatchRequestEntry, 'Id'>;

/** Checks one message for `topic` as SNS does; SNS's InvalidParameter errors otherwise. */
export function checkPublication(topic: TopicRecord, input: PublishFields): CheckedPublication {
  const raw = input.Message;
  if (raw === undefined || raw === '') throw snsErrors.invalidParameter('Empty message');
  const message = input.MessageStructure === undefined ? raw : sqsText(raw, input.MessageStructure);
  const texts = input.MessageStructure === undefined ? undefined : textsOf(raw);
  const subject = input.Subject;
  if (
    subject !== undefined &&
    (subject === '' || subject.length >= 100 || [...subject].some((character) => character < ' '))
  ) {
    throw snsErrors.invalidParameter('Subject');
  }
  const attributes = checkAttributes(input.MessageAttributes ?? {});
  const size =
    Buffer.byteLength(raw) +
    Object.entries(attributes).reduce(
      (sum, [name, value]) =>
        sum +
        Buffer.byteLength(name) +
        Buffer.byteLength(value.DataType) +
        Buffer.byteLength(value.StringValue ?? value.BinaryValue ?? ''),
      0,
    );
  if (size > MAX_MESSAGE_BYTES) throw snsErrors.invalidParameter('Message too long');
  const groupId = input.MessageGroupId;
  if (groupId !== undefined) checkFifoId('MessageGroupId', groupId);
  if (!topic.fifo) {
    if (input.MessageDeduplicationId !== undefined) {
      throw snsErrors.invalidParameter(
        'MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type',
      );
    }
    return { message, texts, subject, attributes, groupId, deduplication: undefined };
  }
  checkFifoIdsGiven(topic, input);
  let id = input.MessageDeduplicationId;
  if (id !== undefined) checkFifoId('MessageDeduplicationId', id);
  else {
    // SNS: a SHA-256 of the message body, not of its attributes.
    id = createHash('sha256').update(raw).digest('hex');
  }
  // FifoThroughputScope MessageGroup: deduplication within each group (SNS API reference).
  const key = topic.attributes.FifoThroughputScope === 'MessageGroup' ? `${groupId}\n${id}` : id;
  return { message, texts, subject, attributes, groupId, deduplication: { id, key } };
}

/** MessageStructure=json: the message is a JSON object of texts per protocol, with a `default`. */
export function sqsText(raw: string, structure: string): string {
  if (structure !== 'json') {
    throw snsErrors.invalidParameter(`MessageStructure Reason: Invalid value [${structure}]. Must be json`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw snsErrors.invalidParameter('Message Structure - JSON message body failed to parse');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw snsErrors.invalidParameter('Message Structure - JSON message body failed to parse');
  }
  const texts = parsed as Record<string, unknown>;
  if (typeof texts.default !== 'string') {
    throw snsErrors.invalidParameter('Message Structure - No default entry in JSON message body');
  }
  // Keys of other protocols and non-string values are ignored (SNS API reference, Publish).
  return typeof texts.sqs === 'string' ? texts.sqs : texts.default;
}

/** A FIFO topic's publication needs a group id, and a deduplication id unless the topic derives one. */
export function checkFifoIdsGiven(
  topic: TopicRecord,
  input: { MessageGroupId?: string; MessageDeduplicationId?: string },
): void {
  if (input.MessageGroupId === undefined) {
    throw snsErrors.invalidParameter('The MessageGroupId parameter is required for FIFO topics');
  }
  if (input.MessageDeduplicationId === undefined && topic.attributes.ContentBasedDeduplication !== 'true') {
    throw snsErrors.invalidParameter(
      'The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
    );
  }
}

const FIFO_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

function checkFifoId(name: string, value: string): void {
  if (!FIFO_ID.test(value)) {
    throw snsErrors.invalidParameter(
      `${name} Reason: ${name} can only include alphanumeric and punctuation characters. 1 to 128 in length.`,
    );
  }
}

const TYPE_PREFIXES = ['String', 'Number', 'Binary'];

/**
 * SNS's message attribute types: String, String.Array, Number, Binary, each with optional custom labels. The
 * errors are AWS's, `ParameterValueInvalid` (recorded: LocalStack's AWS-validated
 * test_empty_or_wrong_message_attributes); the number cast's text is the one moto's tests quote from AWS.
 */
function checkAttributes(given: Record<string, MessageAttributeValue>): Record<string, PublishedAttribute> {
  const checked: Record<string, PublishedAttribute> = {};
  for (const [name, value] of Object.entries(given)) {
    checkAttributeName(name);
    const type = value.DataType ?? '';
    const base = type.split('.')[0]!;
    if (!TYPE_PREFIXES.includes(base)) {
      throw snsErrors.invalidParameterValue(
        `The message attribute '${name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.`,
      );
    }
    const text = base === 'Binary' ? value.BinaryValue : value.StringValue;
    if (text === undefined || text === '') {
      const other = base === 'Binary' ? value.StringValue : value.BinaryValue;
      const field = base === 'Binary' ? 'Binary' : 'String';
      throw snsErrors.invalidParameterValue(
        other !== undefined && other !== ''
          ? `The message attribute '${name}' with type '${base}' must use field '${field}'.`
          : `The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${base}'.`,
      );
    }
    if (base === 'Number' && !/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) {
      throw snsErrors.invalidParameterValue(`Could not cast message attribute '${name}' value to number.`);
    }
    if (type === 'String.Array' && !isArrayOfScalars(text)) {
      throw snsErrors.invalidParameter(
        `The message attribute '${name}' with type 'String.Array' must be an array of valid types`,
      );
    }
    checked[name] =
      base === 'Binary' ? { DataType: type, BinaryValue: text } : { DataType: type, StringValue: text };
  }
  return checked;
}

/** A message attribute's name, refused in AWS's words (same recording as checkAttributes). */
function checkAttributeName(name: string): void {
  if (Buffer.byteLength(name) > 256)
    throw snsErrors.invalidParameterValue('Length of message attribute name must be less than 256 bytes.');
  const bad = /[^A-Za-z0-9_.-]/u.exec(name)?.[0];
  if (bad !== undefined) {
    const code = bad.codePointAt(0)!.toString(16).toUpperCase();
    throw snsErrors.invalidParameterValue(
      `Invalid non-alphanumeric character '#x${code}' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.`,
    );
  }
  if (name.startsWith('.'))
    throw snsErrors.invalidParameterValue(
      "Invalid message attribute name starting with character '.' was found.",
    );
  if (name.endsWith('.'))
    throw snsErrors.invalidParameterValue(
      "Invalid message attribute name ending with character '.' was found.",
    );
  if (name.includes('..'))
    throw snsErrors.invalidParameterValue("Message attribute name can not have successive '.' character.");
  if (name === '' || name.startsWith('AWS.') || name.startsWith('Amazon.'))
    throw snsErrors.invalidParameter(
      `MessageAttributes Reason: The message attribute name '${name}' is invalid.`,
    );
}

function isArrayOfScalars(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) && parsed.every((item) => item === null || typeof item !== 'object');
  } catch {
    return false;
  }
}

/** MessageStructure=json (already checked by sqsText): its string entries by protocol. */
function textsOf(raw: string): Record<string, string> {
  const parsed = JSON.parse(raw) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/**
 * A PublishBatch's entries checked as SNS does: what fails the whole request throws; each entry is then
 * accepted, or failed with its error.
 */
export function checkBatch(
  topic: TopicRecord,
  entries: PublishBatchRequestEntry[],
): { accepted: Array<{ id: string; checked: CheckedPublication }>; failed: BatchResultErrorEntry[] } {
  if (entries.length === 0) throw snsErrors.emptyBatch();
  if (entries.length > 10) throw snsErrors.tooManyEntries();
  const ids = new Set<string>();
  for (const entry of entries) {
    if (entry.Id === undefined || !/^[A-Za-z0-9_-]{1,80}$/.test(entry.Id))
      throw snsErrors.invalidBatchEntryId();
    if (ids.has(entry.Id)) throw snsErrors.batchIdsNotDistinct();
    ids.add(entry.Id);
  }
  const total = entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.Message ?? ''), 0);
  if (total > MAX_MESSAGE_BYTES) throw snsErrors.batchTooLong();
  // On AWS a FIFO topic's missing group or deduplication id, and a MessageStructure=json without its
  // default, fail the whole request, not the entry (recorded: LocalStack's AWS-validated
  // test_publish_batch_exceptions snapshot). Other bad input (an empty message, ...) fails its entry.
  for (const entry of entries) {
    if (topic.fifo) checkFifoIdsGiven(topic, entry);
    if (entry.MessageStructure !== undefined && entry.Message) sqsText(entry.Message, entry.MessageStructure);
  }
  const failed: BatchResultErrorEntry[] = [];
  const accepted: Array<{ id: string; checked: CheckedPublication }> = [];
  for (const entry of entries) {
    try {
      accepted.push({ id: entry.Id!, checked: checkPublication(topic, entry) });
    } catch (error) {
      if (!(error instanceof SqsError)) throw error;
      // A bad message attribute fails the whole request on AWS (recorded: the batch cases of LocalStack's
      // AWS-validated test_empty_or_wrong_message_attributes).
      if (error.code === 'SnsInvalidParameterValue') throw error;
      failed.push({
        Id: entry.Id!,
        Code: error.spec.queryCode,
        Message: error.message,
        SenderFault: error.spec.sender,
      });
    }
  }
  return { accepted, failed };
}
