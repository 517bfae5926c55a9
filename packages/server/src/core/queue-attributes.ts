import { errors } from './errors.ts';
import { LIMITS } from './limits.ts';

/**
 * The queue attributes a user can set, with SQS's defaults and ranges. Values are kept as the strings
 * SQS puts on the wire, so what a client set is what it reads back.
 */
export type QueueAttributes = Record<string, string>;

interface IntegerAttribute {
  kind: 'integer';
  default: number;
  min: number;
  max: number;
}
interface ChoiceAttribute {
  kind: 'choice';
  default: string | undefined;
  choices: readonly string[];
}
interface TextAttribute {
  kind: 'text';
}
type AttributeSpec = (IntegerAttribute | ChoiceAttribute | TextAttribute) & {
  /** Only on FIFO queues. */
  fifoOnly?: boolean;
  /** Can be given to CreateQueue but never changed afterwards. */
  createOnly?: boolean;
};

const SETTABLE: Record<string, AttributeSpec> = {
  DelaySeconds: { kind: 'integer', default: 0, min: 0, max: LIMITS.maxDelaySeconds },
  MaximumMessageSize: {
    kind: 'integer',
    default: LIMITS.maxMessageSizeBytes,
    min: LIMITS.minMessageSizeBytes,
    max: LIMITS.maxMessageSizeBytes,
  },
  MessageRetentionPeriod: { kind: 'integer', default: 345_600, min: 60, max: 1_209_600 },
  ReceiveMessageWaitTimeSeconds: { kind: 'integer', default: 0, min: 0, max: LIMITS.maxWaitTimeSeconds },
  VisibilityTimeout: { kind: 'integer', default: 30, min: 0, max: LIMITS.maxVisibilityTimeout },
  RedrivePolicy: { kind: 'text' },
  RedriveAllowPolicy: { kind: 'text' },
  Policy: { kind: 'text' },
  KmsMasterKeyId: { kind: 'text' },
  KmsDataKeyReusePeriodSeconds: { kind: 'integer', default: 300, min: 60, max: 86_400 },
  SqsManagedSseEnabled: { kind: 'choice', default: 'true', choices: ['true', 'false'] },
  FifoQueue: {
    kind: 'choice',
    default: undefined,
    choices: ['true', 'false'],
    fifoOnly: true,
    createOnly: true,
  },
  ContentBasedDeduplication: { kind: 'choice', default: 'false', choices: ['true', 'false'], fifoOnly: true },
  DeduplicationScope: {
    kind: 'choice',
    default: 'queue',
    choices: ['queue', 'messageGroup'],
    fifoOnly: true,
  },
  FifoThroughputLimit: {
    kind: 'choice',
    default: 'perQueue',
    choices: ['perQueue', 'perMessageGroupId'],
    fifoOnly: true,
  },
};

/** Attributes SQS computes; GetQueueAttributes returns them, Set/CreateQueue refuse them. */
export const COMPUTED_ATTRIBUTE_NAMES = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
  'CreatedTimestamp',
  'LastModifiedTimestamp',
  'QueueArn',
] as const;

export function isKnownAttributeName(name: string): boolean {
  return name in SETTABLE || (COMPUTED_ATTRIBUTE_NAMES as readonly string[]).includes(name);
}

/** One settable attribute as the console's forms need it: its kind, range or choices, and where it applies. */
export type AttributeDescription = { name: string; fifoOnly: boolean; createOnly: boolean } & (
  | { kind: 'integer'; default: number; min: number; max: number }
  | { kind: 'choice'; default: string | undefined; choices: readonly string[] }
  | { kind: 'text' }
);

/** Every queue attribute, settable and computed, from this file's one list (served at /api/attributes). */
export function attributeCatalog(): { settable: AttributeDescription[]; computed: readonly string[] } {
  return {
    settable: Object.entries(SETTABLE).map(([name, { fifoOnly = false, createOnly = false, ...spec }]) => ({
      name,
      fifoOnly,
      createOnly,
      ...spec,
    })),
    computed: COMPUTED_ATTRIBUTE_NAMES,
  };
}

/** Attributes whose value is a JSON document and checked elsewhere (redrive rules need the store). */
export const JSON_POLICY_ATTRIBUTES = ['RedrivePolicy', 'RedriveAllowPolicy', 'Policy'] as const;

/**
 * Checks names and values given to CreateQueue or SetQueueAttributes and returns them in canonical form
 * (integers without leading zeros or signs, exactly as the next GetQueueAttributes will show them).
 */
export function validateSettableAttributes(
  given: Record<string, string>,
  options: { fifo: boolean; creating: boolean },
): QueueAttributes {
  const result: QueueAttributes = {};
  for (const [name, rawValue] of Object.entries(given)) {
    const attribute = SETTABLE[name];
    if (!attribute) throw errors.invalidAttributeName(name);
    const value = String(rawValue);
    if (attribute.fifoOnly && !options.fifo) {
      // SQS refuses FIFO-only attributes on standard queues, but accepts FifoQueue=false at creation.
      if (name === 'FifoQueue' && value === 'false' && options.creating) continue;
      throw errors.invalidAttributeName(name);
    }
    if (attribute.createOnly && !options.creating) {
      throw errors.invalidAttributeName(name);
    }
    result[name] = canonicalValue(name, value, attribute);
  }
  return result;
}

function canonicalValue(name: string, value: string, attribute: AttributeSpec): string {
  switch (attribute.kind) {
    case 'integer': {
      if (!/^\s*\d+\s*$/.test(value)) {
        throw errors.invalidAttributeValue(
          name,
          `Must be an integer from ${attribute.min} to ${attribute.max}.`,
        );
      }
      const number = Number(value.trim());
      if (number < attribute.min || number > attribute.max) {
        throw errors.invalidAttributeValue(
          name,
          `Must be an integer from ${attribute.min} to ${attribute.max}.`,
        );
      }
      return String(number);
    }
    case 'choice':
      if (!attribute.choices.includes(value)) {
        throw errors.invalidAttributeValue(name, `Must be one of ${attribute.choices.join(', ')}.`);
      }
      return value;
    case 'text':
      return value;
  }
}

/** The attributes a new queue starts with before the user's are applied. */
export function defaultAttributes(fifo: boolean): QueueAttributes {
  const result: QueueAttributes = {};
  for (const [name, attribute] of Object.entries(SETTABLE)) {
    if (attribute.fifoOnly && !fifo) continue;
    if (attribute.kind === 'text') continue;
    if (attribute.kind === 'integer') result[name] = String(attribute.default);
    else if (attribute.default !== undefined) result[name] = attribute.default;
  }
  if (fifo) result.FifoQueue = 'true';
  return result;
}

/** Reads an integer attribute that validateSettableAttributes has already checked. */
export function integerAttribute(attributes: QueueAttributes, name: keyof typeof SETTABLE & string): number {
  const spec = SETTABLE[name];
  const fallback = spec?.kind === 'integer' ? spec.default : 0;
  const value = attributes[name];
  return value === undefined ? fallback : Number(value);
}
