import assert from 'node:assert/strict';
import { verify, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  CreateTopicCommand,
  DeleteTopicCommand,
  GetSubscriptionAttributesCommand,
  GetTopicAttributesCommand,
  ListSubscriptionsByTopicCommand,
  ListTagsForResourceCommand,
  ListTopicsCommand,
  PublishBatchCommand,
  PublishCommand,
  SetSubscriptionAttributesCommand,
  SNSServiceException,
  SubscribeCommand,
  TagResourceCommand,
  UnsubscribeCommand,
} from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { eventually } from '../helpers/client-toolkit.ts';
import { useServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { STORE_BACKENDS, type StoreBackend } from '../helpers/store-backends.ts';

/**
 * SNS on Sluice's port, through the AWS SDK's SNS and SQS clients, on both stores: topics, subscriptions,
 * the envelope and its signature, raw delivery, MessageStructure=json, filter policies in both scopes, FIFO
 * topics into FIFO queues, subscription dead-letter queues.
 */

const errorOf = async (promise: Promise<unknown>): Promise<SNSServiceException> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SNSServiceException) return error;
    throw error;
  }
  assert.fail('expected an SNS error');
};

async function receiveAll(sqs: SQSClient, QueueUrl: string, expected: number) {
  const bodies: Array<{
    Body?: string;
    MessageAttributes?: Record<string, unknown>;
    Attributes?: Record<string, string>;
  }> = [];
  for (let attempt = 0; attempt < 20 && bodies.length < expected; attempt++) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 600,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    bodies.push(...Messages);
  }
  return bodies;
}

for (const [label, start] of STORE_BACKENDS) {
  describe(`SNS on ${label}`, () => {
    let backend: StoreBackend;
    let sns: ReturnType<typeof snsClient>;
    let sqs: SQSClient;
    const queue = async (QueueName: string, Attributes?: Record<string, string>) => {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName, Attributes }));
      const { Attributes: attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
      );
      return { url: QueueUrl!, arn: attributes!.QueueArn! };
    };

    before(async () => {
      backend = await start();
      sns = snsClient(backend.endpoint);
      sqs = sqsClient(backend.endpoint);
    });
    after(async () => backend.close());

    test('topics: created idempotently, listed, described, tagged and deleted', async () => {
      const { TopicArn } = await sns.send(
        new CreateTopicCommand({ Name: 'orders', Attributes: { DisplayName: 'Orders' } }),
      );
      assert.equal(TopicArn, 'arn:aws:sns:us-east-1:000000000000:orders');
      const again = await sns.send(
        new CreateTopicCommand({ Name: 'orders', Attributes: { DisplayName: 'Orders' } }),
      );
      assert.equal(again.TopicArn, TopicArn);
      const different = await errorOf(
        sns.send(new CreateTopicCommand({ Name: 'orders', Attributes: { DisplayName: 'Other' } })),
      );
      assert.equal(different.name, 'InvalidParameterException');
      assert.match(
        different.message,
        /^Invalid parameter: Attributes Reason: Topic already exists with different attributes/,
      );
      const { Attributes } = await sns.send(new GetTopicAttributesCommand({ TopicArn }));
      assert.equal(Attributes?.DisplayName, 'Orders');
      assert.equal(Attributes?.SubscriptionsConfirmed, '0');
      assert.equal(Attributes?.Owner, '000000000000');
      assert.equal(JSON.parse(Attributes!.Policy!).Statement[0].Resource, TopicArn);
      await sns.send(new TagResourceCommand({ ResourceArn: TopicArn, Tags: [{ Key: 'team', Value: 'a' }] }));
      const { Tags } = await sns.send(new ListTagsForResourceCommand({ ResourceArn: TopicArn }));
      assert.deepEqual(Tags, [{ Key: 'team', Value: 'a' }]);
      for (let i = 0; i < 105; i++)
        await sns.send(new CreateTopicCommand({ Name: `page-${String(i).padStart(3, '0')}` }));
      const first = await sns.send(new ListTopicsCommand({}));
      assert.equal(first.Topics?.length, 100);
      assert.ok(first.NextToken);
      const second = await sns.send(new ListTopicsCommand({ NextToken: first.NextToken }));
      assert.equal(second.Topics?.length, 6);
      assert.equal(second.NextToken, undefined);
      await sns.send(new DeleteTopicCommand({ TopicArn }));
      const gone = await errorOf(sns.send(new GetTopicAttributesCommand({ TopicArn })));
      assert.equal(gone.name, 'NotFoundException');
      assert.equal(gone.$metadata.httpStatusCode, 404);
    });

    test('a standard delivery is the signed envelope; raw delivery carries the body and attributes', async () => {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'events' }));
      const wrapped = await queue('events-wrapped');
      const raw = await queue('events-raw');
      const { SubscriptionArn } = await sns.send(
        new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: wrapped.arn }),
      );
      assert.match(SubscriptionArn!, /^arn:aws:sns:us-east-1:000000000000:events:[0-9a-f-]{36}$/);
      const same = await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: wrapped.arn }));
      assert.equal(same.SubscriptionArn, SubscriptionArn);
      await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'sqs',
          Endpoint: raw.arn,
          Attributes: { RawMessageDelivery: 'true' },
        }),
      );
      const { MessageId } = await sns.send(
        new PublishCommand({
          TopicArn,
          Message: 'hello "world"',
          Subject: 'greeting',
          MessageAttributes: { kind: { DataType: 'String', StringValue: 'greeting' } },
        }),
      );
      const [delivered] = await receiveAll(sqs, wrapped.url, 1);
      const envelope = JSON.parse(delivered!.Body!);
      assert.equal(envelope.Type, 'Notification');
      assert.equal(envelope.MessageId, MessageId);
      assert.equal(envelope.TopicArn, TopicArn);
      assert.equal(envelope.Subject, 'greeting');
      assert.equal(envelope.Message, 'hello "world"');
      assert.match(envelope.Timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(envelope.SignatureVersion, '1');
      assert.deepEqual(envelope.MessageAttributes, { kind: { Type: 'String', Value: 'greeting' } });
      assert.ok(envelope.UnsubscribeURL.includes(encodeURIComponent(SubscriptionArn!)));
      assert.deepEqual(Object.keys(envelope), [
        'Type',
        'MessageId',
        'TopicArn',
        'Subject',
        'Message',
        'Timestamp',
        'SignatureVersion',
        'Signature',
        'SigningCertURL',
        'UnsubscribeURL',
        'MessageAttributes',
      ]);
      // The signature verifies with the certificate the server serves at SigningCertURL.
      const certificate = new X509Certificate(await (await fetch(envelope.SigningCertURL)).text());
      const signed = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
        .map((name) => `${name}\n${envelope[name]}\n`)
        .join('');
      assert.ok(
        verify('sha1', Buffer.from(signed), certificate.publicKey, Buffer.from(envelope.Signature, 'base64')),
      );
      const [rawDelivery] = await receiveAll(sqs, raw.url, 1);
      assert.equal(rawDelivery!.Body, 'hello "world"');
      assert.deepEqual(rawDelivery!.MessageAttributes, {
        kind: { DataType: 'String', StringValue: 'greeting' },
      });
      const { Subscriptions } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
      assert.equal(Subscriptions?.length, 2);
      const { Attributes } = await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn }));
      assert.equal(Attributes?.Endpoint, wrapped.arn);
      assert.equal(Attributes?.RawMessageDelivery, 'false');
    });

    test('MessageStructure=json delivers the sqs text; filter policies choose by attributes and by body', async () => {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'filtered' }));
      const byAttribute = await queue('filtered-attribute');
      const byBody = await queue('filtered-body');
      const everything = await queue('filtered-all');
      await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'sqs',
          Endpoint: byAttribute.arn,
          Attributes: {
            FilterPolicy: JSON.stringify({ price: [{ numeric: ['>', 100] }] }),
            RawMessageDelivery: 'true',
          },
        }),
      );
      const { SubscriptionArn: bodyArn } = await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'sqs',
          Endpoint: byBody.arn,
          Attributes: { RawMessageDelivery: 'true' },
        }),
      );
      await sns.send(
        new SetSubscriptionAttributesCommand({
          SubscriptionArn: bodyArn,
          AttributeName: 'FilterPolicyScope',
          AttributeValue: 'MessageBody',
        }),
      );
      await sns.send(
        new SetSubscriptionAttributesCommand({
          SubscriptionArn: bodyArn,
          AttributeName: 'FilterPolicy',
          AttributeValue: JSON.stringify({ Records: { eventName: [{ prefix: 'ObjectCreated:' }] } }),
        }),
      );
      await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'sqs',
          Endpoint: everything.arn,
          Attributes: { RawMessageDelivery: 'true' },
        }),
      );
      const refused = await errorOf(
        sns.send(
          new SetSubscriptionAttributesCommand({
            SubscriptionArn: bodyArn,
            AttributeName: 'FilterPolicy',
            AttributeValue: '{"a": [{"nope": 1}]}',
          }),
        ),
      );
      assert.equal(refused.name, 'InvalidParameterException');
      await sns.send(
        new PublishCommand({
          TopicArn,
          Message: 'cheap',
          MessageAttributes: { price: { DataType: 'Number', StringValue: '5' } },
        }),
      );
      await sns.send(
        new PublishCommand({
          TopicArn,
          Message: 'dear',
          MessageAttributes: { price: { DataType: 'Number', StringValue: '500' } },
        }),
      );
      const s3Event = JSON.stringify({
        Records: [{ eventName: 'ObjectRemoved:Delete' }, { eventName: 'ObjectCreated:Put' }],
      });
      await sns.send(new PublishCommand({ TopicArn, Message: s3Event }));
      await sns.send(
        new PublishCommand({
          TopicArn,
          MessageStructure: 'json',
          Message: JSON.stringify({ default: 'for everyone', sqs: 'for queues', email: 'for mail' }),
        }),
      );
      assert.deepEqual(
        (await receiveAll(sqs, byAttribute.url, 1)).map((m) => m.Body),
        ['dear'],
      );
      assert.deepEqual(
        (await receiveAll(sqs, byBody.url, 1)).map((m) => m.Body),
        [s3Event],
      );
      const all = (await receiveAll(sqs, everything.url, 4)).map((m) => m.Body).sort();
      assert.deepEqual(all, ['cheap', 'dear', 'for queues', s3Event].sort());
      const noDefault = await errorOf(
        sns.send(new PublishCommand({ TopicArn, MessageStructure: 'json', Message: '{"sqs": "x"}' })),
      );
      assert.equal(
        noDefault.message,
        'Invalid parameter: Message Structure - No default entry in JSON message body',
      );
    });

    test('a FIFO topic needs a group, deduplicates, and keeps each group in order into a FIFO queue', async () => {
      const { TopicArn } = await sns.send(
        new CreateTopicCommand({
          Name: 'ledger.fifo',
          Attributes: { FifoTopic: 'true', ContentBasedDeduplication: 'true' },
        }),
      );
      const fifoQueue = await queue('ledger.fifo', { FifoQueue: 'true' });
      await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'sqs',
          Endpoint: fifoQueue.arn,
          Attributes: { RawMessageDelivery: 'true' },
        }),
      );
      const noGroup = await errorOf(sns.send(new PublishCommand({ TopicArn, Message: 'x' })));
      assert.equal(
        noGroup.message,
        'Invalid parameter: The MessageGroupId parameter is required for FIFO topics',
      );
      const first = await sns.send(new PublishCommand({ TopicArn, Message: 'one', MessageGroupId: 'g' }));
      const duplicate = await sns.send(new PublishCommand({ TopicArn, Message: 'one', MessageGroupId: 'g' }));
      assert.equal(duplicate.MessageId, first.MessageId);
      assert.equal(duplicate.SequenceNumber, first.SequenceNumber);
      assert.match(first.SequenceNumber!, /^\d{20}$/);
      const batch = await sns.send(
        new PublishBatchCommand({
          TopicArn,
          PublishBatchRequestEntries: ['two', 'three', 'four'].map((Message, i) => ({
            Id: `e${i}`,
            Message,
            MessageGroupId: 'g',
          })),
        }),
      );
      assert.equal(batch.Successful?.length, 3);
      const bodies: string[] = [];
      for (let attempt = 0; attempt < 20 && bodies.length < 4; attempt++) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: fifoQueue.url,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            VisibilityTimeout: 600,
          }),
        );
        bodies.push(...Messages.map((m) => m.Body!));
      }
      assert.deepEqual(bodies, ['one', 'two', 'three', 'four']);
      const standard = await sns.send(new CreateTopicCommand({ Name: 'plain' }));
      const fifoOnStandard = await errorOf(
        sns.send(
          new SubscribeCommand({ TopicArn: standard.TopicArn, Protocol: 'sqs', Endpoint: fifoQueue.arn }),
        ),
      );
      assert.equal(fifoOnStandard.name, 'InvalidParameterException');
    });

    test('an undeliverable message goes to the subscription dead-letter queue, else it is dropped', async () => {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'fragile' }));
      const target = await queue('fragile-target');
      const deadLetters = await queue('fragile-dlq');
      await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'sqs',
          Endpoint: target.arn,
          Attributes: {
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetters.arn }),
            RawMessageDelivery: 'true',
          },
        }),
      );
      const { SubscriptionArn: unguarded } = await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'sqs',
          Endpoint: 'arn:aws:sqs:us-east-1:000000000000:never-created',
        }),
      );
      await sqs.send(new DeleteQueueCommand({ QueueUrl: target.url }));
      await sns.send(new PublishCommand({ TopicArn, Message: 'lost queue' }));
      assert.deepEqual(
        (await receiveAll(sqs, deadLetters.url, 1)).map((m) => m.Body),
        ['lost queue'],
      );
      // Too large for the queue (its MaximumMessageSize), not for its dead-letter queue.
      const { TopicArn: bulky } = await sns.send(new CreateTopicCommand({ Name: 'bulky' }));
      const small = await queue('bulky-small', { MaximumMessageSize: '1024' });
      const bulkyDeadLetters = await queue('bulky-dlq');
      await sns.send(
        new SubscribeCommand({
          TopicArn: bulky,
          Protocol: 'sqs',
          Endpoint: small.arn,
          Attributes: {
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: bulkyDeadLetters.arn }),
            RawMessageDelivery: 'true',
          },
        }),
      );
      await sns.send(new PublishCommand({ TopicArn: bulky, Message: 'x'.repeat(2000) }));
      await sns.send(new PublishCommand({ TopicArn: bulky, Message: 'fits' }));
      assert.deepEqual(
        (await receiveAll(sqs, bulkyDeadLetters.url, 1)).map((m) => m.Body?.length),
        [2000],
      );
      assert.deepEqual(
        (await receiveAll(sqs, small.url, 1)).map((m) => m.Body),
        ['fits'],
      );
      await sns.send(new UnsubscribeCommand({ SubscriptionArn: unguarded }));
      const { Subscriptions } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
      assert.equal(Subscriptions?.length, 1);
    });

    test('SNS actions Sluice does not serve answer one error naming them; other protocols are refused', async () => {
      const response = await fetch(`${backend.endpoint}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'Action=CreatePlatformApplication&Name=a&Platform=GCM&Attributes.entry.1.key=k&Attributes.entry.1.value=v',
      });
      const text = await response.text();
      assert.equal(response.status, 400);
      assert.match(text, /xmlns="http:\/\/sns\.amazonaws\.com\/doc\/2010-03-31\/"/);
      assert.match(text, /Sluice does not serve the SNS action CreatePlatformApplication/);
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'web' }));
      const email = await errorOf(
        sns.send(new SubscribeCommand({ TopicArn, Protocol: 'email', Endpoint: 'someone@example.com' })),
      );
      assert.equal(email.name, 'InvalidParameterException');
      const unknown = await errorOf(
        sns.send(new SubscribeCommand({ TopicArn, Protocol: 'pigeon', Endpoint: 'x' })),
      );
      assert.equal(
        unknown.message,
        'Invalid parameter: Amazon SNS does not support this protocol string: pigeon',
      );
    });
  });
}

describe('SNS with --in-memory, --test-clock and a config file', () => {
  let backend: StoreBackend;
  let directory: string;
  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'sluice-sns-config-'));
    const config = join(directory, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        queues: [{ name: 'billing' }, { name: 'ledger.fifo', attributes: { FifoQueue: true } }],
        topics: [
          {
            name: 'orders',
            attributes: { DisplayName: 'Orders' },
            tags: { team: 'payments' },
            subscriptions: [
              {
                queue: 'billing',
                attributes: { RawMessageDelivery: true, FilterPolicy: { total: [{ numeric: ['>', 100] }] } },
              },
            ],
          },
          {
            name: 'ledger.fifo',
            attributes: { FifoTopic: true, ContentBasedDeduplication: true },
            subscriptions: [{ queue: 'ledger.fifo', attributes: { RawMessageDelivery: true } }],
          },
        ],
      }),
    );
    backend = await useServer({ inMemory: true, args: ['--test-clock', '--config', config] });
  });
  after(async () => {
    await backend.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('topics and subscriptions come from the file; the deduplication window runs on the test clock; a reset forgets them', async () => {
    const sns = snsClient(backend.endpoint);
    const sqs = sqsClient(backend.endpoint);
    const orders = 'arn:aws:sns:us-east-1:000000000000:orders';
    const { Attributes } = await sns.send(new GetTopicAttributesCommand({ TopicArn: orders }));
    assert.equal(Attributes?.DisplayName, 'Orders');
    assert.equal(Attributes?.SubscriptionsConfirmed, '1');
    await sns.send(
      new PublishCommand({
        TopicArn: orders,
        Message: 'small',
        MessageAttributes: { total: { DataType: 'Number', StringValue: '5' } },
      }),
    );
    await sns.send(
      new PublishCommand({
        TopicArn: orders,
        Message: 'large',
        MessageAttributes: { total: { DataType: 'Number', StringValue: '500' } },
      }),
    );
    const { QueueUrl: billing } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'billing' }));
    assert.deepEqual(
      (await receiveAll(sqs, billing!, 1)).map((m) => m.Body),
      ['large'],
    );
    const metrics = await (await fetch(`${backend.endpoint}/metrics`)).text();
    assert.match(metrics, /^sluice_sns_messages_published_total\{topic="orders"\} 2$/m);
    assert.match(
      metrics,
      /^sluice_sns_deliveries_total\{topic="orders",subscription="[^"]+",outcome="delivered"\} 1$/m,
    );
    assert.match(
      metrics,
      /^sluice_sns_deliveries_total\{topic="orders",subscription="[^"]+",outcome="filtered"\} 1$/m,
    );
    assert.match(metrics, /^sluice_requests_total\{action="Publish",status="200"\} 2$/m);

    const ledger = 'arn:aws:sns:us-east-1:000000000000:ledger.fifo';
    const first = await sns.send(
      new PublishCommand({ TopicArn: ledger, Message: 'entry', MessageGroupId: 'g' }),
    );
    const again = await sns.send(
      new PublishCommand({ TopicArn: ledger, Message: 'entry', MessageGroupId: 'g' }),
    );
    assert.equal(again.MessageId, first.MessageId);
    const advanced = await fetch(`${backend.endpoint}/_sluice/clock/advance`, {
      method: 'POST',
      body: JSON.stringify({ seconds: 301 }),
    });
    assert.equal(advanced.status, 200);
    const later = await sns.send(
      new PublishCommand({ TopicArn: ledger, Message: 'entry', MessageGroupId: 'g' }),
    );
    assert.notEqual(later.MessageId, first.MessageId, 'past the 5-minute window, the same message is new');

    const reset = await fetch(`${backend.endpoint}/_sluice/reset`, { method: 'POST' });
    assert.equal(reset.status, 200);
    const { Topics } = await sns.send(new ListTopicsCommand({}));
    assert.deepEqual(Topics ?? [], []);
    // The reset forgets SNS's counts too, as it does the queues': a test after it starts from zero.
    // (/metrics serves one render for a second, so this waits for the next.)
    const snsSeries = async () =>
      (await (await fetch(`${backend.endpoint}/metrics`)).text())
        .split('\n')
        .filter((line) => /^sluice_sns_(messages_published|deliveries)_total\{/.test(line));
    await eventually(
      async () => (await snsSeries()).length === 0,
      'the reset SNS counts off /metrics',
      30_000,
    );
  });
});

describe('SNS with --strict-policies', () => {
  let backend: StoreBackend;
  before(async () => {
    backend = await useServer({ inMemory: true, args: ['--strict-policies'] });
  });
  after(async () => backend.close());

  test('a queue whose policy does not allow the topic receives nothing, as on AWS; one that does, receives', async () => {
    const sns = snsClient(backend.endpoint);
    const sqs = sqsClient(backend.endpoint);
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'strict' }));
    const arnOf = async (QueueUrl: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes!
        .QueueArn!;
    const { QueueUrl: closed } = await sqs.send(new CreateQueueCommand({ QueueName: 'strict-closed' }));
    const { QueueUrl: open } = await sqs.send(new CreateQueueCommand({ QueueName: 'strict-open' }));
    const openArn = await arnOf(open!);
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: open,
        Attributes: {
          Policy: JSON.stringify({
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Principal: { Service: 'sns.amazonaws.com' },
                Action: 'sqs:SendMessage',
                Resource: openArn,
                Condition: { ArnEquals: { 'aws:SourceArn': TopicArn } },
              },
            ],
          }),
        },
      }),
    );
    for (const QueueUrl of [closed!, open!])
      await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'sqs',
          Endpoint: await arnOf(QueueUrl),
          Attributes: { RawMessageDelivery: 'true' },
        }),
      );
    await sns.send(new PublishCommand({ TopicArn, Message: 'policy checked' }));
    assert.deepEqual(
      (await receiveAll(sqs, open!, 1)).map((m) => m.Body),
      ['policy checked'],
    );
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: closed, WaitTimeSeconds: 1 }),
    );
    assert.deepEqual(Messages, []);
  });
});
