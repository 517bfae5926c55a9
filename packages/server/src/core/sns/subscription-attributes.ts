import { parseQueueArn } from '#toolkit/arn';
import type { SubscriptionRecord } from '../../store/contract.ts';
import {
  compileFilterPolicy,
  type FilterPolicyAction,
  FilterPolicyError,
  parseFilterPolicyScope,
  type SnsFilterPolicy,
} from '../event-filter/index.ts';
import { deliveryPolicyProblem } from './http-endpoints.ts';
import { snsErrors } from './sns-errors.ts';

/** The subscription attributes a client may set (Subscribe, SetSubscriptionAttributes). */
const SETTABLE = new Set([
  'DeliveryPolicy',
  'FilterPolicy',
  'FilterPolicyScope',
  'RawMessageDelivery',
  'RedrivePolicy',
  'SubscriptionRoleArn',
  'ReplayPolicy',
]);

/**
 * Checks `changes` against the subscription's current attributes and returns the attributes it will have:
 * SNS's errors for unknown names, bad booleans, a refused filter policy or redrive policy.
 */
export function checkSubscriptionAttributes(
  current: Record<string, string>,
  changes: Record<string, string>,
  action: FilterPolicyAction,
): Record<string, string> {
  const next = { ...current };
  for (const [name, value] of Object.entries(changes)) {
    if (!SETTABLE.has(name))
      throw snsErrors.invalidParameter(
        action === 'Subscribe' ? `Attributes Reason: Unknown attribute ${name}` : 'AttributeName',
      );
    if (name === 'RawMessageDelivery') {
      if (!/^(true|false)$/i.test(value))
        throw snsErrors.invalidParameter(
          `RawMessageDelivery: Invalid value [${value}]. Must be true or false.`,
        );
      next[name] = value.toLowerCase();
      continue;
    }
    if (name === 'RedrivePolicy' && value !== '') checkRedrivePolicy(value);
    if (name === 'DeliveryPolicy' && value !== '') checkDeliveryPolicy(value);
    if (value === '' && (name === 'FilterPolicy' || name === 'RedrivePolicy')) delete next[name];
    else next[name] = value;
  }
  try {
    if (changes.FilterPolicyScope !== undefined) parseFilterPolicyScope(changes.FilterPolicyScope);
    if (next.FilterPolicy !== undefined) filterPolicyOf(next);
  } catch (error) {
    if (error instanceof FilterPolicyError)
      throw snsErrors.invalidParameter(error.messageFor(action).replace(/^Invalid parameter: /, ''));
    throw error;
  }
  // SNS reports a scope once a policy is set, MessageAttributes unless chosen.
  if (next.FilterPolicy !== undefined && next.FilterPolicyScope === undefined)
    next.FilterPolicyScope = 'MessageAttributes';
  return next;
}

/** The subscription's filter policy, compiled; undefined when it filters nothing. */
export function filterPolicyOf(attributes: Record<string, string>): SnsFilterPolicy | undefined {
  const text = attributes.FilterPolicy;
  if (text === undefined) return undefined;
  return compileFilterPolicy(
    text,
    parseFilterPolicyScope(attributes.FilterPolicyScope ?? 'MessageAttributes'),
  );
}

/** A subscription's dead-letter queue's ARN, from its RedrivePolicy. */
export function deadLetterTargetOf(attributes: Record<string, string>): string | undefined {
  const text = attributes.RedrivePolicy;
  if (text === undefined) return undefined;
  const parsed = JSON.parse(text) as { deadLetterTargetArn?: unknown };
  return typeof parsed.deadLetterTargetArn === 'string' ? parsed.deadLetterTargetArn : undefined;
}

function checkDeliveryPolicy(text: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw snsErrors.invalidParameter('DeliveryPolicy: failed to parse JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw snsErrors.invalidParameter('DeliveryPolicy: must be a JSON object.');
  const problem = deliveryPolicyProblem('subscription', parsed as Record<string, unknown>);
  if (problem !== undefined) throw snsErrors.invalidParameter(`DeliveryPolicy: ${problem}`);
}

function checkRedrivePolicy(text: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw snsErrors.invalidParameter('RedrivePolicy: failed to parse JSON.');
  }
  const target = (parsed as { deadLetterTargetArn?: unknown } | null)?.deadLetterTargetArn;
  if (typeof target !== 'string' || parseQueueArn(target) === undefined) {
    throw snsErrors.invalidParameter('RedrivePolicy: deadLetterTargetArn is an invalid arn');
  }
}

/** Whether deliveries put the message itself on the queue rather than the JSON envelope. */
export function isRaw(attributes: Record<string, string>): boolean {
  return attributes.RawMessageDelivery === 'true';
}

/**
 * An HTTP/HTTPS subscription's confirmation state, kept among its stored attributes under names no client can
 * set (`sluice:` is no SNS attribute's prefix) and never reported: the token its confirmation carried, and
 * whether it is still pending, and whether ConfirmSubscription asked for AuthenticateOnUnsubscribe.
 */
export const CONFIRMATION_TOKEN = 'sluice:ConfirmationToken';
export const PENDING = 'sluice:PendingConfirmation';
export const AUTHENTICATED = 'sluice:AuthenticateOnUnsubscribe';

/** The attributes a client set (and compares on a repeated Subscribe), without the confirmation state. */
export function clientAttributes(attributes: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(attributes).filter(([name]) => !name.startsWith('sluice:')));
}

export const isPending = (subscription: SubscriptionRecord): boolean =>
  subscription.attributes[PENDING] === 'true';

/** What GetSubscriptionAttributes answers. */
export function reportedSubscriptionAttributes(
  subscription: SubscriptionRecord,
  topicArn: string,
): Record<string, string> {
  const queue = subscription.protocol === 'sqs';
  return {
    Owner: subscription.owner,
    RawMessageDelivery: 'false',
    TopicArn: topicArn,
    Endpoint: subscription.endpoint,
    Protocol: subscription.protocol,
    PendingConfirmation: isPending(subscription) ? 'true' : 'false',
    ConfirmationWasAuthenticated:
      queue || subscription.attributes[AUTHENTICATED] === 'true' ? 'true' : 'false',
    SubscriptionArn: subscription.arn,
    SubscriptionPrincipal: `arn:aws:iam::${subscription.owner}:root`,
    ...clientAttributes(subscription.attributes),
  };
}
