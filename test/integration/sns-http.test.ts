import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { verify, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
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
  type SNSClient,
  SNSServiceException,
  SubscribeCommand,
  UnsubscribeCommand,
} from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { FakeClock, startSluice } from 'sluice';
import { freshDatabase } from '../../tools/postgres.ts';
import { eventually } from '../helpers/client-toolkit.ts';
import { removeDataDir, useServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { hasBoto3, PYTHONS } from './clients/clients.ts';

/**
 * SNS's HTTP/HTTPS subscribers, on both stores, through the AWS SDK: a real node HTTP receiver that checks
 * every signature with the certificate fetched from SigningCertURL, confirms through SubscribeURL, answers
 * 500 a few times and then 200; the retry schedule on the test clock against AWS's default policy (3 retries,
 * 20 s apart); the subscription's dead-letter queue after the last retry; the addresses Sluice refuses.
 */

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the body's signature checked out against the certificate at its SigningCertURL (envelopes). */
  signed: boolean | undefined;
  status: number;
}

/** AWS's canonical string for each message type ("Verifying the signatures of Amazon SNS messages"). */
function stringToSign(message: Record<string, string>): string {
  const names =
    message.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return names
    .filter((name) => message[name] !== undefined)
    .map((name) => `${name}\n${message[name]}\n`)
    .join('');
}

async function checkSignature(message: Record<string, string>): Promise<boolean> {
  const pem = await (await fetch(message.SigningCertURL!)).text();
  const certificate = new X509Certificate(pem);
  return verify(
    message.SignatureVersion === '2' ? 'sha256' : 'sha1',
    Buffer.from(stringToSign(message), 'utf8'),
    certificate.publicKey,
    Buffer.from(message.Signature!, 'base64'),
  );
}

/**
 * The subscriber: confirms each subscription by a GET of its SubscribeURL (unless told not to), answers each
 * notification with the next status of `statuses` (200 once they are used up).
 */
async function receiver() {
  const received: Received[] = [];
  const state = { statuses: [] as number[], confirm: true };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const type = request.headers['x-amz-sns-message-type'];
      let signed: boolean | undefined;
      if (request.headers['x-amz-sns-rawdelivery'] !== 'true') {
        const message = JSON.parse(body) as Record<string, string>;
        signed = await checkSignature(message);
        if (type === 'SubscriptionConfirmation' && state.confirm && signed) {
          const confirmed = await fetch(message.SubscribeURL!);
          assert.equal(confirmed.status, 200, await confirmed.text());
        }
      }
      const status = type === 'Notification' ? (state.statuses.shift() ?? 200) : 200;
      received.push({ headers: request.headers, body, signed, status });
      response.writeHead(status, { 'content-type': 'text/plain' });
      response.end(status === 200 ? 'ok' : 'secret internal error text');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    state,
    of: (type: string) => received.filter((entry) => entry.headers['x-amz-sns-message-type'] === type),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Backend {
  endpoint: string;
  /** Moves Sluice's clock; resolves once the work it made due (the deliveries) is done. */
  advance(seconds: number): Promise<void>;
  close(): Promise<void>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'SQLite (--test-clock)',
    async () => {
      const server = await useServer({ args: ['--test-clock'] });
      return {
        endpoint: server.endpoint,
        async advance(seconds) {
          const answer = await fetch(`${server.endpoint}/_sluice/clock/advance`, {
            method: 'POST',
            body: JSON.stringify({ seconds }),
          });
          assert.equal(answer.status, 200);
        },
        close: () => server.close(),
      };
    },
  ],
  [
    'PostgreSQL (injected clock)',
    async () => {
      const database = await freshDatabase();
      const clock = new FakeClock(Date.UTC(2026, 11, 1));
      const node = await startSluice({
        port: 0,
        storeUrl: database.url,
        logLevel: 'silent',
        dataDir: ':memory:',
        clock,
      });
      return {
        endpoint: node.endpoint,
        advance: (seconds) => clock.advance(seconds * 1000),
        close: async () => {
          await node.close();
          await database.drop();
        },
      };
    },
  ],
];

const errorOf = async (promise: Promise<unknown>): Promise<SNSServiceException> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SNSServiceException) return error;
    throw error;
  }
  assert.fail('expected an SNS error');
};

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
