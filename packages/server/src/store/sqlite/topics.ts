import type Database from 'better-sqlite3';
import type {
  EndpointDeliveryRecord,
  NewSubscription,
  NewTopic,
  SubscriptionRecord,
  TopicChanges,
  TopicRecord,
} from '../contract.ts';
import type { PublishSteps } from '../publish-plan.ts';
import {
  type EndpointDeliveryRow,
  endpointDeliveryValues,
  type SubscriptionRow,
  type TopicRow,
  toEndpointDelivery,
  toSubscription,
  toTopic,
} from '../topic-rows.ts';

/**
 * The SQLite side of TopicStore. Each method runs inside the store's write (or as a read) as the store calls
 * it, so a publication's deliveries share the write, and so the transaction, of its topic's sequence number
 * and deduplication id.
 */
export class SqliteTopics {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      insertTopic: db.prepare(
        `INSERT INTO topics (name, fifo, attributes, tags, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (name) DO NOTHING`,
      ),
      topic: db.prepare('SELECT * FROM topics WHERE name = ?'),
      topics: db.prepare('SELECT * FROM topics WHERE name > ? ORDER BY name LIMIT CAST(? AS INTEGER)'),
      setTopicAttributes: db.prepare('UPDATE topics SET attributes = ? WHERE name = ?'),
      setTopicTags: db.prepare('UPDATE topics SET tags = ? WHERE name = ?'),
      deleteTopic: db.prepare('DELETE FROM topics WHERE name = ?'),
      deleteTopicSubscriptions: db.prepare('DELETE FROM subscriptions WHERE topic_name = ?'),
      deleteTopicDeduplication: db.prepare('DELETE FROM topic_deduplication WHERE topic_name = ?'),
      insertSubscription: db.prepare(
        `INSERT INTO subscriptions (arn, topic_name, protocol, endpoint, owner, attributes, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      subscriptionByEndpoint: db.prepare(
        'SELECT * FROM subscriptions WHERE topic_name = ? AND protocol = ? AND endpoint = ?',
      ),
      subscription: db.prepare('SELECT * FROM subscriptions WHERE arn = ?'),
      subscriptions: db.prepare(
        'SELECT * FROM subscriptions WHERE arn > ? ORDER BY arn LIMIT CAST(? AS INTEGER)',
      ),
      topicSubscriptions: db.prepare(
        'SELECT * FROM subscriptions WHERE topic_name = ? AND arn > ? ORDER BY arn LIMIT CAST(? AS INTEGER)',
      ),
      setSubscriptionAttributes: db.prepare('UPDATE subscriptions SET attributes = ? WHERE arn = ?'),
      deleteSubscription: db.prepare('DELETE FROM subscriptions WHERE arn = ?'),
      nextSequence: db.prepare(
        'UPDATE topics SET last_sequence = last_sequence + 1 WHERE name = ? RETURNING last_sequence',
      ),
      forgetExpired: db.prepare('DELETE FROM topic_deduplication WHERE topic_name = ? AND expires_at <= ?'),
      deduplicated: db.prepare(
        `SELECT message_id, sequence_number FROM topic_deduplication
         WHERE topic_name = ? AND deduplication_id = ? AND expires_at > ?`,
      ),
      insertEndpointDelivery: db.prepare(
        `INSERT INTO endpoint_deliveries (id, subscription_arn, topic_name, endpoint, message_id, message_type,
           body, raw, due_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      dueEndpointDeliveries: db.prepare(
        'SELECT * FROM endpoint_deliveries WHERE due_at <= ? ORDER BY due_at LIMIT CAST(? AS INTEGER)',
      ),
      claimEndpointDelivery: db.prepare('UPDATE endpoint_deliveries SET due_at = ? WHERE id = ?'),
      finishEndpointDelivery: db.prepare('DELETE FROM endpoint_deliveries WHERE id = ?'),
      retryEndpointDelivery: db.prepare(
        'UPDATE endpoint_deliveries SET attempts = ?, due_at = ?, last_error = coalesce(?, last_error) WHERE id = ?',
      ),
      subscriptionEndpointDeliveries: db.prepare(
        `SELECT * FROM endpoint_deliveries WHERE subscription_arn = ? ORDER BY due_at, id
         LIMIT CAST(? AS INTEGER)`,
      ),
      endpointDeliveryDueNow: db.prepare(
        'UPDATE endpoint_deliveries SET due_at = ? WHERE subscription_arn = ? AND id = ?',
      ),
      dropEndpointDelivery: db.prepare(
        'DELETE FROM endpoint_deliveries WHERE subscription_arn = ? AND id = ? RETURNING *',
      ),
      rememberDeduplication: db.prepare(
        `INSERT OR REPLACE INTO topic_deduplication
           (topic_name, deduplication_id, message_id, sequence_number, expires_at) VALUES (?, ?, ?, ?, ?)`,
      ),
    };
  }

  createTopic(topic: NewTopic): TopicRecord {
    const { insertTopic, topic: byName } = this.statements;
    insertTopic.run(
      topic.name,
      topic.fifo ? 1 : 0,
      JSON.stringify(topic.attributes),
      JSON.stringify(topic.tags),
      topic.now,
    );
    return toTopic(byName.get(topic.name) as TopicRow);
  }

  getTopic(name: string): TopicRecord | undefined {
    const row = this.statements.topic.get(name) as TopicRow | undefined;
    return row && toTopic(row);
  }

  listTopics(options: { afterName?: string; limit: number }): TopicRecord[] {
    return (this.statements.topics.all(options.afterName ?? '', options.limit) as TopicRow[]).map(toTopic);
  }

  updateTopic(name: string, changes: TopicChanges): TopicRecord | undefined {
    if (changes.attributes) this.statements.setTopicAttributes.run(JSON.stringify(changes.attributes), name);
    if (changes.tags) this.statements.setTopicTags.run(JSON.stringify(changes.tags), name);
    return this.getTopic(name);
  }

  deleteTopic(name: string): boolean {
    this.statements.deleteTopicSubscriptions.run(name);
    this.statements.deleteTopicDeduplication.run(name);
    return this.statements.deleteTopic.run(name).changes > 0;
  }

  createSubscription(subscription: NewSubscription): SubscriptionRecord | undefined {
    if (this.statements.topic.get(subscription.topicName) === undefined) return undefined;
    this.statements.insertSubscription.run(
      subscription.arn,
      subscription.topicName,
      subscription.protocol,
      subscription.endpoint,
      subscription.owner,
      JSON.stringify(subscription.attributes),
      subscription.now,
    );
    const row = this.statements.subscriptionByEndpoint.get(
      subscription.topicName,
      subscription.protocol,
      subscription.endpoint,
    ) as SubscriptionRow;
    return toSubscription(row);
  }

  getSubscription(arn: string): SubscriptionRecord | undefined {
    const row = this.statements.subscription.get(arn) as SubscriptionRow | undefined;
    return row && toSubscription(row);
  }

  listSubscriptions(options: { topicName?: string; afterArn?: string; limit: number }): SubscriptionRecord[] {
    const after = options.afterArn ?? '';
    const rows =
      options.topicName === undefined
        ? this.statements.subscriptions.all(after, options.limit)
        : this.statements.topicSubscriptions.all(options.topicName, after, options.limit);
    return (rows as SubscriptionRow[]).map(toSubscription);
  }

  updateSubscription(arn: string, attributes: Record<string, string>): SubscriptionRecord | undefined {
    this.statements.setSubscriptionAttributes.run(JSON.stringify(attributes), arn);
    return this.getSubscription(arn);
  }

  deleteSubscription(arn: string): boolean {
    return this.statements.deleteSubscription.run(arn).changes > 0;
  }

  /** A publish's steps of the topic's own (publish-plan.ts), each run inside the store's write. */
  readonly publishSteps: Pick<
    PublishSteps,
    'lockTopic' | 'publishedOriginal' | 'nextSequence' | 'rememberPublication' | 'insertEndpointDeliveries'
  > = {
    // One writer: the write holds the topic.
    lockTopic: (topicName, now) => {
      if (this.statements.topic.get(topicName) === undefined) return false;
      if (now !== undefined) this.statements.forgetExpired.run(topicName, now);
      return true;
    },
    publishedOriginal: (topicName, id, now) => {
      const original = this.statements.deduplicated.get(topicName, id, now) as
        | { message_id: string; sequence_number: number }
        | undefined;
      return original && { messageId: original.message_id, sequenceNumber: original.sequence_number };
    },
    nextSequence: (topicName) =>
      (this.statements.nextSequence.get(topicName) as { last_sequence: number }).last_sequence,
    rememberPublication: (topicName, id, original, expiresAt) => {
      this.statements.rememberDeduplication.run(
        topicName,
        id,
        original.messageId,
        original.sequenceNumber,
        expiresAt,
      );
    },
    insertEndpointDeliveries: (deliveries) => {
      for (const delivery of deliveries)
        this.statements.insertEndpointDelivery.run(
          ...endpointDeliveryValues(delivery),
          delivery.raw ? 1 : 0,
          delivery.dueAt,
          delivery.createdAt,
        );
    },
  };

  /** Runs inside one write: the due deliveries, each moved to `claimUntil`. */
  claimEndpointDeliveries(now: number, claimUntil: number, limit: number): EndpointDeliveryRecord[] {
    const rows = this.statements.dueEndpointDeliveries.all(now, limit) as EndpointDeliveryRow[];
    for (const row of rows) this.statements.claimEndpointDelivery.run(claimUntil, row.id);
    return rows.map(toEndpointDelivery);
  }

  finishEndpointDelivery(id: string): void {
    this.statements.finishEndpointDelivery.run(id);
  }

  retryEndpointDelivery(id: string, attempts: number, dueAt: number, lastError: string | undefined): void {
    this.statements.retryEndpointDelivery.run(attempts, dueAt, lastError ?? null, id);
  }

  listEndpointDeliveries(subscriptionArn: string, limit: number): EndpointDeliveryRecord[] {
    const rows = this.statements.subscriptionEndpointDeliveries.all(
      subscriptionArn,
      limit,
    ) as EndpointDeliveryRow[];
    return rows.map(toEndpointDelivery);
  }

  retryEndpointDeliveryNow(subscriptionArn: string, id: string, now: number): boolean {
    return Number(this.statements.endpointDeliveryDueNow.run(now, subscriptionArn, id).changes) > 0;
  }

  dropEndpointDelivery(subscriptionArn: string, id: string): EndpointDeliveryRecord | undefined {
    const row = this.statements.dropEndpointDelivery.get(subscriptionArn, id) as
      | EndpointDeliveryRow
      | undefined;
    return row && toEndpointDelivery(row);
  }
}
