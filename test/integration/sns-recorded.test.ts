import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  AddPermissionCommand,
  CreateTopicCommand,
  GetSubscriptionAttributesCommand,
  GetTopicAttributesCommand,
  type MessageAttributeValue,
  PublishBatchCommand,
  PublishCommand,
  type SNSClient,
  SNSServiceException,
  UnsubscribeCommand,
} from '@aws-sdk/client-sns';
import { type TestServer, useServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';

/**
 * SNS answers as recorded on AWS (LocalStack's AWS-validated snapshots), found by running moto's SNS suite
 * against Sluice (test/compat/moto): PublishBatch's request-level errors (test_publish_batch_exceptions: the
 * too-many-entries text has no count; on a FIFO topic an entry without its group or deduplication id fails
 * the whole request), malformed subscription ARNs (test_unsubscribe_wrong_arn_format) and AddPermission's
 * statement (test_topic_add_multiple_permissions), bad message attributes (test_empty_or_wrong_message_attributes).
 */

let server: TestServer;
let sns: SNSClient;

before(async () => {
  server = await useServer();
  sns = snsClient(server.endpoint);
});
after(async () => {
  sns.destroy();
  await server.close();
});

async function refusal(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; status: number }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SNSServiceException, String(error));
    return { code: error.name, message: error.message, status: error.$metadata.httpStatusCode ?? 0 };
  }
  assert.fail('the request succeeded');
}

test('eleven entries: TooManyEntriesInBatchRequest with AWS text, no count', async () => {
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'batch-too-many' }));
  const entries = Array.from({ length: 11 }, (_, i) => ({ Id: `id_${i}`, Message: `${i}` }));
  assert.deepEqual(
    await refusal(sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: entries }))),
    {
      code: 'TooManyEntriesInBatchRequestException',
      message: 'The batch request contains more entries than permissible.',
      status: 400,
    },
  );
});

test('FIFO topic: an entry without MessageGroupId fails the whole request', async () => {
  const { TopicArn } = await sns.send(
    new CreateTopicCommand({
      Name: 'batch-no-group.fifo',
      Attributes: { FifoTopic: 'true', ContentBasedDeduplication: 'true' },
    }),
  );
  const entries = [
    { Id: 'ok', Message: 'one', MessageGroupId: 'g' },
    { Id: 'no_group', Message: 'two' },
  ];
  assert.deepEqual(
    await refusal(sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: entries }))),
    {
      code: 'InvalidParameterException',
      message: 'Invalid parameter: The MessageGroupId parameter is required for FIFO topics',
      status: 400,
    },
  );
});

test('FIFO topic without content-based deduplication: an entry without MessageDeduplicationId fails the request', async () => {
  const { TopicArn } = await sns.send(
    new CreateTopicCommand({ Name: 'batch-no-dedup.fifo', Attributes: { FifoTopic: 'true' } }),
  );
  const entries = [{ Id: '1', Message: 'no dedup id', MessageGroupId: 'g' }];
  assert.deepEqual(
    await refusal(sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: entries }))),
    {
      code: 'InvalidParameterException',
      message:
        'Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
      status: 400,
    },
  );
});

test('subscription ARNs: AWS counts the elements under 6, wants a subscription id at 6, and finds none past that', async () => {
  const account = '000000000000';
  const expected: Array<[string, { code: string; message: string; status: number }]> = [
    [
      'randomstring',
      {
        code: 'InvalidParameterException',
        message: 'Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 1',
        status: 400,
      },
    ],
    [
      'arn:aws:sns:us-east-1:random',
      {
        code: 'InvalidParameterException',
        message: 'Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 5',
        status: 400,
      },
    ],
    [
      `arn:aws:sns:us-east-1:${account}:random`,
      { code: 'InvalidParameterException', message: 'Invalid parameter: SubscriptionId', status: 400 },
    ],
    [
      `arn:aws:sqs:us-east-1:${account}:test-queue:66d97e76-31e5-444f-8fa7-b60b680d0d39`,
      { code: 'NotFoundException', message: 'Subscription does not exist', status: 404 },
    ],
  ];
  for (const [arn, refused] of expected) {
    assert.deepEqual(
      await refusal(sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: arn }))),
      refused,
      arn,
    );
  }
  // Unsubscribe of a well-formed ARN that names nothing succeeds (AWS: test_unsubscribe_idempotency).
  await sns.send(
    new UnsubscribeCommand({
      SubscriptionArn: `arn:aws:sns:us-east-1:${account}:gone:66d97e76-31e5-444f-8fa7-b60b680d0d39`,
    }),
  );
});

test('AddPermission: one account or action is written as a string, several as a list', async () => {
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'permissions' }));
  await sns.send(
    new AddPermissionCommand({
      TopicArn,
      Label: 'one',
      AWSAccountId: ['999999999999'],
      ActionName: ['Publish'],
    }),
  );
  await sns.send(
    new AddPermissionCommand({
      TopicArn,
      Label: 'two',
      AWSAccountId: ['888888888888', '999999999999'],
      ActionName: ['Publish', 'Subscribe'],
    }),
  );
  const { Attributes } = await sns.send(new GetTopicAttributesCommand({ TopicArn }));
  const statements = (JSON.parse(Attributes!.Policy!) as { Statement: unknown[] }).Statement;
  assert.deepEqual(statements.slice(1), [
    {
      Sid: 'one',
      Effect: 'Allow',
      Principal: { AWS: 'arn:aws:iam::999999999999:root' },
      Action: 'SNS:Publish',
      Resource: TopicArn,
    },
    {
      Sid: 'two',
      Effect: 'Allow',
      Principal: { AWS: ['arn:aws:iam::888888888888:root', 'arn:aws:iam::999999999999:root'] },
      Action: ['SNS:Publish', 'SNS:Subscribe'],
      Resource: TopicArn,
    },
  ]);
});

test('bad message attributes: ParameterValueInvalid in AWS words, failing a whole batch too', async () => {
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'attributes' }));
  const bytes = new TextEncoder().encode('123');
  const cases: Array<[Record<string, MessageAttributeValue>, string]> = [
    [
      { attr1: { DataType: 'String', StringValue: '' } },
      "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'.",
    ],
    [
      { attr1: { DataType: 'String' } },
      "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'.",
    ],
    [
      { attr1: { DataType: 'String', BinaryValue: bytes } },
      "The message attribute 'attr1' with type 'String' must use field 'String'.",
    ],
    [
      { attr1: { DataType: 'Number', BinaryValue: bytes } },
      "The message attribute 'attr1' with type 'Number' must use field 'String'.",
    ],
    [
      { attr1: { DataType: 'Binary', StringValue: '123' } },
      "The message attribute 'attr1' with type 'Binary' must use field 'Binary'.",
    ],
    [
      { attr1: { DataType: 'InvalidType', StringValue: '123' } },
      "The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.",
    ],
    [
      { price: { DataType: 'Number', StringValue: 'error' } },
      "Could not cast message attribute 'price' value to number.",
    ],
    [
      { ['a'.repeat(257)]: { DataType: 'String', StringValue: '123' } },
      'Length of message attribute name must be less than 256 bytes.',
    ],
    [
      { 'a^*?': { DataType: 'String', StringValue: '123' } },
      "Invalid non-alphanumeric character '#x5E' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.",
    ],
    [
      { '.abc': { DataType: 'String', StringValue: '123' } },
      "Invalid message attribute name starting with character '.' was found.",
    ],
    [
      { 'abc.': { DataType: 'String', StringValue: '123' } },
      "Invalid message attribute name ending with character '.' was found.",
    ],
    [
      { 'a..bc': { DataType: 'String', StringValue: '123' } },
      "Message attribute name can not have successive '.' character.",
    ],
  ];
  for (const [MessageAttributes, message] of cases) {
    // The wire code is ParameterValueInvalid, which the SDK's model names InvalidParameterValueException.
    const refused = { code: 'InvalidParameterValueException', message, status: 400 };
    assert.deepEqual(
      await refusal(sns.send(new PublishCommand({ TopicArn, Message: 'test message', MessageAttributes }))),
      refused,
    );
    const PublishBatchRequestEntries = [
      { Id: '1', Message: 'test-batch', MessageAttributes },
      { Id: '3', Message: 'valid-batch' },
    ];
    assert.deepEqual(
      await refusal(sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries }))),
      refused,
    );
  }
});

test('PublishBatch: an entry whose MessageStructure=json has no default fails the whole request', async () => {
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'batch-structure' }));
  const entries = [
    { Id: 'ok', Message: 'fine' },
    { Id: 'no_default', Message: JSON.stringify({ sqs: 'test sqs' }), MessageStructure: 'json' },
  ];
  assert.deepEqual(
    await refusal(sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: entries }))),
    {
      code: 'InvalidParameterException',
      message: 'Invalid parameter: Message Structure - No default entry in JSON message body',
      status: 400,
    },
  );
});
