import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type TestServer, useServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * FIFO group order and group blocking under concurrent consumers, through @aws-sdk/client-sqs against a
 * really started server; and a fair (standard) queue's tenant key coming back on receive.
 */

const GROUPS = 50;
const PER_GROUP = 20;
const CONSUMERS = 8;

let server: TestServer;
let sqs: SQSClient;
const run = randomBytes(4).toString('hex');

before(async () => {
  server = await useServer();
  sqs = sqsClient(server.endpoint);
});
after(async () => {
  sqs?.destroy();
  await server?.close();
});

/** A small seeded generator, so that a failing run can be replayed with the same choices. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('FIFO queue under concurrent consumers', () => {
  it(`${CONSUMERS} consumers and ${GROUPS} groups: no group processed out of order or two at a time`, {
    timeout: 120_000,
  }, async () => {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: `orders-${run}.fifo`, Attributes: { FifoQueue: 'true' } }),
    );
    const url = QueueUrl!;
    try {
      const sent = new Map<string, string[]>();
      const processed = new Map<string, string[]>();
      // The consumer holding each group from its receive until it issues the last delete or release.
      const holder = new Map<string, number>();
      const violations: string[] = [];
      let done = 0;
      let released = 0;
      const total = GROUPS * PER_GROUP;

      const consume = async (consumer: number) => {
        const random = seeded(consumer + 1);
        while (done < total) {
          const { Messages = [] } = await sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: url,
              MaxNumberOfMessages: 10,
              WaitTimeSeconds: 1,
              MessageSystemAttributeNames: ['MessageGroupId'],
            }),
          );
          const byGroup = new Map<string, Message[]>();
          for (const message of Messages) {
            const group = message.Attributes!.MessageGroupId!;
            if (!byGroup.has(group)) {
              const other = holder.get(group);
              if (other !== undefined)
                violations.push(`${group} delivered to ${consumer} while ${other} holds it`);
              holder.set(group, consumer);
              byGroup.set(group, []);
            }
            byGroup.get(group)!.push(message);
          }
          await Promise.all(
            [...byGroup].map(async ([group, messages]) => {
              const finished: Message[] = [];
              let failedFrom = messages.length;
              for (const [index, message] of messages.entries()) {
                // Simulated work; one message in ten fails, and with it the rest of its group's batch.
                await new Promise((resolve) => setTimeout(resolve, random() * 3));
                if (random() < 0.1) {
                  failedFrom = index;
                  break;
                }
                const list = processed.get(group) ?? [];
                list.push(message.Body!);
                processed.set(group, list);
                finished.push(message);
              }
              const unfinished = messages.slice(failedFrom);
              // Let go of the group before the requests that free it on the server go out.
              holder.delete(group);
              done += finished.length;
              released += unfinished.length;
              const entries = (list: Message[]) =>
                list.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle! }));
              await Promise.all([
                finished.length > 0 &&
                  sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: entries(finished) })),
                unfinished.length > 0 &&
                  sqs.send(
                    new ChangeMessageVisibilityBatchCommand({
                      QueueUrl: url,
                      Entries: entries(unfinished).map((entry) => ({ ...entry, VisibilityTimeout: 0 })),
                    }),
                  ),
              ]);
            }),
          );
        }
      };

      const consumers = Array.from({ length: CONSUMERS }, (_, consumer) => consume(consumer));
      // Sent while the consumers already run, ten at a time, groups interleaved.
      for (let batch = 0; batch < total / 10; batch++) {
        const entries = Array.from({ length: 10 }, (_, slot) => {
          const index = batch * 10 + slot;
          const group = `g${index % GROUPS}`;
          const body = `${group}-${Math.floor(index / GROUPS)}`;
          return { Id: String(slot), MessageBody: body, MessageGroupId: group, MessageDeduplicationId: body };
        });
        const result = await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
        assert.equal(result.Successful?.length, 10);
        for (const entry of entries)
          sent.set(entry.MessageGroupId, [...(sent.get(entry.MessageGroupId) ?? []), entry.MessageBody]);
      }
      await Promise.all(consumers);

      assert.deepEqual(violations, []);
      assert.equal(processed.size, GROUPS);
      for (const [group, bodies] of sent) assert.deepEqual(processed.get(group), bodies, `order of ${group}`);
      assert.ok(released > 0, 'the run released some messages back, so redelivery order was exercised');
    } finally {
      await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    }
  });
});

describe('fair queue', () => {
  it('accepts MessageGroupId on a standard queue as a tenant key and returns it on receive', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `tenants-${run}` }));
    try {
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'for A', MessageGroupId: 'tenant-a' }));
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MessageSystemAttributeNames: ['MessageGroupId', 'SequenceNumber'],
        }),
      );
      assert.equal(Messages[0]?.Body, 'for A');
      assert.equal(Messages[0]?.Attributes?.MessageGroupId, 'tenant-a');
      assert.equal(
        Messages[0]?.Attributes?.SequenceNumber,
        undefined,
        'no sequence numbers on standard queues',
      );
    } finally {
      await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    }
  });
});
