import type {
  EndpointDeliveryRecord,
  NewEndpointDelivery,
  NewSubscription,
  NewTopic,
  SubscriptionRecord,
  TopicChanges,
  TopicRecord,
} from '../contract.ts';
import type { PublishedOriginal } from '../publish-plan.ts';
import {
  type EndpointDeliveryRow,
  endpointDeliveryValues,
  type SubscriptionRow,
  type TopicRow,
  toEndpointDelivery,
  toSubscription,
  toTopic,
} from '../topic-rows.ts';
import { type Db, run } from './connection.ts';

/**
 * The PostgreSQL side of TopicStore but for publish (which the store runs, as it shares the send's private
 * steps): each operation one statement or, where two tables change, one transaction the caller gives.
 */
export const postgresTopics = {
  async createTopic(db: Db, topic: NewTopic): Promise<TopicRecord> {
    // The no-op update makes RETURNING give the existing row too, in the same statement.
    const { rows } = await run<TopicRow>(
      db,
      `INSERT INTO topics (name, fifo, attributes, tags, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING *`,
      [topic.name, topic.fifo, JSON.stringify(topic.attributes), JSON.stringify(topic.tags), topic.now],
    );
    return toTopic(rows[0]!);
  },

  async getTopic(db: Db, name: string): Promise<TopicRecord | undefined> {
    const { rows } = await run<TopicRow>(db, 'SELECT * FROM topics WHERE name = $1', [name]);
    return rows[0] && toTopic(rows[0]);
  },

  async listTopics(db: Db, options: { afterName?: string; limit: number }): Promise<TopicRecord[]> {
    const { rows } = await run<TopicRow>(db, 'SELECT * FROM topics WHERE name > $1 ORDER BY name LIMIT $2', [
      options.afterName ?? '',
      options.limit,
    ]);
    return rows.map(toTopic);
  },

  async updateTopic(db: Db, name: string, changes: TopicChanges): Promise<TopicRecord | undefined> {
    const { rows } = await run<TopicRow>(
      db,
      `UPDATE topics SET attributes = coalesce($2, attributes), tags = coalesce($3, tags)
       WHERE name = $1 RETURNING *`,
      [
        name,
        changes.attributes && JSON.stringify(changes.attributes),
        changes.tags && JSON.stringify(changes.tags),
      ],
    );
    return rows[0] && toTopic(rows[0]);
  },

  async deleteTopic(db: Db, name: string): Promise<boolean> {
    const { rows } = await run<{ deleted: boolean }>(
      db,
      `WITH s AS (DELETE FROM subscriptions WHERE topic_name = $1),
            d AS (DELETE FROM topic_deduplication WHERE topic_name = $1),
            t AS (DELETE FROM topics WHERE name = $1 RETURNING 1)
       SELECT count(*) > 0 AS deleted FROM t`,
      [name],
    );
    return rows[0]!.deleted;
  },

  async createSubscription(db: Db, subscription: NewSubscription): Promise<SubscriptionRecord | undefined> {
    // FOR SHARE: a topic deleted at the same time is deleted after, with the new subscription.
    const { rows: topics } = await run(db, 'SELECT 1 FROM topics WHERE name = $1 FOR SHARE', [
      subscription.topicName,
    ]);
    if (topics.length === 0) return undefined;
    await run(
      db,
      `INSERT INTO subscriptions (arn, topic_name, protocol, endpoint, owner, attributes, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
      [
        subscription.arn,
        subscription.topicName,
        subscription.protocol,
        subscription.endpoint,
        subscription.owner,
        JSON.stringify(subscription.attributes),
        subscription.now,
      ],
    );
    const { rows } = await run<SubscriptionRow>(
      db,
      'SELECT * FROM subscriptions WHERE topic_name = $1 AND protocol = $2 AND endpoint = $3',
      [subscription.topicName, subscription.protocol, subscription.endpoint],
    );
    return toSubscription(rows[0]!);
  },

  async getSubscription(db: Db, arn: string): Promise<SubscriptionRecord | undefined> {
    const { rows } = await run<SubscriptionRow>(db, 'SELECT * FROM subscriptions WHERE arn = $1', [arn]);
    return rows[0] && toSubscription(rows[0]);
  },

  async listSubscriptions(
    db: Db,
    options: { topicName?: string; afterArn?: string; limit: number },
  ): Promise<SubscriptionRecord[]> {
    const { rows } = await run<SubscriptionRow>(
      db,
      `SELECT * FROM subscriptions WHERE ($1::text IS NULL OR topic_name = $1) AND arn > $2
       ORDER BY arn LIMIT $3`,
      [options.topicName ?? null, options.afterArn ?? '', options.limit],
    );
    return rows.map(toSubscription);
  },

  async updateSubscription(
    db: Db,
    arn: string,
    attributes: Record<string, string>,
  ): Promise<SubscriptionRecord | undefined> {
    const { rows } = await run<SubscriptionRow>(
      db,
      'UPDATE subscriptions SET attributes = $2 WHERE arn = $1 RETURNING *',
      [arn, JSON.stringify(attributes)],
    );
    return rows[0] && toSubscription(rows[0]);
  },

  async deleteSubscription(db: Db, arn: string): Promise<boolean> {
    const { rowCount } = await run(db, 'DELETE FROM subscriptions WHERE arn = $1', [arn]);
    return (rowCount ?? 0) > 0;
  },

  /** Inside the publication's transaction. */
  async insertEndpointDeliveries(db: Db, deliveries: readonly NewEndpointDelivery[]): Promise<void> {
    for (const delivery of deliveries)
      await run(
        db,
        `INSERT INTO endpoint_deliveries (id, subscription_arn, topic_name, endpoint, message_id, message_type,
           body, raw, due_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [...endpointDeliveryValues(delivery), delivery.raw, delivery.dueAt, delivery.createdAt],
      );
  },

  /**
   * One statement: the due rows, locked with SKIP LOCKED so two nodes claiming at once take different rows,
   * each moved to `claimUntil`.
   */
  async claimEndpointDeliveries(
    db: Db,
    now: number,
    claimUntil: number,
    limit: number,
  ): Promise<EndpointDeliveryRecord[]> {
    const { rows } = await run<EndpointDeliveryRow>(
      db,
      `UPDATE endpoint_deliveries SET due_at = $2 WHERE id IN (
         SELECT id FROM endpoint_deliveries WHERE due_at <= $1 ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [now, claimUntil, limit],
    );
    return rows.map(toEndpointDelivery);
  },

  async finishEndpointDelivery(db: Db, id: string): Promise<void> {
    await run(db, 'DELETE FROM endpoint_deliveries WHERE id = $1', [id]);
  },

  async retryEndpointDelivery(
    db: Db,
    id: string,
    attempts: number,
    dueAt: number,
    lastError: string | undefined,
  ): Promise<void> {
    await run(
      db,
      'UPDATE endpoint_deliveries SET attempts = $2, due_at = $3, last_error = coalesce($4, last_error) WHERE id = $1',
      [id, attempts, dueAt, lastError ?? null],
    );
  },

  async listEndpointDeliveries(
    db: Db,
    subscriptionArn: string,
    limit: number,
  ): Promise<EndpointDeliveryRecord[]> {
    const { rows } = await run<EndpointDeliveryRow>(
      db,
      'SELECT * FROM endpoint_deliveries WHERE subscription_arn = $1 ORDER BY due_at, id LIMIT $2',
      [subscriptionArn, limit],
    );
    return rows.map(toEndpointDelivery);
  },

  async retryEndpointDeliveryNow(db: Db, subscriptionArn: string, id: string, now: number): Promise<boolean> {
    const { rowCount } = await run(
      db,
      'UPDATE endpoint_deliveries SET due_at = $3 WHERE subscription_arn = $1 AND id = $2',
      [subscriptionArn, id, now],
    );
    return (rowCount ?? 0) > 0;
  },

  async dropEndpointDelivery(
    db: Db,
    subscriptionArn: string,
    id: string,
  ): Promise<EndpointDeliveryRecord | undefined> {
    const { rows } = await run<EndpointDeliveryRow>(
      db,
      'DELETE FROM endpoint_deliveries WHERE subscription_arn = $1 AND id = $2 RETURNING *',
      [subscriptionArn, id],
    );
    return rows[0] && toEndpointDelivery(rows[0]);
  },

  /** PublishSteps.lockTopic: a row lock, so the topic's sequence numbers are taken one publisher at a time. */
  async lockTopic(db: Db, name: string, now: number | undefined): Promise<boolean> {
    const { rows } = await run(db, 'SELECT 1 FROM topics WHERE name = $1 FOR UPDATE', [name]);
    if (rows.length === 0) return false;
    if (now !== undefined)
      await run(db, 'DELETE FROM topic_deduplication WHERE topic_name = $1 AND expires_at <= $2', [
        name,
        now,
      ]);
    return true;
  },

  async publishedOriginal(
    db: Db,
    name: string,
    id: string,
    now: number,
  ): Promise<{ messageId: string; sequenceNumber: number } | undefined> {
    const { rows } = await run<{ message_id: string; sequence_number: number }>(
      db,
      `SELECT message_id, sequence_number FROM topic_deduplication
       WHERE topic_name = $1 AND deduplication_id = $2 AND expires_at > $3`,
      [name, id, now],
    );
    return rows[0] && { messageId: rows[0].message_id, sequenceNumber: rows[0].sequence_number };
  },

  async nextSequence(db: Db, name: string): Promise<number> {
    const { rows } = await run<{ last_sequence: number }>(
      db,
      'UPDATE topics SET last_sequence = last_sequence + 1 WHERE name = $1 RETURNING last_sequence',
      [name],
    );
    return rows[0]!.last_sequence;
  },

  async rememberPublication(
    db: Db,
    name: string,
    id: string,
    { messageId, sequenceNumber }: PublishedOriginal,
    expiresAt: number,
  ): Promise<void> {
    await run(
      db,
      `INSERT INTO topic_deduplication (topic_name, deduplication_id, message_id, sequence_number, expires_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (topic_name, deduplication_id) DO UPDATE
         SET message_id = excluded.message_id, sequence_number = excluded.sequence_number,
             expires_at = excluded.expires_at`,
      [name, id, messageId, sequenceNumber, expiresAt],
    );
  },

  /** Of these queues, the ones that still exist, locked against deletion until the transaction ends. */
  async existingQueues(db: Db, queueIds: readonly number[]): Promise<Set<number>> {
    const { rows } = await run<{ id: number }>(
      db,
      'SELECT id FROM queues WHERE id = ANY($1::bigint[]) ORDER BY id FOR SHARE',
      [queueIds],
    );
    return new Set(rows.map((row) => row.id));
  },
};
