import { randomBytes, randomUUID } from 'node:crypto';
import { parseQueueArn } from '#toolkit/arn';
import type { Clock } from '#toolkit/clock';
import type { QueueRecord, SubscriptionRecord, TopicRecord, TopicStore } from '../../store/contract.ts';
import type { EmptyOutput } from '../api-types.ts';
import { SqsError } from '../errors.ts';
import { sequenceNumberOf } from '../fifo.ts';
import type { QueueDirectory } from '../queue-directory.ts';
import type { CallerScope } from '../queue-reference.ts';
import type { RequestContext } from '../request-context.ts';
import type { SendActions } from '../send-actions.ts';
import type { NotificationSigner } from './envelope.ts';
import { FanOut } from './fan-out.ts';
import {
  type Confirmation,
  confirmationBody,
  confirmationStringToSign,
  type EndpointGateway,
  endpointHeaders,
} from './http-endpoints.ts';
import { checkBatch, checkPublication } from './publish-input.ts';
import { SnsActivity } from './sns-activity.ts';
import type {
  AddPermissionInput,
  ConfirmSubscriptionInput,
  ConfirmSubscriptionResponse,
  CreateTopicInput,
  CreateTopicResponse,
  DeleteTopicInput,
  GetSubscriptionAttributesInput,
  GetSubscriptionAttributesResponse,
  GetTopicAttributesInput,
  GetTopicAttributesResponse,
  ListSubscriptionsByTopicInput,
  ListSubscriptionsByTopicResponse,
  ListSubscriptionsInput,
  ListSubscriptionsResponse,
  ListTagsForResourceRequest,
  ListTagsForResourceResponse,
  ListTopicsInput,
  ListTopicsResponse,
  PublishBatchInput,
  PublishBatchResponse,
  PublishBatchResultEntry,
  PublishInput,
  PublishResponse,
  RemovePermissionInput,
  SetSubscriptionAttributesInput,
  SetTopicAttributesInput,
  SnsActionInputs,
  SnsActionName,
  SnsActionOutputs,
  SubscribeInput,
  SubscribeResponse,
  Tag,
  TagResourceRequest,
  UnsubscribeInput,
  UntagResourceRequest,
} from './sns-api-types.ts';
import { snsErrors } from './sns-errors.ts';
import { checkSubscriptionArn, checkTopicName, type SnsScope, topicArnOf, topicNameOf } from './sns-names.ts';
import {
  AUTHENTICATED,
  CONFIRMATION_TOKEN,
  checkSubscriptionAttributes,
  clientAttributes,
  isPending,
  PENDING,
  reportedSubscriptionAttributes,
} from './subscription-attributes.ts';
import {
  asksForFifo,
  checkTopicAttributes,
  reportedTopicAttributes,
  sameAttributes,
} from './topic-attributes.ts';
import { withoutTopicPermission, withTopicPermission } from './topic-policy.ts';

/** A page of ListTopics, ListSubscriptions and ListSubscriptionsByTopic (SNS API reference). */
const PAGE = 100;
/** An HTTP/HTTPS subscription not confirmed within this time is deleted (AWS: 3 days). */
export const CONFIRMATION_EXPIRY_MS = 3 * 24 * 60 * 60 * 1000;
/** A call from the server itself (the config file): no client, no caller's key. */
const NO_CONTEXT: RequestContext = { baseUrl: '', senderId: '' };
/** Protocols SNS knows and Sluice does not deliver to (yet). */
const KNOWN_PROTOCOLS = new Set(['email', 'email-json', 'sms', 'application', 'lambda', 'firehose']);

export interface SnsServiceOptions {
  store: TopicStore;
  clock: Clock;
  scope: SnsScope;
  /** The SQS side: queues by ARN, and a send's checks and wake-ups for each delivery. */
  queues: QueueDirectory;
  deliveries: Pick<SendActions, 'prepareDelivery' | 'delivered'>;
  signer: NotificationSigner;
  /** Told of deliveries that could not be made (no dead-letter queue took them). */
  warn?: (details: Record<string, unknown>, message: string) => void;
  /**
   * Whether the queue's policy lets the topic deliver into it, as AWS requires (server/auth/queue-policy.ts);
   * every queue lets it when absent.
   */
  queueAllows?: (queue: QueueRecord, topicArn: string) => boolean;
  /** `--strict-policies`: refuse those deliveries as AWS does; otherwise deliver, and log a warning once. */
  strictPolicies?: boolean;
  /** HTTP/HTTPS subscribers: refused without it. */
  endpoints?: EndpointGateway;
}

/** Every SNS action Sluice serves, with its typed input and output. */
export type SnsActions = {
  [Action in SupportedSnsAction]: (
    input: SnsActionInputs[Action],
    context: RequestContext,
  ) => Promise<SnsActionOutputs[Action]>;
};

export const SUPPORTED_SNS_ACTIONS = [
  'CreateTopic',
  'DeleteTopic',
  'ListTopics',
  'GetTopicAttributes',
  'SetTopicAttributes',
  'Subscribe',
  'ConfirmSubscription',
  'Unsubscribe',
  'GetSubscriptionAttributes',
  'SetSubscriptionAttributes',
  'ListSubscriptions',
  'ListSubscriptionsByTopic',
  'Publish',
  'PublishBatch',
  'TagResource',
  'UntagResource',
  'ListTagsForResource',
  'AddPermission',
  'RemovePermission',
] as const satisfies readonly SnsActionName[];

export type SupportedSnsAction = (typeof SUPPORTED_SNS_ACTIONS)[number];

/**
 * SNS topics that deliver into this server's queues: each public method is one action. A publication is
 * answered once its deliveries into every matching subscription's queue are committed, in one transaction
 * of the store (docs/decisions/sns-topics.md).
 */
export class SnsService implements SnsActions {
  readonly activity = new SnsActivity();
  private readonly store: TopicStore;
  private readonly clock: Clock;
  private readonly scope: SnsScope;
  private readonly queues: QueueDirectory;
  private readonly signer: NotificationSigner;
  private readonly endpoints: EndpointGateway | undefined;
  private readonly fanOut: FanOut;

  constructor(options: SnsServiceOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.scope = options.scope;
    this.queues = options.queues;
    this.signer = options.signer;
    this.endpoints = options.endpoints;
    this.fanOut = new FanOut({
      ...options,
      activity: this.activity,
      warn: options.warn ?? (() => {}),
      queueAllows: options.queueAllows ?? (() => true),
      strictPolicies: options.strictPolicies ?? false,
      endpoints: options.endpoints,
    });
  }

  // ---- Topics ------------------------------------------------------------------------------------------

  async CreateTopic(input: CreateTopicInput, caller: CallerScope = {}): Promise<CreateTopicResponse> {
    if (input.DataProtectionPolicy !== undefined)
      throw snsErrors.unsupported('CreateTopic with a DataProtectionPolicy');
    const fifo = asksForFifo(input.Attributes);
    const name = checkTopicName(input.Name, fifo);
    const attributes = checkTopicAttributes(input.Attributes ?? {}, fifo, true);
    const tags = tagMap(input.Tags);
    this.authorize(caller, { name, attributes });
    const topic = await this.store.createTopic({ name, fifo, attributes, tags, now: this.clock.now() });
    if (!sameAttributes(topic.attributes, attributes)) {
      throw snsErrors.invalidParameter('Attributes Reason: Topic already exists with different attributes');
    }
    if (input.Tags !== undefined && !sameAttributes(topic.tags, tags)) {
      throw snsErrors.invalidParameter('Tags Reason: Topic already exists with different tags');
    }
    return { TopicArn: topicArnOf(this.scope, name) };
  }

  async DeleteTopic(input: DeleteTopicInput, caller: CallerScope = {}): Promise<EmptyOutput> {
    // SNS answers success for a topic that does not exist; the key must still be allowed the topic.
    const name = topicNameOf(this.scope, input.TopicArn);
    const topic = await this.store.getTopic(name);
    this.authorize(caller, topic ?? { name, attributes: {} });
    await this.store.deleteTopic(name);
    return {};
  }

  async ListTopics(input: ListTopicsInput, caller: CallerScope = {}): Promise<ListTopicsResponse> {
    const topics = await this.store.listTopics({ afterName: pageToken(input.NextToken), limit: PAGE + 1 });
    // A page may show fewer topics than PAGE when the caller's key may not see some (as ListQueues).
    const page = topics
      .slice(0, PAGE)
      .filter((topic) => caller.access?.allows(this.resourceOf(topic)) ?? true);
    const output: ListTopicsResponse = {
      Topics: page.map((topic) => ({ TopicArn: topicArnOf(this.scope, topic.name) })),
    };
    if (topics.length > PAGE) output.NextToken = nextToken(topics[PAGE - 1]!.name);
    return output;
  }

  async GetTopicAttributes(
    input: GetTopicAttributesInput,
    caller: CallerScope = {},
  ): Promise<GetTopicAttributesResponse> {
    const topic = await this.topic(input.TopicArn, caller);
    const subscriptions = await this.subscriptionsOf(topic.name);
    return { Attributes: reportedTopicAttributes(this.scope, topic, subscriptions.length) };
  }

  async SetTopicAttributes(input: SetTopicAttributesInput, caller: CallerScope = {}): Promise<EmptyOutput> {
    const topic = await this.topic(input.TopicArn, caller);
    const name = input.AttributeName;
    if (name === undefined || name === '') throw snsErrors.invalidParameter('AttributeName');
    if (name === 'FifoTopic') throw snsErrors.invalidParameter('AttributeName: FifoTopic cannot be changed');
    const changed = checkTopicAttributes({ [name]: input.AttributeValue ?? '' }, topic.fifo, false);
    await this.store.updateTopic(topic.name, { attributes: { ...topic.attributes, ...changed } });
    return {};
  }

  async AddPermission(input: AddPermissionInput, caller: CallerScope = {}): Promise<EmptyOutput> {
    const topic = await this.topic(input.TopicArn, caller);
    const policy = withTopicPermission(
      topic.attributes.Policy,
      {
        label: input.Label,
        accounts: input.AWSAccountId ?? [],
        actions: input.ActionName ?? [],
        topicArn: topicArnOf(this.scope, topic.name),
      },
      this.scope,
    );
    await this.store.updateTopic(topic.name, { attributes: { ...topic.attributes, Policy: policy } });
    return {};
  }

  async RemovePermission(input: RemovePermissionInput, caller: CallerScope = {}): Promise<EmptyOutput> {
    const topic = await this.topic(input.TopicArn, caller);
    if (input.Label === undefined || input.Label === '') throw snsErrors.invalidParameter('Label');
    const policy = withoutTopicPermission(topic.attributes.Policy, input.Label);
    if (policy !== topic.attributes.Policy) {
      const attributes = { ...topic.attributes };
      if (policy === undefined) delete attributes.Policy;
      else attributes.Policy = policy;
      await this.store.updateTopic(topic.name, { attributes });
    }
    return {};
  }

  // ---- Tags --------------------------------------------------------------------------------------------

  async TagResource(input: TagResourceRequest, caller: CallerScope = {}): Promise<EmptyOutput> {
    const topic = await this.taggedTopic(input.ResourceArn, caller);
    const tags = { ...topic.tags, ...tagMap(input.Tags) };
    if (Object.keys(tags).length > 50) {
      throw new SqsError(
        'SnsInvalidParameter',
        'Could not complete request: tag quota of per resource exceeded',
      );
    }
    await this.store.updateTopic(topic.name, { tags });
    return {};
  }

  async UntagResource(input: UntagResourceRequest, caller: CallerScope = {}): Promise<EmptyOutput> {
    const topic = await this.taggedTopic(input.ResourceArn, caller);
    const tags = { ...topic.tags };
    for (const key of input.TagKeys ?? []) delete tags[key];
    await this.store.updateTopic(topic.name, { tags });
    return {};
  }

  async ListTagsForResource(
    input: ListTagsForResourceRequest,
    caller: CallerScope = {},
  ): Promise<ListTagsForResourceResponse> {
    const topic = await this.taggedTopic(input.ResourceArn, caller);
    return { Tags: Object.entries(topic.tags).map(([Key, Value]) => ({ Key, Value })) };
  }

  // ---- Subscriptions -----------------------------------------------------------------------------------

  async Subscribe(input: SubscribeInput, context: RequestContext = NO_CONTEXT): Promise<SubscribeResponse> {
    const caller: CallerScope = context;
    const topic = await this.topic(input.TopicArn, caller);
    const protocol = input.Protocol;
    if (protocol === undefined || protocol === '') throw snsErrors.invalidParameter('Protocol');
    if (protocol === 'http' || protocol === 'https')
      return this.subscribeEndpoint(topic, input, protocol, context);
    if (protocol !== 'sqs') {
      if (KNOWN_PROTOCOLS.has(protocol)) {
        throw snsErrors.invalidParameter(
          `Protocol Reason: Sluice delivers to sqs, http and https subscriptions; ${protocol} subscriptions are not supported`,
        );
      }
      throw snsErrors.invalidParameter(`Amazon SNS does not support this protocol string: ${protocol}`);
    }
    const endpoint = input.Endpoint;
    const queueArn = endpoint === undefined ? undefined : parseQueueArn(endpoint);
    if (queueArn === undefined) throw snsErrors.invalidParameter('SQS endpoint ARN');
    if (!topic.fifo && queueArn.name.endsWith('.fifo')) {
      throw snsErrors.invalidParameter(
        'Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics',
      );
    }
    const attributes = checkSubscriptionAttributes({}, input.Attributes ?? {}, 'Subscribe');
    const topicArn = topicArnOf(this.scope, topic.name);
    const subscription = await this.store.createSubscription({
      arn: `${topicArn}:${randomUUID()}`,
      topicName: topic.name,
      protocol,
      endpoint: endpoint!,
      owner: this.scope.accountId,
      attributes,
      now: this.clock.now(),
    });
    if (subscription === undefined) throw snsErrors.topicNotFound();
    checkSameAttributes(subscription, attributes);
    // An SQS subscription needs no confirmation: its ARN is answered whatever ReturnSubscriptionArn says.
    return { SubscriptionArn: subscription.arn };
  }

  /**
   * An HTTP/HTTPS subscription: pending until the endpoint confirms with the token the SubscriptionConfirmation
   * POST carries (ConfirmSubscription, or a GET of its SubscribeURL). Subscribing the same endpoint again sends
   * a new confirmation while it is pending; a confirmed one is answered as it is.
   */
  private async subscribeEndpoint(
    topic: TopicRecord,
    input: SubscribeInput,
    protocol: 'http' | 'https',
    context: RequestContext,
  ): Promise<SubscribeResponse> {
    const endpoints = this.endpoints;
    if (endpoints === undefined)
      throw snsErrors.invalidParameter(
        `Protocol Reason: ${protocol} subscriptions are turned off on this server`,
      );
    if (topic.fifo)
      throw snsErrors.invalidParameter(
        `Invalid protocol type: ${protocol} Reason: FIFO topics deliver to SQS queues only`,
      );
    const endpoint = input.Endpoint ?? '';
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      url = undefined;
    }
    if (url === undefined || url.protocol !== `${protocol}:` || url.hostname === '')
      throw snsErrors.invalidParameter('Endpoint must match the specified protocol');
    const refusal = await endpoints.refusal(endpoint);
    if (refusal !== undefined) throw snsErrors.invalidParameter(`Endpoint Reason: ${refusal}`);
    const attributes = checkSubscriptionAttributes({}, input.Attributes ?? {}, 'Subscribe');
    const topicArn = topicArnOf(this.scope, topic.name);
    const token = randomBytes(64).toString('hex');
    const subscription = await this.store.createSubscription({
      arn: `${topicArn}:${randomUUID()}`,
      topicName: topic.name,
      protocol,
      endpoint,
      owner: this.scope.accountId,
      attributes: { ...attributes, [CONFIRMATION_TOKEN]: token, [PENDING]: 'true' },
      now: this.clock.now(),
    });
    if (subscription === undefined) throw snsErrors.topicNotFound();
    checkSameAttributes(subscription, attributes);
    if (!isPending(subscription)) return { SubscriptionArn: subscription.arn };
    await this.sendConfirmation('SubscriptionConfirmation', topic, subscription, context);
    return {
      SubscriptionArn: input.ReturnSubscriptionArn === true ? subscription.arn : 'pending confirmation',
    };
  }

  /** POSTs a signed SubscriptionConfirmation or UnsubscribeConfirmation to the subscription's endpoint. */
  private async sendConfirmation(
    type: Confirmation['type'],
    topic: TopicRecord,
    subscription: SubscriptionRecord,
    context: RequestContext,
  ): Promise<void> {
    const topicArn = topicArnOf(this.scope, topic.name);
    const token = subscription.attributes[CONFIRMATION_TOKEN] ?? '';
    const confirmation: Confirmation = {
      type,
      messageId: randomUUID(),
      token,
      topicArn,
      subscriptionArn: subscription.arn,
      subscribeUrl: `${context.baseUrl}/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topicArn)}&Token=${token}`,
      timestamp: new Date(this.clock.now()).toISOString(),
    };
    const version = topic.attributes.SignatureVersion === '2' ? '2' : '1';
    const body = confirmationBody(confirmation, {
      version,
      signature: await this.signer.sign(confirmationStringToSign(confirmation), version),
      certificateUrl: await this.signer.certificateUrl(context.baseUrl),
    });
    const headers = endpointHeaders({
      type,
      messageId: confirmation.messageId,
      topicArn,
      subscriptionArn: type === 'SubscriptionConfirmation' ? undefined : subscription.arn,
      raw: false,
    });
    this.endpoints?.sendConfirmation(subscription.endpoint, headers, body);
  }

  /**
   * Confirms the topic's subscription whose confirmation carried `Token`; SNS's answer to a GET of the
   * SubscribeURL too. A token is good until the subscription expires unconfirmed, and again after.
   */
  async ConfirmSubscription(
    input: ConfirmSubscriptionInput,
    caller: CallerScope & Pick<RequestContext, 'unauthenticated'> = {},
  ): Promise<ConfirmSubscriptionResponse> {
    const topic = await this.topic(input.TopicArn, caller);
    const token = input.Token;
    if (token === undefined || token === '') throw snsErrors.invalidParameter('Token');
    const subscription = (await this.subscriptionsOf(topic.name)).find(
      (candidate) => candidate.attributes[CONFIRMATION_TOKEN] === token,
    );
    if (subscription === undefined || this.expired(subscription)) throw snsErrors.invalidParameter('Token');
    if (isPending(subscription)) {
      const attributes: Record<string, string> = { ...subscription.attributes };
      delete attributes[PENDING];
      // AWS: it counts only on a signed request (an unsigned GET of SubscribeURL cannot ask for it).
      if (/^true$/i.test(input.AuthenticateOnUnsubscribe ?? '') && caller.unauthenticated !== true)
        attributes[AUTHENTICATED] = 'true';
      await this.store.updateSubscription(subscription.arn, attributes);
    }
    return { SubscriptionArn: subscription.arn };
  }

  /** A pending subscription past AWS's three days. */
  private expired(subscription: SubscriptionRecord): boolean {
    return isPending(subscription) && this.clock.now() - subscription.createdAt >= CONFIRMATION_EXPIRY_MS;
  }

  /** Deletes the HTTP/HTTPS subscriptions left unconfirmed three days; how many. */
  async expireUnconfirmed(): Promise<number> {
    let expired = 0;
    for (let after: string | undefined; ; ) {
      const page = await this.store.listSubscriptions({ afterArn: after, limit: 1000 });
      for (const subscription of page)
        if (this.expired(subscription) && (await this.store.deleteSubscription(subscription.arn))) expired++;
      if (page.length < 1000) return expired;
      after = page.at(-1)!.arn;
    }
  }

  async Unsubscribe(input: UnsubscribeInput, context: RequestContext = NO_CONTEXT): Promise<EmptyOutput> {
    const caller: CallerScope = context;
    checkSubscriptionArn(input.SubscriptionArn);
    if (
      caller.access !== undefined &&
      (await this.store.getSubscription(input.SubscriptionArn!)) !== undefined
    )
      await this.subscription(input.SubscriptionArn, caller);
    const subscription = await this.store.getSubscription(input.SubscriptionArn!);
    // AWS: a subscription confirmed with AuthenticateOnUnsubscribe, and any SQS subscription, is unsubscribed
    // only by a signed request of the topic's or the subscription's owner, never by the UnsubscribeURL alone.
    if (
      context.unauthenticated === true &&
      subscription !== undefined &&
      (subscription.protocol === 'sqs' || subscription.attributes[AUTHENTICATED] === 'true')
    )
      throw snsErrors.authorization(
        'Authorization error: this subscription requires an authenticated Unsubscribe (a signed request of the topic owner or the subscription owner)',
      );
    await this.store.deleteSubscription(input.SubscriptionArn!);
    if (subscription !== undefined && subscription.protocol !== 'sqs' && !isPending(subscription)) {
      const topic = await this.store.getTopic(subscription.topicName);
      if (topic !== undefined)
        await this.sendConfirmation('UnsubscribeConfirmation', topic, subscription, context);
    }
    return {};
  }

  async GetSubscriptionAttributes(
    input: GetSubscriptionAttributesInput,
    caller: CallerScope = {},
  ): Promise<GetSubscriptionAttributesResponse> {
    const subscription = await this.subscription(input.SubscriptionArn, caller);
    return {
      Attributes: reportedSubscriptionAttributes(
        subscription,
        topicArnOf(this.scope, subscription.topicName),
      ),
    };
  }

  async SetSubscriptionAttributes(
    input: SetSubscriptionAttributesInput,
    caller: CallerScope = {},
  ): Promise<EmptyOutput> {
    const subscription = await this.subscription(input.SubscriptionArn, caller);
    const name = input.AttributeName;
    if (name === undefined || name === '') throw snsErrors.invalidParameter('AttributeName');
    const attributes = checkSubscriptionAttributes(
      subscription.attributes,
      { [name]: input.AttributeValue ?? '' },
      'SetSubscriptionAttributes',
    );
    await this.store.updateSubscription(subscription.arn, attributes);
    return {};
  }

  async ListSubscriptions(
    input: ListSubscriptionsInput,
    caller: CallerScope = {},
  ): Promise<ListSubscriptionsResponse> {
    const page = await this.subscriptionPage(undefined, input.NextToken);
    if (caller.access === undefined) return page;
    // By the topic's ARN: a pending subscription's is listed as PendingConfirmation.
    const visible = (topicArn: string | undefined) =>
      caller.access!.allows({ name: topicArn!.split(':')[5]!, arn: topicArn!, policy: undefined });
    return { ...page, Subscriptions: page.Subscriptions?.filter((s) => visible(s.TopicArn)) };
  }

  async ListSubscriptionsByTopic(
    input: ListSubscriptionsByTopicInput,
    caller: CallerScope = {},
  ): Promise<ListSubscriptionsByTopicResponse> {
    const topic = await this.topic(input.TopicArn, caller);
    return this.subscriptionPage(topic.name, input.NextToken);
  }

  // ---- Publishing --------------------------------------------------------------------------------------

  async Publish(input: PublishInput, context: RequestContext): Promise<PublishResponse> {
    if (input.PhoneNumber !== undefined) throw snsErrors.unsupported('Publish to a phone number (SMS)');
    const arn = input.TopicArn ?? input.TargetArn;
    if (arn === undefined)
      throw snsErrors.invalidParameter('TopicArn or TargetArn Reason: no value for required parameter');
    if (input.TopicArn === undefined && /^arn:aws:sns:[^:]+:\d+:endpoint\//.test(arn)) {
      throw snsErrors.unsupported('Publish to a platform endpoint (mobile push)');
    }
    const topic = await this.topic(arn, context, input.TopicArn === undefined ? 'TargetArn' : 'TopicArn');
    const checked = checkPublication(topic, input);
    const [outcome] = await this.fanOut.publish(
      topic,
      await this.subscriptionsOf(topic.name),
      [checked],
      context,
    );
    const output: PublishResponse = { MessageId: outcome!.messageId };
    if (topic.fifo) output.SequenceNumber = sequenceNumberOf(outcome!.sequenceNumber);
    return output;
  }

  async PublishBatch(input: PublishBatchInput, context: RequestContext): Promise<PublishBatchResponse> {
    const topic = await this.topic(input.TopicArn, context);
    const { accepted, failed } = checkBatch(topic, input.PublishBatchRequestEntries ?? []);
    const outcomes =
      accepted.length === 0
        ? []
        : await this.fanOut.publish(
            topic,
            await this.subscriptionsOf(topic.name),
            accepted.map((entry) => entry.checked),
            context,
          );
    const successful: PublishBatchResultEntry[] = accepted.map(({ id }, index) => {
      const entry: PublishBatchResultEntry = { Id: id, MessageId: outcomes[index]!.messageId };
      if (topic.fifo) entry.SequenceNumber = sequenceNumberOf(outcomes[index]!.sequenceNumber);
      return entry;
    });
    return { Successful: successful, Failed: failed };
  }

  // ---- Look-ups ----------------------------------------------------------------------------------------

  /** The topic an ARN names, once the caller may run the request's action on it. */
  private async topic(
    arn: string | undefined,
    caller: CallerScope,
    parameter = 'TopicArn',
  ): Promise<TopicRecord> {
    const topic = await this.store.getTopic(topicNameOf(this.scope, arn, parameter));
    if (topic === undefined) throw snsErrors.topicNotFound();
    this.authorize(caller, topic);
    return topic;
  }

  /**
   * Access keys' patterns and other accounts' topic policies, as for queues: a topic is the resource SNS's
   * actions are authorized on. Refusals are SNS's AuthorizationError.
   */
  private authorize(caller: CallerScope, topic: Pick<TopicRecord, 'name' | 'attributes'>): void {
    if (caller.access === undefined) return;
    try {
      caller.access.require(this.resourceOf(topic));
    } catch (error) {
      if (error instanceof SqsError && error.code === 'AccessDenied')
        throw snsErrors.authorization(error.message.replace(' perform: sqs:', ' perform: SNS:'));
      throw error;
    }
  }

  private resourceOf(topic: Pick<TopicRecord, 'name' | 'attributes'>) {
    return { name: topic.name, arn: topicArnOf(this.scope, topic.name), policy: topic.attributes.Policy };
  }

  /** Tags are on topics only here (SNS also tags platform applications, which Sluice does not serve). */
  private async taggedTopic(arn: string | undefined, caller: CallerScope): Promise<TopicRecord> {
    try {
      return await this.topic(arn, caller, 'ResourceArn');
    } catch (error) {
      if (error instanceof SqsError && error.code === 'SnsNotFound') throw snsErrors.resourceNotFound();
      throw error;
    }
  }

  private async subscription(arn: string | undefined, caller: CallerScope): Promise<SubscriptionRecord> {
    checkSubscriptionArn(arn);
    const subscription = await this.store.getSubscription(arn!);
    if (subscription === undefined) throw snsErrors.subscriptionNotFound();
    if (caller.access !== undefined) {
      const topic = await this.store.getTopic(subscription.topicName);
      this.authorize(caller, topic ?? { name: subscription.topicName, attributes: {} });
    }
    return subscription;
  }

  /** All of a topic's subscriptions. */
  async subscriptionsOf(topicName: string): Promise<SubscriptionRecord[]> {
    const all: SubscriptionRecord[] = [];
    for (;;) {
      const page = await this.store.listSubscriptions({ topicName, afterArn: all.at(-1)?.arn, limit: 1000 });
      all.push(...page);
      if (page.length < 1000) return all;
    }
  }

  private async subscriptionPage(topicName: string | undefined, token: string | undefined) {
    const rows = await this.store.listSubscriptions({
      topicName,
      afterArn: pageToken(token),
      limit: PAGE + 1,
    });
    const page = rows.slice(0, PAGE);
    const output: ListSubscriptionsResponse = {
      Subscriptions: page.map((subscription) => ({
        SubscriptionArn: isPending(subscription) ? 'PendingConfirmation' : subscription.arn,
        Owner: subscription.owner,
        Protocol: subscription.protocol,
        Endpoint: subscription.endpoint,
        TopicArn: topicArnOf(this.scope, subscription.topicName),
      })),
    };
    if (rows.length > PAGE) output.NextToken = nextToken(page.at(-1)!.arn);
    return output;
  }
}

/** A repeated Subscribe must ask for the attributes the subscription has. */
function checkSameAttributes(subscription: SubscriptionRecord, attributes: Record<string, string>): void {
  const existing = clientAttributes(subscription.attributes);
  if (!sameAttributes(existing, attributes) || !sameAttributes(attributes, existing)) {
    throw snsErrors.invalidParameter(
      'Attributes Reason: Subscription already exists with different attributes',
    );
  }
}

function tagMap(tags: Tag[] | undefined): Record<string, string> {
  const map: Record<string, string> = {};
  for (const tag of tags ?? []) {
    if (tag.Key === undefined || tag.Key === '')
      throw snsErrors.invalidParameter('Tags Reason: A tag key is empty');
    map[tag.Key] = tag.Value ?? '';
  }
  return map;
}

/** Page tokens are the last name (or ARN) of the page before, base64url so clients treat them as opaque. */
const nextToken = (last: string) => Buffer.from(last).toString('base64url');

function pageToken(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined;
  const decoded = Buffer.from(token, 'base64url').toString();
  if (Buffer.from(decoded).toString('base64url') !== token) throw snsErrors.invalidParameter('NextToken');
  return decoded;
}
