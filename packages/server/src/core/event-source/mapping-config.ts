/**
 * An event source mapping's settings: what CreateEventSourceMapping and UpdateEventSourceMapping accept for an
 * SQS queue, with Lambda's defaults, limits and errors, and the mapping as Lambda's API returns it
 * (EventSourceMappingConfiguration). Evidence and the unconfirmed texts: docs/decisions/event-source-mappings.md.
 */
import {
  FilterCriteriaError,
  LAMBDA_FILTERS_PER_EVENT_SOURCE,
  SqsFilterCriteria,
} from '../event-filter/index.ts';
import { lambdaErrors } from './lambda-errors.ts';

export type MappingState = 'Creating' | 'Enabled' | 'Disabling' | 'Disabled' | 'Updating' | 'Deleting';

/** The one function response type Lambda knows for SQS. */
export const REPORT_BATCH_ITEM_FAILURES = 'ReportBatchItemFailures';

/** A mapping as Sluice keeps it. */
export interface EventSourceMapping {
  uuid: string;
  eventSourceArn: string;
  /** The function's name, without ARN parts or qualifier: the Invoke API's path segment. */
  functionName: string;
  /** A version or alias given with the name (`name:alias`), passed on as the Invoke API's Qualifier. */
  qualifier?: string;
  batchSize: number;
  maximumBatchingWindowInSeconds: number;
  reportBatchItemFailures: boolean;
  /** ScalingConfig.MaximumConcurrency; absent: Sluice's bound (DEFAULT_MAXIMUM_CONCURRENCY). */
  maximumConcurrency?: number;
  /** FilterCriteria.Filters[].Pattern, each checked by the event filter when set. */
  filterPatterns?: string[];
  enabled: boolean;
  /** Why the mapping is in its state: `USER_INITIATED`, or a problem Sluice found (its queue was deleted). */
  stateTransitionReason: string;
  /** Milliseconds since the epoch. */
  lastModified: number;
  /** How long an invocation may take before it counts as failed: the function's time-out (Lambda's default 3 s). */
  functionTimeoutSeconds: number;
  /** Tags (CreateEventSourceMapping's `Tags`, TagResource, UntagResource), read back by ListTags. */
  tags?: Record<string, string>;
}

/** Lambda's default batch size for SQS, and its limits. */
export const MAPPING_LIMITS = {
  defaultBatchSize: 10,
  maxBatchSize: 10_000,
  maxFifoBatchSize: 10,
  maxBatchingWindowSeconds: 300,
  minConcurrency: 2,
  maxConcurrency: 1_000,
  defaultFunctionTimeoutSeconds: 3,
  maxFunctionTimeoutSeconds: 900,
} as const;

/**
 * Pollers of a mapping without ScalingConfig.MaximumConcurrency. Lambda starts five pollers on a queue and
 * scales them toward the account's concurrency; a local server has no such account, so Sluice stops at five.
 */
export const DEFAULT_MAXIMUM_CONCURRENCY = 5;

export const USER_INITIATED = 'USER_INITIATED';

/** What Sluice says when a mapping's queue is gone (the AWS text is not recorded; see the decision record). */
export const QUEUE_DELETED_REASON = 'PROBLEM: The event source queue does not exist.';

export type MappingInput = Record<string, unknown>;

/** What the checks need to know of the queue a mapping reads. */
export interface MappingQueue {
  fifo: boolean;
  /** The queue's VisibilityTimeout attribute, in seconds. */
  visibilityTimeoutSeconds: number;
}

const FUNCTION_NAME =
  /^(?:arn:aws[a-zA-Z-]*:lambda:[a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d:\d{12}:function:|(?:\d{12}:)?function:)?([a-zA-Z0-9-_.]+)(?::(\$LATEST|[a-zA-Z0-9-_]+))?$/;

/** The function's name and qualifier out of any form Lambda accepts: name, `name:alias`, partial or full ARN. */
export function parseFunctionName(
  value: unknown,
  field = 'functionName',
): { name: string; qualifier?: string } {
  if (typeof value !== 'string' || value.length < 1 || value.length > 256)
    throw lambdaErrors.constraint(field, value, 'Member must have length between 1 and 256');
  const match = FUNCTION_NAME.exec(value);
  if (!match)
    throw lambdaErrors.constraint(
      field,
      value,
      'Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\\d{1}:)?(\\d{12}:)?(function:)?([a-zA-Z0-9-_\\.]+)(:(\\$LATEST(\\.PUBLISHED)?|[a-zA-Z0-9-_]+))?',
    );
  return match[2] === undefined ? { name: match[1]! } : { name: match[1]!, qualifier: match[2] };
}

function integerIn(
  input: MappingInput,
  key: string,
  field: string,
  min: number,
  max: number,
): number | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw lambdaErrors.invalidParameter(`${key} must be an integer.`);
  if (value < min)
    throw lambdaErrors.constraint(field, value, `Member must have value greater than or equal to ${min}`);
  if (value > max)
    throw lambdaErrors.constraint(field, value, `Member must have value less than or equal to ${max}`);
  return value;
}

function booleanField(input: MappingInput, key: string): boolean | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw lambdaErrors.invalidParameter(`${key} must be a boolean.`);
  return value;
}

/** Settings Lambda takes only for streams and Kafka: refused for an SQS queue, as Lambda does. */
const STREAM_ONLY_SETTINGS = [
  'ParallelizationFactor',
  'DestinationConfig',
  'MaximumRecordAgeInSeconds',
  'BisectBatchOnFunctionError',
  'MaximumRetryAttempts',
  'TumblingWindowInSeconds',
  'Topics',
  'Queues',
  'SelfManagedEventSource',
  'AmazonManagedKafkaEventSourceConfig',
  'SelfManagedKafkaEventSourceConfig',
  'DocumentDBEventSourceConfig',
  'ProvisionedPollerConfig',
] as const;

function refuseStreamSettings(input: MappingInput): void {
  if (input.StartingPosition !== undefined || input.StartingPositionTimestamp !== undefined)
    throw lambdaErrors.invalidParameter('StartingPosition is not valid for SQS event sources.');
  for (const key of STREAM_ONLY_SETTINGS) {
    if (input[key] !== undefined && input[key] !== null)
      throw lambdaErrors.invalidParameter(`Unsupported ${key} for SQS event sources.`);
  }
}

function functionResponseTypes(input: MappingInput): boolean | undefined {
  const value = input.FunctionResponseTypes;
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw lambdaErrors.invalidParameter('FunctionResponseTypes must be a list.');
  if (value.length > 1)
    throw lambdaErrors.constraint(
      'functionResponseTypes',
      JSON.stringify(value),
      'Member must have length less than or equal to 1',
    );
  for (const type of value) {
    if (type !== REPORT_BATCH_ITEM_FAILURES)
      throw lambdaErrors.constraint(
        'functionResponseTypes',
        JSON.stringify(value),
        `Member must satisfy constraint: [Member must satisfy enum value set: [${REPORT_BATCH_ITEM_FAILURES}]]`,
      );
  }
  return value.length === 1;
}

/** ScalingConfig: undefined when not given, null when given without MaximumConcurrency (removes it). */
function maximumConcurrency(input: MappingInput): number | null | undefined {
  const value = input.ScalingConfig;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw lambdaErrors.invalidParameter('ScalingConfig must be an object.');
  return (
    integerIn(
      value as MappingInput,
      'MaximumConcurrency',
      'scalingConfig.maximumConcurrency',
      MAPPING_LIMITS.minConcurrency,
      MAPPING_LIMITS.maxConcurrency,
    ) ?? null
  );
}

/** FilterCriteria: undefined when not given, [] when given empty (removes the filters); each pattern compiled. */
function filterPatterns(input: MappingInput): string[] | undefined {
  const value = input.FilterCriteria;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw lambdaErrors.invalidParameter('FilterCriteria must be an object.');
  const filters = (value as MappingInput).Filters;
  if (filters === undefined || filters === null) return [];
  if (!Array.isArray(filters)) throw lambdaErrors.invalidParameter('FilterCriteria.Filters must be a list.');
  if (filters.length > LAMBDA_FILTERS_PER_EVENT_SOURCE)
    throw lambdaErrors.invalidParameter(
      `The maximum number of filters per event source mapping is ${LAMBDA_FILTERS_PER_EVENT_SOURCE}.`,
    );
  const patterns = filters.map((filter: unknown) => {
    const pattern =
      typeof filter === 'object' && filter !== null ? (filter as MappingInput).Pattern : undefined;
    if (pattern === undefined || pattern === null) return '';
    if (typeof pattern !== 'string') throw lambdaErrors.invalidParameter('Pattern must be a string.');
    if (pattern.length > 4096)
      throw lambdaErrors.constraint(
        'filterCriteria.filters.member.pattern',
        pattern,
        'Member must have length less than or equal to 4096',
      );
    return pattern;
  });
  compileFilters(patterns);
  return patterns;
}

/** The mapping's filters, compiled; undefined without any. Lambda answers every refused pattern in one text. */
export function compileFilters(patterns: readonly string[] | undefined): SqsFilterCriteria | undefined {
  if (!patterns || patterns.length === 0) return undefined;
  try {
    return SqsFilterCriteria.compile(patterns);
  } catch (error) {
    if (error instanceof FilterCriteriaError) throw lambdaErrors.invalidParameter(error.message);
    throw error;
  }
}

/**
 * Lambda refuses a queue whose messages would come back while the function may still be running them.
 */
function checkVisibility(queue: MappingQueue, functionTimeoutSeconds: number): void {
  if (queue.visibilityTimeoutSeconds < functionTimeoutSeconds)
    throw lambdaErrors.invalidParameter(
      `Queue visibility timeout: ${queue.visibilityTimeoutSeconds} seconds is less than Function timeout: ${functionTimeoutSeconds} seconds`,
    );
}

/** The batch size and window together, as Lambda checks them for SQS queues. */
function checkBatching(batchSize: number, windowSeconds: number, queue: MappingQueue): void {
  if (queue.fifo && batchSize > MAPPING_LIMITS.maxFifoBatchSize)
    throw lambdaErrors.invalidParameter(
      `BatchSize ${batchSize} is too large for a FIFO queue: it must be between 1 and ${MAPPING_LIMITS.maxFifoBatchSize}.`,
    );
  if (queue.fifo && windowSeconds > 0)
    throw lambdaErrors.invalidParameter('Batching window is not supported for FIFO queues.');
  if (batchSize > 10 && windowSeconds === 0)
    throw lambdaErrors.invalidParameter(
      'Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10',
    );
}

/** Lambda's tag limits: 50 tags a resource, keys of 1-128 characters, values of up to 256. */
export const TAG_LIMITS = { perResource: 50, keyLength: 128, valueLength: 256 } as const;

/** A map of tags (CreateEventSourceMapping's `Tags`, TagResource's), checked; undefined when not given. */
export function parseTags(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw lambdaErrors.invalidParameter('Tags must be a map of strings.');
  const tags: Record<string, string> = {};
  for (const [key, tag] of Object.entries(value)) {
    if (typeof tag !== 'string')
      throw lambdaErrors.invalidParameter(`The value of tag ${key} must be a string.`);
    if (key.length < 1 || key.length > TAG_LIMITS.keyLength)
      throw lambdaErrors.invalidParameter(
        `Tag keys must be 1 to ${TAG_LIMITS.keyLength} characters long: ${JSON.stringify(key)}.`,
      );
    if (key.toLowerCase().startsWith('aws:'))
      throw lambdaErrors.invalidParameter(
        `Tag keys starting with "aws:" are reserved: ${JSON.stringify(key)}.`,
      );
    if (tag.length > TAG_LIMITS.valueLength)
      throw lambdaErrors.invalidParameter(
        `Tag values must be at most ${TAG_LIMITS.valueLength} characters long (tag ${key}).`,
      );
    tags[key] = tag;
  }
  checkTagCount(tags);
  return tags;
}

export function checkTagCount(tags: Record<string, string>): void {
  if (Object.keys(tags).length > TAG_LIMITS.perResource)
    throw lambdaErrors.invalidParameter(`A resource can have at most ${TAG_LIMITS.perResource} tags.`);
}

/** The settings of CreateEventSourceMapping, checked; the caller adds the identity and the queue. */
export function newMappingSettings(input: MappingInput, queue: MappingQueue, functionTimeoutSeconds: number) {
  refuseStreamSettings(input);
  const { name, qualifier } = parseFunctionName(input.FunctionName);
  const batchSize =
    integerIn(input, 'BatchSize', 'batchSize', 1, MAPPING_LIMITS.maxBatchSize) ??
    MAPPING_LIMITS.defaultBatchSize;
  const window =
    integerIn(
      input,
      'MaximumBatchingWindowInSeconds',
      'maximumBatchingWindowInSeconds',
      0,
      MAPPING_LIMITS.maxBatchingWindowSeconds,
    ) ?? 0;
  checkBatching(batchSize, window, queue);
  checkVisibility(queue, functionTimeoutSeconds);
  const concurrency = maximumConcurrency(input);
  const patterns = filterPatterns(input);
  const tags = parseTags(input.Tags);
  return {
    functionName: name,
    ...(qualifier !== undefined && { qualifier }),
    batchSize,
    maximumBatchingWindowInSeconds: window,
    reportBatchItemFailures: functionResponseTypes(input) ?? false,
    ...(typeof concurrency === 'number' && { maximumConcurrency: concurrency }),
    ...(patterns && patterns.length > 0 && { filterPatterns: patterns }),
    enabled: booleanField(input, 'Enabled') ?? true,
    functionTimeoutSeconds,
    ...(tags && Object.keys(tags).length > 0 && { tags }),
  };
}

/** UpdateEventSourceMapping: the mapping with the given settings changed, checked together. */
export function updatedMapping(
  mapping: EventSourceMapping,
  input: MappingInput,
  queue: MappingQueue,
): EventSourceMapping {
  refuseStreamSettings(input);
  const next: EventSourceMapping = { ...mapping };
  if (input.FunctionName !== undefined && input.FunctionName !== null) {
    const { name, qualifier } = parseFunctionName(input.FunctionName);
    next.functionName = name;
    if (qualifier === undefined) delete next.qualifier;
    else next.qualifier = qualifier;
  }
  next.batchSize =
    integerIn(input, 'BatchSize', 'batchSize', 1, MAPPING_LIMITS.maxBatchSize) ?? next.batchSize;
  next.maximumBatchingWindowInSeconds =
    integerIn(
      input,
      'MaximumBatchingWindowInSeconds',
      'maximumBatchingWindowInSeconds',
      0,
      MAPPING_LIMITS.maxBatchingWindowSeconds,
    ) ?? next.maximumBatchingWindowInSeconds;
  checkBatching(next.batchSize, next.maximumBatchingWindowInSeconds, queue);
  next.reportBatchItemFailures = functionResponseTypes(input) ?? next.reportBatchItemFailures;
  const concurrency = maximumConcurrency(input);
  if (concurrency === null) delete next.maximumConcurrency;
  else if (concurrency !== undefined) next.maximumConcurrency = concurrency;
  const patterns = filterPatterns(input);
  if (patterns !== undefined) {
    if (patterns.length === 0) delete next.filterPatterns;
    else next.filterPatterns = patterns;
  }
  const enabled = booleanField(input, 'Enabled');
  if (enabled !== undefined) next.enabled = enabled;
  next.stateTransitionReason = USER_INITIATED;
  return next;
}

/** EventSourceMappingConfiguration, as Lambda's API returns it for an SQS queue. */
export interface MappingConfiguration {
  UUID: string;
  EventSourceMappingArn: string;
  BatchSize: number;
  MaximumBatchingWindowInSeconds: number;
  EventSourceArn: string;
  FunctionArn: string;
  /** Epoch seconds (REST-JSON timestamps). */
  LastModified: number;
  State: MappingState;
  StateTransitionReason: string;
  FunctionResponseTypes: string[];
  ScalingConfig?: { MaximumConcurrency: number };
  FilterCriteria?: { Filters: { Pattern: string }[] };
}

export interface AccountScope {
  region: string;
  accountId: string;
}

export function functionArn(
  mapping: Pick<EventSourceMapping, 'functionName' | 'qualifier'>,
  scope: AccountScope,
): string {
  const base = `arn:aws:lambda:${scope.region}:${scope.accountId}:function:${mapping.functionName}`;
  return mapping.qualifier === undefined ? base : `${base}:${mapping.qualifier}`;
}

/** The state a read reports; a write reports the transition it started (Creating, Updating, Deleting). */
export function settledState(mapping: EventSourceMapping): MappingState {
  return mapping.enabled ? 'Enabled' : 'Disabled';
}

export function renderMapping(
  mapping: EventSourceMapping,
  scope: AccountScope,
  state: MappingState = settledState(mapping),
): MappingConfiguration {
  return {
    UUID: mapping.uuid,
    EventSourceMappingArn: `arn:aws:lambda:${scope.region}:${scope.accountId}:event-source-mapping:${mapping.uuid}`,
    BatchSize: mapping.batchSize,
    MaximumBatchingWindowInSeconds: mapping.maximumBatchingWindowInSeconds,
    EventSourceArn: mapping.eventSourceArn,
    FunctionArn: functionArn(mapping, scope),
    LastModified: mapping.lastModified / 1000,
    State: state,
    StateTransitionReason: mapping.stateTransitionReason,
    FunctionResponseTypes: mapping.reportBatchItemFailures ? [REPORT_BATCH_ITEM_FAILURES] : [],
    ...(mapping.maximumConcurrency !== undefined && {
      ScalingConfig: { MaximumConcurrency: mapping.maximumConcurrency },
    }),
    ...(mapping.filterPatterns && {
      FilterCriteria: { Filters: mapping.filterPatterns.map((Pattern) => ({ Pattern })) },
    }),
  };
}
