import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  CreateTopicCommand,
  PublishBatchCommand,
  type SNSClient,
  SNSServiceException,
} from '@aws-sdk/client-sns';
import { type TestServer, useServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';

/**
 * PublishBatch's request-level errors as recorded on AWS (LocalStack's test_publish_batch_exceptions snapshot,
 * validated on AWS), found by moto's SNS suite (test/compat/moto): the too-many-entries text has no count,
 * and on a FIFO topic an entry without its group or deduplication id fails the whole request.
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
