import type {
  MoveTaskRecord,
  MoveTaskStatus,
  NewMessage,
  QueueRecord,
  QueueSample,
  StoredMessage,
} from './contract.ts';

/**
 * The tables' rows as both stores read them (same column names and JSON-in-text encodings), and their
 * mapping to the contract's records, so that a record means the same whichever backend produced it.
 */

export interface QueueRow {
  id: number;
  name: string;
  /** 1 or 0 in SQLite, a boolean in PostgreSQL. */
  fifo: number | boolean;
  /** 1 or 0 in SQLite, a boolean in PostgreSQL. */
  deduplicates_per_group: number | boolean;
  attributes: string;
  tags: string;
  created_at: number;
  last_modified_at: number;
  last_purged_at: number | null;
}

export interface MoveTaskRow {
  handle: string;
  source_arn: string;
  source_queue_id: number;
  destination_arn: string | null;
  max_per_second: number | null;
  status: MoveTaskStatus;
  moved: number;
  to_move: number;
  up_to_seq: number;
  started_at: number;
  ended_at: number | null;
  failure_reason: string | null;
}

export interface MessageRow {
  seq: number;
  queue_id: number;
  message_id: string;
  body: string;
  message_attributes: string | null;
  system_attributes: string | null;
  md5_of_body: string;
  md5_of_message_attributes: string | null;
  md5_of_system_attributes: string | null;
  sender_id: string;
  sent_at: number;
  visible_at: number;
  expires_at: number;
  receive_count: number;
  first_received_at: number | null;
  receipt_token: string | null;
  delivery_started_at: number | null;
  dead_letter_source_arn: string | null;
  group_id: string | null;
  deduplication_id: string | null;
}

/** The columns a new message is inserted with; its queue and fair-queue tenant are the store's to add. */
export type NewMessageRow = Pick<
  MessageRow,
  | 'message_id'
  | 'body'
  | 'message_attributes'
  | 'system_attributes'
  | 'md5_of_body'
  | 'md5_of_message_attributes'
  | 'md5_of_system_attributes'
  | 'sender_id'
  | 'sent_at'
  | 'visible_at'
  | 'expires_at'
  | 'group_id'
  | 'deduplication_id'
>;

export function newMessageRow(message: NewMessage): NewMessageRow {
  return {
    message_id: message.messageId,
    body: message.body,
    message_attributes: message.messageAttributes ? JSON.stringify(message.messageAttributes) : null,
    system_attributes: message.systemAttributes ? JSON.stringify(message.systemAttributes) : null,
    md5_of_body: message.md5OfBody,
    md5_of_message_attributes: message.md5OfMessageAttributes ?? null,
    md5_of_system_attributes: message.md5OfSystemAttributes ?? null,
    sender_id: message.senderId,
    sent_at: message.sentAt,
    visible_at: message.visibleAt,
    expires_at: message.expiresAt,
    group_id: message.groupId ?? null,
    deduplication_id: message.deduplication?.id ?? null,
  };
}

export interface SampleRow {
  queue: string;
  at: number;
  period_ms: number;
  visible: number;
  not_visible: number;
  delayed: number;
  oldest_age_s: number;
  sent: number;
  received: number;
  deleted: number;
  empty_receives: number;
  sent_bytes: number;
}

export function sampleRow(sample: QueueSample): SampleRow {
  return {
    queue: sample.queue,
    at: sample.at,
    period_ms: sample.periodMs,
    visible: sample.visible,
    not_visible: sample.notVisible,
    delayed: sample.delayed,
    oldest_age_s: sample.oldestAgeSeconds,
    sent: sample.sent,
    received: sample.received,
    deleted: sample.deleted,
    empty_receives: sample.emptyReceives,
    sent_bytes: sample.sentBytes,
  };
}

export function toSample(row: SampleRow): QueueSample {
  return {
    queue: row.queue,
    at: row.at,
    periodMs: row.period_ms,
    visible: row.visible,
    notVisible: row.not_visible,
    delayed: row.delayed,
    oldestAgeSeconds: row.oldest_age_s,
    sent: row.sent,
    received: row.received,
    deleted: row.deleted,
    emptyReceives: row.empty_receives,
    sentBytes: row.sent_bytes,
  };
}

export function toQueue(row: QueueRow): QueueRecord {
  return {
    id: row.id,
    name: row.name,
    fifo: row.fifo === 1 || row.fifo === true,
    deduplicatesPerGroup: row.deduplicates_per_group === 1 || row.deduplicates_per_group === true,
    attributes: JSON.parse(row.attributes) as Record<string, string>,
    tags: JSON.parse(row.tags) as Record<string, string>,
    createdAt: row.created_at,
    lastModifiedAt: row.last_modified_at,
  };
}

export function toMoveTask(row: MoveTaskRow): MoveTaskRecord {
  return {
    handle: row.handle,
    sourceArn: row.source_arn,
    sourceQueueId: row.source_queue_id,
    destinationArn: row.destination_arn ?? undefined,
    maxPerSecond: row.max_per_second ?? undefined,
    status: row.status,
    moved: row.moved,
    toMove: row.to_move,
    upToSeq: row.up_to_seq,
    startedAt: row.started_at,
    endedAt: row.ended_at ?? undefined,
    failureReason: row.failure_reason ?? undefined,
  };
}

/** What a message takes in an answer, near enough: its body and attributes, in characters. */
export function messageRowBytes(row: MessageRow): number {
  return row.body.length + (row.message_attributes?.length ?? 0) + (row.system_attributes?.length ?? 0);
}

export function toMessage(row: MessageRow): StoredMessage {
  return {
    seq: row.seq,
    messageId: row.message_id,
    body: row.body,
    messageAttributes: row.message_attributes ? JSON.parse(row.message_attributes) : undefined,
    systemAttributes: row.system_attributes ? JSON.parse(row.system_attributes) : undefined,
    md5OfBody: row.md5_of_body,
    md5OfMessageAttributes: row.md5_of_message_attributes ?? undefined,
    md5OfSystemAttributes: row.md5_of_system_attributes ?? undefined,
    senderId: row.sender_id,
    sentAt: row.sent_at,
    visibleAt: row.visible_at,
    expiresAt: row.expires_at,
    receiveCount: row.receive_count,
    firstReceivedAt: row.first_received_at ?? undefined,
    receiptToken: row.receipt_token ?? undefined,
    deliveryStartedAt: row.delivery_started_at ?? undefined,
    deadLetterSourceArn: row.dead_letter_source_arn ?? undefined,
    // '' is the tenant of a fair queue's messages sent without a group: they have none to show.
    groupId: row.group_id || undefined,
    deduplicationId: row.deduplication_id ?? undefined,
  };
}
