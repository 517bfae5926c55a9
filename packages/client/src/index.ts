/**
 * The client toolkit: consumer, idempotency, producer, outbox and large payloads over the public SQS API.
 * Parts that need another package live in their own entry points, so this one loads with
 * `@aws-sdk/client-sqs` alone: `sluice-client/sqlite` (better-sqlite3), `sluice-client/postgres` (pg),
 * `sluice-client/s3` (@aws-sdk/client-s3), `sluice-client/clock`, and `sluice-client/testing` (helpers for
 * tests against `sluice serve --test-clock`).
 */

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
export {
  IdempotencyInProgressError,
  type IdempotencyOptions,
  idempotent,
} from './idempotency/idempotent.ts';
export type { IdempotencyRecord, IdempotencyStore } from './idempotency/store.ts';
export * from './large-payload/index.ts';
export type { OutboxMessage, OutboxRow, OutboxStore, PublishFailure } from './outbox/message.ts';
export {
  OutboxRelay,
  type OutboxRelayHooks,
  type OutboxRelayOptions,
  type RelayBackoffOptions,
} from './outbox/relay.ts';
export * from './producer.ts';
