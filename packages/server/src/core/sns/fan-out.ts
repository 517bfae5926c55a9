/**
 * A topic's fan-out: each publication's deliveries into every matching subscription's queue (the queue's own
 * rules applied, else its dead-letter queue's) and to its HTTP/HTTPS endpoints, all stored in one transaction
 * of the store (docs/decisions/sns-topics.md).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '#toolkit/clock';
import type {
  NewEndpointDelivery,
  NewMessage,
  Publication,
  QueueDelivery,
  QueueRecord,
  SubscriptionRecord,
  TopicRecord,
  TopicStore,
} from '../../store/contract.ts';
import { SqsError } from '../errors.ts';
import { type SnsFilterPolicy, SnsPublication } from '../event-filter/index.ts';
import { sequenceNumberOf } from '../fifo.ts';
import { md5Hex } from '../message-attributes.ts';
import type { QueueDirectory } from '../queue-directory.ts';
import type { RequestContext } from '../request-context.ts';
import { DeliveryContent, type DeliverySender, type SendActions } from '../send-actions.ts';
import {
  type Notification,
  NotificationEnvelope,
  type NotificationSigner,
  notificationEnvelope,
  notificationStringToSign,
} from './envelope.ts';
import type { EndpointGateway } from './http-endpoints.ts';
import type { CheckedPublication } from './publish-input.ts';
import type { SnsActivity } from './sns-activity.ts';
import { snsErrors } from './sns-errors.ts';
import { type SnsScope, topicArnOf } from './sns-names.ts';
import { deadLetterTargetOf, filterPolicyOf, isPending, isRaw } from './subscription-attributes.ts';

/** SNS's FIFO deduplication interval. */
const DEDUPLICATION_WINDOW_MS = 5 * 60 * 1000;

export interface FanOutOptions {
  store: TopicStore;
  clock: Clock;
  scope: SnsScope;
  /** The SQS side: queues by ARN, and a send's checks and wake-ups for each delivery. */
  queues: QueueDirectory;
  deliveries: Pick<SendActions, 'prepareDelivery' | 'delivered'>;
  signer: NotificationSigner;
  /** Counts published, delivered, filtered out and failed, per topic and subscription. */
  activity: SnsActivity;
  /** Told of deliveries that could not be made (no dead-letter queue took them). */
  warn: (details: Record<string, unknown>, message: string) => void;
  /** Whether the queue's policy lets the topic deliver into it, as AWS requires. */
  queueAllows: (queue: QueueRecord, topicArn: string) => boolean;
  /** `--strict-policies`: refuse those deliveries as AWS does; otherwise deliver, and log a warning once. */
  strictPolicies: boolean;
  /** HTTP/HTTPS subscribers, woken when deliveries to them are stored. */
  endpoints: EndpointGateway | undefined;
}

/** Where one publication goes: a queue, with the subscription that sends it there. */
interface Route {
  subscription: SubscriptionRecord;
  queue: QueueRecord | undefined;
  deadLetter: QueueRecord | undefined;
  policy: SnsFilterPolicy | undefined;
  raw: boolean;
}

export class FanOut {
  private readonly store: TopicStore;
  private readonly clock: Clock;
  private readonly scope: SnsScope;
  private readonly queues: QueueDirectory;
  private readonly deliveries: FanOutOptions['deliveries'];
  private readonly signer: NotificationSigner;
  private readonly activity: SnsActivity;
  private readonly warn: FanOutOptions['warn'];
  private readonly queueAllows: FanOutOptions['queueAllows'];
  private readonly strictPolicies: boolean;
  private readonly endpoints: EndpointGateway | undefined;

  constructor(options: FanOutOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.scope = options.scope;
    this.queues = options.queues;
    this.deliveries = options.deliveries;
    this.signer = options.signer;
    this.activity = options.activity;
    this.warn = options.warn;
    this.queueAllows = options.queueAllows;
    this.strictPolicies = options.strictPolicies;
    this.endpoints = options.endpoints;
  }

  /**
   * Stores every publication's deliveries to `subscriptions` (the topic's) in one transaction and answers each one's id and sequence number.
   * A delivery the queue's own rules refuse (deleted queue, too large, too many attributes) goes to the
   * subscription's dead-letter queue, else it is dropped and counted, as SNS does.
   */
  async publish(
    topic: TopicRecord,
    subscriptions: SubscriptionRecord[],
    checked: CheckedPublication[],
    context: RequestContext,
  ) {
    const routes = await this.routesOf(topic, subscriptions);
    const endpointRoutes = subscriptions
      .filter((subscription) => subscription.protocol !== 'sqs' && !isPending(subscription))
      .map((subscription) => ({
        subscription,
        policy: this.policyOf(subscription),
        raw: isRaw(subscription.attributes),
      }));
    const topicArn = topicArnOf(this.scope, topic.name);
    // Deliveries are sent by the topic's account, with the publisher's trace header. Only those two are
    // taken: the transport's context makes some of its fields (an abort signal, an answer share) when read.
    const sender: DeliverySender = { senderId: this.scope.accountId, traceHeader: context.traceHeader };
    const now = this.clock.now();
    const timestamp = new Date(now).toISOString();
    const touched = new Map<number, { queue: QueueRecord; messages: NewMessage[] }>();
    const counts = {
      delivered: new Map<string, number>(),
      filtered: new Map<string, number>(),
      failed: new Map<string, number>(),
    };
    const version: '1' | '2' = topic.attributes.SignatureVersion === '2' ? '2' : '1';
    const certificateUrl = await this.signer.certificateUrl(context.baseUrl);
    // Only envelopes are signed: a topic whose subscriptions all take raw deliveries signs nothing.
    const signs = routes.some((route) => !route.raw);
    const unsubscribeUrls = routes.map((route) => unsubscribeUrlOf(context, route.subscription));
    const entries = checked.map((publication) => {
      const notification: Notification = {
        messageId: randomUUID(),
        topicArn,
        subject: publication.subject,
        message: publication.message,
        timestamp,
        attributes: publication.attributes,
        // The real number is known in the transaction; every one has 20 digits, so sizes do not change.
        sequenceNumber: topic.fifo ? sequenceNumberOf(0) : undefined,
      };
      const filterable = new SnsPublication(
        publication.message,
        new Map(Object.entries(publication.attributes)),
      );
      const endpoints = endpointRoutes.filter(
        (route) => route.policy === undefined || route.policy.matches(filterable),
      );
      return { publication, notification, filterable, endpoints };
    });
    // Signatures are made off the event loop and finish in any order: every entry is signed before any is
    // prepared, and entries are prepared in the batch's order, which each queue's order then keeps.
    const signatures = await Promise.all(
      entries.map(async ({ publication, notification, endpoints }) => {
        const texts = new Set(
          endpoints
            .filter((route) => !route.raw)
            .map((route) => endpointText(publication, route.subscription)),
        );
        // An endpoint given the queues' text shares their signature (RSA PKCS #1 v1.5 signs the same text
        // the same way), so it is made once.
        if (signs) texts.delete(notification.message);
        const [envelope, ...byText] = await Promise.all([
          signs ? this.signer.sign(notificationStringToSign(notification), version) : '',
          ...[...texts].map((text) =>
            this.signer.sign(notificationStringToSign({ ...notification, message: text }), version),
          ),
        ]);
        const signatureByText = new Map([...texts].map((text, index) => [text, byText[index]!]));
        if (signs) signatureByText.set(notification.message, envelope);
        return { envelope, byText: signatureByText };
      }),
    );
    const publications: Publication[] = entries.map(
      ({ publication, notification, filterable, endpoints }, index) => {
        const { messageId } = notification;
        const signing = { version, signature: signatures[index]!.envelope, certificateUrl };
        // What every subscription's delivery shares is written and checked once: the raw content, and the
        // envelope but for its UnsubscribeURL.
        let rawContent: DeliveryContent | undefined;
        let envelope: NotificationEnvelope | undefined;
        const planned: Array<{
          route: Route;
          queue: QueueRecord;
          unsubscribeUrl: string;
          message: NewMessage;
        }> = [];
        routes.forEach((route, routeIndex) => {
          const arn = route.subscription.arn;
          if (route.policy !== undefined && !route.policy.matches(filterable)) {
            increment(counts.filtered, arn);
            return;
          }
          const unsubscribeUrl = unsubscribeUrls[routeIndex]!;
          let content: DeliveryContent;
          if (route.raw) {
            rawContent ??= new DeliveryContent(publication.message, sqsAttributes(publication));
            content = rawContent;
          } else {
            envelope ??= new NotificationEnvelope(notification, signing);
            // hasOnlyAllowedCharacters, the check a send makes of a body, is isXmlText.
            content = new DeliveryContent(
              envelope.text(unsubscribeUrl),
              undefined,
              envelope.isXmlText(unsubscribeUrl),
            );
          }
          const target = this.prepare(route, publication, content, sender);
          if (target === undefined) {
            increment(counts.failed, arn);
            return;
          }
          if (target.queue !== route.queue) increment(counts.failed, arn);
          else increment(counts.delivered, arn);
          planned.push({ route, queue: target.queue, unsubscribeUrl, message: target.message });
        });
        for (const route of endpointRoutes)
          if (!endpoints.includes(route)) increment(counts.filtered, route.subscription.arn);
        const endpointDeliveries: NewEndpointDelivery[] = endpoints.map((route) => {
          const { subscription } = route;
          const text = endpointText(publication, subscription);
          return {
            id: randomUUID(),
            subscriptionArn: subscription.arn,
            topicName: topic.name,
            endpoint: subscription.endpoint,
            messageId,
            messageType: 'Notification',
            body: route.raw
              ? text
              : notificationEnvelope(
                  { ...notification, message: text },
                  { ...signing, signature: signatures[index]!.byText.get(text)! },
                  unsubscribeUrlOf(context, subscription),
                ),
            raw: route.raw,
            dueAt: now,
            createdAt: now,
          };
        });
        return {
          messageId,
          endpointDeliveries,
          sequenced: topic.fifo,
          deduplication: publication.deduplication && {
            id: publication.deduplication.key,
            now,
            expiresAt: now + DEDUPLICATION_WINDOW_MS,
          },
          deliveries: (sequenceNumber: number): QueueDelivery[] => {
            // A FIFO topic's envelopes carry the sequence number, known only now.
            let sequenced: NotificationEnvelope | undefined;
            return planned.map(({ route, queue, unsubscribeUrl, message }) => {
              let stored = message;
              if (topic.fifo && !route.raw) {
                sequenced ??= new NotificationEnvelope(
                  { ...notification, sequenceNumber: sequenceNumberOf(sequenceNumber) },
                  signing,
                );
                const text = sequenced.text(unsubscribeUrl);
                stored = { ...message, body: text, md5OfBody: md5Hex(text) };
              }
              const entry = touched.get(queue.id);
              if (entry) entry.messages.push(stored);
              else touched.set(queue.id, { queue, messages: [stored] });
              return { queueId: queue.id, message: stored };
            });
          },
        };
      },
    );
    const outcomes = await this.store.publish(topic.name, publications, () => {
      for (const { queue, messages } of touched.values()) this.deliveries.delivered(queue, messages);
    });
    if (outcomes === undefined) throw snsErrors.topicNotFound();
    if (publications.some((publication) => (publication.endpointDeliveries?.length ?? 0) > 0))
      this.endpoints?.wake();
    const fresh = outcomes.filter((outcome) => !outcome.duplicate).length;
    this.activity.published(topic.name, fresh);
    if (fresh > 0) {
      for (const [kind, bySubscription] of Object.entries(counts) as Array<
        [keyof typeof counts, Map<string, number>]
      >)
        for (const [arn, count] of bySubscription) this.activity.add(topic.name, arn, kind, count);
    }
    return outcomes;
  }

  /**
   * The message for one subscription's queue, checked by the queue's rules; its dead-letter queue's when
   * the queue refuses it; undefined when neither takes it (dropped, and logged).
   */
  private prepare(
    route: Route,
    publication: CheckedPublication,
    content: DeliveryContent,
    sender: DeliverySender,
  ): { queue: QueueRecord; message: NewMessage } | undefined {
    let reason = 'the queue does not exist';
    for (const queue of [route.queue, route.deadLetter]) {
      if (queue === undefined) continue;
      try {
        const message = this.deliveries.prepareDelivery(
          queue,
          content,
          {
            MessageGroupId: publication.groupId,
            MessageDeduplicationId: queue.fifo ? publication.deduplication?.id : undefined,
          },
          sender,
        );
        return { queue, message };
      } catch (error) {
        if (!(error instanceof SqsError)) throw error;
        reason = error.message;
      }
    }
    this.warn(
      { subscription: route.subscription.arn, endpoint: route.subscription.endpoint, reason },
      'SNS delivery dropped: the queue refused it and the subscription has no dead-letter queue that takes it',
    );
    return undefined;
  }

  /** The topic's SQS subscriptions with their queues and compiled filter policies, read once per publish. */
  private async routesOf(topic: TopicRecord, subscriptions: SubscriptionRecord[]): Promise<Route[]> {
    return Promise.all(
      subscriptions
        .filter((subscription) => subscription.protocol === 'sqs')
        .map(async (subscription) => {
          const deadLetterArn = deadLetterTargetOf(subscription.attributes);
          const topicArn = topicArnOf(this.scope, topic.name);
          const queue = await this.queues.queueByArn(subscription.endpoint);
          const deadLetter =
            deadLetterArn === undefined ? undefined : await this.queues.queueByArn(deadLetterArn);
          return {
            subscription,
            queue: this.admittedQueue(subscription, queue, topicArn),
            deadLetter: this.admittedQueue(subscription, deadLetter, topicArn),
            policy: this.policyOf(subscription),
            raw: isRaw(subscription.attributes),
          };
        }),
    );
  }

  private readonly policies = new Map<string, SnsFilterPolicy | undefined>();

  /** Compiled once per policy text and scope (a policy was checked when it was set). */
  private policyOf(subscription: SubscriptionRecord): SnsFilterPolicy | undefined {
    const { FilterPolicy: text, FilterPolicyScope: scope } = subscription.attributes;
    if (text === undefined) return undefined;
    const key = `${scope ?? ''}\n${text}`;
    if (!this.policies.has(key)) {
      if (this.policies.size > 1000) this.policies.clear();
      this.policies.set(key, filterPolicyOf(subscription.attributes));
    }
    return this.policies.get(key);
  }

  /** Subscriptions (with their queue's policy) already warned about, so the log says it once. */
  private readonly warned = new Set<string>();

  /**
   * A subscription's queue whose policy would refuse the topic on AWS: with --strict-policies no queue
   * (the delivery fails as on AWS), else the queue, with a warning the first time.
   */
  private admittedQueue(
    subscription: SubscriptionRecord,
    queue: QueueRecord | undefined,
    topicArn: string,
  ): QueueRecord | undefined {
    if (queue === undefined || this.queueAllows(queue, topicArn)) return queue;
    if (this.strictPolicies) return undefined;
    const key = `${subscription.arn}\n${queue.attributes.Policy ?? ''}`;
    if (!this.warned.has(key)) {
      if (this.warned.size > 10_000) this.warned.clear();
      this.warned.add(key);
      this.warn(
        { subscription: subscription.arn, queue: queue.name, topic: topicArn },
        `on AWS this subscription would deliver nothing: queue ${queue.name}'s policy does not allow topic ${topicArn} (sqs:SendMessage for sns.amazonaws.com with aws:SourceArn); Sluice delivers, and refuses with --strict-policies`,
      );
    }
    return queue;
  }
}

/** The URL in a subscription's envelopes that unsubscribes it, on the server the publisher reached. */
function unsubscribeUrlOf(context: RequestContext, subscription: SubscriptionRecord): string {
  return `${context.baseUrl}/?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(subscription.arn)}`;
}

/** Raw delivery: the published attributes as SQS message attributes. */
function sqsAttributes(publication: CheckedPublication) {
  const entries = Object.entries(publication.attributes);
  return entries.length === 0
    ? undefined
    : Object.fromEntries(entries.map(([name, value]) => [name, { ...value }]));
}

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** What an HTTP/HTTPS subscription gets: MessageStructure=json's text for its protocol, else `default`. */
function endpointText(publication: CheckedPublication, subscription: SubscriptionRecord): string {
  return publication.texts?.[subscription.protocol] ?? publication.texts?.default ?? publication.message;
}
