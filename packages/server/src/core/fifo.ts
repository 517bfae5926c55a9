import { createHash } from 'node:crypto';
import type { QueueAttributes } from '../shared/sqs-values.ts';
import type { QueueRecord } from '../store/contract.ts';
import { errors } from './errors.ts';

/** SQS remembers a deduplication id, and a ReceiveRequestAttemptId, for 5 minutes. */
export const DEDUPLICATION_WINDOW_MS = 5 * 60 * 1000;
export const RECEIVE_ATTEMPT_WINDOW_MS = 5 * 60 * 1000;

/** Group, deduplication and receive-attempt ids: 1-128 alphanumeric or punctuation characters (SQS). */
const FIFO_TOKEN = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

function checkToken(name: string, value: string): string {
  if (!FIFO_TOKEN.test(value)) {
    throw errors.invalidParameter(
      name,
      value,
      `${name} can only include alphanumeric and punctuation characters. 1 to 128 in length.`,
    );
  }
  return value;
}

/**
 * The message group of a send. Required on FIFO queues; optional on standard queues, where it names the
 * tenant of a fair queue.
 */
export function messageGroupIdOf(input: { MessageGroupId?: string }, fifo: boolean): string | undefined {
  const given = input.MessageGroupId;
  if (given === undefined) {
    if (fifo) throw errors.missingParameter('MessageGroupId');
    return undefined;
  }
  return checkToken('MessageGroupId', given);
}

export interface Deduplication {
  /** The group id on a queue that deduplicates per group, '' on one that deduplicates queue-wide. */
  scope: string;
  id: string;
}

/**
 * Whether a FIFO queue created with these attributes deduplicates per message group. Decided once, at
 * creation: on SQS a later SetQueueAttributes of DeduplicationScope changes the attribute shown but not the
 * deduplication, neither of the ids already seen nor of the ones sent after (recorded 2025-08-19, both ways).
 */
export function deduplicatesPerGroup(attributes: QueueAttributes): boolean {
  return attributes.DeduplicationScope === 'messageGroup';
}

/** The deduplication key of a FIFO send: the given id, or the body's SHA-256 with content-based dedup. */
export function deduplicationOf(
  input: { MessageDeduplicationId?: string },
  queue: Pick<QueueRecord, 'attributes' | 'deduplicatesPerGroup'>,
  groupId: string,
  body: string,
): Deduplication {
  const { attributes } = queue;
  const given = input.MessageDeduplicationId;
  let id: string;
  if (given !== undefined) {
    id = checkToken('MessageDeduplicationId', given);
  } else if (attributes.ContentBasedDeduplication === 'true') {
    id = createHash('sha256').update(body).digest('hex');
  } else {
    throw errors.invalidParameterValue(NO_DEDUPLICATION);
  }
  return { scope: queue.deduplicatesPerGroup ? groupId : '', id };
}

const NO_DEDUPLICATION =
  'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly';

/**
 * SendMessageBatch on a FIFO queue: an entry without a group, or without a deduplication id on a queue
 * without content-based deduplication, fails the whole request before any entry is sent (SQS). Ids that
 * are given but malformed fail only their entry.
 */
export function checkFifoBatch(
  entries: ReadonlyArray<{ MessageGroupId?: string; MessageDeduplicationId?: string }>,
  attributes: QueueAttributes,
): void {
  if (entries.some((entry) => entry.MessageGroupId === undefined)) {
    throw errors.invalidParameterValue('The request must contain the parameter MessageGroupId.');
  }
  if (
    attributes.ContentBasedDeduplication !== 'true' &&
    entries.some((entry) => entry.MessageDeduplicationId === undefined)
  ) {
    throw errors.invalidParameterValue(NO_DEDUPLICATION);
  }
}

export function receiveRequestAttemptIdOf(input: { ReceiveRequestAttemptId?: string }): string | undefined {
  const given = input.ReceiveRequestAttemptId;
  if (given === undefined) return undefined;
  return checkToken('ReceiveRequestAttemptId', given);
}

/**
 * SQS's sequence numbers are large, increasing, non-consecutive decimal strings. The store's message seq
 * increases with every accepted message, so an offset keeps the same order in the same 20-digit shape:
 * 10^19 + seq, written without a BigInt (a seq is a safe integer, under 10^16).
 */
export function sequenceNumberOf(seq: number): string {
  return `1${String(seq).padStart(19, '0')}`;
}

/** High-throughput FIFO (per-group throughput) requires per-group deduplication, as SQS enforces. */
export function checkFifoThroughputSettings(attributes: QueueAttributes): void {
  if (
    attributes.FifoThroughputLimit === 'perMessageGroupId' &&
    attributes.DeduplicationScope !== 'messageGroup'
  ) {
    throw errors.invalidAttributeValue(
      'FifoThroughputLimit',
      'The perMessageGroupId throughput limit requires DeduplicationScope messageGroup.',
    );
  }
}
