// A consumer's failure path, tested against `npx sluice serve --test-clock` in well under a second: the
// visibility timeouts it waits out are moved past with advanceClock instead of slept through.
//   SLUICE_ENDPOINT=http://127.0.0.1:9324 node --import tsx --test examples/consumer-dead-letter.test.ts
import assert from 'node:assert/strict';
import { after, beforeEach, it } from 'node:test';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { Consumer, type FailureHandling, type Message } from 'sluice-client';
import { advanceClock, reset } from 'sluice-client/testing';

const endpoint = process.env.SLUICE_ENDPOINT ?? 'http://127.0.0.1:9324';
const sqs = new SQSClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
});

// Every test starts from an empty server.
beforeEach(() => reset(endpoint));
after(() => sqs.destroy());

it('sends an order that keeps failing to the dead-letter queue after 3 receives', async () => {
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: 'orders-dlq' }));
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const orders = await sqs.send(
    new CreateQueueCommand({
      QueueName: 'orders',
      Attributes: {
        VisibilityTimeout: '10',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount: 3 }),
      },
    }),
  );
  await sqs.send(new SendMessageCommand({ QueueUrl: orders.QueueUrl, MessageBody: '{"orderId":"o-1"}' }));

  const consumer = new Consumer({
    sqs,
    queueUrl: orders.QueueUrl!,
    handler: async () => {
      throw new Error('payment service down');
    },
    // A failed order comes back when the queue's visibility timeout runs out.
    backoff: false,
    stopOnSignals: [],
  });
  const nextFailure = () =>
    new Promise<FailureHandling>((resolve) => {
      const failed = (_message: Message, _error: unknown, handling: FailureHandling) => {
        consumer.off('failed', failed);
        resolve(handling);
      };
      consumer.on('failed', failed);
    });

  let failure = nextFailure();
  await consumer.start();
  for (const receive of [1, 2]) {
    assert.equal((await failure).kind, 'backoff', `receive ${receive}`);
    failure = nextFailure();
    // Ten seconds of the server's time: the order is visible again, and the consumer's long poll gets it.
    await advanceClock(endpoint, 10);
  }
  // The third receive is the last: the consumer sends the order to the DLQ with its error, and deletes it.
  assert.equal((await failure).kind, 'dead-lettered');
  await consumer.stop();

  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: dlq.QueueUrl, MessageAttributeNames: ['All'] }),
  );
  assert.equal(Messages?.[0]?.Body, '{"orderId":"o-1"}');
  assert.equal(Messages?.[0]?.MessageAttributes?.SluiceError?.StringValue, 'Error: payment service down');
});
