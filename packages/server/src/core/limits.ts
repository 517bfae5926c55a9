import { isXmlText } from '../shared/xml-characters.ts';

/** SQS's limits, in one place. Times in seconds unless the name says otherwise. */
export const LIMITS = {
  maxBatchEntries: 10,
  maxBatchEntryIdLength: 80,
  maxMessageAttributes: 10,
  maxAttributeNameLength: 256,
  maxAttributeTypeLength: 256,
  maxReceiveMessages: 10,
  maxWaitTimeSeconds: 20,
  maxVisibilityTimeout: 43_200,
  /** ChangeMessageVisibility cannot keep one delivery in flight longer than this from its receive. */
  maxInFlightSecondsPerDelivery: 43_200,
  maxDelaySeconds: 900,
  maxInFlightStandard: 120_000,
  maxInFlightFifo: 20_000,
  maxQueueNameLength: 80,
  maxTagsPerQueue: 50,
  purgeWindowSeconds: 60,
  deletedQueueNameReuseSeconds: 60,
  maxListQueuesResults: 1000,
  maxMessageSizeBytes: 1_048_576,
  /** A SendMessageBatch request, whatever the queue's MaximumMessageSize. */
  maxBatchBytes: 1_048_576,
  minMessageSizeBytes: 1_024,
} as const;

/** SQS allows in bodies and string attribute values exactly the characters XML 1.0 can carry. */
export const hasOnlyAllowedCharacters = isXmlText;

/** Limits a server operator may change (SQS's own in-flight limits by default; no caps on queues or bytes). */
export interface CapacityLimits {
  /** In-flight messages per standard queue before ReceiveMessage is refused with OverLimit. */
  maxInFlightStandard: number;
  /** In-flight messages per FIFO queue before ReceiveMessage is refused with OverLimit. */
  maxInFlightFifo: number;
  /** Queues the server holds at most (`--max-queues`); undefined: no cap. */
  maxQueues?: number;
  /** Bytes the store may take before sends are refused (`--max-stored-bytes`); undefined: no cap. */
  maxStoredBytes?: number;
}

export const DEFAULT_CAPACITY: CapacityLimits = {
  maxInFlightStandard: LIMITS.maxInFlightStandard,
  maxInFlightFifo: LIMITS.maxInFlightFifo,
};
