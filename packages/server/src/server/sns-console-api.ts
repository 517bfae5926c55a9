import { errors, SqsError } from '../core/errors.ts';
import {
  compileFilterPolicy,
  FilterPolicyError,
  type FilterPolicyScope,
  parseFilterPolicyScope,
  type SnsMessageAttribute,
  SnsPublication,
} from '../core/event-filter/index.ts';
import { isJsonObject, parseJsonObject } from '../shared/json-object.ts';
import type { TopicStore } from '../store/contract.ts';
import { queuePolicyAllowsTopic } from './auth/queue-policy.ts';
import { json } from './console-api.ts';
import { type ConsoleChange, errorPage, type Page, type PageViewer } from './page.ts';

/** POST /api/sns/filter-test: what the console's policy tester sends, one subscription's policy at a time. */
export interface FilterTestRequest {
  /** The subscription's FilterPolicy; empty or absent: no policy. */
  filterPolicy?: string;
  /** MessageAttributes (the default) or MessageBody. */
  filterPolicyScope?: string;
  /** The message as it would be published. */
  message: string;
  /** The message attributes as Publish takes them. */
  messageAttributes?: Record<string, SnsMessageAttribute>;
}

export interface FilterTestAnswer {
  matches: boolean;
  /** Why, in a sentence. */
  reason: string;
  /** The policy's top-level keys that, alone, refuse the message (empty when it matches). */
  failingKeys: string[];
}

/** POST /api/sns/queue-policy-check: a queue's Policy (as the page read it), the queue and the topic. */
export interface QueuePolicyCheckRequest {
  policy?: string;
  queueArn: string;
  topicArn: string;
}

export interface QueuePolicyCheckAnswer {
  /** Whether AWS would deliver the topic's messages into the queue. */
  allows: boolean;
}

/**
 * The console's SNS helpers, each through the code deliveries use: the filter-policy tester (the matcher of
 * core/event-filter/sns-filter-policy.ts: whether a message and its attributes pass a policy, and if not,
 * which of the policy's keys refuse it), and the queue-policy check (auth/queue-policy.ts: whether AWS would
 * deliver a topic into a queue). Each works on what the page sends, read under the signed-in key's rights, and
 * reads no topic or queue itself, so it needs no access beyond the console's.
 */
export function snsConsoleApi(): Record<string, ConsoleChange> {
  return {
    '/api/sns/filter-test': async (body) =>
      answered(() => testFilterPolicy(requestOf(body)) satisfies FilterTestAnswer),
    '/api/sns/queue-policy-check': async (body) =>
      answered(() => {
        const { policy, queueArn, topicArn } = policyCheckOf(body);
        return {
          allows: queuePolicyAllowsTopic(policy, queueArn, topicArn),
        } satisfies QueuePolicyCheckAnswer;
      }),
  };
}

/** GET /api/sns/subscriptions?queue=NAME: the SNS subscriptions delivering into a queue (`sluice stats`). */
export interface QueueSubscriptionsAnswer {
  queue: string;
  subscriptions: Array<{
    subscriptionArn: string;
    topic: string;
    filterPolicy: string | undefined;
    rawMessageDelivery: boolean;
    /** False when the queue's policy does not allow the topic: AWS would deliver nothing. */
    awsWouldDeliver: boolean;
  }>;
}

/** What the subscriptions page reads: the store's subscriptions, and the queue's ARN and policy. */
export interface QueueSubscriptionReads {
  listSubscriptions: TopicStore['listSubscriptions'];
  queueArn(name: string): string;
  queuePolicy(name: string): Promise<string | undefined>;
}

/**
 * The subscriptions into a queue the viewer may read, of topics it may see (a key's name patterns match topic
 * names, as for SNS's own actions), each marked when AWS would deliver nothing (the check --strict-policies
 * uses).
 */
export function snsConsolePages(
  reads: QueueSubscriptionReads,
): Record<string, (url: URL, viewer: PageViewer) => Promise<Page>> {
  return {
    '/api/sns/subscriptions': async (url, viewer) => {
      const queue = url.searchParams.get('queue');
      if (!queue) return json({ error: 'queue is required' }, 400);
      if (!(await viewer.mayRead(queue)))
        return json({ error: `${viewer.accessKeyId} may not read ${queue}` }, 403);
      const queueArn = reads.queueArn(queue);
      const policy = await reads.queuePolicy(queue);
      const subscriptions: QueueSubscriptionsAnswer['subscriptions'] = [];
      for (let after: string | undefined; ; ) {
        const page = await reads.listSubscriptions({ afterArn: after, limit: 1000 });
        for (const subscription of page) {
          if (subscription.protocol !== 'sqs' || subscription.endpoint !== queueArn) continue;
          if (!(await viewer.mayRead(subscription.topicName))) continue;
          const topicArn = subscription.arn.slice(0, subscription.arn.lastIndexOf(':'));
          subscriptions.push({
            subscriptionArn: subscription.arn,
            topic: subscription.topicName,
            filterPolicy: subscription.attributes.FilterPolicy || undefined,
            rawMessageDelivery: subscription.attributes.RawMessageDelivery === 'true',
            awsWouldDeliver: queuePolicyAllowsTopic(policy, queueArn, topicArn),
          });
        }
        if (page.length < 1000) break;
        after = page.at(-1)?.arn;
      }
      return json({ queue, subscriptions } satisfies QueueSubscriptionsAnswer);
    },
  };
}

/** The answer as JSON, or the SQS-shaped error a bad request gets. */
function answered(answer: () => unknown): Page {
  try {
    return json(answer());
  } catch (error) {
    if (error instanceof SqsError) return errorPage(error);
    throw error;
  }
}

function policyCheckOf(body: string): QueuePolicyCheckRequest {
  const input = parseJsonObject(body);
  if (!input || typeof input.queueArn !== 'string' || typeof input.topicArn !== 'string')
    throw errors.invalidParameterValue(
      'The body must be a JSON object with "queueArn" and "topicArn" strings.',
    );
  if (input.policy !== undefined && typeof input.policy !== 'string')
    throw errors.invalidParameterValue('"policy" must be the queue\'s Policy attribute, a string.');
  return { policy: input.policy || undefined, queueArn: input.queueArn, topicArn: input.topicArn };
}

function requestOf(body: string): FilterTestRequest {
  const input = parseJsonObject(body);
  if (!input || typeof input.message !== 'string')
    throw errors.invalidParameterValue('The body must be a JSON object with a "message" string.');
  const { filterPolicy, filterPolicyScope, messageAttributes } = input;
  if (filterPolicy !== undefined && typeof filterPolicy !== 'string')
    throw errors.invalidParameterValue('"filterPolicy" must be the policy as a string of JSON.');
  if (filterPolicyScope !== undefined && typeof filterPolicyScope !== 'string')
    throw errors.invalidParameterValue('"filterPolicyScope" must be MessageAttributes or MessageBody.');
  const attributes: Record<string, SnsMessageAttribute> = {};
  if (messageAttributes !== undefined) {
    if (!isJsonObject(messageAttributes))
      throw errors.invalidParameterValue('"messageAttributes" must be an object of {DataType, StringValue}.');
    for (const [name, value] of Object.entries(messageAttributes)) {
      if (!isJsonObject(value) || typeof value.DataType !== 'string')
        throw errors.invalidParameterValue(`Message attribute ${name} must be {"DataType", "StringValue"}.`);
      if (value.StringValue !== undefined && typeof value.StringValue !== 'string')
        throw errors.invalidParameterValue(`Message attribute ${name}'s StringValue must be a string.`);
      attributes[name] = { DataType: value.DataType, StringValue: value.StringValue };
    }
  }
  return { filterPolicy, filterPolicyScope, message: input.message, messageAttributes: attributes };
}

export function testFilterPolicy(request: FilterTestRequest): FilterTestAnswer {
  const text = request.filterPolicy ?? '';
  let scope: FilterPolicyScope;
  let policy: ReturnType<typeof compileFilterPolicy>;
  try {
    scope = parseFilterPolicyScope(request.filterPolicyScope || 'MessageAttributes');
    policy = text.trim() === '' ? undefined : compileFilterPolicy(text, scope);
  } catch (error) {
    if (error instanceof FilterPolicyError) throw errors.invalidParameterValue(error.message);
    throw error;
  }
  if (policy === undefined)
    return {
      matches: true,
      reason: 'No filter policy: every message reaches the subscription.',
      failingKeys: [],
    };
  const publication = new SnsPublication(
    request.message,
    new Map(Object.entries(request.messageAttributes ?? {})),
  );
  if (policy.matches(publication))
    return { matches: true, reason: 'The filter policy matches the message.', failingKeys: [] };
  if (scope === 'MessageBody' && publication.bodyLeaves() === null)
    return {
      matches: false,
      reason: 'The message body is not a JSON object, so no MessageBody policy matches it.',
      failingKeys: [],
    };
  const failingKeys = keysRefusing(text, scope, publication);
  const what = scope === 'MessageBody' ? 'body field' : 'attribute';
  return {
    matches: false,
    reason:
      failingKeys.length > 0
        ? `Filtered out: the ${what}${failingKeys.length > 1 ? 's' : ''} ${failingKeys.join(', ')} ${failingKeys.length > 1 ? 'do' : 'does'} not match the policy.`
        : 'Filtered out: each key matches on its own, but not together (an $or or a combination).',
    failingKeys,
  };
}

/** The top-level keys (`$or` aside) whose rule alone refuses the message: the policy's keys are ANDed. */
function keysRefusing(text: string, scope: FilterPolicyScope, publication: SnsPublication): string[] {
  const policy = parseJsonObject(text);
  if (!policy) return [];
  return Object.entries(policy)
    .filter(([key]) => key !== '$or')
    .filter(([key, rule]) => {
      try {
        return compileFilterPolicy(JSON.stringify({ [key]: rule }), scope)?.matches(publication) === false;
      } catch {
        return false;
      }
    })
    .map(([key]) => key);
}
