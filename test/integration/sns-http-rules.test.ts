import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  ConfirmSubscriptionCommand,
  CreateTopicCommand,
  GetSubscriptionAttributesCommand,
  GetTopicAttributesCommand,
  ListSubscriptionsByTopicCommand,
  ListSubscriptionsCommand,
  PublishCommand,
  SetSubscriptionAttributesCommand,
  SetTopicAttributesCommand,
  SubscribeCommand,
  UnsubscribeCommand,
} from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { eventually } from '../helpers/client-toolkit.ts';
import { removeDataDir, useServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';
import { backends, errorOf, receiver } from '../helpers/sns-http.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * The rules around SNS's HTTP subscribers, each on its own server: a subscription left unconfirmed expires
 * after 3 days; with credentials, the unsigned GETs of SubscribeURL and UnsubscribeURL still work;
 * --sns-http-allow narrows the endpoints, at Subscribe and at delivery; AuthenticateOnUnsubscribe; and
 * DeliveryPolicy checked against AWS's ranges.
 */

describe('SNS HTTP subscribers: unconfirmed ones expire, --sns-http-allow narrows', {
  concurrency: false,
}, () => {
  test('a subscription not confirmed in 3 days is gone and its token refused', async () => {
    const backend = await backends[0]![1]();
    const hook = await receiver();
    hook.state.confirm = false;
    const sns = snsClient(backend.endpoint);
    try {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'late' }));
      await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: `${hook.url}/late` }));
      await eventually(
        () => hook.of('SubscriptionConfirmation').length === 1,
        'the confirmation POST',
        30_000,
      );
      const { Token } = JSON.parse(hook.of('SubscriptionConfirmation')[0]!.body) as { Token: string };
      const listed = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
      assert.equal(listed.Subscriptions?.[0]?.SubscriptionArn, 'PendingConfirmation');
      await backend.advance(3 * 24 * 3600 + 3600);
      const gone = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
      assert.deepEqual(gone.Subscriptions ?? [], []);
      const refused = await errorOf(sns.send(new ConfirmSubscriptionCommand({ TopicArn, Token })));
      assert.equal(refused.name, 'InvalidParameterException');
    } finally {
      sns.destroy();
      await hook.close();
      await backend.close();
    }
  });

  test('with credentials, the unsigned GETs of SubscribeURL and UnsubscribeURL work; other unsigned GETs stay refused', async () => {
    // A key limited to the topics (and queues) named signed*: what it lists is checked against those names.
    const directory = mkdtempSync(join(tmpdir(), 'sluice-sns-keys-'));
    const config = join(directory, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        credentials: [{ accessKeyId: 'test', secretAccessKey: 'test', queues: ['signed*'] }],
      }),
    );
    const server = await useServer({ args: ['--config', config] });
    const sns = snsClient(server.endpoint);
    const hook = await receiver();
    try {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'signed' }));
      const { SubscriptionArn } = await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'http',
          Endpoint: `${hook.url}/signed`,
          ReturnSubscriptionArn: true,
        }),
      );
      await eventually(async () => {
        const answer = await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn }));
        return answer.Attributes?.PendingConfirmation === 'false';
      }, 'confirmed by the unsigned GET of SubscribeURL');
      // A pending one (nothing listens on port 9) is listed as PendingConfirmation to a signed caller.
      await sns.send(
        new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: 'http://127.0.0.1:9/never' }),
      );
      const listed = await sns.send(new ListSubscriptionsCommand({}));
      assert.deepEqual(
        (listed.Subscriptions ?? []).map((entry) => entry.SubscriptionArn === 'PendingConfirmation').sort(),
        [false, true],
      );
      const unsigned = await fetch(`${server.endpoint}/?Action=ListTopics`);
      assert.equal(unsigned.status, 403);
      const forged = await fetch(
        `${server.endpoint}/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(TopicArn!)}&Token=${'0'.repeat(128)}`,
      );
      assert.equal(forged.status, 400, 'a wrong token is refused');
      // The UnsubscribeURL, unsigned, passes too (the ARN is the proof) and removes the subscription.
      const link = await fetch(
        `${server.endpoint}/?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(SubscriptionArn!)}`,
      );
      assert.equal(link.status, 200, await link.text());
      const after = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
      assert.ok(!(after.Subscriptions ?? []).some((entry) => entry.SubscriptionArn === SubscriptionArn));
    } finally {
      sns.destroy();
      await hook.close();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });

  test('an endpoint the rules refuse at delivery (narrowed since it subscribed) is retried, then dead-lettered', async () => {
    const hook = await receiver();
    let server = await useServer({ args: ['--test-clock'] });
    const dataDir = server.server!.dataDir;
    let sns = snsClient(server.endpoint);
    try {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'narrowed' }));
      const sqs = sqsClient(server.endpoint);
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'narrowed-dlq' }));
      sqs.destroy();
      await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'http',
          Endpoint: `${hook.url}/narrowed`,
          Attributes: {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:narrowed-dlq',
            }),
          },
        }),
      );
      await eventually(async () => {
        const listed = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
        return listed.Subscriptions?.[0]?.SubscriptionArn !== 'PendingConfirmation';
      }, 'the subscription confirmed');
      sns.destroy();
      await server.server!.stop();
      server = await useServer({ dataDir, args: ['--test-clock', '--sns-http-allow', '10.0.0.0/8'] });
      sns = snsClient(server.endpoint);
      await sns.send(new PublishCommand({ TopicArn, Message: 'not for 127.0.0.1 any more' }));
      for (let step = 0; step < 4; step++)
        await (
          await fetch(`${server.endpoint}/_sluice/clock/advance`, {
            method: 'POST',
            body: JSON.stringify({ seconds: 20 }),
          })
        ).text();
      const dlq = sqsClient(server.endpoint);
      const url = QueueUrl!.replace(/^http:\/\/[^/]+/, server.endpoint);
      const { Messages } = await dlq.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 10 }));
      dlq.destroy();
      assert.equal(
        (JSON.parse(Messages![0]!.Body!) as { Message: string }).Message,
        'not for 127.0.0.1 any more',
      );
      assert.equal(hook.of('Notification').length, 0, 'no request reached the refused address');
    } finally {
      sns.destroy();
      await hook.close();
      await server.close();
      removeDataDir(dataDir);
    }
  });

  test('with --sns-http-allow, an endpoint outside it is refused and one inside accepted', async () => {
    const server = await useServer({
      args: ['--sns-http-allow', '10.0.0.0/8', '--sns-http-allow', 'localhost'],
    });
    const sns = snsClient(server.endpoint);
    try {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'narrow' }));
      const refused = await errorOf(
        sns.send(new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: 'http://127.0.0.1:9/hook' })),
      );
      assert.equal(refused.name, 'InvalidParameterException');
      assert.match(refused.message, /--sns-http-allow/);
      const accepted = await sns.send(
        new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: 'http://localhost:9/hook' }),
      );
      assert.equal(accepted.SubscriptionArn, 'pending confirmation');
    } finally {
      sns.destroy();
      await server.close();
    }
  });
});

describe('SNS HTTP subscribers: AuthenticateOnUnsubscribe', () => {
  test('the UnsubscribeURL unsubscribes unsigned, except a subscription confirmed with AuthenticateOnUnsubscribe (AuthorizationError) or an SQS one', async () => {
    const server = await useServer();
    const hook = await receiver();
    const sns = snsClient(server.endpoint);
    const sqs = sqsClient(server.endpoint);
    try {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'guarded' }));
      // Confirmed by the receiver's unsigned GET of SubscribeURL, which cannot ask for authentication.
      await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: `${hook.url}/open` }));
      await eventually(
        () => hook.of('SubscriptionConfirmation').length === 1,
        'the first confirmation',
        30_000,
      );
      // Confirmed by a signed ConfirmSubscription with AuthenticateOnUnsubscribe=true.
      hook.state.confirm = false;
      await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: `${hook.url}/guarded` }));
      await eventually(
        () => hook.of('SubscriptionConfirmation').length === 2,
        'the second confirmation',
        30_000,
      );
      const { Token } = JSON.parse(hook.of('SubscriptionConfirmation')[1]!.body) as { Token: string };
      const { SubscriptionArn: guarded } = await sns.send(
        new ConfirmSubscriptionCommand({ TopicArn, Token, AuthenticateOnUnsubscribe: 'true' }),
      );
      const attributes = async (arn: string) =>
        (await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: arn }))).Attributes ?? {};
      assert.equal((await attributes(guarded!)).ConfirmationWasAuthenticated, 'true');

      await sns.send(new PublishCommand({ TopicArn, Message: 'with links' }));
      await eventually(() => hook.of('Notification').length === 2, 'both notifications', 30_000);
      const links = new Map(
        hook.of('Notification').map((entry) => {
          const envelope = JSON.parse(entry.body) as { UnsubscribeURL: string };
          return [String(entry.headers['x-amz-sns-subscription-arn']), envelope.UnsubscribeURL];
        }),
      );
      const open = [...links.keys()].find((arn) => arn !== guarded)!;
      assert.equal((await attributes(open)).ConfirmationWasAuthenticated, 'false');

      const refused = await fetch(links.get(guarded!)!);
      const refusal = await refused.text();
      assert.equal(refused.status, 403, refusal);
      assert.match(refusal, /<Code>AuthorizationError<\/Code>/);
      assert.equal((await attributes(guarded!)).PendingConfirmation, 'false', 'still subscribed');
      // Without credentials an unsigned POST is as unauthenticated as the link.
      const posted = await fetch(server.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(guarded!)}`,
      });
      assert.equal(posted.status, 403);

      const followed = await fetch(links.get(open)!);
      assert.equal(followed.status, 200, await followed.text());
      const left = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
      assert.deepEqual(
        (left.Subscriptions ?? []).map((entry) => entry.SubscriptionArn),
        [guarded],
      );

      // An SQS subscription needs authentication to be deleted, as on AWS.
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'guarded-queue' }));
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
      );
      const { SubscriptionArn: queued } = await sns.send(
        new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: Attributes!.QueueArn }),
      );
      const queueLink = await fetch(
        `${server.endpoint}/?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(queued!)}`,
      );
      assert.equal(queueLink.status, 403);

      // Signed, both go.
      await sns.send(new UnsubscribeCommand({ SubscriptionArn: guarded }));
      await sns.send(new UnsubscribeCommand({ SubscriptionArn: queued }));
      const none = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
      assert.deepEqual(none.Subscriptions ?? [], []);
    } finally {
      sns.destroy();
      sqs.destroy();
      await hook.close();
      await server.close();
    }
  });
});

describe("SNS HTTP subscribers: DeliveryPolicy is checked against AWS's ranges", () => {
  test('SetTopicAttributes and SetSubscriptionAttributes refuse a policy out of range with InvalidParameter', async () => {
    const server = await useServer();
    const sns = snsClient(server.endpoint);
    try {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'policed' }));
      const setTopic = (policy: unknown) =>
        sns.send(
          new SetTopicAttributesCommand({
            TopicArn,
            AttributeName: 'DeliveryPolicy',
            AttributeValue: JSON.stringify(policy),
          }),
        );
      const tooMany = await errorOf(setTopic({ http: { defaultHealthyRetryPolicy: { numRetries: 101 } } }));
      assert.equal(tooMany.name, 'InvalidParameterException');
      assert.equal(
        tooMany.message,
        'Invalid parameter: DeliveryPolicy: http.defaultHealthyRetryPolicy.numRetries must be less than or equal to 100',
      );
      const tooLong = await errorOf(
        setTopic({
          http: { defaultHealthyRetryPolicy: { numRetries: 10, minDelayTarget: 3599, maxDelayTarget: 3600 } },
        }),
      );
      assert.match(tooLong.message, /Total policy retry time cannot be greater than 3600 seconds$/);
      await setTopic({
        http: { defaultHealthyRetryPolicy: { numRetries: 5, backoffFunction: 'exponential' } },
      });
      const kept = await sns.send(new GetTopicAttributesCommand({ TopicArn }));
      assert.match(kept.Attributes?.DeliveryPolicy ?? '', /"numRetries":5/);

      const { SubscriptionArn } = await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'http',
          Endpoint: 'http://127.0.0.1:9/never',
          ReturnSubscriptionArn: true,
        }),
      );
      const setSubscription = (policy: unknown) =>
        sns.send(
          new SetSubscriptionAttributesCommand({
            SubscriptionArn,
            AttributeName: 'DeliveryPolicy',
            AttributeValue: JSON.stringify(policy),
          }),
        );
      const backwards = await errorOf(
        setSubscription({ healthyRetryPolicy: { minDelayTarget: 30, maxDelayTarget: 10 } }),
      );
      assert.equal(backwards.name, 'InvalidParameterException');
      assert.equal(
        backwards.message,
        'Invalid parameter: DeliveryPolicy: healthyRetryPolicy.minDelayTarget must be less than or equal to maxDelayTarget',
      );
      const throttled = await errorOf(setSubscription({ throttlePolicy: { maxReceivesPerSecond: 0 } }));
      assert.match(
        throttled.message,
        /throttlePolicy\.maxReceivesPerSecond must be greater than or equal to 1$/,
      );
      const misplaced = await errorOf(setSubscription({ defaultHealthyRetryPolicy: { numRetries: 3 } }));
      assert.match(misplaced.message, /Unexpected JSON member: defaultHealthyRetryPolicy$/);
      await setSubscription({ healthyRetryPolicy: { numRetries: 10, minDelayTarget: 1, maxDelayTarget: 2 } });
      const attributes = await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn }));
      assert.match(attributes.Attributes?.DeliveryPolicy ?? '', /"numRetries":10/);
    } finally {
      sns.destroy();
      await server.close();
    }
  });
});
