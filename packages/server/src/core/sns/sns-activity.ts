/** What a topic's subscriptions did with its publications. */
/**
 * `retried`: an HTTP/HTTPS attempt that failed and will be tried again; `dropped`: an HTTP/HTTPS delivery an
 * operator dropped (the console, POST /api/sns/deliveries/drop).
 */
export type DeliveryKind = 'delivered' | 'filtered' | 'failed' | 'retried' | 'dropped';

export interface TopicActivity {
  published: number;
  subscriptions: Map<string, Record<DeliveryKind, number>>;
}

/**
 * Counts per topic (messages published) and per subscription (delivered, filtered out, failed: dropped or
 * sent to its dead-letter queue), since the server started, for /metrics.
 */
export class SnsActivity {
  private readonly topics = new Map<string, TopicActivity>();
  private readonly latencyListeners: Array<(subscription: string, seconds: number) => void> = [];

  /**
   * An HTTP/HTTPS delivery answered 2xx `seconds` after its publication (on Sluice's clock: the retries before
   * it included), for /metrics' sluice_sns_http_delivery_seconds.
   */
  delivered(subscription: string, seconds: number): void {
    for (const listener of this.latencyListeners) listener(subscription, seconds);
  }

  onDelivered(listener: (subscription: string, seconds: number) => void): void {
    this.latencyListeners.push(listener);
  }

  published(topic: string, count: number): void {
    this.of(topic).published += count;
  }

  add(topic: string, subscription: string, kind: DeliveryKind, count: number): void {
    const subscriptions = this.of(topic).subscriptions;
    let counts = subscriptions.get(subscription);
    if (counts === undefined) {
      counts = { delivered: 0, filtered: 0, failed: 0, retried: 0, dropped: 0 };
      subscriptions.set(subscription, counts);
    }
    counts[kind] += count;
  }

  snapshot(): ReadonlyMap<string, TopicActivity> {
    return this.topics;
  }

  clear(): void {
    this.topics.clear();
  }

  private of(topic: string): TopicActivity {
    let activity = this.topics.get(topic);
    if (activity === undefined) {
      activity = { published: 0, subscriptions: new Map() };
      this.topics.set(topic, activity);
    }
    return activity;
  }
}
