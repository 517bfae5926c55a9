import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  type Message,
  type MessageAttributeValue,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
  SQSServiceException,
  TagQueueCommand,
  UntagQueueCommand,
} from '@aws-sdk/client-sqs';
import { md5Hex, md5OfAttributes } from '../helpers/md5.ts';
import { assertJsonError, assertQueryError, type WireResponse } from '../helpers/raw-requests.ts';
import { type TestServer, useServer } from '../helpers/server.ts';
import { signV4 } from '../helpers/sigv4.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * The standard-queue scenario through @aws-sdk/client-sqs (AWS JSON 1.0; the SDK also verifies the
 * MD5s of what it sends and receives), then malformed requests sent by hand over both protocols.
 */

const NON_EXISTENT_QUEUE = 'AWS.SimpleQueueService.NonExistentQueue';
const TRICKY_BODY =
  'line1\r\nline2\rline3\n\ttab &amp; & < > " \' caf\u00e9 \u65e5\u672c\u8a9e \u{1f680}\u{1f389} \ufffd end';

let server: TestServer;
let sqs: SQSClient;
const run = randomBytes(4).toString('hex');
const created: string[] = [];

before(async () => {
  server = await useServer();
  sqs = sqsClient(server.endpoint);
});
after(async () => {
  for (const QueueUrl of created) await sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => {});
  sqs?.destroy();
  await server?.close();
});

/** Awaits a call that must fail; checks the SDK's exception name and the legacy code it exposes. */
async function rejects(call: Promise<unknown>, name: string, code: string): Promise<SQSServiceException> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof SQSServiceException, `not an SQS exception: ${String(error)}`);
    const legacy = (error as SQSServiceException & { Code?: string }).Code;
    assert.deepEqual({ name: error.name, Code: legacy }, { name, Code: code });
    assert.equal(error.$fault, 'client');
    return error;
  }
  assert.fail(`expected ${name} (${code}), but the call succeeded`);
}

async function createQueue(name: string, attributes?: Record<string, string>): Promise<string> {
  const output = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  const QueueUrl = output.QueueUrl ?? '';
  assert.ok(QueueUrl.endsWith(`/${name}`), `QueueUrl ${QueueUrl}`);
  created.push(QueueUrl);
  return QueueUrl;
}

/** Receives until `count` distinct messages were collected (SQS may return fewer per call). */
async function receiveAll(
  QueueUrl: string,
  count: number,
  input: Partial<ReceiveMessageCommandInput> = {},
): Promise<Map<string, Message>> {
  const got = new Map<string, Message>();
  const deadline = Date.now() + 5000;
  while (got.size < count && Date.now() < deadline) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, ...input }),
    );
    for (const m of Messages) got.set(m.MessageId!, m);
  }
  assert.equal(got.size, count, 'number of messages received');
  return got;
}

describe('standard queue through @aws-sdk/client-sqs', () => {
  const name = `js-${run}-main`;
  let url = '';
  let otherUrl = '';
  const attributes: Record<string, MessageAttributeValue> = {
    'str.plain': { DataType: 'String', StringValue: 'hello & <world> \r\n \u00e9\u{1f680}' },
    num: { DataType: 'Number', StringValue: '-12.5' },
    bin: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 0x7f, 0x80, 0xfe, 0xff]) },
    'str.json': { DataType: 'String.json', StringValue: '{"k": [1, 2]}' },
  };
  let idA = '';
  let idB = '';

  test('CreateQueue is idempotent with the same attributes and fails with different ones', async () => {
    const attrs = { VisibilityTimeout: '45', DelaySeconds: '0' };
    url = await createQueue(name, attrs);
    const again = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attrs }));
    assert.equal(again.QueueUrl, url);
    await rejects(
      sqs.send(
        new CreateQueueCommand({ QueueName: name, Attributes: { ...attrs, VisibilityTimeout: '46' } }),
      ),
      'QueueNameExists',
      'QueueAlreadyExists',
    );
    otherUrl = await createQueue(`js-${run}-other`);
  });

  test('GetQueueUrl and ListQueues with a prefix', async () => {
    assert.equal((await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl, url);
    const all = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: `js-${run}` }));
    assert.deepEqual(all.QueueUrls?.sort(), [url, otherUrl].sort());
    const one = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }));
    assert.deepEqual(one.QueueUrls, [url]);
  });

  test('queue attributes: All, then set and get one', async () => {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
    );
    assert.equal(Attributes.VisibilityTimeout, '45');
    assert.equal(Attributes.DelaySeconds, '0');
    assert.equal(Attributes.MaximumMessageSize, '1048576');
    assert.equal(Attributes.MessageRetentionPeriod, '345600');
    assert.equal(Attributes.ApproximateNumberOfMessages, '0');
    assert.match(Attributes.QueueArn ?? '', new RegExp(`^arn:aws:sqs:[^:]+:[^:]+:${name}$`));
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: '60' } }));
    const one = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout'] }),
    );
    assert.deepEqual(one.Attributes, { VisibilityTimeout: '60' });
  });

  test('tag, untag, list tags', async () => {
    await sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: { team: 'core', env: 'test' } }));
    assert.deepEqual((await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags, {
      team: 'core',
      env: 'test',
    });
    await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ['env'] }));
    assert.deepEqual((await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags, { team: 'core' });
  });

  test('SendMessage with every attribute type; SendMessageBatch', async () => {
    const sent = await sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: TRICKY_BODY, MessageAttributes: attributes }),
    );
    assert.equal(sent.MD5OfMessageBody, md5Hex(TRICKY_BODY));
    assert.equal(sent.MD5OfMessageAttributes, md5OfAttributes(attributes));
    idA = sent.MessageId!;
    const batch = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [{ Id: 'b', MessageBody: 'batch body \u2713' }],
      }),
    );
    assert.deepEqual(batch.Failed ?? [], []);
    idB = batch.Successful![0]!.MessageId!;
  });

  test('SendMessageBatch reports a bad entry per entry', async () => {
    const batch = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: otherUrl,
        Entries: [
          { Id: 'ok-1', MessageBody: 'fine' },
          { Id: 'bad_1', MessageBody: 'forbidden \u0000 character' },
        ],
      }),
    );
    assert.deepEqual(
      batch.Successful?.map((e) => e.Id),
      ['ok-1'],
    );
    assert.equal(batch.Successful?.[0]?.MD5OfMessageBody, md5Hex('fine'));
    assert.deepEqual(
      batch.Failed?.map(({ Id, Code, SenderFault }) => ({ Id, Code, SenderFault })),
      [{ Id: 'bad_1', Code: 'InvalidMessageContents', SenderFault: true }],
    );
  });

  test('ReceiveMessage: all attributes, filters, and the receive count on redelivery', async () => {
    let got = await receiveAll(url, 2, {
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
      VisibilityTimeout: 0,
    });
    const a = got.get(idA)!;
    assert.equal(a.Body, TRICKY_BODY);
    assert.equal(a.MD5OfBody, md5Hex(TRICKY_BODY));
    assert.deepEqual(a.MessageAttributes, attributes);
    assert.equal(a.MD5OfMessageAttributes, md5OfAttributes(attributes));
    assert.equal(a.Attributes?.ApproximateReceiveCount, '1');
    assert.match(a.Attributes?.SentTimestamp ?? '', /^\d{13}$/);
    assert.match(a.Attributes?.ApproximateFirstReceiveTimestamp ?? '', /^\d{13}$/);
    assert.equal(got.get(idB)?.Body, 'batch body \u2713');

    got = await receiveAll(url, 2, {
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      MessageAttributeNames: ['str.*'],
      VisibilityTimeout: 0,
    });
    const a2 = got.get(idA)!;
    assert.deepEqual(a2.Attributes, { ApproximateReceiveCount: '2' });
    const subset = { 'str.plain': attributes['str.plain']!, 'str.json': attributes['str.json']! };
    assert.deepEqual(a2.MessageAttributes, subset);
    assert.equal(a2.MD5OfMessageAttributes, md5OfAttributes(subset));
    assert.notEqual(a2.ReceiptHandle, a.ReceiptHandle);
  });

  test('visibility: in flight hides, ChangeMessageVisibility(0) and the batch form release', async () => {
    const got = await receiveAll(url, 2, { MessageSystemAttributeNames: ['ApproximateReceiveCount'] });
    assert.equal(got.get(idA)?.Attributes?.ApproximateReceiveCount, '3');
    const hidden = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
    assert.deepEqual(hidden.Messages ?? [], []);
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: got.get(idA)!.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const again = await receiveAll(url, 1, { MessageSystemAttributeNames: ['ApproximateReceiveCount'] });
    assert.equal(again.get(idA)?.Attributes?.ApproximateReceiveCount, '4');
    const result = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'a', ReceiptHandle: again.get(idA)!.ReceiptHandle, VisibilityTimeout: 0 },
          { Id: 'b', ReceiptHandle: got.get(idB)!.ReceiptHandle, VisibilityTimeout: 0 },
          { Id: 'bad', ReceiptHandle: 'not-a-receipt-handle', VisibilityTimeout: 0 },
        ],
      }),
    );
    assert.deepEqual(result.Successful?.map((e) => e.Id).sort(), ['a', 'b']);
    assert.deepEqual(
      result.Failed?.map(({ Id, Code, SenderFault }) => ({ Id, Code, SenderFault })),
      [{ Id: 'bad', Code: 'ReceiptHandleIsInvalid', SenderFault: true }],
    );
  });

  test('DeleteMessage, DeleteMessageBatch, and an invalid receipt handle', async () => {
    const got = await receiveAll(url, 2);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: got.get(idA)!.ReceiptHandle }));
    const result = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'b', ReceiptHandle: got.get(idB)!.ReceiptHandle },
          { Id: 'bad', ReceiptHandle: 'not-a-receipt-handle' },
        ],
      }),
    );
    assert.deepEqual(
      result.Successful?.map((e) => e.Id),
      ['b'],
    );
    assert.deepEqual(
      result.Failed?.map(({ Id, Code }) => ({ Id, Code })),
      [{ Id: 'bad', Code: 'ReceiptHandleIsInvalid' }],
    );
    await rejects(
      sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: 'not-a-receipt-handle' })),
      'ReceiptHandleIsInvalid',
      'ReceiptHandleIsInvalid',
    );
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    assert.deepEqual(Attributes, {
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
  });

  test('a missing queue is QueueDoesNotExist, legacy code AWS.SimpleQueueService.NonExistentQueue', async () => {
    const missingUrl = `${url}-missing`;
    await rejects(
      sqs.send(new GetQueueUrlCommand({ QueueName: `${name}-missing` })),
      'QueueDoesNotExist',
      NON_EXISTENT_QUEUE,
    );
    await rejects(
      sqs.send(new SendMessageCommand({ QueueUrl: missingUrl, MessageBody: 'x' })),
      'QueueDoesNotExist',
      NON_EXISTENT_QUEUE,
    );
    await rejects(
      sqs.send(new ReceiveMessageCommand({ QueueUrl: missingUrl })),
      'QueueDoesNotExist',
      NON_EXISTENT_QUEUE,
    );
  });

  test('long polling: waits the full time when empty, answers at once when a message arrives', async () => {
    let started = Date.now();
    const empty = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 2 }));
    const waited = Date.now() - started;
    assert.deepEqual(empty.Messages ?? [], []);
    // The upper bound only tells the 2 s asked for from the 20 s maximum: a loaded machine answers late.
    assert.ok(waited >= 1800 && waited < 10_000, `a 2 s long poll on an empty queue took ${waited} ms`);

    started = Date.now();
    let answeredAt = 0;
    const polling = sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 10 })).then((r) => {
      answeredAt = Date.now();
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 500)); // the receive is now waiting on the server
    assert.equal(answeredAt, 0, 'the long poll answered before anything was sent');
    const sentAt = Date.now();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'wake up' }));
    const woken = await polling;
    assert.deepEqual(
      woken.Messages?.map((m) => m.Body),
      ['wake up'],
    );
    // At once, not at the end of the 10 s wait (generously, for a loaded machine).
    assert.ok(answeredAt - sentAt < 5_000, `answered ${answeredAt - sentAt} ms after the send`);
    await sqs.send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: woken.Messages![0]!.ReceiptHandle }),
    );
  });

  test('PurgeQueue twice within 60 s is PurgeQueueInProgress; DeleteQueue', async () => {
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'to be purged' }));
    await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    await rejects(
      sqs.send(new PurgeQueueCommand({ QueueUrl: url })),
      'PurgeQueueInProgress',
      'AWS.SimpleQueueService.PurgeQueueInProgress',
    );
    await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    created.splice(created.indexOf(url), 1);
    await rejects(
      sqs.send(new GetQueueUrlCommand({ QueueName: name })),
      'QueueDoesNotExist',
      NON_EXISTENT_QUEUE,
    );
  });
});

/** A signed POST (dummy credentials), as an SDK would send it, but with any headers and body. */
async function post(headers: Record<string, string>, body: string | Buffer): Promise<WireResponse> {
  const url = new URL(`${server.endpoint}/`);
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const response = await fetch(url, {
    method: 'POST',
    headers: signV4(url, headers, bytes),
    body: new Uint8Array(bytes),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const JSON_TYPE = 'application/x-amz-json-1.0';

/** A raw AWS JSON 1.0 request, as an SDK would send it but with whatever body we choose. */
const jsonRequest = (action: string, body: unknown, target = `AmazonSQS.${action}`) =>
  post(
    { 'content-type': JSON_TYPE, 'x-amz-target': target, 'x-amzn-query-mode': 'true' },
    typeof body === 'string' ? body : JSON.stringify(body),
  );

/** A raw Query request: form fields, Version added. */
const queryRequest = (fields: Record<string, string>) =>
  post(
    { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    new URLSearchParams({ Version: '2012-11-05', ...fields }).toString(),
  );

type Fields = Record<string, string>;

/** One invalid request, in both protocols, and the error SQS gives for it. */
interface Case {
  readonly title: string;
  readonly action: string;
  /** Built once the queue exists: the request, given the queue's URL. */
  readonly json: (url: string) => Record<string, unknown>;
  readonly query: (url: string) => Fields;
  readonly shape: string;
  readonly queryCode?: string;
}

const sendEntries = (n: number, id = (i: number) => `e${i}`): { json: unknown[]; query: Fields } => {
  const query: Fields = {};
  const json = Array.from({ length: n }, (_, i) => {
    query[`SendMessageBatchRequestEntry.${i + 1}.Id`] = id(i);
    query[`SendMessageBatchRequestEntry.${i + 1}.MessageBody`] = `m${i}`;
    return { Id: id(i), MessageBody: `m${i}` };
  });
  return { json, query };
};

const manyAttributes = (
  n: number,
  name = (i: number) => `a${i}`,
): { json: Record<string, unknown>; query: Fields } => {
  const json: Record<string, unknown> = {};
  const query: Fields = {};
  for (let i = 0; i < n; i++) {
    json[name(i)] = { DataType: 'String', StringValue: 'v' };
    query[`MessageAttribute.${i + 1}.Name`] = name(i);
    query[`MessageAttribute.${i + 1}.Value.DataType`] = 'String';
    query[`MessageAttribute.${i + 1}.Value.StringValue`] = 'v';
  }
  return { json, query };
};

describe('malformed and out-of-range requests, both protocols', () => {
  let url = '';
  before(async () => {
    url = await createQueue(`js-${run}-malformed`);
  });

  test('JSON: a body that is not JSON is SerializationException', async () => {
    assertJsonError(
      await jsonRequest('ListQueues', '{"QueueNamePrefix": '),
      'SerializationException',
      'SerializationException',
    );
  });

  test('JSON: an unknown X-Amz-Target is UnknownOperationException', async () => {
    assertJsonError(await jsonRequest('NoSuchAction', {}), 'UnknownOperationException', 'InvalidAction');
    assertJsonError(
      await jsonRequest('ListQueues', {}, 'AmazonSNS.ListQueues'),
      'UnknownOperationException',
      'InvalidAction',
    );
  });

  test('Query: an unknown Action is InvalidAction', async () => {
    assertQueryError(await queryRequest({ Action: 'NoSuchAction' }), 'InvalidAction');
  });

  test('JSON: a string where a number belongs is SerializationException', async () => {
    for (const value of ['abc', '11']) {
      assertJsonError(
        await jsonRequest('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: value }),
        'SerializationException',
        'SerializationException',
      );
    }
  });

  test('Query: a non-number MaxNumberOfMessages is InvalidParameterValue', async () => {
    assertQueryError(
      await queryRequest({ Action: 'ReceiveMessage', QueueUrl: url, MaxNumberOfMessages: 'abc' }),
      'InvalidParameterValue',
    );
  });

  const bigBody = 'x'.repeat(1024 * 1024 + 1);
  const eleven = sendEntries(11);
  const duplicate = sendEntries(2, () => 'same');
  const badId = sendEntries(1, () => 'not a valid id!');
  const elevenAttrs = manyAttributes(11);
  const awsAttr = manyAttributes(1, () => 'AWS.reserved');
  const cases: Case[] = [
    {
      title: 'missing QueueUrl',
      action: 'SendMessage',
      json: () => ({ MessageBody: 'x' }),
      query: () => ({ MessageBody: 'x' }),
      shape: 'MissingRequiredParameterException',
      queryCode: 'MissingParameter',
    },
    {
      title: 'empty message body',
      action: 'SendMessage',
      json: (url) => ({ QueueUrl: url, MessageBody: '' }),
      query: (url) => ({ QueueUrl: url, MessageBody: '' }),
      shape: 'MissingRequiredParameterException',
      queryCode: 'MissingParameter',
    },
    {
      title: 'a forbidden character (U+0000) in the body',
      action: 'SendMessage',
      json: (url) => ({ QueueUrl: url, MessageBody: 'a\u0000b' }),
      query: (url) => ({ QueueUrl: url, MessageBody: 'a\u0000b' }),
      shape: 'InvalidMessageContents',
    },
    {
      title: 'a body over 1 MiB',
      action: 'SendMessage',
      json: (url) => ({ QueueUrl: url, MessageBody: bigBody }),
      query: (url) => ({ QueueUrl: url, MessageBody: bigBody }),
      shape: 'InvalidParameterValueException',
      queryCode: 'InvalidParameterValue',
    },
    {
      title: '11 message attributes',
      action: 'SendMessage',
      json: (url) => ({ QueueUrl: url, MessageBody: 'x', MessageAttributes: elevenAttrs.json }),
      query: (url) => ({ QueueUrl: url, MessageBody: 'x', ...elevenAttrs.query }),
      shape: 'InvalidParameterValueException',
      queryCode: 'InvalidParameterValue',
    },
    {
      title: 'a message attribute named AWS.*',
      action: 'SendMessage',
      json: (url) => ({ QueueUrl: url, MessageBody: 'x', MessageAttributes: awsAttr.json }),
      query: (url) => ({ QueueUrl: url, MessageBody: 'x', ...awsAttr.query }),
      shape: 'InvalidParameterValueException',
      queryCode: 'InvalidParameterValue',
    },
    {
      title: 'DelaySeconds 901',
      action: 'SendMessage',
      json: (url) => ({ QueueUrl: url, MessageBody: 'x', DelaySeconds: 901 }),
      query: (url) => ({ QueueUrl: url, MessageBody: 'x', DelaySeconds: '901' }),
      shape: 'InvalidParameterValueException',
      queryCode: 'InvalidParameterValue',
    },
    {
      title: 'MaxNumberOfMessages 11',
      action: 'ReceiveMessage',
      json: (url) => ({ QueueUrl: url, MaxNumberOfMessages: 11 }),
      query: (url) => ({ QueueUrl: url, MaxNumberOfMessages: '11' }),
      shape: 'InvalidParameterValueException',
      queryCode: 'InvalidParameterValue',
    },
    {
      title: 'WaitTimeSeconds 21',
      action: 'ReceiveMessage',
      json: (url) => ({ QueueUrl: url, WaitTimeSeconds: 21 }),
      query: (url) => ({ QueueUrl: url, WaitTimeSeconds: '21' }),
      shape: 'InvalidParameterValueException',
      queryCode: 'InvalidParameterValue',
    },
    {
      title: 'VisibilityTimeout 43201 on receive',
      action: 'ReceiveMessage',
      json: (url) => ({ QueueUrl: url, VisibilityTimeout: 43201 }),
      query: (url) => ({ QueueUrl: url, VisibilityTimeout: '43201' }),
      shape: 'InvalidParameterValueException',
      queryCode: 'InvalidParameterValue',
    },
    {
      title: 'queue attribute VisibilityTimeout 43201',
      action: 'CreateQueue',
      json: () => ({ QueueName: `js-${run}-vt`, Attributes: { VisibilityTimeout: '43201' } }),
      query: () => ({
        QueueName: `js-${run}-vt`,
        'Attribute.1.Name': 'VisibilityTimeout',
        'Attribute.1.Value': '43201',
      }),
      shape: 'InvalidAttributeValue',
    },
    {
      title: 'queue attribute DelaySeconds 901',
      action: 'SetQueueAttributes',
      json: (url) => ({ QueueUrl: url, Attributes: { DelaySeconds: '901' } }),
      query: (url) => ({ QueueUrl: url, 'Attribute.1.Name': 'DelaySeconds', 'Attribute.1.Value': '901' }),
      shape: 'InvalidAttributeValue',
    },
    {
      title: '11 batch entries',
      action: 'SendMessageBatch',
      json: (url) => ({ QueueUrl: url, Entries: eleven.json }),
      query: (url) => ({ QueueUrl: url, ...eleven.query }),
      shape: 'TooManyEntriesInBatchRequest',
      queryCode: 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
    },
    {
      title: 'duplicate batch entry ids',
      action: 'SendMessageBatch',
      json: (url) => ({ QueueUrl: url, Entries: duplicate.json }),
      query: (url) => ({ QueueUrl: url, ...duplicate.query }),
      shape: 'BatchEntryIdsNotDistinct',
      queryCode: 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct',
    },
    {
      title: 'an invalid batch entry id',
      action: 'SendMessageBatch',
      json: (url) => ({ QueueUrl: url, Entries: badId.json }),
      query: (url) => ({ QueueUrl: url, ...badId.query }),
      shape: 'InvalidBatchEntryId',
      queryCode: 'AWS.SimpleQueueService.InvalidBatchEntryId',
    },
    {
      title: 'an empty batch',
      action: 'SendMessageBatch',
      json: (url) => ({ QueueUrl: url, Entries: [] }),
      query: (url) => ({ QueueUrl: url }),
      shape: 'EmptyBatchRequest',
      queryCode: 'AWS.SimpleQueueService.EmptyBatchRequest',
    },
  ];

  for (const c of cases) {
    const queryCode = c.queryCode ?? c.shape;
    test(`${c.title}: ${c.shape} (JSON) / ${queryCode} (Query)`, async () => {
      assertJsonError(await jsonRequest(c.action, c.json(url)), c.shape, queryCode);
      assertQueryError(await queryRequest({ Action: c.action, ...c.query(url) }), queryCode);
    });
  }

  test('nothing of the above was enqueued', async () => {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    assert.deepEqual(Attributes, {
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesDelayed: '0',
    });
  });

  test('a 20 MiB request body is refused (413 or 400), without a hang', async () => {
    const huge = Buffer.alloc(20 * 1024 * 1024, 'a');
    const response = await post({ 'content-type': 'application/octet-stream' }, huge);
    assert.ok(
      [400, 413].includes(response.status),
      `status ${response.status}: ${response.text.slice(0, 300)}`,
    );
  });

  test('the server still answers afterwards', async () => {
    const { QueueUrls } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: `js-${run}-malformed` }));
    assert.deepEqual(QueueUrls, [url]);
  });
});
