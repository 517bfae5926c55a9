import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { CreateTopicCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { type RunningServer, SLUICE_CLI, startServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * `sluice stats QUEUE` lists the SNS subscriptions delivering into the queue, each marked when AWS would
 * deliver nothing (the queue's policy does not allow the topic), and only those of topics the key may see.
 */

const ADMIN = { accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret' };
const ORDERS = { accessKeyId: 'AKIDORDERS', secretAccessKey: 'orders-secret', queues: ['orders*'] };
const ARN = 'arn:aws:sqs:us-east-1:000000000000:';

describe('sluice stats: SNS subscriptions into the queue', () => {
  let server: RunningServer;
  let config: string;
  before(async () => {
    config = join(mkdtempSync(join(tmpdir(), 'sluice-sns-stats-')), 'config.json');
    writeFileSync(config, JSON.stringify({ credentials: [ORDERS] }));
    server = await startServer({
      args: ['--credentials', `${ADMIN.accessKeyId}:${ADMIN.secretAccessKey}`, '--config', config],
    });
    const sqs = sqsClient(server.endpoint, { credentials: ADMIN });
    const sns = snsClient(server.endpoint, { credentials: ADMIN });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'orders-inbox' }));
    const { TopicArn: allowed } = await sns.send(new CreateTopicCommand({ Name: 'orders-events' }));
    const { TopicArn: refused } = await sns.send(new CreateTopicCommand({ Name: 'payroll' }));
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl,
        Attributes: {
          Policy: JSON.stringify({
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Principal: { Service: 'sns.amazonaws.com' },
                Action: 'sqs:SendMessage',
                Resource: `${ARN}orders-inbox`,
                Condition: { ArnEquals: { 'aws:SourceArn': allowed } },
              },
            ],
          }),
        },
      }),
    );
    for (const TopicArn of [allowed, refused])
      await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: 'sqs',
          Endpoint: `${ARN}orders-inbox`,
          Attributes: { FilterPolicy: JSON.stringify({ kind: ['invoice'] }) },
        }),
      );
    sqs.destroy();
    sns.destroy();
  });
  after(async () => {
    await server?.stop();
    rmSync(dirname(config), { recursive: true, force: true });
  });

  const stats = async (key: { accessKeyId: string; secretAccessKey: string }) =>
    (
      await promisify(execFile)(
        process.execPath,
        [...SLUICE_CLI, 'stats', 'orders-inbox', '--endpoint', server.endpoint],
        {
          env: {
            ...process.env,
            AWS_ACCESS_KEY_ID: key.accessKeyId,
            AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
            AWS_REGION: 'us-east-1',
          },
          timeout: 60_000,
        },
      )
    ).stdout;

  test("each topic delivering into the queue, marked when the queue's policy would stop it on AWS", async () => {
    const output = await stats(ADMIN);
    const table = output.slice(output.indexOf('SNS subscriptions:'));
    assert.match(table, /^orders-events\s+no\s+\{"kind":\["invoice"\]\}\s+delivers$/m);
    assert.match(
      table,
      /^payroll\s+no\s+\{"kind":\["invoice"\]\}\s+delivers nothing: the queue's policy does not allow the topic$/m,
    );
  });

  test('a key sees only the topics its patterns name', async () => {
    const output = await stats(ORDERS);
    assert.match(output, /^orders-events\s/m);
    assert.doesNotMatch(output, /payroll/);
  });
});
