import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CreateTopicCommand, PublishCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { snsClient } from '../helpers/sns-client.ts';
import { assertSignatureVerifies, type SnsEnvelope } from '../helpers/sns-envelope.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { STORE_BACKENDS, type StoreBackend } from '../helpers/store-backends.ts';

/**
 * What a subscription's dead-letter queue receives, as recorded on AWS (LocalStack's
 * `test_redrive_policy_sqs_queue_subscription[True|False]`, validated on AWS 2023-08-24; see
 * docs/decisions/sns-topics.md): the message exactly as the subscription would have delivered it, and nothing
 * added. Raw delivery: the body and the published attributes as SQS message attributes. Otherwise: the JSON
 * envelope as the body, and no SQS message attributes at all (no ErrorCode, ErrorMessage or RequestID, which
 * Lambda adds to its own dead-letter messages, not SNS).
 */

/** The recording's message: a Number and a Binary attribute. */
const PUBLISHED = {
  Message: 'test_dlq_after_sqs_endpoint_deleted',
  MessageAttributes: {
    attr1: { DataType: 'Number', StringValue: '111' },
    attr2: { DataType: 'Binary', BinaryValue: new Uint8Array([2, 3, 4]) },
  },
};

async function receiveOne(sqs: SQSClient, QueueUrl: string): Promise<Message> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if (Messages.length > 0) {
      assert.equal(Messages.length, 1, 'one dead letter');
      return Messages[0]!;
    }
  }
  return assert.fail(`nothing arrived in ${QueueUrl}`);
}

/** The two dead letters, raw and wrapped, checked against the recording's shape. */
async function assertDeadLetters(sqs: SQSClient, raw: string, wrapped: string, topicArn: string, id: string) {
  const rawLetter = await receiveOne(sqs, raw);
  assert.equal(rawLetter.Body, PUBLISHED.Message);
  assert.deepEqual(Object.keys(rawLetter.MessageAttributes ?? {}).sort(), ['attr1', 'attr2']);
  assert.deepEqual(rawLetter.MessageAttributes?.attr1, { DataType: 'Number', StringValue: '111' });
  assert.equal(rawLetter.MessageAttributes?.attr2?.DataType, 'Binary');
  assert.deepEqual([...(rawLetter.MessageAttributes?.attr2?.BinaryValue ?? [])], [2, 3, 4]);
  assert.equal(rawLetter.Attributes?.ApproximateReceiveCount, '1');

  const wrappedLetter = await receiveOne(sqs, wrapped);
  assert.equal(wrappedLetter.MessageAttributes, undefined, 'the envelope carries the attributes, SQS none');
  assert.equal(wrappedLetter.MD5OfMessageAttributes, undefined);
  const envelope = JSON.parse(wrappedLetter.Body!) as SnsEnvelope;
  assert.equal(envelope.Type, 'Notification');
  assert.equal(envelope.MessageId, id);
  assert.equal(envelope.TopicArn, topicArn);
  assert.equal(envelope.Message, PUBLISHED.Message);
  assert.deepEqual(envelope.MessageAttributes, {
    attr1: { Type: 'Number', Value: '111' },
    attr2: { Type: 'Binary', Value: 'AgME' },
  });
  await assertSignatureVerifies(envelope);
}

for (const [label, start] of STORE_BACKENDS) {
  describe(`SNS subscription dead-letter queues on ${label}`, () => {
    let backend: StoreBackend;
    let sns: ReturnType<typeof snsClient>;
    let sqs: SQSClient;
    const queue = async (QueueName: string) => {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName }));
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
      );
      return { url: QueueUrl!, arn: Attributes!.QueueArn! };
    };
    before(async () => {
      backend = await start();
      sns = snsClient(backend.endpoint);
      sqs = sqsClient(backend.endpoint);
    });
    after(async () => backend?.close());

    test('a deleted queue: its deliveries arrive in the dead-letter queues as they would have been delivered, nothing added', async () => {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'dead-letters' }));
      const subscribe = async (name: string, raw: boolean) => {
        const target = await queue(`${name}-target`);
        const deadLetters = await queue(`${name}-dlq`);
        await sns.send(
          new SubscribeCommand({
            TopicArn,
            Protocol: 'sqs',
            Endpoint: target.arn,
            Attributes: {
              RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetters.arn }),
              RawMessageDelivery: String(raw),
            },
          }),
        );
        await sqs.send(new DeleteQueueCommand({ QueueUrl: target.url }));
        return deadLetters.url;
      };
      const raw = await subscribe('raw', true);
      const wrapped = await subscribe('wrapped', false);
      const { MessageId } = await sns.send(new PublishCommand({ TopicArn, ...PUBLISHED }));
      await assertDeadLetters(sqs, raw, wrapped, TopicArn!, MessageId!);
    });
  });

  describe(`SNS subscription dead-letter queues with --strict-policies on ${label}`, () => {
    let backend: StoreBackend;
    before(async () => {
      backend = await start({ strictPolicies: true });
    });
    after(async () => backend?.close());

    test('a queue whose policy refuses the topic: the dead-letter queue that allows it gets the same shape', async () => {
      const sns = snsClient(backend.endpoint);
      const sqs = sqsClient(backend.endpoint);
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'refused' }));
      const allowTopic = async (url: string, arn: string) =>
        sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: url,
            Attributes: {
              Policy: JSON.stringify({
                Version: '2012-10-17',
                Statement: [
                  {
                    Effect: 'Allow',
                    Principal: { Service: 'sns.amazonaws.com' },
                    Action: 'sqs:SendMessage',
                    Resource: arn,
                    Condition: { ArnEquals: { 'aws:SourceArn': TopicArn } },
                  },
                ],
              }),
            },
          }),
        );
      const subscribe = async (name: string, raw: boolean) => {
        const { QueueUrl: closed } = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-closed` }));
        const { QueueUrl: deadLetters } = await sqs.send(
          new CreateQueueCommand({ QueueName: `${name}-open-dlq` }),
        );
        const arnOf = async (QueueUrl: string) =>
          (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] })))
            .Attributes!.QueueArn!;
        const deadLetterArn = await arnOf(deadLetters!);
        await allowTopic(deadLetters!, deadLetterArn);
        await sns.send(
          new SubscribeCommand({
            TopicArn,
            Protocol: 'sqs',
            Endpoint: await arnOf(closed!),
            Attributes: {
              RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetterArn }),
              RawMessageDelivery: String(raw),
            },
          }),
        );
        return { closed: closed!, deadLetters: deadLetters! };
      };
      const raw = await subscribe('strict-raw', true);
      const wrapped = await subscribe('strict-wrapped', false);
      const { MessageId } = await sns.send(new PublishCommand({ TopicArn, ...PUBLISHED }));
      await assertDeadLetters(sqs, raw.deadLetters, wrapped.deadLetters, TopicArn!, MessageId!);
      for (const { closed } of [raw, wrapped]) {
        const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: closed }));
        assert.deepEqual(Messages, [], 'the refusing queue received nothing');
      }
    });
  });
}
