import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateTopicCommand,
  DeleteTopicCommand,
  ListTopicsCommand,
  PublishCommand,
  SNSServiceException,
} from '@aws-sdk/client-sns';
import { type RunningServer, startServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';
import { availability, hasBoto3, PYTHONS } from './clients/clients.ts';

/**
 * SNS through boto3 (every Python client on the machine), against a server with access keys: each request is
 * signed for the service `sns`, which is how the server tells SNS's requests from SQS's.
 */

const KEY = { accessKeyId: 'AKIDSNS', secretAccessKey: 'sns-walkthrough-secret' };
const SCRIPT = join(import.meta.dirname, 'clients', 'sns_walkthrough.py');

describe('SNS through boto3, signed', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ args: ['--credentials', `${KEY.accessKeyId}:${KEY.secretAccessKey}`] });
  });
  after(async () => server.stop());

  for (const [index, client] of PYTHONS.entries()) {
    const { skip, missing } = availability(client, client.bin !== undefined && hasBoto3(client.bin));
    test(`${client.label}: topics, filtered raw delivery, signed envelopes, batches, FIFO, errors`, {
      skip,
    }, async () => {
      if (missing) assert.fail(missing);
      const { stdout } = await promisify(execFile)(client.bin!, [SCRIPT, server.endpoint, `boto${index}`], {
        env: {
          ...process.env,
          AWS_ACCESS_KEY_ID: KEY.accessKeyId,
          AWS_SECRET_ACCESS_KEY: KEY.secretAccessKey,
          AWS_DEFAULT_REGION: 'us-east-1',
        },
        timeout: 120_000,
      });
      assert.match(stdout, /SNS OK/);
      assert.match(
        stdout,
        /^envelope signature verified with http:\/\/127\.0\.0\.1:\d+\/SimpleNotificationService-/m,
      );
      assert.match(
        stdout,
        /refused: Invalid parameter: The MessageGroupId parameter is required for FIFO topics/,
      );
    });
  }
});

describe('SNS access: keys limited to some topics and actions', () => {
  const LIMITED = {
    accessKeyId: 'AKIDORDERS',
    secretAccessKey: 'orders-only-secret',
    queues: ['orders*'],
    actions: ['sns:Publish', 'sns:GetTopicAttributes', 'sns:ListTopics'],
  };
  /** May delete topics, but only those its pattern names. */
  const DELETER = {
    accessKeyId: 'AKIDDELETER',
    secretAccessKey: 'orders-deleter-secret',
    queues: ['orders*'],
    actions: ['sns:DeleteTopic'],
  };
  let server: RunningServer;
  let config: string;
  before(async () => {
    config = join(mkdtempSync(join(tmpdir(), 'sluice-sns-access-')), 'config.json');
    writeFileSync(config, JSON.stringify({ credentials: [LIMITED, DELETER] }));
    server = await startServer({
      args: ['--credentials', `${KEY.accessKeyId}:${KEY.secretAccessKey}`, '--config', config],
    });
  });
  after(async () => {
    await server.stop();
    rmSync(dirname(config), { recursive: true, force: true });
  });

  test('a key reaches only the topics its patterns name, with only its actions', async () => {
    const admin = snsClient(server.endpoint, { credentials: KEY });
    const limited = snsClient(server.endpoint, { credentials: LIMITED });
    const { TopicArn: orders } = await admin.send(new CreateTopicCommand({ Name: 'orders-events' }));
    const { TopicArn: payroll } = await admin.send(new CreateTopicCommand({ Name: 'payroll' }));
    await limited.send(new PublishCommand({ TopicArn: orders, Message: 'allowed' }));
    const refusal = async (promise: Promise<unknown>) => {
      try {
        await promise;
      } catch (error) {
        if (error instanceof SNSServiceException) return error;
        throw error;
      }
      return assert.fail('expected a refusal');
    };
    const otherTopic = await refusal(limited.send(new PublishCommand({ TopicArn: payroll, Message: 'no' })));
    assert.equal(otherTopic.name, 'AuthorizationErrorException');
    assert.equal(otherTopic.$metadata.httpStatusCode, 403);
    assert.match(otherTopic.message, /SNS:Publish on resource: arn:aws:sns:us-east-1:000000000000:payroll/);
    const otherAction = await refusal(limited.send(new DeleteTopicCommand({ TopicArn: orders })));
    assert.equal(otherAction.name, 'AuthorizationErrorException');
    const { Topics } = await limited.send(new ListTopicsCommand({}));
    assert.deepEqual(
      Topics?.map((topic) => topic.TopicArn),
      [orders],
    );
    const unsigned = await fetch(`${server.endpoint}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `Action=Publish&TopicArn=${encodeURIComponent(orders!)}&Message=x`,
    });
    assert.equal(unsigned.status, 403);
  });

  test('a key allowed DeleteTopic deletes only the topics its patterns name', async () => {
    const admin = snsClient(server.endpoint, { credentials: KEY });
    const deleter = snsClient(server.endpoint, { credentials: DELETER });
    const { TopicArn: mine } = await admin.send(new CreateTopicCommand({ Name: 'orders-deletable' }));
    const { TopicArn: other } = await admin.send(new CreateTopicCommand({ Name: 'ledger' }));
    await assert.rejects(deleter.send(new DeleteTopicCommand({ TopicArn: other })), (error: unknown) => {
      assert.ok(error instanceof SNSServiceException);
      assert.equal(error.name, 'AuthorizationErrorException');
      assert.match(error.message, /SNS:DeleteTopic on resource: arn:aws:sns:us-east-1:000000000000:ledger/);
      return true;
    });
    await deleter.send(new DeleteTopicCommand({ TopicArn: mine }));
    const { Topics } = await admin.send(new ListTopicsCommand({}));
    const left = Topics?.map((topic) => topic.TopicArn) ?? [];
    assert.ok(left.includes(other), 'the topic the key may not delete is still there');
    assert.ok(!left.includes(mine), 'the topic the key may delete is gone');
  });
});
