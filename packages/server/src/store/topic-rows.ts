import type {
  EndpointDeliveryRecord,
  NewEndpointDelivery,
  SubscriptionRecord,
  TopicRecord,
} from './contract.ts';

/**
 * The topic tables' rows as both stores read them (same column names, attributes and tags as JSON text),
 * and their mapping to the contract's records.
 */
export interface TopicRow {
  name: string;
  /** 1 or 0 in SQLite, a boolean in PostgreSQL. */
  fifo: number | boolean;
  attributes: string;
  tags: string;
  created_at: number;
}

export interface SubscriptionRow {
  arn: string;
  topic_name: string;
  protocol: string;
  endpoint: string;
  owner: string;
  attributes: string;
  created_at: number;
}

export const toTopic = (row: TopicRow): TopicRecord => ({
  name: row.name,
  fifo: row.fifo === true || row.fifo === 1,
  attributes: JSON.parse(row.attributes) as Record<string, string>,
  tags: JSON.parse(row.tags) as Record<string, string>,
  createdAt: row.created_at,
});

export const toSubscription = (row: SubscriptionRow): SubscriptionRecord => ({
  arn: row.arn,
  topicName: row.topic_name,
  protocol: row.protocol,
  endpoint: row.endpoint,
  owner: row.owner,
  attributes: JSON.parse(row.attributes) as Record<string, string>,
  createdAt: row.created_at,
});

export interface EndpointDeliveryRow {
  id: string;
  subscription_arn: string;
  topic_name: string;
  endpoint: string;
  message_id: string;
  message_type: string;
  body: string;
  raw: number | boolean;
  attempts: number | string;
  due_at: number | string;
  created_at: number | string;
  last_error: string | null;
}

export const toEndpointDelivery = (row: EndpointDeliveryRow): EndpointDeliveryRecord => ({
  id: row.id,
  subscriptionArn: row.subscription_arn,
  topicName: row.topic_name,
  endpoint: row.endpoint,
  messageId: row.message_id,
  messageType: row.message_type,
  body: row.body,
  raw: row.raw === true || row.raw === 1,
  attempts: Number(row.attempts),
  dueAt: Number(row.due_at),
  createdAt: Number(row.created_at),
  lastError: row.last_error ?? undefined,
});

/** A delivery's columns in the tables' order, for an INSERT. */
export const endpointDeliveryValues = (delivery: NewEndpointDelivery) => [
  delivery.id,
  delivery.subscriptionArn,
  delivery.topicName,
  delivery.endpoint,
  delivery.messageId,
  delivery.messageType,
  delivery.body,
];
