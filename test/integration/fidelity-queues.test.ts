import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakeClock, type RunningSluice, startSluice } from 'sluice';
import { postForm, postJson } from '../helpers/raw-requests.ts';
import { availability, hasBoto3, PYTHONS } from './clients/clients.ts';
import { boto3Caller, failsWith, jsSdkCaller, ok, type SqsCaller } from './clients/sqs-callers.ts';

/**
 * Queue-side behaviours where AWS was recorded doing something specific (attribute rules, encryption
 * attributes, AddPermission's policy, tags, error wording, redrive policies, move tasks), each checked through
 * a real client in both wire protocols: @aws-sdk/client-sqs (JSON), Debian's boto3 1.26 (Query), and a newer
 * boto3 (JSON) when one is on PATH. One server on a fake clock, so a move task's steps run when the test moves
 * time.
 */

const ACCOUNT = '000000000000';
const arnOf = (name: string) => `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}`;
const NON_EXISTENT_QUEUE = 'AWS.SimpleQueueService.NonExistentQueue';

const clock = new FakeClock(Date.UTC(2026, 11, 1));
let sluice: RunningSluice;
let dataDir: string;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sluice-fidelity-'));
  sluice = await startSluice({ port: 0, dataDir, clock, logLevel: 'silent' });
});
after(async () => {
  await sluice?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const clients: Array<{
  label: string;
  skip: string | false;
  missing?: string;
  open: () => Promise<SqsCaller>;
}> = [
  { label: '@aws-sdk/client-sqs (json)', skip: false, open: async () => jsSdkCaller(sluice.endpoint) },
  // Debian's boto3 1.26 (Query) is required in CI; a newer boto3 on PATH (JSON) runs too when there is one.
  ...PYTHONS.map((python) => ({
    label: `${python.label} (${python.protocol})`,
    ...availability(python, python.bin !== undefined && hasBoto3(python.bin)),
    open: () => boto3Caller(python.bin!, sluice.endpoint),
  })),
];

for (const [index, client] of clients.entries()) {
  describe(client.label, { skip: client.skip, concurrency: false }, () => {
    let sqs: SqsCaller;
    let counter = 0;
    /** A fresh queue name for this client; `.fifo` names are FIFO queues. */
    const nameOf = (tag: string, fifo = false) =>
      `fid${index}-${sqs.protocol}-${tag}-${++counter}${fifo ? '.fifo' : ''}`;
    const create = async (name: string, Attributes?: Record<string, string>) =>
      (await ok(sqs, 'CreateQueue', { QueueName: name, ...(Attributes ? { Attributes } : {}) }))
        .QueueUrl as string;
    const attributesOf = async (QueueUrl: string, names = ['All']) =>
      ((await ok(sqs, 'GetQueueAttributes', { QueueUrl, AttributeNames: names })).Attributes ?? {}) as Record<
        string,
        string
      >;

    before(async () => {
      assert.ok(!client.missing, client.missing);
      sqs = await client.open();
      assert.equal(sqs.protocol, client.label.endsWith('(json)') ? 'json' : 'query');
    });
    after(async () => {
      await sqs?.close();
    });

    // ---- Attribute names and filters --------------------------------------------------------------

    test('CreateQueue refuses the FIFO attributes on a standard queue, FifoQueue=false included', async () => {
      const name = nameOf('std-fifo-attrs');
      const refused = (Attributes: Record<string, string>, message: string) =>
        failsWith(
          sqs,
          'CreateQueue',
          { QueueName: name, Attributes },
          {
            code: 'InvalidAttributeName',
            message,
            status: 400,
          },
        );
      await refused({ FifoQueue: 'false' }, 'Unknown Attribute FifoQueue.');
      await refused({ ContentBasedDeduplication: 'false' }, 'Unknown Attribute ContentBasedDeduplication.');
      await refused(
        { DeduplicationScope: 'queue' },
        'You can specify the DeduplicationScope only when FifoQueue is set to true.',
      );
      await refused(
        { FifoThroughputLimit: 'perQueue' },
        'You can specify the FifoThroughputLimit only when FifoQueue is set to true.',
      );
      await failsWith(sqs, 'GetQueueUrl', { QueueName: name }, { code: NON_EXISTENT_QUEUE });
    });

    test('SetQueueAttributes FifoQueue: "true" on a FIFO queue changes nothing, "false" is refused', async () => {
      const url = await create(nameOf('fifo-set', true), { FifoQueue: 'true' });
      const before = await attributesOf(url);
      await ok(sqs, 'SetQueueAttributes', { QueueUrl: url, Attributes: { FifoQueue: 'true' } });
      const { LastModifiedTimestamp: _a, ...afterTrue } = await attributesOf(url);
      const { LastModifiedTimestamp: _b, ...beforeTrue } = before;
      assert.deepEqual(afterTrue, beforeTrue);
      await failsWith(
        sqs,
        'SetQueueAttributes',
        { QueueUrl: url, Attributes: { FifoQueue: 'false' } },
        {
          code: 'InvalidAttributeValue',
          message:
            'Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.',
        },
      );
      assert.equal((await attributesOf(url, ['FifoQueue'])).FifoQueue, 'true');

      const standard = await create(nameOf('std-set'));
      for (const FifoQueue of ['true', 'false']) {
        await failsWith(
          sqs,
          'SetQueueAttributes',
          { QueueUrl: standard, Attributes: { FifoQueue } },
          {
            code: 'InvalidAttributeName',
            message: 'Unknown Attribute FifoQueue.',
          },
        );
      }
    });

    test('server-side encryption attributes are kept as AWS keeps them', async () => {
      const url = await create(nameOf('sse'));
      const fresh = await attributesOf(url);
      assert.equal(fresh.SqsManagedSseEnabled, 'true');
      assert.equal('KmsDataKeyReusePeriodSeconds' in fresh, false, JSON.stringify(fresh));
      assert.equal('KmsMasterKeyId' in fresh, false);

      await failsWith(
        sqs,
        'SetQueueAttributes',
        { QueueUrl: url, Attributes: { KmsMasterKeyId: 'testKeyId', SqsManagedSseEnabled: 'true' } },
        {
          code: 'InvalidAttributeName',
          message:
            'You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.',
        },
      );
      assert.deepEqual(await attributesOf(url), fresh, 'the refused call changed nothing');

      const sse = ['KmsMasterKeyId', 'KmsDataKeyReusePeriodSeconds', 'SqsManagedSseEnabled'];
      await ok(sqs, 'SetQueueAttributes', {
        QueueUrl: url,
        Attributes: { KmsMasterKeyId: 'testKeyId', KmsDataKeyReusePeriodSeconds: '6000' },
      });
      assert.deepEqual(await attributesOf(url, sse), {
        KmsMasterKeyId: 'testKeyId',
        KmsDataKeyReusePeriodSeconds: '6000',
        SqsManagedSseEnabled: 'false',
      });
      await ok(sqs, 'SetQueueAttributes', {
        QueueUrl: url,
        Attributes: { KmsMasterKeyId: '', KmsDataKeyReusePeriodSeconds: '300' },
      });
      assert.deepEqual(await attributesOf(url, sse), { SqsManagedSseEnabled: 'false' });
    });

    // ---- Permissions ----------------------------------------------------------------------------

    test('AddPermission writes the policy AWS writes; removing the last statement removes Policy', async () => {
      const name = nameOf('perm');
      const url = await create(name);
      const arn = arnOf(name);
      await ok(sqs, 'AddPermission', {
        QueueUrl: url,
        Label: 'one',
        AWSAccountIds: ['111122223333'],
        Actions: ['SendMessage'],
      });
      await ok(sqs, 'AddPermission', {
        QueueUrl: url,
        Label: 'several',
        AWSAccountIds: ['111122223333', '444455556666'],
        Actions: ['ReceiveMessage', 'DeleteMessage'],
      });
      const policy = JSON.parse((await attributesOf(url, ['Policy'])).Policy ?? '{}');
      assert.deepEqual(policy, {
        Version: '2008-10-17',
        Id: `${arn}/SQSDefaultPolicy`,
        Statement: [
          {
            Sid: 'one',
            Effect: 'Allow',
            Principal: { AWS: 'arn:aws:iam::111122223333:root' },
            Action: 'SQS:SendMessage',
            Resource: arn,
          },
          {
            Sid: 'several',
            Effect: 'Allow',
            Principal: { AWS: ['arn:aws:iam::111122223333:root', 'arn:aws:iam::444455556666:root'] },
            Action: ['SQS:ReceiveMessage', 'SQS:DeleteMessage'],
            Resource: arn,
          },
        ],
      });
      await ok(sqs, 'RemovePermission', { QueueUrl: url, Label: 'one' });
      await ok(sqs, 'RemovePermission', { QueueUrl: url, Label: 'several' });
      assert.deepEqual(await attributesOf(url, ['Policy']), {});
    });

    test('AddPermission refuses owner-only actions and more than 7 actions', async () => {
      const url = await create(nameOf('perm-refused'));
      const add = (Actions: string[], expected: Parameters<typeof failsWith>[3]) =>
        failsWith(
          sqs,
          'AddPermission',
          { QueueUrl: url, Label: 'l', AWSAccountIds: ['111122223333'], Actions },
          expected,
        );
      for (const action of [
        'SetQueueAttributes',
        'AddPermission',
        'RemovePermission',
        'CreateQueue',
        'DeleteQueue',
      ]) {
        await add(['SendMessage', action], {
          code: 'InvalidParameterValue',
          message: `Value SQS:${action} for parameter ActionName is invalid. Reason: Only the queue owner is allowed to invoke this action.`,
          status: 400,
        });
      }
      const eight = [
        'SendMessage',
        'ReceiveMessage',
        'DeleteMessage',
        'ChangeMessageVisibility',
        'GetQueueAttributes',
        'GetQueueUrl',
        'ListDeadLetterSourceQueues',
        'PurgeQueue',
      ];
      await add(eight, { code: 'OverLimit', status: 403 });
      assert.deepEqual(await attributesOf(url, ['Policy']), {}, 'no refused call wrote a policy');
    });

    // ---- Tags -----------------------------------------------------------------------------------

    test('TagQueue without tags and UntagQueue without keys are refused and change nothing', async () => {
      const url = await create(nameOf('tags'));
      await ok(sqs, 'TagQueue', { QueueUrl: url, Tags: { team: 'orders' } });
      await failsWith(
        sqs,
        'TagQueue',
        { QueueUrl: url, Tags: {} },
        { code: 'MissingParameter', status: 400 },
      );
      await failsWith(
        sqs,
        'UntagQueue',
        { QueueUrl: url, TagKeys: [] },
        {
          code: 'InvalidParameterValue',
          message: 'Tag keys must be between 1 and 128 characters in length.',
          status: 400,
        },
      );
      assert.deepEqual((await ok(sqs, 'ListQueueTags', { QueueUrl: url })).Tags, { team: 'orders' });
    });

    // ---- Messages of errors ---------------------------------------------------------------------

    test('InvalidParameterValue and MissingParameter: the codes clients show, and AWS JSON __type', async () => {
      const url = await create(nameOf('codes'));
      const tooMany = { QueueUrl: url, MaxNumberOfMessages: 11 };
      const noBody = { QueueUrl: url, MessageBody: '' };
      await failsWith(sqs, 'ReceiveMessage', tooMany, { code: 'InvalidParameterValue', status: 400 });
      await failsWith(sqs, 'SendMessage', noBody, { code: 'MissingParameter', status: 400 });
      if (sqs.protocol !== 'json') return;
      // What the SDK read those codes from: the legacy code in x-amzn-query-error; __type has AWS's generic shapes.
      for (const [action, body, type, queryError] of [
        ['ReceiveMessage', tooMany, 'InvalidParameterValueException', 'InvalidParameterValue'],
        ['SendMessage', noBody, 'MissingRequiredParameterException', 'MissingParameter'],
      ] as const) {
        const response = await postJson(sluice.endpoint, action, JSON.stringify(body));
        const parsed = (await response.json()) as { __type: string };
        assert.equal(parsed.__type, `com.amazon.coral.service#${type}`);
        assert.equal(response.headers.get('x-amzn-query-error'), `${queryError};Sender`);
      }
    });

    test('QueueAlreadyExists names the first differing attribute, singular', async () => {
      const name = nameOf('exists');
      await create(name, { ReceiveMessageWaitTimeSeconds: '1', DelaySeconds: '1' });
      const Attributes = { ReceiveMessageWaitTimeSeconds: '1', DelaySeconds: '2', VisibilityTimeout: '45' };
      await failsWith(
        sqs,
        'CreateQueue',
        { QueueName: name, Attributes },
        {
          code: 'QueueAlreadyExists',
          message:
            'A queue already exists with the same name and a different value for attribute DelaySeconds',
        },
      );
    });

    test('PurgeQueueInProgress names the queue by its name', async () => {
      const name = nameOf('purge');
      const url = await create(name);
      await ok(sqs, 'PurgeQueue', { QueueUrl: url });
      await failsWith(
        sqs,
        'PurgeQueue',
        { QueueUrl: url },
        {
          code: 'AWS.SimpleQueueService.PurgeQueueInProgress',
          message: `Only one PurgeQueue operation on ${name} is allowed every 60 seconds.`,
          status: 403,
        },
      );
    });

    test('NonExistentQueue is worded per protocol', async () => {
      await failsWith(
        sqs,
        'GetQueueUrl',
        { QueueName: nameOf('missing') },
        {
          code: NON_EXISTENT_QUEUE,
          message:
            sqs.protocol === 'query'
              ? 'The specified queue does not exist for this wsdl version.'
              : 'The specified queue does not exist.',
        },
      );
    });

    // ---- More that AWS was recorded doing -------------------------------------------------------

    test('boolean attribute values are read in any case and kept as "true"/"false"', async () => {
      const name = nameOf('bool', true);
      const url = await create(name, { FifoQueue: 'True', ContentBasedDeduplication: 'True' });
      assert.deepEqual(await attributesOf(url, ['FifoQueue', 'ContentBasedDeduplication']), {
        FifoQueue: 'true',
        ContentBasedDeduplication: 'true',
      });
      // Content-based deduplication is really on: a send without a deduplication id is accepted.
      await ok(sqs, 'SendMessage', { QueueUrl: url, MessageBody: 'hello', MessageGroupId: 'g' });
      await ok(sqs, 'SetQueueAttributes', {
        QueueUrl: url,
        Attributes: { ContentBasedDeduplication: 'FALSE' },
      });
      assert.deepEqual(await attributesOf(url, ['ContentBasedDeduplication']), {
        ContentBasedDeduplication: 'false',
      });
      // The same values in another case are the same queue, not a conflicting one.
      const again = await ok(sqs, 'CreateQueue', {
        QueueName: name,
        Attributes: { FifoQueue: 'TRUE', ContentBasedDeduplication: 'False' },
      });
      assert.equal(again.QueueUrl, url);
    });

    test("a queue's bare name serves as its QueueUrl in every action that takes one", async () => {
      const name = nameOf('bare');
      await create(name);
      const byName = { QueueUrl: name };
      await ok(sqs, 'SetQueueAttributes', { ...byName, Attributes: { VisibilityTimeout: '45' } });
      assert.equal((await attributesOf(name, ['VisibilityTimeout'])).VisibilityTimeout, '45');
      await ok(sqs, 'TagQueue', { ...byName, Tags: { team: 'a', gone: 'b' } });
      await ok(sqs, 'UntagQueue', { ...byName, TagKeys: ['gone'] });
      assert.deepEqual((await ok(sqs, 'ListQueueTags', byName)).Tags, { team: 'a' });
      await ok(sqs, 'AddPermission', {
        ...byName,
        Label: 'reader',
        AWSAccountIds: ['111122223333'],
        Actions: ['ReceiveMessage'],
      });
      await ok(sqs, 'RemovePermission', { ...byName, Label: 'reader' });
      assert.deepEqual((await ok(sqs, 'ListDeadLetterSourceQueues', byName)).queueUrls ?? [], []);

      await ok(sqs, 'SendMessage', { ...byName, MessageBody: 'one' });
      await ok(sqs, 'SendMessageBatch', { ...byName, Entries: [{ Id: 'two', MessageBody: 'two' }] });
      const receive = async () =>
        ((await ok(sqs, 'ReceiveMessage', { ...byName, MaxNumberOfMessages: 10 })).Messages ?? []) as Array<{
          Body: string;
          ReceiptHandle: string;
        }>;
      const received = await receive();
      assert.deepEqual(received.map((message) => message.Body).sort(), ['one', 'two']);
      await ok(sqs, 'ChangeMessageVisibility', {
        ...byName,
        ReceiptHandle: received[0]!.ReceiptHandle,
        VisibilityTimeout: 0,
      });
      await ok(sqs, 'ChangeMessageVisibilityBatch', {
        ...byName,
        Entries: [{ Id: 'again', ReceiptHandle: received[1]!.ReceiptHandle, VisibilityTimeout: 0 }],
      });
      const again = await receive();
      assert.equal(again.length, 2);
      await ok(sqs, 'DeleteMessage', { ...byName, ReceiptHandle: again[0]!.ReceiptHandle });
      await ok(sqs, 'DeleteMessageBatch', {
        ...byName,
        Entries: [{ Id: 'last', ReceiptHandle: again[1]!.ReceiptHandle }],
      });
      assert.equal(
        (await attributesOf(name, ['ApproximateNumberOfMessages'])).ApproximateNumberOfMessages,
        '0',
      );
      await ok(sqs, 'PurgeQueue', byName);
      await ok(sqs, 'DeleteQueue', byName);
      await failsWith(sqs, 'GetQueueAttributes', byName, { code: NON_EXISTENT_QUEUE, status: 400 });

      // moto's suite, run on AWS: a FIFO queue by name still checks the message as AWS does.
      const fifo = nameOf('bare', true);
      await create(fifo, { FifoQueue: 'true' });
      const send = { QueueUrl: fifo, MessageBody: 'test', MessageGroupId: 'test' };
      await failsWith(
        sqs,
        'SendMessage',
        { ...send, DelaySeconds: 5, MessageDeduplicationId: 'd1' },
        {
          code: 'InvalidParameterValue',
          message:
            'Value 5 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.',
        },
      );
      await ok(sqs, 'SendMessage', { ...send, DelaySeconds: 0, MessageDeduplicationId: 'd2' });
    });

    test('a FIFO queue deduplicates in the scope it was created with, whatever DeduplicationScope says later', async () => {
      // What each receive got in the steps recorded on AWS on 2025-08-19 (to Test3 the other way round; its
      // last two steps follow from the same rule).
      const highThroughput = { DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' };
      const regular = { DeduplicationScope: 'queue', FifoThroughputLimit: 'perQueue' };
      const run = async (created: Record<string, string>, switchedTo: Record<string, string>) => {
        const url = await create(nameOf('scope', true), { FifoQueue: 'true', ...created });
        const seen: string[][] = [];
        const sendAndReceive = async (body: string, group: string, deduplicationId: string) => {
          await ok(sqs, 'SendMessage', {
            QueueUrl: url,
            MessageBody: body,
            MessageGroupId: group,
            MessageDeduplicationId: deduplicationId,
          });
          const { Messages = [] } = (await ok(sqs, 'ReceiveMessage', { QueueUrl: url })) as {
            Messages?: Array<{ Body: string; ReceiptHandle: string }>;
          };
          for (const { ReceiptHandle } of Messages)
            await ok(sqs, 'DeleteMessage', { QueueUrl: url, ReceiptHandle });
          seen.push(Messages.map((message) => message.Body));
        };
        await sendAndReceive('Test1', 'group1', 'same-dedup');
        await sendAndReceive('Test2', 'group2', 'same-dedup');
        await ok(sqs, 'SetQueueAttributes', { QueueUrl: url, Attributes: switchedTo });
        assert.deepEqual(await attributesOf(url, Object.keys(switchedTo)), switchedTo);
        await sendAndReceive('Test3', 'group3', 'same-dedup');
        await sendAndReceive('Test4', 'group4', 'dedup_2');
        await sendAndReceive('Test5', 'group5', 'dedup_2');
        return seen;
      };
      assert.deepEqual(await run(regular, highThroughput), [['Test1'], [], [], ['Test4'], []]);
      assert.deepEqual(await run(highThroughput, regular), [
        ['Test1'],
        ['Test2'],
        ['Test3'],
        ['Test4'],
        ['Test5'],
      ]);
    });

    test('a queue may name itself as its own dead-letter queue', async () => {
      const name = nameOf('self-dlq');
      const url = await create(name);
      const RedrivePolicy = JSON.stringify({ deadLetterTargetArn: arnOf(name), maxReceiveCount: 1 });
      await ok(sqs, 'SetQueueAttributes', { QueueUrl: url, Attributes: { RedrivePolicy } });
      assert.deepEqual(JSON.parse((await attributesOf(url, ['RedrivePolicy'])).RedrivePolicy ?? '{}'), {
        deadLetterTargetArn: arnOf(name),
        maxReceiveCount: 1,
      });
      assert.deepEqual((await ok(sqs, 'ListDeadLetterSourceQueues', { QueueUrl: url })).queueUrls, [url]);
      // Sluice's choice where AWS's behaviour is not recorded: the message stays and is redelivered.
      await ok(sqs, 'SendMessage', { QueueUrl: url, MessageBody: 'again and again' });
      for (const count of ['1', '2', '3']) {
        const { Messages } = (await ok(sqs, 'ReceiveMessage', {
          QueueUrl: url,
          VisibilityTimeout: 0,
          AttributeNames: ['ApproximateReceiveCount'],
        })) as { Messages?: Array<{ Attributes?: Record<string, string> }> };
        assert.equal(Messages?.[0]?.Attributes?.ApproximateReceiveCount, count);
      }
    });

    test('a malformed RedrivePolicy is InvalidParameterValue', async () => {
      const url = await create(nameOf('bad-redrive'));
      const dlqName = nameOf('bad-redrive-dlq');
      await create(dlqName);
      const dlqArn = arnOf(dlqName);
      const cases: Array<[string, string]> = [
        ['not json', 'Redrive policy is not a valid JSON map.'],
        [
          JSON.stringify({ maxReceiveCount: 3 }),
          'Redrive policy does not contain mandatory attribute: deadLetterTargetArn.',
        ],
        [
          JSON.stringify({ deadLetterTargetArn: dlqArn }),
          'Redrive policy does not contain mandatory attribute: maxReceiveCount.',
        ],
        [
          JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 0 }),
          'Invalid value for maxReceiveCount: 0, valid values are from 1 to 1000 both inclusive.',
        ],
      ];
      for (const [RedrivePolicy, reason] of cases) {
        await failsWith(
          sqs,
          'SetQueueAttributes',
          { QueueUrl: url, Attributes: { RedrivePolicy } },
          {
            code: 'InvalidParameterValue',
            message: `Value ${RedrivePolicy} for parameter RedrivePolicy is invalid. Reason: ${reason}`,
          },
        );
      }
      assert.deepEqual(await attributesOf(url, ['RedrivePolicy']), {});
    });

    // ---- Move tasks -----------------------------------------------------------------------------

    /** A source queue whose messages, received twice, land in a DLQ; returns the DLQ's ARN. */
    const dlqHolding = async (count: number) => {
      const dlqName = nameOf('mt-dlq');
      await create(dlqName, { MessageRetentionPeriod: '1209600' });
      const source = await create(nameOf('mt-src'), {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(dlqName), maxReceiveCount: 1 }),
      });
      for (let i = 0; i < count; i++)
        await ok(sqs, 'SendMessage', { QueueUrl: source, MessageBody: `m${i}` });
      for (let i = 0; i < 2 * count; i++)
        await ok(sqs, 'ReceiveMessage', { QueueUrl: source, VisibilityTimeout: 0, MaxNumberOfMessages: 10 });
      return arnOf(dlqName);
    };
    const handleOf = (taskId: string, sourceArn: string) =>
      Buffer.from(JSON.stringify({ taskId, sourceArn })).toString('base64');
    const missing = (parameter: 'SourceArn' | 'DestinationArn') => ({
      code: 'ResourceNotFoundException',
      message: `The resource that you specified for the ${parameter} parameter doesn't exist.`,
      status: 404,
    });

    test('CancelMessageMoveTask: a malformed handle, an unknown source, an unknown task', async () => {
      await failsWith(
        sqs,
        'CancelMessageMoveTask',
        { TaskHandle: 'foobared' },
        {
          code: 'InvalidParameterValue',
          message: 'Value for parameter TaskHandle is invalid.',
          status: 400,
        },
      );
      const taskId = '10f57157-fc38-4da9-a113-4de7e12d05dd';
      const goneSource = handleOf(taskId, arnOf(nameOf('mt-gone')));
      await failsWith(sqs, 'CancelMessageMoveTask', { TaskHandle: goneSource }, missing('SourceArn'));
      const existing = nameOf('mt-exists');
      await create(existing);
      await failsWith(
        sqs,
        'CancelMessageMoveTask',
        { TaskHandle: handleOf(taskId, arnOf(existing)) },
        {
          code: 'ResourceNotFoundException',
          message: 'Task does not exist.',
          status: 404,
        },
      );
    });

    test('StartMessageMoveTask: a missing source, a source that is not a DLQ, a missing destination', async () => {
      const start = (input: Record<string, unknown>, expected: Parameters<typeof failsWith>[3]) =>
        failsWith(sqs, 'StartMessageMoveTask', input, expected);
      await start({ SourceArn: arnOf(nameOf('mt-nosource')) }, missing('SourceArn'));
      const plain = nameOf('mt-plain');
      await create(plain);
      await start(
        { SourceArn: arnOf(plain) },
        { code: 'InvalidParameterValue', message: 'Source queue must be configured as a Dead Letter Queue.' },
      );
      const dlqArn = await dlqHolding(1);
      await start(
        { SourceArn: dlqArn, DestinationArn: `${arnOf(plain)}doesntexist` },
        missing('DestinationArn'),
      );
    });

    test('a second move task on a busy source is refused; a deleted destination fails the task', async () => {
      const dlqArn = await dlqHolding(3);
      const destinationName = nameOf('mt-dest');
      const destination = await create(destinationName);
      const start = {
        SourceArn: dlqArn,
        DestinationArn: arnOf(destinationName),
        MaxNumberOfMessagesPerSecond: 1,
      };
      await ok(sqs, 'StartMessageMoveTask', start);
      await failsWith(sqs, 'StartMessageMoveTask', start, {
        code: 'InvalidParameterValue',
        message:
          'There is already a task running. Only one active task is allowed for a source queue arn at a given time.',
        status: 400,
      });
      await ok(sqs, 'DeleteQueue', { QueueUrl: destination });
      await clock.advance(2000);
      const { Results } = (await ok(sqs, 'ListMessageMoveTasks', { SourceArn: dlqArn })) as {
        Results: Array<Record<string, unknown>>;
      };
      assert.equal(Results[0]?.Status, 'FAILED', JSON.stringify(Results));
      assert.equal(Results[0]?.FailureReason, NON_EXISTENT_QUEUE);
    });
  });
}

test("a bare queue name in a Query form post, as moto's suite sends it (test_create_queue_with_tags_using_query_protocol)", async () => {
  const form = (params: Record<string, string>) =>
    postForm(sluice.endpoint, new URLSearchParams({ Version: '2012-11-05', ...params }).toString());
  const name = 'query-bare-name';
  const created = await form({
    Action: 'CreateQueue',
    QueueName: name,
    'Tag.1.Key': 'foo',
    'Tag.1.Value': 'bar',
  });
  assert.equal(created.status, 200, await created.text());
  const tags = await form({ Action: 'ListQueueTags', QueueUrl: name });
  const text = await tags.text();
  assert.equal(tags.status, 200, text);
  assert.ok(text.includes('<Tag><Key>foo</Key><Value>bar</Value></Tag>'), text);
});
