import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ConfirmSubscriptionCommand,
  CreateTopicCommand,
  GetSubscriptionAttributesCommand,
  ListSubscriptionsByTopicCommand,
  PublishCommand,
  type SNSClient,
  SubscribeCommand,
  UnsubscribeCommand,
} from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { eventually } from '../helpers/client-toolkit.ts';
import { snsClient } from '../helpers/sns-client.ts';
import { type Backend, backends, errorOf, receiver } from '../helpers/sns-http.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * SNS's HTTP/HTTPS subscribers, on both stores, through the AWS SDK: a real node HTTP receiver that checks
 * every signature with the certificate fetched from SigningCertURL, confirms through SubscribeURL, answers
 * 500 a few times and then 200; the retry schedule on the test clock against AWS's default policy (3 retries,
 * 20 s apart); the subscription's dead-letter queue after the last retry; the addresses Sluice refuses;
 * Unsubscribe. The rules around them (expiry, credentials, --sns-http-allow, AuthenticateOnUnsubscribe,
 * DeliveryPolicy) are in sns-http-rules.test.ts; DLQ alarms, boto3 and two nodes in
 * sns-http-alarms-boto3-nodes.test.ts.
 */

for (const [label, start] of backends) {
  describe(`SNS HTTP subscribers on ${label}`, { concurrency: false }, () => {
    let backend: Backend;
    let sns: SNSClient;
    let hook: Awaited<ReturnType<typeof receiver>>;
    let topicArn: string;

    before(async () => {
      backend = await start();
      sns = snsClient(backend.endpoint);
      hook = await receiver();
      ({ TopicArn: topicArn } = (await sns.send(new CreateTopicCommand({ Name: 'webhooks' }))) as {
        TopicArn: string;
      });
    });
    after(async () => {
      sns?.destroy();
      await backend?.close();
      await hook?.close();
    });

    /** The notifications that reached the receiver, once there are `count`. */
    const notifications = async (count: number) => {
      await eventually(() => hook.of('Notification').length >= count, `${count} notification POSTs`, 30_000);
      return hook.of('Notification');
    };

    test('Subscribe is pending until the endpoint confirms through SubscribeURL; the confirmation is signed', async () => {
      const { SubscriptionArn } = await sns.send(
        new SubscribeCommand({ TopicArn: topicArn, Protocol: 'http', Endpoint: `${hook.url}/orders` }),
      );
      assert.equal(SubscriptionArn, 'pending confirmation');
      await eventually(
        () => hook.of('SubscriptionConfirmation').length === 1,
        'the confirmation POST',
        30_000,
      );
      const [confirmation] = hook.of('SubscriptionConfirmation');
      assert.equal(confirmation!.signed, true, 'the signature checks against the served certificate');
      assert.equal(confirmation!.headers['content-type'], 'text/plain; charset=UTF-8');
      assert.equal(confirmation!.headers['x-amz-sns-topic-arn'], topicArn);
      assert.equal(confirmation!.headers['x-amz-sns-subscription-arn'], undefined);
      const body = JSON.parse(confirmation!.body) as Record<string, string>;
      assert.deepEqual(Object.keys(body), [
        'Type',
        'MessageId',
        'Token',
        'TopicArn',
        'Message',
        'SubscribeURL',
        'Timestamp',
        'SignatureVersion',
        'Signature',
        'SigningCertURL',
      ]);
      assert.equal(confirmation!.headers['x-amz-sns-message-id'], body.MessageId);
      assert.match(body.Token!, /^[0-9a-f]{128}$/);
      assert.match(body.Message!, /^You have chosen to subscribe to the topic arn:aws:sns:/);
      // The receiver's GET of SubscribeURL confirmed it.
      await eventually(async () => {
        const listed = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }));
        return listed.Subscriptions?.[0]?.SubscriptionArn?.startsWith(`${topicArn}:`) === true;
      }, 'the subscription confirmed');
      // ConfirmSubscription with the same token answers the same ARN.
      const again = await sns.send(new ConfirmSubscriptionCommand({ TopicArn: topicArn, Token: body.Token }));
      assert.match(again.SubscriptionArn!, new RegExp(`^${topicArn}:`));
      const attributes = await sns.send(
        new GetSubscriptionAttributesCommand({ SubscriptionArn: again.SubscriptionArn }),
      );
      assert.equal(attributes.Attributes?.PendingConfirmation, 'false');
      assert.equal(attributes.Attributes?.Protocol, 'http');
      assert.equal(
        Object.keys(attributes.Attributes ?? {}).some((name) => name.startsWith('sluice:')),
        false,
      );
      const wrong = await errorOf(
        sns.send(new ConfirmSubscriptionCommand({ TopicArn: topicArn, Token: 'f'.repeat(128) })),
      );
      assert.equal(wrong.name, 'InvalidParameterException');
    });

    test("a failed delivery is retried by AWS's default policy (3 retries 20 s apart) on Sluice's clock", async () => {
      hook.state.statuses.push(500, 500, 500);
      const { MessageId } = await sns.send(
        new PublishCommand({
          TopicArn: topicArn,
          Message: 'order 1',
          Subject: 'orders',
          MessageAttributes: { kind: { DataType: 'String', StringValue: 'created' } },
        }),
      );
      await backend.advance(0);
      const [first] = await notifications(1);
      assert.equal(first!.status, 500);
      assert.equal(first!.signed, true);
      assert.equal(first!.headers['x-amz-sns-message-id'], MessageId);
      assert.equal(first!.headers['x-amz-sns-topic-arn'], topicArn);
      assert.match(String(first!.headers['x-amz-sns-subscription-arn']), new RegExp(`^${topicArn}:`));
      assert.equal(first!.headers['content-type'], 'text/plain; charset=UTF-8');
      assert.equal(first!.headers['user-agent'], 'Amazon Simple Notification Service Agent');
      const envelope = JSON.parse(first!.body) as Record<string, unknown>;
      assert.equal(envelope.Type, 'Notification');
      assert.equal(envelope.Message, 'order 1');
      assert.equal(envelope.Subject, 'orders');
      assert.deepEqual(envelope.MessageAttributes, { kind: { Type: 'String', Value: 'created' } });
      for (let retry = 1; retry <= 3; retry++) {
        await backend.advance(18);
        assert.equal(
          hook.of('Notification').length,
          retry,
          `retry ${retry} is not sent 18 s after the attempt before`,
        );
        await backend.advance(2);
        const all = await notifications(retry + 1);
        assert.equal(
          all[retry]!.status,
          retry < 3 ? 500 : 200,
          `retry ${retry} is sent 20 s after the attempt before`,
        );
        assert.equal(all[retry]!.body, first!.body, 'each retry is the same signed message');
      }
      await backend.advance(60);
      assert.equal(hook.of('Notification').length, 4, 'delivered: no more attempts');
      const metrics = await (await fetch(`${backend.endpoint}/metrics`)).text();
      const subscription = String(first!.headers['x-amz-sns-subscription-arn']);
      const count = (outcome: string) =>
        metrics
          .split('\n')
          .find(
            (line) =>
              line.startsWith('sluice_sns_deliveries_total{') &&
              line.includes(`subscription="${subscription}"`) &&
              line.includes(`outcome="${outcome}"`),
          )
          ?.split(' ')
          .at(-1);
      assert.equal(count('retried'), '3');
      assert.equal(count('delivered'), '1');
    });

    test("after the last retry the message goes to the subscription's dead-letter queue", async () => {
      const sqs = sqsClient(backend.endpoint);
      try {
        const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'webhook-dlq' }));
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
        );
        const failing = await receiver();
        try {
          failing.state.statuses.push(...Array(10).fill(503));
          const { SubscriptionArn } = await sns.send(
            new SubscribeCommand({
              TopicArn: topicArn,
              Protocol: 'http',
              Endpoint: `${failing.url}/down`,
              ReturnSubscriptionArn: true,
              Attributes: {
                RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes!.QueueArn }),
                RawMessageDelivery: 'true',
              },
            }),
          );
          await eventually(async () => {
            const answer = await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn }));
            return answer.Attributes?.PendingConfirmation === 'false';
          }, 'the second subscription confirmed');
          const before = hook.of('Notification').length;
          await sns.send(new PublishCommand({ TopicArn: topicArn, Message: 'order 2' }));
          await backend.advance(0);
          await eventually(() => failing.of('Notification').length === 1, 'the first attempt', 30_000);
          assert.equal(failing.of('Notification')[0]!.headers['x-amz-sns-rawdelivery'], 'true');
          assert.equal(failing.of('Notification')[0]!.body, 'order 2');
          for (let step = 0; step < 3; step++) await backend.advance(20);
          await eventually(() => failing.of('Notification').length === 4, 'four attempts', 30_000);
          await eventually(
            () => hook.of('Notification').length === before + 1,
            'the first subscriber got it',
          );
          await backend.advance(20);
          const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 5 }));
          assert.equal(Messages?.[0]?.Body, 'order 2');
          assert.equal(failing.of('Notification').length, 4, '1 attempt and 3 retries, then given up');
          await sns.send(new UnsubscribeCommand({ SubscriptionArn }));
        } finally {
          await failing.close();
        }
      } finally {
        sqs.destroy();
      }
    });

    test('link-local and metadata endpoints are refused at Subscribe with InvalidParameter', async () => {
      for (const endpoint of [
        'http://169.254.169.254/latest/meta-data/',
        'http://169.254.170.2/v2/credentials',
        'http://[fd00:ec2::254]/latest/meta-data/',
        'http://[fe80::1]/',
        'http://[::ffff:169.254.169.254]/',
      ]) {
        const error = await errorOf(
          sns.send(new SubscribeCommand({ TopicArn: topicArn, Protocol: 'http', Endpoint: endpoint })),
        );
        assert.equal(error.name, 'InvalidParameterException', endpoint);
        assert.match(error.message, /link-local or cloud metadata address/, endpoint);
      }
      const mismatched = await errorOf(
        sns.send(new SubscribeCommand({ TopicArn: topicArn, Protocol: 'https', Endpoint: `${hook.url}/x` })),
      );
      assert.equal(mismatched.name, 'InvalidParameterException');
    });

    test('Unsubscribe sends a signed UnsubscribeConfirmation and stops deliveries', async () => {
      const listed = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }));
      const arn = listed.Subscriptions!.find((s) => s.Endpoint === `${hook.url}/orders`)!.SubscriptionArn!;
      await sns.send(new UnsubscribeCommand({ SubscriptionArn: arn }));
      await eventually(
        () => hook.of('UnsubscribeConfirmation').length === 1,
        'the unsubscribe confirmation',
        30_000,
      );
      const [confirmation] = hook.of('UnsubscribeConfirmation');
      assert.equal(confirmation!.signed, true);
      assert.equal(confirmation!.headers['x-amz-sns-subscription-arn'], arn);
      const count = hook.of('Notification').length;
      await sns.send(new PublishCommand({ TopicArn: topicArn, Message: 'after' }));
      await backend.advance(0);
      await backend.advance(1);
      assert.equal(hook.of('Notification').length, count);
    });
  });
}
