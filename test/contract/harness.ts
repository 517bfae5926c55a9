import assert from 'node:assert/strict';
import { after, before, type TestContext } from 'node:test';
import { FakeClock } from 'sluice-client/clock';
import type { ReceiveMessageRequest, SendMessageRequest } from '../../packages/server/src/core/api-types.ts';
import { SqsError } from '../../packages/server/src/core/errors.ts';
import type { RequestContext } from '../../packages/server/src/core/request-context.ts';
import { type ServiceOptions, SqsService, serviceReads } from '../../packages/server/src/core/sqs-service.ts';
import type { Store } from '../../packages/server/src/store/contract.ts';

/** How a contract suite opens a fresh store of one backend. */
export interface StoreFactory {
  /** Opens the backend's store; opened again after a close, it holds what the first one left (restarts). */
  open(): Promise<Store>;
  /** Removes what open() created. */
  destroy(): Promise<void>;
  /**
   * Resolves once the store has no work under way, for a backend whose work finishes in real time (a
   * database server); the fake clock waits for it before firing each timer, as it waits for immediates.
   */
  idle?(store: Store): Promise<boolean>;
}

/** How a contract suite runs on one backend. */
export interface SuiteOptions {
  /** false for a store that keeps nothing once closed (SQLite in memory): its restart tests are skipped. */
  persistent?: boolean;
}

/**
 * For a test that restarts the store: skips it, and returns true, where nothing outlives a close. (Called
 * inside the test, so that the tests keep their shape on the backends that run them.)
 */
export function skipsRestart(t: TestContext, options: SuiteOptions): boolean {
  if (options.persistent !== false) return false;
  t.skip('this store keeps nothing once closed');
  return true;
}

/**
 * The rows that break the tenant column's rule, in SQL both backends run: a row of a standard queue has its group
 * id as tenant, a FIFO queue's row has none (so FIFO rows stay out of the tenant index). Each backend's suites
 * run it on the rows they leave, whichever path put them where they are (sends, DLQ moves, move tasks, replays).
 */
export const ROWS_BREAKING_TENANT_RULE = `SELECT m.seq, q.fifo, m.group_id, m.tenant
  FROM messages m JOIN queues q ON q.id = m.queue_id
  WHERE m.tenant IS DISTINCT FROM (CASE WHEN q.fifo THEN NULL ELSE m.group_id END)`;

export const context: RequestContext = { baseUrl: 'http://127.0.0.1:9324', senderId: 'AKIDTEST' };

export type ReceivedMessage = {
  MessageId: string;
  ReceiptHandle: string;
  Body: string;
  MD5OfBody: string;
  Attributes?: Record<string, string>;
  MessageAttributes?: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>;
  MD5OfMessageAttributes?: string;
};

/** What useContractService gives a suite, for the parts of a suite kept in their own files. */
export type ContractService = ReturnType<typeof useContractService>;

/**
 * A service on a store of the backend under test and a fake clock, opened before the suite's tests and
 * closed after them, with the calls the suites make most. Read its fields inside tests only.
 */
export function useContractService(
  factory: () => StoreFactory,
  options: Omit<ServiceOptions, 'store' | 'clock'> = {},
) {
  let made: StoreFactory;
  let queueCounter = 0;
  const harness = {
    clock: undefined as unknown as FakeClock,
    service: undefined as unknown as SqsService,
    store: undefined as unknown as Store,
    /** What background jobs read (serviceReads), for the tests that run them. */
    get reads() {
      return serviceReads(harness.service, harness.store);
    },
    /** A new queue with a unique name; FIFO when `FifoQueue` is 'true'. */
    async newQueue(attributes: Record<string, string> = {}): Promise<string> {
      const name = `q${++queueCounter}${attributes.FifoQueue === 'true' ? '.fifo' : ''}`;
      const { QueueUrl } = await harness.service.actions.CreateQueue(
        { QueueName: name, Attributes: attributes },
        context,
      );
      return QueueUrl;
    },
    send: (QueueUrl: string, body: string, extra: Partial<SendMessageRequest> = {}) =>
      harness.service.actions.SendMessage({ QueueUrl, MessageBody: body, ...extra }, context),
    async receive(QueueUrl: string, extra: Partial<ReceiveMessageRequest> = {}): Promise<ReceivedMessage[]> {
      const output = await harness.service.actions.ReceiveMessage(
        {
          QueueUrl,
          MaxNumberOfMessages: 10,
          AttributeNames: ['All'],
          MessageAttributeNames: ['All'],
          ...extra,
        },
        context,
      );
      return (output.Messages ?? []) as ReceivedMessage[];
    },
    async counts(QueueUrl: string) {
      const { Attributes } = (await harness.service.actions.GetQueueAttributes({
        QueueUrl,
        AttributeNames: ['All'],
      })) as {
        Attributes: Record<string, string>;
      };
      return {
        visible: Number(Attributes.ApproximateNumberOfMessages),
        notVisible: Number(Attributes.ApproximateNumberOfMessagesNotVisible),
        delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed),
      };
    },
    arn: (url: string) => `arn:aws:sqs:us-east-1:000000000000:${url.split('/').at(-1)}`,
    /** Stops the service and closes the store, then opens both again on the same data (a server restart). */
    async restart(): Promise<void> {
      await harness.service.moveTasks.stop();
      harness.service.longPoll.closeAll();
      await harness.store.close();
      harness.store = await made.open();
      harness.service = new SqsService({ ...options, store: harness.store, clock: harness.clock });
      await harness.service.moveTasks.resume();
    },
    async rejects(promise: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
      await assert.rejects(promise, (error: unknown) => {
        assert.ok(error instanceof SqsError, `expected SqsError, got ${String(error)}`);
        assert.equal(error.code, code);
        if (message) assert.match(error.message, message);
        return true;
      });
    },
  };
  before(async () => {
    made = factory();
    harness.store = await made.open();
    harness.clock = new FakeClock(undefined, made.idle && (() => made.idle!(harness.store)));
    harness.service = new SqsService({ ...options, store: harness.store, clock: harness.clock });
  });
  after(async () => {
    await harness.service.moveTasks.stop();
    harness.service.longPoll.closeAll();
    await harness.store.close();
    await made.destroy();
  });
  return harness;
}
