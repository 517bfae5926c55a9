/**
 * What SNS sends an HTTP/HTTPS subscriber, as the SNS developer guide writes it ("HTTP/HTTPS subscription
 * confirmation JSON format", "HTTP/HTTPS notification JSON format", "HTTP/HTTPS unsubscribe confirmation JSON
 * format", "Verifying the signatures of Amazon SNS messages", "Amazon SNS message delivery retries"): the
 * confirmations' bodies and strings to sign, the request headers, and the delivery policy's retry schedule.
 * No I/O here: server/sns-http-delivery.ts sends.
 */

export type EndpointMessageType = 'SubscriptionConfirmation' | 'UnsubscribeConfirmation' | 'Notification';

/** The fields of a confirmation (subscribe or unsubscribe). */
export interface Confirmation {
  readonly type: 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
  readonly messageId: string;
  readonly token: string;
  readonly topicArn: string;
  readonly subscriptionArn: string;
  readonly subscribeUrl: string;
  /** ISO 8601 with milliseconds, UTC. */
  readonly timestamp: string;
}

/** AWS's text of a confirmation's Message. */
export function confirmationMessage(confirmation: Confirmation): string {
  return confirmation.type === 'SubscriptionConfirmation'
    ? `You have chosen to subscribe to the topic ${confirmation.topicArn}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`
    : `You have chosen to deactivate subscription ${confirmation.subscriptionArn}.\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message.`;
}

/** AWS's canonical string for a confirmation's signature: Message, MessageId, SubscribeURL, Timestamp, Token, TopicArn, Type. */
export function confirmationStringToSign(confirmation: Confirmation): string {
  const parts: [string, string][] = [
    ['Message', confirmationMessage(confirmation)],
    ['MessageId', confirmation.messageId],
    ['SubscribeURL', confirmation.subscribeUrl],
    ['Timestamp', confirmation.timestamp],
    ['Token', confirmation.token],
    ['TopicArn', confirmation.topicArn],
    ['Type', confirmation.type],
  ];
  return parts.map(([name, value]) => `${name}\n${value}\n`).join('');
}

/** The confirmation's JSON text, in AWS's order and layout (as the notification envelope). */
export function confirmationBody(
  confirmation: Confirmation,
  signing: { version: '1' | '2'; signature: string; certificateUrl: string },
): string {
  const members: Array<[string, string]> = [
    ['Type', confirmation.type],
    ['MessageId', confirmation.messageId],
    ['Token', confirmation.token],
    ['TopicArn', confirmation.topicArn],
    ['Message', confirmationMessage(confirmation)],
    ['SubscribeURL', confirmation.subscribeUrl],
    ['Timestamp', confirmation.timestamp],
    ['SignatureVersion', signing.version],
    ['Signature', signing.signature],
    ['SigningCertURL', signing.certificateUrl],
  ];
  return `{\n${members.map(([name, value]) => `  ${JSON.stringify(name)} : ${JSON.stringify(value)}`).join(',\n')}\n}`;
}

/** The headers of a POST to a subscriber. */
export function endpointHeaders(message: {
  type: EndpointMessageType;
  messageId: string;
  topicArn: string;
  /** Not on a SubscriptionConfirmation (the subscription has no ARN for the endpoint yet). */
  subscriptionArn: string | undefined;
  raw: boolean;
}): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=UTF-8',
    'user-agent': 'Amazon Simple Notification Service Agent',
    'x-amz-sns-message-type': message.type,
    'x-amz-sns-message-id': message.messageId,
    'x-amz-sns-topic-arn': message.topicArn,
  };
  if (message.subscriptionArn !== undefined) headers['x-amz-sns-subscription-arn'] = message.subscriptionArn;
  if (message.raw) headers['x-amz-sns-rawdelivery'] = 'true';
  return headers;
}

// ---- Delivery policy ---------------------------------------------------------------------------------------

export type BackoffFunction = 'linear' | 'arithmetic' | 'geometric' | 'exponential';

export interface RetryPolicy {
  minDelayTarget: number;
  maxDelayTarget: number;
  numRetries: number;
  numNoDelayRetries: number;
  numMinDelayRetries: number;
  numMaxDelayRetries: number;
  backoffFunction: BackoffFunction;
}

export interface EffectiveDeliveryPolicy {
  retry: RetryPolicy;
  /** throttlePolicy.maxReceivesPerSecond; undefined: no limit. */
  maxReceivesPerSecond: number | undefined;
}

/** AWS's default for HTTP/S: 3 retries 20 seconds apart, no immediate retries, linear. */
export const DEFAULT_HTTP_RETRY_POLICY: RetryPolicy = {
  minDelayTarget: 20,
  maxDelayTarget: 20,
  numRetries: 3,
  numNoDelayRetries: 0,
  numMinDelayRetries: 0,
  numMaxDelayRetries: 0,
  backoffFunction: 'linear',
};

const BACKOFF = new Set<string>(['linear', 'arithmetic', 'geometric', 'exponential']);

function parsed(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined || text === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const objectAt = (value: unknown, key: string): Record<string, unknown> | undefined => {
  const member =
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof member === 'object' && member !== null ? (member as Record<string, unknown>) : undefined;
};

function retryPolicyOf(source: Record<string, unknown> | undefined, base: RetryPolicy): RetryPolicy {
  if (source === undefined) return base;
  const number = (key: keyof RetryPolicy) => {
    const value = source[key];
    return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
  };
  const backoff = source.backoffFunction;
  return {
    minDelayTarget: number('minDelayTarget') ?? base.minDelayTarget,
    maxDelayTarget: number('maxDelayTarget') ?? base.maxDelayTarget,
    numRetries: number('numRetries') ?? base.numRetries,
    numNoDelayRetries: number('numNoDelayRetries') ?? base.numNoDelayRetries,
    numMinDelayRetries: number('numMinDelayRetries') ?? base.numMinDelayRetries,
    numMaxDelayRetries: number('numMaxDelayRetries') ?? base.numMaxDelayRetries,
    backoffFunction:
      typeof backoff === 'string' && BACKOFF.has(backoff)
        ? (backoff as BackoffFunction)
        : base.backoffFunction,
  };
}

const throttleOf = (source: Record<string, unknown> | undefined): number | undefined => {
  const value = source?.maxReceivesPerSecond;
  return typeof value === 'number' && value >= 1 ? Math.floor(value) : undefined;
};

/**
 * The policy a subscription's deliveries follow: the topic's `http.defaultHealthyRetryPolicy` (and
 * `defaultThrottlePolicy`) over AWS's default, then the subscription's `healthyRetryPolicy` (and
 * `throttlePolicy`) unless the topic says `disableSubscriptionOverrides`. Unreadable parts are left at what
 * is under them.
 */
export function effectiveDeliveryPolicy(
  topicPolicy: string | undefined,
  subscriptionPolicy: string | undefined,
): EffectiveDeliveryPolicy {
  const topic = objectAt(parsed(topicPolicy), 'http');
  let retry = retryPolicyOf(objectAt(topic, 'defaultHealthyRetryPolicy'), DEFAULT_HTTP_RETRY_POLICY);
  let maxReceivesPerSecond = throttleOf(objectAt(topic, 'defaultThrottlePolicy'));
  if (topic?.disableSubscriptionOverrides !== true) {
    const subscription = parsed(subscriptionPolicy);
    retry = retryPolicyOf(objectAt(subscription, 'healthyRetryPolicy'), retry);
    maxReceivesPerSecond = throttleOf(objectAt(subscription, 'throttlePolicy')) ?? maxReceivesPerSecond;
  }
  return { retry, maxReceivesPerSecond };
}

// ---- Delivery policy checks (SetTopicAttributes, SetSubscriptionAttributes, Subscribe, CreateTopic) ------

const RETRY_MEMBERS = new Set([
  'minDelayTarget',
  'maxDelayTarget',
  'numRetries',
  'numNoDelayRetries',
  'numMinDelayRetries',
  'numMaxDelayRetries',
  'backoffFunction',
]);
/** AWS: the retries of an HTTP/S policy may not together wait longer than this. */
export const MAX_TOTAL_RETRY_SECONDS = 3600;

/** Refused members, AWS's "Unexpected JSON member: NAME". */
function unexpectedMember(value: Record<string, unknown>, allowed: Set<string>): string | undefined {
  const extra = Object.keys(value).find((key) => !allowed.has(key));
  return extra === undefined ? undefined : `Unexpected JSON member: ${extra}`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function checkRetryPolicy(path: string, value: unknown): string | undefined {
  if (!isObject(value)) return `${path} must be a JSON object`;
  const unexpected = unexpectedMember(value, RETRY_MEMBERS);
  if (unexpected) return unexpected;
  const bounds: Array<[keyof RetryPolicy, number, number]> = [
    ['minDelayTarget', 1, 3600],
    ['maxDelayTarget', 1, 3600],
    ['numRetries', 0, 100],
    ['numNoDelayRetries', 0, 100],
    ['numMinDelayRetries', 0, 100],
    ['numMaxDelayRetries', 0, 100],
  ];
  for (const [name, low, high] of bounds) {
    const given = value[name];
    if (given === undefined) continue;
    if (typeof given !== 'number' || !Number.isInteger(given)) return `${path}.${name} must be an integer`;
    if (given < low) return `${path}.${name} must be greater than or equal to ${low}`;
    if (given > high) return `${path}.${name} must be less than or equal to ${high}`;
  }
  const backoff = value.backoffFunction;
  if (backoff !== undefined && (typeof backoff !== 'string' || !BACKOFF.has(backoff)))
    return `${path}.backoffFunction must be one of linear, arithmetic, geometric, exponential`;
  const policy = retryPolicyOf(value, DEFAULT_HTTP_RETRY_POLICY);
  if (
    value.minDelayTarget !== undefined &&
    value.maxDelayTarget !== undefined &&
    policy.minDelayTarget > policy.maxDelayTarget
  )
    return `${path}.minDelayTarget must be less than or equal to maxDelayTarget`;
  if (policy.numNoDelayRetries + policy.numMinDelayRetries + policy.numMaxDelayRetries > policy.numRetries)
    return `${path}: numNoDelayRetries + numMinDelayRetries + numMaxDelayRetries must be less than or equal to numRetries`;
  let total = 0;
  for (let retry = 1; retry <= policy.numRetries; retry++) total += retryDelaySeconds(policy, retry) ?? 0;
  if (total > MAX_TOTAL_RETRY_SECONDS)
    return `${path}: Total policy retry time cannot be greater than ${MAX_TOTAL_RETRY_SECONDS} seconds`;
  return undefined;
}

function checkThrottlePolicy(path: string, value: unknown): string | undefined {
  if (!isObject(value)) return `${path} must be a JSON object`;
  const unexpected = unexpectedMember(value, new Set(['maxReceivesPerSecond']));
  if (unexpected) return unexpected;
  const rate = value.maxReceivesPerSecond;
  if (rate === undefined) return undefined;
  if (typeof rate !== 'number' || !Number.isInteger(rate))
    return `${path}.maxReceivesPerSecond must be an integer`;
  if (rate < 1) return `${path}.maxReceivesPerSecond must be greater than or equal to 1`;
  return undefined;
}

function checkRequestPolicy(path: string, value: unknown): string | undefined {
  if (!isObject(value)) return `${path} must be a JSON object`;
  const unexpected = unexpectedMember(value, new Set(['headerContentType']));
  if (unexpected) return unexpected;
  if (value.headerContentType !== undefined && typeof value.headerContentType !== 'string')
    return `${path}.headerContentType must be a string`;
  return undefined;
}

/**
 * Why a topic's or a subscription's `DeliveryPolicy` (already known to be a JSON object) is refused, as the
 * text after "Invalid parameter: DeliveryPolicy: ", or undefined when it is good. AWS's ranges: delays 1 to
 * 3600 seconds with min <= max, 0 to 100 retries of which the immediate, pre- and post-backoff ones are a
 * part, a known backoff function, at most 3600 seconds of retries in all, maxReceivesPerSecond >= 1, and no
 * member AWS does not know. The topic's keys are under `http` (`defaultHealthyRetryPolicy`, ...); a
 * subscription's are at the top (`healthyRetryPolicy`, ...).
 */
export function deliveryPolicyProblem(
  kind: 'topic' | 'subscription',
  policy: Record<string, unknown>,
): string | undefined {
  if (kind === 'subscription') {
    const unexpected = unexpectedMember(
      policy,
      new Set(['healthyRetryPolicy', 'throttlePolicy', 'requestPolicy']),
    );
    if (unexpected) return unexpected;
    return (
      (policy.healthyRetryPolicy === undefined
        ? undefined
        : checkRetryPolicy('healthyRetryPolicy', policy.healthyRetryPolicy)) ??
      (policy.throttlePolicy === undefined
        ? undefined
        : checkThrottlePolicy('throttlePolicy', policy.throttlePolicy)) ??
      (policy.requestPolicy === undefined
        ? undefined
        : checkRequestPolicy('requestPolicy', policy.requestPolicy))
    );
  }
  const http = policy.http;
  if (http === undefined) return undefined;
  if (!isObject(http)) return 'http must be a JSON object';
  const unexpected = unexpectedMember(
    http,
    new Set([
      'defaultHealthyRetryPolicy',
      'disableSubscriptionOverrides',
      'defaultThrottlePolicy',
      'defaultRequestPolicy',
    ]),
  );
  if (unexpected) return unexpected;
  if (
    http.disableSubscriptionOverrides !== undefined &&
    typeof http.disableSubscriptionOverrides !== 'boolean'
  )
    return 'http.disableSubscriptionOverrides must be a boolean';
  return (
    (http.defaultHealthyRetryPolicy === undefined
      ? undefined
      : checkRetryPolicy('http.defaultHealthyRetryPolicy', http.defaultHealthyRetryPolicy)) ??
    (http.defaultThrottlePolicy === undefined
      ? undefined
      : checkThrottlePolicy('http.defaultThrottlePolicy', http.defaultThrottlePolicy)) ??
    (http.defaultRequestPolicy === undefined
      ? undefined
      : checkRequestPolicy('http.defaultRequestPolicy', http.defaultRequestPolicy))
  );
}

/**
 * Seconds to wait before retry number `retry` (1 for the first retry), or undefined once the policy's retries
 * are spent. AWS's four phases in order: `numNoDelayRetries` at once, `numMinDelayRetries` at
 * `minDelayTarget`, the backoff phase (the retries left) rising from `minDelayTarget` to `maxDelayTarget` by
 * the backoff function, then `numMaxDelayRetries` at `maxDelayTarget`.
 */
export function retryDelaySeconds(policy: RetryPolicy, retry: number): number | undefined {
  if (retry < 1 || retry > policy.numRetries) return undefined;
  const min = Math.min(policy.minDelayTarget, policy.maxDelayTarget);
  const max = policy.maxDelayTarget;
  const immediate = policy.numNoDelayRetries;
  const preBackoff = policy.numMinDelayRetries;
  const postBackoff = policy.numMaxDelayRetries;
  const backoff = Math.max(0, policy.numRetries - immediate - preBackoff - postBackoff);
  if (retry <= immediate) return 0;
  if (retry <= immediate + preBackoff) return min;
  const step = retry - immediate - preBackoff;
  if (step > backoff) return max;
  return Math.round(min + (max - min) * backoffFraction(policy.backoffFunction, step, backoff));
}

/** How far along from the minimum to the maximum delay the backoff phase's `step`th retry (of `steps`) is. */
function backoffFraction(fn: BackoffFunction, step: number, steps: number): number {
  const t = step / steps;
  switch (fn) {
    case 'linear':
      return t;
    case 'arithmetic':
      return (step * (step + 1)) / (steps * (steps + 1));
    case 'geometric':
      return (2 ** step - 1) / (2 ** steps - 1);
    case 'exponential':
      return (10 ** t - 1) / 9;
  }
}

/** The server's side of HTTP/HTTPS subscribers, which the core asks (server/sns-http-delivery.ts). */
export interface EndpointGateway {
  /** Why deliveries to `endpoint` are refused (an address the server will not reach), or undefined. */
  refusal(endpoint: string): Promise<string | undefined>;
  /** POSTs a confirmation at once, once (not stored: a lost one is asked again by subscribing again). */
  sendConfirmation(endpoint: string, headers: Record<string, string>, body: string): void;
  /** A publication's endpoint deliveries were stored: the worker may look sooner. */
  wake(): void;
}
