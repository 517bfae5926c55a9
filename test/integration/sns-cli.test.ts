import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertSignatureVerifies, type SnsEnvelope } from '../helpers/sns-envelope.ts';
import { STORE_BACKENDS, type StoreBackend } from '../helpers/store-backends.ts';
import { AwsCli, protocolOf } from './clients/aws-cli.ts';
import { availability, CLIS } from './clients/clients.ts';

/**
 * SNS from the AWS CLI as the developer guide's walkthrough drives it (`aws sns create-topic`, `subscribe`,
 * `set-subscription-attributes`, `publish`), through both CLIs on the machine: Debian's 2.9 and pyenv's 1.45,
 * on both stores.
 * Both speak Query to SNS (SNS has no JSON protocol in any SDK), whatever they speak to SQS. The deliveries are
 * read back with `aws sqs receive-message`, and each envelope's signature is checked against the certificate
 * the server serves.
 */

/** Limits that catch a hang, not slowness: each CLI call costs a second or more of start-up. */
const FLOW_TIMEOUT_MS = 300_000;

interface Arn {
  TopicArn: string;
}
interface QueueUrl {
  QueueUrl: string;
}
interface Received {
  Messages?: Array<{ Body: string; ReceiptHandle: string; MessageAttributes?: Record<string, unknown> }>;
}

for (const [store, start] of STORE_BACKENDS) {
  describe(`SNS through the AWS CLI on ${store}`, { concurrency: true }, () => {
    let server: StoreBackend;
    before(async () => {
      server = await start();
    });
    after(async () => server?.close());

    for (const client of CLIS) {
      const { skip, missing } = availability(client, client.bin !== undefined);
      test(`${client.label}: topic, queue subscriptions, filter policies, publish, signed envelopes`, {
        skip,
        timeout: FLOW_TIMEOUT_MS,
      }, async () => {
        assert.ok(!missing, missing);
        const sns = new AwsCli(client.bin!, server.endpoint, {}, 'sns');
        try {
          await walkthrough(sns, sns.as('sqs'));
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          throw new Error(`${message}\n--- ${client.label} transcript ---\n${sns.output()}`, {
            cause: error,
          });
        }
      });
    }
  });
}

async function walkthrough(sns: AwsCli, sqs: AwsCli): Promise<void> {
  const id = randomBytes(4).toString('hex');
  const { TopicArn } = await sns.ok<Arn>([
    'create-topic',
    '--name',
    `cli-orders-${id}`,
    '--tags',
    'Key=team,Value=billing',
  ]);
  assert.equal(TopicArn, `arn:aws:sns:us-east-1:000000000000:cli-orders-${id}`);
  const listed = await sns.call(['list-topics', '--debug']);
  assert.equal(listed.code, 0, 'list-topics');
  assert.equal(protocolOf(listed.stderr), 'query', 'every CLI speaks Query to SNS');
  assert.ok(
    (JSON.parse(listed.stdout) as { Topics: Arn[] }).Topics.some((topic) => topic.TopicArn === TopicArn),
  );

  const queue = async (name: string) => {
    const { QueueUrl: url } = await sqs.ok<QueueUrl>(['create-queue', '--queue-name', `${name}-${id}`]);
    const { Attributes } = await sqs.ok<{ Attributes: { QueueArn: string } }>([
      'get-queue-attributes',
      '--queue-url',
      url,
      '--attribute-names',
      'QueueArn',
    ]);
    return { url, arn: Attributes.QueueArn };
  };
  const billing = await queue('cli-billing');
  const audit = await queue('cli-audit');

  // The guide's order: subscribe, then set the filter policy on the subscription.
  const { SubscriptionArn: billingSubscription } = await sns.ok<{ SubscriptionArn: string }>([
    'subscribe',
    '--topic-arn',
    TopicArn,
    '--protocol',
    'sqs',
    '--notification-endpoint',
    billing.arn,
    '--return-subscription-arn',
  ]);
  assert.match(billingSubscription, new RegExp(`^${TopicArn}:[0-9a-f-]{36}$`));
  await sns.ok([
    'set-subscription-attributes',
    '--subscription-arn',
    billingSubscription,
    '--attribute-name',
    'FilterPolicy',
    '--attribute-value',
    JSON.stringify({ kind: ['invoice'], total: [{ numeric: ['>=', 100] }] }),
  ]);
  const { Attributes: billingAttributes } = await sns.ok<{ Attributes: Record<string, string> }>([
    'get-subscription-attributes',
    '--subscription-arn',
    billingSubscription,
  ]);
  assert.deepEqual(JSON.parse(billingAttributes.FilterPolicy!), {
    kind: ['invoice'],
    total: [{ numeric: ['>=', 100] }],
  });
  assert.equal(billingAttributes.FilterPolicyScope, 'MessageAttributes');
  assert.equal(billingAttributes.Endpoint, billing.arn);
  assert.equal(billingAttributes.Protocol, 'sqs');
  assert.equal(billingAttributes.RawMessageDelivery, 'false');

  // The audit queue filters on the message body, set at subscribe time.
  await sns.ok([
    'subscribe',
    '--topic-arn',
    TopicArn,
    '--protocol',
    'sqs',
    '--notification-endpoint',
    audit.arn,
    '--attributes',
    JSON.stringify({
      FilterPolicyScope: 'MessageBody',
      FilterPolicy: JSON.stringify({ order: { country: [{ 'anything-but': 'FR' }] } }),
    }),
  ]);
  await sns.fails(
    [
      'set-subscription-attributes',
      '--subscription-arn',
      billingSubscription,
      '--attribute-name',
      'FilterPolicy',
      '--attribute-value',
      JSON.stringify({ total: [{ numeric: ['>>', 1] }] }),
    ],
    'InvalidParameter',
  );

  const publish = (message: object, attributes: Record<string, [string, string]>, subject?: string) =>
    sns.ok<{ MessageId: string }>([
      'publish',
      '--topic-arn',
      TopicArn,
      '--message',
      JSON.stringify(message),
      '--message-attributes',
      JSON.stringify(
        Object.fromEntries(
          Object.entries(attributes).map(([name, [DataType, StringValue]]) => [
            name,
            { DataType, StringValue },
          ]),
        ),
      ),
      ...(subject === undefined ? [] : ['--subject', subject]),
    ]);
  // To both queues.
  const invoice = await publish(
    { order: { id: 1, country: 'DE' } },
    { kind: ['String', 'invoice'], total: ['Number', '250'] },
    'Invoice 1',
  );
  // To neither: a receipt, from France.
  await publish(
    { order: { id: 2, country: 'FR' } },
    { kind: ['String', 'receipt'], total: ['Number', '250'] },
  );
  // To audit only: an invoice too small for billing.
  const small = await publish(
    { order: { id: 3, country: 'ES' } },
    { kind: ['String', 'invoice'], total: ['Number', '99.5'] },
  );
  const batch = await sns.ok<{ Successful: Array<{ Id: string; MessageId: string }> }>([
    'publish-batch',
    '--topic-arn',
    TopicArn,
    '--publish-batch-request-entries',
    JSON.stringify([
      {
        Id: 'big',
        Message: JSON.stringify({ order: { id: 4, country: 'FR' } }),
        MessageAttributes: {
          kind: { DataType: 'String', StringValue: 'invoice' },
          total: { DataType: 'Number', StringValue: '1000' },
        },
      },
    ]),
  ]);
  assert.deepEqual(
    batch.Successful.map((entry) => entry.Id),
    ['big'],
  );

  // Received messages stay hidden for the rest of the flow (CLI calls take seconds each), so a later receive
  // sees only what is new.
  const receiveOnce = async (url: string) =>
    (
      await sqs.ok<Received>([
        'receive-message',
        '--queue-url',
        url,
        '--max-number-of-messages',
        '10',
        '--wait-time-seconds',
        '1',
        '--visibility-timeout',
        '3600',
        '--message-attribute-names',
        'All',
      ])
    ).Messages ?? [];
  const receive = async (url: string, count: number): Promise<SnsEnvelope[]> => {
    const envelopes: SnsEnvelope[] = [];
    // Each publish was answered after its deliveries were committed: they are all there now.
    for (let attempt = 0; attempt < 5 && envelopes.length < count; attempt++) {
      for (const message of await receiveOnce(url)) {
        assert.equal(message.MessageAttributes, undefined, 'an envelope carries the attributes in its body');
        envelopes.push(JSON.parse(message.Body) as SnsEnvelope);
      }
    }
    return envelopes;
  };

  const toBilling = await receive(billing.url, 2);
  assert.deepEqual(
    toBilling.map((envelope) => envelope.MessageId).sort(),
    [invoice.MessageId, batch.Successful[0]!.MessageId].sort(),
  );
  const first = toBilling.find((envelope) => envelope.MessageId === invoice.MessageId)!;
  assert.equal(first.Type, 'Notification');
  assert.equal(first.TopicArn, TopicArn);
  assert.equal(first.Subject, 'Invoice 1');
  assert.deepEqual(JSON.parse(first.Message), { order: { id: 1, country: 'DE' } });
  assert.match(first.Timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(first.SignatureVersion, '1');
  assert.ok(first.SigningCertURL.startsWith(`${sns.endpoint}/SimpleNotificationService-`));
  assert.ok(first.SigningCertURL.endsWith('.pem'));
  assert.equal(
    first.UnsubscribeURL,
    `${sns.endpoint}/?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(billingSubscription)}`,
  );
  assert.deepEqual(first.MessageAttributes, {
    kind: { Type: 'String', Value: 'invoice' },
    total: { Type: 'Number', Value: '250' },
  });
  assert.equal(
    toBilling.find((envelope) => envelope.MessageId !== invoice.MessageId)!.Subject,
    undefined,
    'Subject only when given',
  );
  for (const envelope of toBilling) await assertSignatureVerifies(envelope);

  const toAudit = await receive(audit.url, 2);
  assert.deepEqual(
    toAudit.map((envelope) => envelope.MessageId).sort(),
    [invoice.MessageId, small.MessageId].sort(),
  );
  for (const envelope of toAudit) await assertSignatureVerifies(envelope);
  // Nothing else arrived: the receipt and the French order were filtered out where they should be.
  assert.deepEqual(await receiveOnce(billing.url), []);
  assert.deepEqual(await receiveOnce(audit.url), []);

  const { Subscriptions } = await sns.ok<{ Subscriptions: Array<{ Endpoint: string; Protocol: string }> }>([
    'list-subscriptions-by-topic',
    '--topic-arn',
    TopicArn,
  ]);
  assert.deepEqual(
    Subscriptions.map((subscription) => subscription.Endpoint).sort(),
    [audit.arn, billing.arn].sort(),
  );
  await sns.fails(['publish', '--topic-arn', `${TopicArn}-missing`, '--message', 'x'], 'NotFound');

  await sns.ok(['unsubscribe', '--subscription-arn', billingSubscription]);
  await sns.ok(['delete-topic', '--topic-arn', TopicArn]);
  await sns.fails(['get-topic-attributes', '--topic-arn', TopicArn], 'NotFound');
  for (const { url } of [billing, audit]) await sqs.ok(['delete-queue', '--queue-url', url]);
}
