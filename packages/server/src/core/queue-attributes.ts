import type { QueueAttributes } from '../store/contract.ts';
import { errors } from './errors.ts';
import { LIMITS } from './limits.ts';

export type { QueueAttributes };

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
const BOOLEAN_VALUES: readonly string[] = ['true', 'false'];

/** "true" or "false", read in any case (as SQS reads them) and kept in lower case (as SQS shows them). */
interface BooleanAttribute {
  kind: 'boolean';
  default: 'true' | 'false' | undefined;
}
interface TextAttribute {
  kind: 'text';
}
type AttributeSpec = (IntegerAttribute | ChoiceAttribute | BooleanAttribute | TextAttribute) & {
  /**
   * Only on FIFO queues. On a standard queue SQS calls it an unknown attribute, or with `'explained'` says
   * that it needs FifoQueue.
   */
  fifoOnly?: true | 'explained';
  /** Can be given to CreateQueue but never changed afterwards (setting its current value changes nothing). */
  createOnly?: boolean;
  /** Not on a new queue: it appears once set (SQS shows the KMS key reuse period only with a KMS key). */
  setOnly?: boolean;
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
  KmsDataKeyReusePeriodSeconds: { kind: 'integer', default: 300, min: 60, max: 86_400, setOnly: true },
  SqsManagedSseEnabled: { kind: 'boolean', default: 'true' },
  FifoQueue: { kind: 'boolean', default: undefined, fifoOnly: true, createOnly: true },
  ContentBasedDeduplication: { kind: 'boolean', default: 'false', fifoOnly: true },
  DeduplicationScope: {
    kind: 'choice',
    default: 'queue',
    choices: ['queue', 'messageGroup'],
    fifoOnly: 'explained',
  },
  FifoThroughputLimit: {
    kind: 'choice',
    default: 'perQueue',
    choices: ['perQueue', 'perMessageGroupId'],
    fifoOnly: 'explained',
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
    settable: Object.entries(SETTABLE).map(
      ([name, { fifoOnly, createOnly = false, setOnly: _setOnly, ...spec }]) => ({
        name,
        fifoOnly: fifoOnly !== undefined,
        createOnly,
        // A form offers a boolean as a choice of its two values.
        ...(spec.kind === 'boolean' ? { ...spec, kind: 'choice' as const, choices: BOOLEAN_VALUES } : spec),
      }),
    ),
    computed: COMPUTED_ATTRIBUTE_NAMES,
  };
}

/** Whether a boolean attribute value is true; SQS reads them in any case ("True", "TRUE"). */
export function isTrue(value: string | undefined): boolean {
  return value?.toLowerCase() === 'true';
}

/** Attributes whose value is a JSON document and checked elsewhere (redrive rules need the store). */
export const JSON_POLICY_ATTRIBUTES = ['RedrivePolicy', 'RedriveAllowPolicy', 'Policy'] as const;

/**
 * Checks names and values given to CreateQueue (`current` undefined) or SetQueueAttributes (`current`: the
 * queue's attributes) and returns them in canonical form (integers without leading zeros or signs, booleans
 * in lower case, exactly as the next GetQueueAttributes will show them).
 */
export function validateSettableAttributes(
  given: Record<string, string>,
  options: { fifo: boolean; current?: QueueAttributes },
): QueueAttributes {
  const result: QueueAttributes = {};
  for (const [name, rawValue] of Object.entries(given)) {
    const attribute = SETTABLE[name];
    if (!attribute) throw errors.invalidAttributeName(name);
    if (attribute.fifoOnly && !options.fifo) {
      if (attribute.fifoOnly === 'explained')
        throw errors.attributeNotAllowed(`You can specify the ${name} only when FifoQueue is set to true.`);
      throw errors.invalidAttributeName(name);
    }
    const value = canonicalValue(name, String(rawValue), attribute);
    if (attribute.createOnly && options.current) {
      // FifoQueue, the one create-only attribute: its current value changes nothing, another is refused.
      if (value === options.current[name]) continue;
      throw errors.invalidAttributeValue(name, 'Modifying queue type is not supported.');
    }
    result[name] = value;
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
    case 'boolean': {
      const lower = value.toLowerCase();
      if (!BOOLEAN_VALUES.includes(lower)) throw errors.invalidAttributeValue(name, 'Must be true or false.');
      return lower;
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
    if ((attribute.fifoOnly && !fifo) || attribute.setOnly || attribute.kind === 'text') continue;
    if (attribute.kind === 'integer') result[name] = String(attribute.default);
    else if (attribute.default !== undefined) result[name] = attribute.default;
  }
  if (fifo) result.FifoQueue = 'true';
  return result;
}

/**
 * A queue's attributes after `changes` (checked by validateSettableAttributes) are applied to `current`: an
 * empty value removes an attribute (a policy, a KMS key), and server-side encryption follows SQS's rules.
 */
export function applyAttributeChanges(current: QueueAttributes, changes: QueueAttributes): QueueAttributes {
  const result = { ...current, ...changes };
  for (const [name, value] of Object.entries(changes)) if (value === '') delete result[name];
  // SSE is SQS-managed (SqsManagedSseEnabled) or with a KMS key, never both; a KMS key turns SQS's off,
  // and the key's reuse period exists only while there is a key.
  if (result.KmsMasterKeyId !== undefined && changes.SqsManagedSseEnabled === 'true') {
    throw errors.attributeNotAllowed(
      'You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.',
    );
  }
  if (changes.KmsMasterKeyId) {
    result.SqsManagedSseEnabled = 'false';
    result.KmsDataKeyReusePeriodSeconds ??= String(integerAttribute(result, 'KmsDataKeyReusePeriodSeconds'));
  }
  if (result.KmsMasterKeyId === undefined) delete result.KmsDataKeyReusePeriodSeconds;
  return result;
}

/** Reads an integer attribute that validateSettableAttributes has already checked. */
export function integerAttribute(attributes: QueueAttributes, name: keyof typeof SETTABLE & string): number {
  const spec = SETTABLE[name];
  const fallback = spec?.kind === 'integer' ? spec.default : 0;
  const value = attributes[name];
  return value === undefined ? fallback : Number(value);
}
