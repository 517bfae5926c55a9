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
export * from './producer.ts';
