import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { GetQueueAttributesCommand, ListQueueTagsCommand, SQSClient } from '@aws-sdk/client-sqs';
import { removeDataDir, SLUICE_CLI, startServer } from '../helpers/server.ts';

const run = promisify(execFile);

describe('sluice command line', () => {
  it('documents every serve option in --help', async () => {
    const { stdout } = await run(process.execPath, [...SLUICE_CLI, 'serve', '--help']);
    for (const option of [
      '--port',
      '--host',
      '--data',
      '--durability',
      '--config',
      '--region',
      '--account',
      '--log-level',
      '--max-request-bytes',
      '--redrive-rate',
      '--redrive-backlog',
      '--alarm-webhook',
      '--credentials',
      '--insecure',
      '--tls-cert',
      '--tls-key',
    ]) {
      assert.match(stdout, new RegExp(`${option} `), `serve --help does not mention ${option}`);
    }
    const main = await run(process.execPath, [...SLUICE_CLI, '--help']);
    assert.match(main.stdout, /sluice serve/);
  });

  it('refuses unknown options and bad values with exit code 2', async () => {
    for (const args of [
      ['serve', '--nope'],
      ['serve', '--durability', 'maybe'],
      ['serve', '--port', 'x'],
      ['bogus'],
    ]) {
      await assert.rejects(
        run(process.execPath, [...SLUICE_CLI, ...args]),
        (error: { code?: number; stderr?: string }) => {
          assert.equal(error.code, 2, `exit code for ${args.join(' ')}`);
          assert.match(error.stderr ?? '', /^sluice: /);
          return true;
        },
      );
    }
  });

  it('creates and updates the queues of --config at start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const config = join(dir, 'queues.json');
    const dlqArn = 'arn:aws:sqs:eu-west-1:123456789012:orders-dlq';
    writeFileSync(
      config,
      JSON.stringify({
        queues: [
          { name: 'orders-dlq', attributes: { MessageRetentionPeriod: 1209600 } },
          {
            name: 'orders',
            attributes: {
              VisibilityTimeout: 60,
              RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
            },
            tags: { team: 'payments' },
          },
        ],
      }),
    );
    const args = ['--config', config, '--region', 'eu-west-1', '--account', '123456789012'];
    const first = await startServer({ dataDir: join(dir, 'data'), args });
    await first.stop();
    // A second start with changed values updates the existing queue.
    writeFileSync(
      config,
      JSON.stringify({ queues: [{ name: 'orders', attributes: { VisibilityTimeout: 90 } }] }),
    );
    const second = await startServer({ dataDir: join(dir, 'data'), args });
    try {
      const sqs = new SQSClient({
        endpoint: second.endpoint,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
      const QueueUrl = `${second.endpoint}/123456789012/orders`;
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }),
      );
      assert.equal(Attributes?.VisibilityTimeout, '90');
      assert.equal(Attributes?.QueueArn, 'arn:aws:sqs:eu-west-1:123456789012:orders');
      assert.deepEqual(JSON.parse(Attributes?.RedrivePolicy ?? '{}'), {
        deadLetterTargetArn: dlqArn,
        maxReceiveCount: 3,
      });
      const { Tags } = await sqs.send(new ListQueueTagsCommand({ QueueUrl }));
      assert.deepEqual(Tags, { team: 'payments' });
      sqs.destroy();
    } finally {
      await second.stop();
      removeDataDir(dir);
    }
  });

  it('refuses to start a second server on a data directory already in use', async () => {
    const first = await startServer();
    try {
      await assert.rejects(startServer({ dataDir: first.dataDir }), /in use by another Sluice server/);
    } finally {
      await first.stop();
      removeDataDir(first.dataDir);
    }
  });

  it('fails to start with a clear message on a broken config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const config = join(dir, 'bad.json');
    writeFileSync(
      config,
      JSON.stringify({ queues: [{ name: 'x', attributes: { VisibilityTimeout: 99999 } }] }),
    );
    await assert.rejects(
      startServer({ dataDir: join(dir, 'data'), args: ['--config', config] }),
      /InvalidAttributeValue/,
    );
    removeDataDir(dir);
  });
});
