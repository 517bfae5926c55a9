import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  CreateTopicCommand,
  ListSubscriptionsByTopicCommand,
  PublishCommand,
  SubscribeCommand,
} from '@aws-sdk/client-sns';
import {
  DeleteMessageCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { startSluice } from 'sluice';
import { freshDatabase } from '../../tools/postgres.ts';
import { eventually } from '../helpers/client-toolkit.ts';
import { useServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';
import { receiver } from '../helpers/sns-http.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { hasBoto3, PYTHONS } from './clients/clients.ts';

/**
 * SNS's HTTP subscribers beyond the AWS SDK and one node: a DLQ alarm published to a topic reaches a queue and
 * a webhook; boto3 subscribes, confirms and gets AWS's refusal codes; two nodes on one PostgreSQL database
 * deliver each message once.
 */

describe('DLQ alarms through a topic', () => {
  test('an alarm raised and resolved is published to the topic the config names: a queue and a webhook get it', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'sluice-alarm-topic-'));
    const config = join(directory, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        queues: [
          { name: 'orders-dlq' },
          {
            name: 'orders',
            attributes: {
              RedrivePolicy: {
                deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:orders-dlq',
                maxReceiveCount: 3,
              },
            },
          },
          { name: 'pager' },
        ],
        topics: [
          { name: 'oncall', subscriptions: [{ queue: 'pager', attributes: { RawMessageDelivery: true } }] },
        ],
        alarms: { periodSeconds: 10, topics: ['oncall'] },
      }),
    );
    const server = await useServer({ args: ['--test-clock', '--config', config] });
    const sns = snsClient(server.endpoint);
    const sqs = sqsClient(server.endpoint);
    const hook = await receiver();
    const advance = async (seconds: number) => {
      const answer = await fetch(`${server.endpoint}/_sluice/clock/advance`, {
        method: 'POST',
        body: JSON.stringify({ seconds }),
      });
      assert.equal(answer.status, 200);
    };
    try {
      const TopicArn = 'arn:aws:sns:us-east-1:000000000000:oncall';
      await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: `${hook.url}/page` }));
      await eventually(async () => {
        const listed = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
        return (listed.Subscriptions ?? []).every((s) => s.SubscriptionArn !== 'PendingConfirmation');
      }, 'the webhook confirmed');
      const { QueueUrl: dlq } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'orders-dlq' }));
      const { QueueUrl: pager } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'pager' }));
      await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'poison' }));
      await advance(10);
      const paged = await sqs.send(new ReceiveMessageCommand({ QueueUrl: pager, WaitTimeSeconds: 10 }));
      const alarm = JSON.parse(paged.Messages![0]!.Body!) as Record<string, unknown>;
      assert.equal(alarm.type, 'dlq-alarm');
      assert.equal(alarm.event, 'raised');
      assert.equal(alarm.queue, 'orders-dlq');
      assert.equal(alarm.visible, 1);
      // The poison message was sent when the clock stood 10 s earlier (the test clock also runs in real time).
      assert.ok(
        typeof alarm.oldestAgeSeconds === 'number' &&
          alarm.oldestAgeSeconds >= 10 &&
          alarm.oldestAgeSeconds < 60,
        `oldest age: ${alarm.oldestAgeSeconds}`,
      );
      assert.deepEqual(alarm.sourceQueues, ['orders']);
      assert.equal(alarm.consoleUrl, `${server.endpoint}/console/#/queue/orders-dlq`);
      await sqs.send(
        new DeleteMessageCommand({ QueueUrl: pager, ReceiptHandle: paged.Messages![0]!.ReceiptHandle }),
      );
      await eventually(() => hook.of('Notification').length === 1, 'the webhook paged', 30_000);
      const envelope = JSON.parse(hook.of('Notification')[0]!.body) as Record<string, string>;
      assert.equal(hook.of('Notification')[0]!.signed, true);
      assert.equal(envelope.Subject, 'DLQ alarm raised: orders-dlq');
      assert.equal((JSON.parse(envelope.Message!) as { event: string }).event, 'raised');

      const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq, WaitTimeSeconds: 5 }));
      await sqs.send(new DeleteMessageCommand({ QueueUrl: dlq, ReceiptHandle: Messages![0]!.ReceiptHandle }));
      await advance(10);
      const cleared = await sqs.send(new ReceiveMessageCommand({ QueueUrl: pager, WaitTimeSeconds: 10 }));
      assert.equal((JSON.parse(cleared.Messages![0]!.Body!) as { event: string }).event, 'resolved');
      await eventually(() => hook.of('Notification').length === 2, 'the webhook told it cleared', 30_000);
    } finally {
      sns.destroy();
      sqs.destroy();
      await hook.close();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

const boto3Python = PYTHONS.find((python) => python.protocol === 'json')?.bin;

/** Runs a boto3 script with an `sns` client (asynchronously: the receiver in this process must answer meanwhile). */
function boto3(endpoint: string, script: string): Promise<unknown> {
  const program = `
import boto3, json
from botocore.exceptions import ClientError
session = boto3.session.Session(aws_access_key_id='test', aws_secret_access_key='test', region_name='us-east-1')
sns = session.client('sns', endpoint_url='${endpoint}')
def error_of(call):
    try:
        call()
        return None
    except ClientError as e:
        return {'code': e.response['Error']['Code'], 'message': e.response['Error']['Message']}
${script}
`;
  return new Promise((resolve, reject) =>
    execFile(boto3Python!, ['-c', program], { encoding: 'utf8', timeout: 60_000 }, (error, stdout) =>
      error ? reject(error) : resolve(JSON.parse(stdout)),
    ),
  );
}

describe('SNS HTTP subscribers: boto3', {
  skip: boto3Python && hasBoto3(boto3Python) ? false : 'no pyenv boto3',
}, () => {
  test("boto3 subscribes, confirms with the token (AuthenticateOnUnsubscribe), and gets AWS's refusal codes", async () => {
    const server = await useServer();
    const hook = await receiver();
    hook.state.confirm = false;
    try {
      const subscribed = (await boto3(
        server.endpoint,
        `
arn = sns.create_topic(Name='boto')['TopicArn']
answer = sns.subscribe(TopicArn=arn, Protocol='http', Endpoint='${hook.url}/boto')
refused = error_of(lambda: sns.subscribe(TopicArn=arn, Protocol='http', Endpoint='http://169.254.169.254/latest/'))
print(json.dumps({'topic': arn, 'arn': answer['SubscriptionArn'], 'refused': refused}))
`,
      )) as { topic: string; arn: string; refused: { code: string; message: string } };
      assert.equal(subscribed.arn, 'pending confirmation');
      assert.equal(subscribed.refused.code, 'InvalidParameter');
      assert.match(subscribed.refused.message, /^Invalid parameter: Endpoint Reason: .*169\.254\.169\.254/);
      await eventually(
        () => hook.of('SubscriptionConfirmation').length === 1,
        'the confirmation POST',
        30_000,
      );
      const { Token } = JSON.parse(hook.of('SubscriptionConfirmation')[0]!.body) as { Token: string };
      const confirmed = (await boto3(
        server.endpoint,
        `
arn = sns.confirm_subscription(TopicArn='${subscribed.topic}', Token='${Token}', AuthenticateOnUnsubscribe='true')['SubscriptionArn']
attributes = sns.get_subscription_attributes(SubscriptionArn=arn)['Attributes']
sns.publish(TopicArn='${subscribed.topic}', Message='from boto3')
print(json.dumps({'arn': arn, 'attributes': attributes}))
`,
      )) as { arn: string; attributes: Record<string, string> };
      assert.match(confirmed.arn, /^arn:aws:sns:us-east-1:000000000000:boto:/);
      assert.equal(confirmed.attributes.PendingConfirmation, 'false');
      assert.equal(confirmed.attributes.ConfirmationWasAuthenticated, 'true');
      await eventually(() => hook.of('Notification').length === 1, 'the notification', 30_000);
      assert.equal(
        (JSON.parse(hook.of('Notification')[0]!.body) as { Message: string }).Message,
        'from boto3',
      );
      assert.equal(hook.of('Notification')[0]!.signed, true);
    } finally {
      await hook.close();
      await server.close();
    }
  });
});

describe('SNS HTTP subscribers: two nodes on one PostgreSQL database', () => {
  test('both nodes send, claiming with row locks: each message reaches the endpoint once', async () => {
    const database = await freshDatabase();
    const nodes = await Promise.all(
      [0, 1].map(() =>
        startSluice({ port: 0, storeUrl: database.url, logLevel: 'silent', dataDir: ':memory:' }),
      ),
    );
    const hook = await receiver();
    const clients = nodes.map((node) => snsClient(node.endpoint));
    try {
      const { TopicArn } = await clients[0]!.send(new CreateTopicCommand({ Name: 'shared' }));
      await clients[1]!.send(
        new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: `${hook.url}/shared` }),
      );
      await eventually(async () => {
        const listed = await clients[0]!.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
        return listed.Subscriptions?.[0]?.SubscriptionArn !== 'PendingConfirmation';
      }, 'the subscription confirmed');
      const ids: string[] = [];
      for (let index = 0; index < 60; index++) {
        const { MessageId } = await clients[index % 2]!.send(
          new PublishCommand({ TopicArn, Message: `m${index}` }),
        );
        ids.push(MessageId!);
      }
      await eventually(() => hook.of('Notification').length >= 60, '60 deliveries', 60_000);
      const seen = hook.of('Notification').map((entry) => String(entry.headers['x-amz-sns-message-id']));
      assert.deepEqual([...seen].sort(), [...ids].sort(), 'every message once, none twice');
    } finally {
      for (const client of clients) client.destroy();
      await hook.close();
      for (const node of nodes) await node.close();
      await database.drop();
    }
  });
});
