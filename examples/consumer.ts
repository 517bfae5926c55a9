/**
 * A complete consumer: idempotent processing, poison messages to the DLQ with the reason, graceful shutdown
 * on SIGTERM, one JSON log line per event. Run it with
 *   QUEUE_URL=http://127.0.0.1:9324/000000000000/orders SQS_ENDPOINT=http://127.0.0.1:9324 \
 *     node --conditions=sluice-source --import tsx examples/consumer.ts
 * Each message body is an order, `{"orderId": "o-1", "amountCents": 500}`; a body that is not one fails.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SQSClient } from '@aws-sdk/client-sqs';
import Database from 'better-sqlite3';
import { Consumer, idempotent, type Message, receiveCount } from 'sluice-client';
import { SqliteIdempotencyStore } from 'sluice-client/sqlite';

const queueUrl = required('QUEUE_URL');
/** Simulated work per order, ms (the tests use a long one to kill the process mid-handler). */
const workMs = Number(process.env.WORK_MS ?? 20);

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

function log(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), event, ...fields })}\n`);
}

// 1. The SQS client: against AWS leave SQS_ENDPOINT unset and let the SDK find region and credentials.
const sqs = new SQSClient({
  ...(process.env.SQS_ENDPOINT
    ? {
        endpoint: process.env.SQS_ENDPOINT,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : {}),
});

// 2. The business step, made idempotent: a redelivered order (visibility lapsed, crash before the delete,
// or the producer sent it twice) returns the stored result instead of charging again.
const db = new Database(process.env.IDEMPOTENCY_DB ?? 'consumer-example.db');
const store = new SqliteIdempotencyStore(db);

interface Order {
  orderId: string;
  amountCents: number;
}

function parseOrder(message: Message): Order {
  const order = JSON.parse(message.Body ?? '') as Partial<Order>;
  if (typeof order.orderId !== 'string' || !Number.isInteger(order.amountCents)) {
    throw new Error(`not an order: ${message.Body}`);
  }
  return order as Order;
}

const charge = idempotent(
  async (message: Message, signal: AbortSignal) => {
    const order = parseOrder(message);
    await sleep(workMs, undefined, { signal }); // the real work; it stops if the consumer aborts it
    log('charged', { orderId: order.orderId, amountCents: order.amountCents });
    return { orderId: order.orderId, chargedCents: order.amountCents };
  },
  // The key is the business id, not the MessageId: two sends of one order are one charge.
  { store, key: (message) => parseOrder(message).orderId, ttlSeconds: 24 * 3600 },
);

// 3. The consumer: heartbeats keep a message invisible while `charge` runs; success deletes it; failure
// brings it back after a backoff; on the last receive before the queue's maxReceiveCount it goes to the DLQ
// with the error text, stack and time as message attributes.
const consumer = new Consumer({
  sqs,
  queueUrl,
  concurrency: 16,
  poisonToDeadLetterQueue: true,
  backoff: { initialSeconds: 1, maxSeconds: 60 },
  shutdownTimeoutSeconds: 20,
  handler: (message, { signal }) => charge(message, signal),
});

// 4. Logging: one line per event, with the ids needed to follow a message.
consumer
  .on('received', (messages) => log('received', { count: messages.length }))
  .on('processed', (message) => log('processed', { messageId: message.MessageId }))
  .on('failed', (message, error, handling) =>
    log('failed', {
      messageId: message.MessageId,
      receiveCount: receiveCount(message),
      error: error instanceof Error ? error.message : String(error),
      handling,
    }),
  )
  .on('heartbeatFailed', (message, code) => log('heartbeat-failed', { messageId: message.MessageId, code }))
  .on('handlerTimeout', (messages, reason) => log('handler-timeout', { count: messages.length, reason }))
  .on('receiveFailed', (error) => log('receive-failed', { error: String(error) }))
  .on('deleteFailed', (message, code) => log('delete-failed', { messageId: message.MessageId, code }))
  // 5. Graceful shutdown: on SIGTERM the consumer stops receiving, lets running handlers finish (up to
  // shutdownTimeoutSeconds), gives back unstarted messages and sends pending deletes, then emits `stopped`.
  .on('stopped', () => {
    sqs.destroy();
    db.close();
    log('stopped');
  });

await consumer.start();
log('started', { queueUrl, visibilityTimeoutSeconds: consumer.visibilityTimeoutSeconds });
