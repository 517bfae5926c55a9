import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from 'sluice-client/clock';
import type { NotificationSigner } from '../../packages/server/src/core/sns/envelope.ts';
import type { SnsService } from '../../packages/server/src/core/sns/sns-service.ts';
import type { SqsService } from '../../packages/server/src/core/sqs-service.ts';
import type { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { snsOnMemoryStore } from '../helpers/sns-services.ts';

/**
 * A publication's fan-out writes, checks and signs what its deliveries share once (docs/decisions/sns-topics.md):
 * what each queue receives, and what it refuses, is still what a send of that delivery would give.
 */

/** Signs with a text's digest, so equal texts get equal signatures, and counts the signatures made. */
class CountingSigner implements NotificationSigner {
  signed = 0;
  async sign(text: string): Promise<string> {
    this.signed++;
    return createHash('sha256').update(text).digest('base64');
  }
  async certificateUrl(baseUrl: string): Promise<string> {
    return `${baseUrl}/SimpleNotificationService-test.pem`;
  }
}

interface Envelope {
  Message: string;
  Signature: string;
  UnsubscribeURL: string;
  Subject?: string;
}

describe('SNS fan-out: what every delivery of a publication shares', () => {
  const context = { baseUrl: 'http://127.0.0.1:9324', senderId: 'AKIDTEST' };
  const clock = new FakeClock();
  const signer = new CountingSigner();
  const dropped: string[] = [];
  let store: SqliteStore;
  let sqs: SqsService;
  let sns: SnsService;
  let topicCount = 0;
  before(() => {
    ({ store, sqs, sns } = snsOnMemoryStore({
      clock,
      signer,
      warn: (details) => dropped.push(String(details.reason)),
    }));
  });
  after(() => store.close());

  /** A fresh topic with one queue per subscription asked for (raw or wrapped), each with a dead-letter queue. */
  async function topicWith(raws: boolean[]) {
    const name = `topic-${++topicCount}`;
    const { TopicArn } = await sns.CreateTopic({ Name: name });
    const queues = [];
    for (const [index, raw] of raws.entries()) {
      const queueName = `${name}-${index}`;
      const { QueueUrl } = await sqs.actions.CreateQueue({ QueueName: queueName }, context);
      const { QueueUrl: deadLetterUrl } = await sqs.actions.CreateQueue(
        { QueueName: `${queueName}-dlq` },
        context,
      );
      const { SubscriptionArn } = await sns.Subscribe(
        {
          TopicArn,
          Protocol: 'sqs',
          Endpoint: sqs.queues.queueArn(queueName),
          Attributes: {
            RawMessageDelivery: String(raw),
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: sqs.queues.queueArn(`${queueName}-dlq`) }),
          },
        },
        context,
      );
      queues.push({ url: QueueUrl!, deadLetterUrl: deadLetterUrl!, subscriptionArn: SubscriptionArn! });
    }
    return { TopicArn: TopicArn!, name, queues };
  }

  async function receive(QueueUrl: string) {
    const { Messages = [] } = await sqs.actions.ReceiveMessage(
      { QueueUrl, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] },
      context,
    );
    return Messages;
  }

  it('signs a publication once for all its queues and for an endpoint given the same text', async () => {
    const { TopicArn, name, queues } = await topicWith([false, false]);
    // A confirmed HTTP subscription, as ConfirmSubscription leaves it.
    const endpointArn = `${TopicArn}:endpoint`;
    await store.createSubscription({
      arn: endpointArn,
      topicName: name,
      protocol: 'http',
      endpoint: 'http://127.0.0.1:1/hook',
      owner: sqs.accountId,
      attributes: {},
      now: clock.now(),
    });
    const before = signer.signed;
    await sns.Publish({ TopicArn, Message: 'signed once' }, context);
    assert.equal(signer.signed - before, 1);
    const envelopes = await Promise.all(
      queues.map(async ({ url }) => JSON.parse((await receive(url))[0]!.Body!) as Envelope),
    );
    const [delivery] = await store.listEndpointDeliveries(endpointArn, 10);
    const endpointEnvelope = JSON.parse(delivery!.body) as Envelope;
    for (const envelope of [...envelopes, endpointEnvelope]) {
      assert.equal(envelope.Message, 'signed once');
      assert.equal(envelope.Signature, envelopes[0]!.Signature);
    }
    assert.deepEqual(
      [...envelopes, endpointEnvelope].map((envelope) => envelope.UnsubscribeURL),
      [...queues.map((queue) => queue.subscriptionArn), endpointArn].map(
        (arn) => `${context.baseUrl}/?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(arn)}`,
      ),
    );
  });

  it('puts the same raw content into every queue: each its own message, the digests a send gives', async () => {
    const { TopicArn, queues } = await topicWith([true, true, true]);
    const MessageAttributes = {
      colour: { DataType: 'String', StringValue: 'blue' },
      size: { DataType: 'Number', StringValue: '3' },
    };
    await sns.Publish({ TopicArn, Message: 'shared', MessageAttributes }, context);
    const sent = await sqs.actions.SendMessage(
      { QueueUrl: queues[0]!.deadLetterUrl, MessageBody: 'shared', MessageAttributes },
      context,
    );
    const received = (await Promise.all(queues.map(({ url }) => receive(url)))).flat();
    assert.equal(received.length, 3);
    assert.equal(new Set(received.map((message) => message.MessageId)).size, 3);
    for (const message of received) {
      assert.equal(message.Body, 'shared');
      assert.equal(message.MD5OfBody, sent.MD5OfMessageBody);
      assert.equal(message.MD5OfMessageAttributes, sent.MD5OfMessageAttributes);
      assert.deepEqual(message.MessageAttributes, MessageAttributes);
    }
  });

  it('refuses in each queue what a send of its delivery would be refused: the envelope is checked as its text', async () => {
    const cases = [
      // A control character: escaped in the envelope's JSON, refused as a raw body.
      { input: { Message: 'a\u0001b' }, wrapped: true, raw: false },
      // U+FFFF stays as it is in JSON: refused both ways.
      { input: { Message: 'x\uFFFF' }, wrapped: false, raw: false },
      // A subject is in the envelope only.
      { input: { Message: 'plain', Subject: 'odd \uFFFE' }, wrapped: false, raw: true },
    ];
    for (const { input, wrapped, raw } of cases) {
      const { TopicArn, queues } = await topicWith([false, true]);
      await sns.Publish({ TopicArn, ...input }, context);
      const [wrappedQueue, rawQueue] = queues;
      assert.equal((await receive(wrappedQueue!.url)).length, wrapped ? 1 : 0, `wrapped ${input.Message}`);
      assert.equal((await receive(rawQueue!.url)).length, raw ? 1 : 0, `raw ${input.Message}`);
      // The dead-letter queue applies the same rule, so it takes nothing the queue refused.
      assert.equal((await receive(wrappedQueue!.deadLetterUrl)).length, 0);
      assert.equal((await receive(rawQueue!.deadLetterUrl)).length, 0);
    }
  });

  it('drops a raw delivery whose attributes SQS refuses, from the queue and its dead-letter queue alike', async () => {
    const { TopicArn, queues } = await topicWith([true, true, false]);
    dropped.length = 0;
    // SNS reserves only `AWS.`; SQS refuses `aws.` too.
    await sns.Publish(
      {
        TopicArn,
        Message: 'reserved',
        MessageAttributes: { 'aws.x': { DataType: 'String', StringValue: 'v' } },
      },
      context,
    );
    for (const { url, deadLetterUrl } of queues.slice(0, 2)) {
      assert.equal((await receive(url)).length, 0);
      assert.equal((await receive(deadLetterUrl)).length, 0);
    }
    assert.equal((await receive(queues[2]!.url)).length, 1);
    assert.equal(dropped.length, 2);
    for (const reason of dropped) assert.match(reason, /AWS-reserved prefix/);
  });

  it("does not make a publish pay for what only long polls and receives read of the request's context", async () => {
    const { TopicArn, queues } = await topicWith([true]);
    const read: string[] = [];
    // The HTTP transport's context makes these on first read: an abort signal and an answer share, each
    // with a close listener on the response.
    const lazyContext = {
      ...context,
      traceHeader: 'Root=1-5759e988-bd862e3fe1be46a994272793',
      get signal() {
        read.push('signal');
        return undefined;
      },
      get answerRoom() {
        read.push('answerRoom');
        return undefined;
      },
    };
    await sns.Publish({ TopicArn, Message: 'traced' }, lazyContext);
    assert.deepEqual(read, []);
    const { Messages = [] } = await sqs.actions.ReceiveMessage(
      { QueueUrl: queues[0]!.url, MessageSystemAttributeNames: ['AWSTraceHeader', 'SenderId'] },
      context,
    );
    assert.equal(Messages[0]?.Attributes?.AWSTraceHeader, lazyContext.traceHeader);
    assert.equal(Messages[0]?.Attributes?.SenderId, sqs.accountId);
  });

  it("writes a FIFO topic's envelopes with each publication's sequence number, and their digests", async () => {
    const { TopicArn } = await sns.CreateTopic({
      Name: 'ordered.fifo',
      Attributes: { FifoTopic: 'true', ContentBasedDeduplication: 'true' },
    });
    const urls = [];
    for (const QueueName of ['ordered-a.fifo', 'ordered-b.fifo']) {
      const { QueueUrl } = await sqs.actions.CreateQueue(
        { QueueName, Attributes: { FifoQueue: 'true' } },
        context,
      );
      await sns.Subscribe({ TopicArn, Protocol: 'sqs', Endpoint: sqs.queues.queueArn(QueueName) }, context);
      urls.push(QueueUrl!);
    }
    const { Successful = [] } = await sns.PublishBatch(
      {
        TopicArn,
        PublishBatchRequestEntries: ['first', 'second'].map((Message, index) => ({
          Id: `e${index}`,
          Message,
          MessageGroupId: 'g',
        })),
      },
      context,
    );
    for (const url of urls) {
      const messages = await receive(url);
      const envelopes = messages.map(
        (message) => JSON.parse(message.Body!) as Envelope & { SequenceNumber: string },
      );
      assert.deepEqual(
        envelopes.map((envelope) => [envelope.Message, envelope.SequenceNumber]),
        Successful.map((entry, index) => [['first', 'second'][index], entry.SequenceNumber]),
      );
      for (const message of messages)
        assert.equal(message.MD5OfBody, createHash('md5').update(message.Body!).digest('hex'));
    }
  });
});
