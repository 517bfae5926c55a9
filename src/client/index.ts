/** The client toolkit: consumer, idempotency, producer, outbox and large payloads over the public SQS API. */

export {
  type BackoffOptions,
  type BatchHandler,
  type BatchOutcome,
  Consumer,
  type ConsumerEvents,
  type ConsumerOptions,
  type FailureHandling,
  type HandlerContext,
  type Message,
  type MessageHandler,
  type PayloadHook,
  POISON_ATTRIBUTES,
  receiveCount,
  type TimeoutReason,
} from './consumer.ts';
export * from './idempotency/index.ts';
export * from './large-payload/index.ts';
export { PostgresCdcRelay, type PostgresCdcRelayOptions } from './outbox/cdc.ts';
export type { OutboxMessage, OutboxRow, OutboxStore, PublishFailure } from './outbox/message.ts';
export { migratePostgresOutbox, PostgresOutbox, type PostgresOutboxOptions } from './outbox/postgres.ts';
export {
  OutboxRelay,
  type OutboxRelayHooks,
  type OutboxRelayOptions,
  type RelayBackoffOptions,
} from './outbox/relay.ts';
export { migrateSqliteOutbox, SqliteOutbox, type SqliteOutboxOptions } from './outbox/sqlite.ts';
export * from './producer.ts';
