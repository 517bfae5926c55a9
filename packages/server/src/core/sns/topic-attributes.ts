import type { TopicRecord } from '../../store/contract.ts';
import { deliveryPolicyProblem } from './http-endpoints.ts';
import { snsErrors } from './sns-errors.ts';
import { type SnsScope, topicArnOf } from './sns-names.ts';

/**
 * The topic attributes a client may set (CreateTopic, SetTopicAttributes), as the SNS API reference lists
 * them. Sluice keeps the delivery-status ones and DeliveryPolicy as given (it logs no deliveries to
 * CloudWatch, and SQS deliveries have no retry policy); FifoTopic is set at creation only.
 */
const SETTABLE = new Set([
  'DeliveryPolicy',
  'DisplayName',
  'Policy',
  'TracingConfig',
  'KmsMasterKeyId',
  'SignatureVersion',
  'ContentBasedDeduplication',
  'FifoThroughputScope',
  'ArchivePolicy',
  ...['HTTP', 'Firehose', 'Lambda', 'Application', 'SQS'].flatMap((endpoint) => [
    `${endpoint}SuccessFeedbackRoleArn`,
    `${endpoint}SuccessFeedbackSampleRate`,
    `${endpoint}FailureFeedbackRoleArn`,
  ]),
]);

const FIFO_ONLY = new Set(['ContentBasedDeduplication', 'FifoThroughputScope', 'ArchivePolicy']);

/** Whether CreateTopic asks for a FIFO topic (`FifoTopic`, case-insensitively true). */
export function asksForFifo(attributes: Record<string, string> | undefined): boolean {
  return attributes?.FifoTopic?.toLowerCase() === 'true';
}

/**
 * Checks the attributes for a topic and returns them as kept: values as given, booleans lower-cased.
 * `creating`: FifoTopic is allowed (CreateTopic).
 */
export function checkTopicAttributes(
  attributes: Record<string, string>,
  fifo: boolean,
  creating: boolean,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'FifoTopic' && creating) {
      if (!/^(true|false)$/i.test(value)) throw snsErrors.invalidParameter('Attributes Reason: FifoTopic');
      continue;
    }
    if (!SETTABLE.has(name))
      throw snsErrors.invalidParameter(creating ? 'Attributes Reason: Unknown attribute' : 'AttributeName');
    if (FIFO_ONLY.has(name) && !fifo) {
      throw snsErrors.invalidParameter(
        `${creating ? 'Attributes Reason: ' : ''}${name}: ${name} is only valid for FIFO Topics`,
      );
    }
    if (name === 'ContentBasedDeduplication') {
      if (!/^(true|false)$/i.test(value))
        throw snsErrors.invalidParameter(
          `ContentBasedDeduplication: Invalid value [${value}]. Must be true or false.`,
        );
      kept[name] = value.toLowerCase();
      continue;
    }
    if (name === 'FifoThroughputScope' && value !== 'Topic' && value !== 'MessageGroup') {
      throw snsErrors.invalidParameter(
        `FifoThroughputScope: Invalid value [${value}]. Please use either Topic or MessageGroup`,
      );
    }
    if ((name === 'Policy' || name === 'DeliveryPolicy') && value !== '') {
      const parsed = checkJsonObject(name, value);
      const problem = name === 'DeliveryPolicy' ? deliveryPolicyProblem('topic', parsed) : undefined;
      if (problem !== undefined) throw snsErrors.invalidParameter(`DeliveryPolicy: ${problem}`);
    }
    if (name === 'TracingConfig' && value !== 'PassThrough' && value !== 'Active') {
      throw snsErrors.invalidParameter(
        `TracingConfig: Invalid value [${value}]. Please use either PassThrough or Active`,
      );
    }
    if (name === 'SignatureVersion' && value !== '1' && value !== '2') {
      throw snsErrors.invalidParameter(
        `SignatureVersion: Invalid value [${value}]. Please use either 1 or 2`,
      );
    }
    kept[name] = value;
  }
  return kept;
}

function checkJsonObject(name: string, value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw snsErrors.invalidParameter(`${name}: failed to parse JSON.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw snsErrors.invalidParameter(`${name}: must be a JSON object.`);
  }
  return parsed as Record<string, unknown>;
}

/** The access policy SNS gives a new topic: the owner's account may do everything to it. */
export function defaultTopicPolicy(scope: SnsScope, name: string): string {
  const arn = topicArnOf(scope, name);
  return JSON.stringify({
    Version: '2008-10-17',
    Id: '__default_policy_ID',
    Statement: [
      {
        Sid: '__default_statement_ID',
        Effect: 'Allow',
        Principal: { AWS: '*' },
        Action: [
          'SNS:GetTopicAttributes',
          'SNS:SetTopicAttributes',
          'SNS:AddPermission',
          'SNS:RemovePermission',
          'SNS:DeleteTopic',
          'SNS:Subscribe',
          'SNS:ListSubscriptionsByTopic',
          'SNS:Publish',
        ],
        Resource: arn,
        Condition: { StringEquals: { 'AWS:SourceOwner': scope.accountId } },
      },
    ],
  });
}

/** The delivery policy SNS reports for a topic that sets none (AWS docs: 3 retries 20 s apart, linear). */
export const DEFAULT_EFFECTIVE_DELIVERY_POLICY = JSON.stringify({
  http: {
    defaultHealthyRetryPolicy: {
      minDelayTarget: 20,
      maxDelayTarget: 20,
      numRetries: 3,
      numMaxDelayRetries: 0,
      numNoDelayRetries: 0,
      numMinDelayRetries: 0,
      backoffFunction: 'linear',
    },
    disableSubscriptionOverrides: false,
    defaultRequestPolicy: { headerContentType: 'text/plain; charset=UTF-8' },
  },
});

/** What GetTopicAttributes answers: the kept attributes over SNS's defaults and counts. */
export function reportedTopicAttributes(
  scope: SnsScope,
  topic: TopicRecord,
  subscriptions: number,
): Record<string, string> {
  const reported: Record<string, string> = {
    Policy: defaultTopicPolicy(scope, topic.name),
    Owner: scope.accountId,
    SubscriptionsPending: '0',
    TopicArn: topicArnOf(scope, topic.name),
    EffectiveDeliveryPolicy: topic.attributes.DeliveryPolicy || DEFAULT_EFFECTIVE_DELIVERY_POLICY,
    SubscriptionsConfirmed: String(subscriptions),
    DisplayName: '',
    SubscriptionsDeleted: '0',
  };
  if (topic.fifo) {
    reported.FifoTopic = 'true';
    reported.ContentBasedDeduplication = 'false';
  }
  for (const [name, value] of Object.entries(topic.attributes)) {
    // An attribute set to '' is unset (SNS), but DisplayName, which SNS always reports.
    if (value === '' && name !== 'DisplayName') delete reported[name];
    else reported[name] = value;
  }
  if (reported.Policy === undefined) reported.Policy = defaultTopicPolicy(scope, topic.name);
  return reported;
}

/** Whether two CreateTopic calls ask for the same topic (SNS compares the attributes given). */
export function sameAttributes(kept: Record<string, string>, asked: Record<string, string>): boolean {
  return Object.entries(asked).every(([name, value]) => kept[name] === value);
}
