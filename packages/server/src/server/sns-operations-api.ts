import type { AuditTrail } from '../core/audit-trail.ts';
import { SqsError } from '../core/errors.ts';
import type { DeliveryKind } from '../core/sns/sns-activity.ts';
import { snsErrors } from '../core/sns/sns-errors.ts';
import { isPending } from '../core/sns/subscription-attributes.ts';
import { parseJsonObject } from '../shared/json-object.ts';
import type { EndpointDeliveryRecord, SubscriptionRecord, TopicStore } from '../store/contract.ts';
import { json } from './console-api.ts';
import { type ConsoleChange, errorPage, type Page, type PageViewer } from './page.ts';
import { actorOf } from './triage-api.ts';

/**
 * Operating HTTP/HTTPS subscriptions (issue 41 item 5, docs/guide/sns.md "Operating HTTP subscriptions"):
 * each one's state and its stored deliveries (pending: not tried yet; failing: tried and failed, with the last
 * error and the next attempt), and an operator's retry-now or drop of one delivery. A key sees the
 * subscriptions of the topics it may read (its name patterns match topic names, as for SNS's own actions) and
 * acts on those of the topics it may configure; a drop is counted (`sluice_sns_deliveries_total{outcome=
 * "dropped"}`) and written to the audit trail.
 */

/** Deliveries one subscription's answer lists at most (the next due first); `more` says when there are others. */
export const DELIVERIES_SHOWN = 50;

export interface EndpointDeliveryView {
  id: string;
  messageId: string;
  /** Attempts that failed so far: 0 is pending (not tried yet), more is failing. */
  attempts: number;
  /** The last failure: `HTTP 500`, `ECONNREFUSED`, `timed out`, a refused address; never the answer's body. */
  lastError: string | undefined;
  /** When it is tried next, in epoch milliseconds (while a node sends it: when that node's claim lapses). */
  nextAttemptAt: number;
  createdAt: number;
}

export interface HttpSubscriptionView {
  subscriptionArn: string;
  topic: string;
  protocol: string;
  endpoint: string;
  state: 'PendingConfirmation' | 'Confirmed';
  /** Stored deliveries not tried yet, and tried and failed, among those listed. */
  pending: number;
  failing: number;
  deliveries: EndpointDeliveryView[];
  /** More deliveries are stored than listed. */
  more: boolean;
}

/** GET /api/sns/http-subscriptions[?topic=NAME]: the HTTP/HTTPS subscriptions the viewer may see. */
export interface HttpSubscriptionsAnswer {
  subscriptions: HttpSubscriptionView[];
}

/** POST /api/sns/deliveries/retry and /drop: `{"subscriptionArn": ARN, "id": DELIVERY_ID}`. */
export interface DeliveryActionRequest {
  subscriptionArn: string;
  id: string;
}

export interface DeliveryActionAnswer {
  subscriptionArn: string;
  id: string;
  retried?: true;
  dropped?: true;
}

export interface SnsOperationsParts {
  store: Pick<
    TopicStore,
    | 'listSubscriptions'
    | 'getSubscription'
    | 'listEndpointDeliveries'
    | 'retryEndpointDeliveryNow'
    | 'dropEndpointDelivery'
  >;
  now(): number;
  /** Makes the delivery worker look now (a retried delivery is sent at once, not at its next tick). */
  wake(): void;
  count(topic: string, subscriptionArn: string, kind: DeliveryKind): void;
  audit: AuditTrail | undefined;
}

const isEndpoint = (subscription: SubscriptionRecord) =>
  subscription.protocol === 'http' || subscription.protocol === 'https';

export function snsOperationsPages(
  parts: SnsOperationsParts,
): Record<string, (url: URL, viewer: PageViewer) => Promise<Page>> {
  return {
    '/api/sns/http-subscriptions': (url, viewer) =>
      answered(async () => {
        const topic = url.searchParams.get('topic') || undefined;
        const views: HttpSubscriptionView[] = [];
        for (const subscription of await subscriptionsOf(parts.store, topic)) {
          if (!isEndpoint(subscription) || !(await viewer.mayRead(subscription.topicName))) continue;
          views.push(await viewOf(parts.store, subscription));
        }
        return { subscriptions: views } satisfies HttpSubscriptionsAnswer;
      }),
  };
}

export function snsOperationsChanges(parts: SnsOperationsParts): Record<string, ConsoleChange> {
  return {
    '/api/sns/deliveries/retry': (body, viewer) =>
      answered(async () => {
        const { subscriptionArn, id } = await permitted(parts, body, viewer);
        if (!(await parts.store.retryEndpointDeliveryNow(subscriptionArn, id, parts.now())))
          throw snsErrors.resourceNotFound();
        parts.wake();
        return { subscriptionArn, id, retried: true } satisfies DeliveryActionAnswer;
      }),
    '/api/sns/deliveries/drop': (body, viewer) =>
      answered(async () => {
        const { subscriptionArn, id, subscription } = await permitted(parts, body, viewer);
        const dropped = await parts.store.dropEndpointDelivery(subscriptionArn, id);
        if (dropped === undefined) throw snsErrors.resourceNotFound();
        parts.count(subscription.topicName, subscriptionArn, 'dropped');
        await parts.audit?.record({
          actor: actorOf(viewer),
          via: viewer.authenticatedBy ?? 'unauthenticated',
          action: 'drop-sns-delivery',
          source: subscription.topicName,
          destination: undefined,
          count: 1,
          skipped: 0,
          detail: `message ${dropped.messageId} to ${subscription.endpoint} (subscription ${subscriptionArn}, ${dropped.attempts} failed attempts${dropped.lastError ? `, last: ${dropped.lastError}` : ''})`,
        });
        return { subscriptionArn, id, dropped: true } satisfies DeliveryActionAnswer;
      }),
  };
}

async function subscriptionsOf(
  store: SnsOperationsParts['store'],
  topic: string | undefined,
): Promise<SubscriptionRecord[]> {
  const all: SubscriptionRecord[] = [];
  for (let after: string | undefined; ; ) {
    const page = await store.listSubscriptions({ topicName: topic, afterArn: after, limit: 1000 });
    all.push(...page);
    if (page.length < 1000) return all;
    after = page.at(-1)?.arn;
  }
}

async function viewOf(
  store: SnsOperationsParts['store'],
  subscription: SubscriptionRecord,
): Promise<HttpSubscriptionView> {
  const stored = await store.listEndpointDeliveries(subscription.arn, DELIVERIES_SHOWN + 1);
  const deliveries = stored.slice(0, DELIVERIES_SHOWN).map(deliveryView);
  return {
    subscriptionArn: subscription.arn,
    topic: subscription.topicName,
    protocol: subscription.protocol,
    endpoint: subscription.endpoint,
    state: isPending(subscription) ? 'PendingConfirmation' : 'Confirmed',
    pending: deliveries.filter((delivery) => delivery.attempts === 0).length,
    failing: deliveries.filter((delivery) => delivery.attempts > 0).length,
    deliveries,
    more: stored.length > DELIVERIES_SHOWN,
  };
}

const deliveryView = (delivery: EndpointDeliveryRecord): EndpointDeliveryView => ({
  id: delivery.id,
  messageId: delivery.messageId,
  attempts: delivery.attempts,
  lastError: delivery.lastError,
  nextAttemptAt: delivery.dueAt,
  createdAt: delivery.createdAt,
});

/** The request's subscription, an HTTP/HTTPS one of a topic the viewer may configure. */
async function permitted(parts: SnsOperationsParts, body: string, viewer: PageViewer) {
  const input = parseJsonObject(body);
  if (!input || typeof input.subscriptionArn !== 'string' || typeof input.id !== 'string')
    throw snsErrors.invalidParameterValue(
      'The body must be a JSON object with "subscriptionArn" and "id" (the delivery\'s) strings.',
    );
  const { subscriptionArn, id } = input;
  const subscription = await parts.store.getSubscription(subscriptionArn);
  // A subscription the viewer may not see is answered as one that does not exist: its ARN tells nothing.
  if (
    subscription === undefined ||
    !isEndpoint(subscription) ||
    !(await viewer.mayRead(subscription.topicName))
  )
    throw snsErrors.subscriptionNotFound();
  if (!(await viewer.mayConfigure(subscription.topicName)))
    throw snsErrors.authorization(
      `User: ${actorOf(viewer)} is not authorized to act on the deliveries of ${subscriptionArn}`,
    );
  return { subscriptionArn, id, subscription };
}

async function answered(answer: () => Promise<unknown>): Promise<Page> {
  try {
    return json(await answer());
  } catch (error) {
    if (error instanceof SqsError) return errorPage(error);
    throw error;
  }
}
