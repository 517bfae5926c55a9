import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { removeDataDir, SLUICE_CLI, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const run = promisify(execFile);

/** Bytes a process has caused to be written to storage so far (Linux counts them as pages are dirtied). */
function storageWrites(pid: number): number {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return Number(/^write_bytes: (\d+)$/m.exec(io)?.[1]);
}

function client(endpoint: string): SQSClient {
  return sqsClient(endpoint);
}

describe('sluice serve --in-memory', () => {
  it('serves queues with nothing written to disk and no data directory created', async () => {
    const server = await startServer({ inMemory: true });
    const sqs = client(server.endpoint);
    try {
      assert.match(server.output(), /listening on http:\/\/\S+ \(in memory: nothing is kept when it stops\)/);
      const pid = server.process.pid!;
      const before = storageWrites(pid);
      const queues = [];
      for (const [QueueName, Attributes] of [
        ['work', { VisibilityTimeout: '5' }],
        ['work.fifo', { FifoQueue: 'true', ContentBasedDeduplication: 'true' }],
      ] as const) {
        queues.push((await sqs.send(new CreateQueueCommand({ QueueName, Attributes }))).QueueUrl!);
      }
      // A few megabytes through both queues: enough that a file-backed store writes its WAL many times.
      const body = 'x'.repeat(10_000);
      for (const [index, QueueUrl] of queues.entries()) {
        for (let batch = 0; batch < 30; batch++) {
          await sqs.send(
            new SendMessageBatchCommand({
              QueueUrl,
              Entries: Array.from({ length: 10 }, (_, i) => ({
                Id: String(i),
                MessageBody: `${batch}-${i} ${body}`,
                ...(index === 1 && { MessageGroupId: `g${i}` }),
              })),
            }),
          );
        }
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }),
        );
        assert.equal(Messages.length, 10);
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl,
            Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
      }
      await sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: queues[0], Attributes: { DelaySeconds: '1' } }),
      );
      assert.equal(storageWrites(pid) - before, 0, 'bytes the server caused to be written to storage');
      assert.deepEqual(readdirSync(server.dataDir), [], 'its working directory holds no ./sluice-data');
    } finally {
      sqs.destroy();
      await server.stop();
      removeDataDir(server.dataDir);
    }
  });

  it('starts empty every time: nothing outlives the process', async () => {
    const first = await startServer({ inMemory: true });
    const sqs = client(first.endpoint);
    await sqs.send(new CreateQueueCommand({ QueueName: 'kept-nowhere' }));
    await first.stop();
    const second = await startServer({ inMemory: true, dataDir: first.dataDir });
    try {
      const again = client(second.endpoint);
      assert.equal((await again.send(new ListQueuesCommand({}))).QueueUrls, undefined);
      again.destroy();
    } finally {
      sqs.destroy();
      await second.stop();
      removeDataDir(first.dataDir);
    }
  });

  it('refuses --in-memory with a data directory, a PostgreSQL store, a durability level or a disk reserve', async () => {
    for (const [extra, error] of [
      [['--data', '/tmp/somewhere'], '--in-memory keeps no data directory: leave out --data'],
      [['--store', 'postgres://127.0.0.1/x'], '--in-memory and --store do not go together'],
      [['--durability', 'full'], '--durability has no meaning with --in-memory: nothing is written to disk'],
      [
        ['--disk-reserve-bytes', '0'],
        '--disk-reserve-bytes has no meaning with --in-memory: nothing is written to disk',
      ],
    ]) {
      await assert.rejects(
        run(process.execPath, [...SLUICE_CLI, 'serve', '--in-memory', ...extra!]),
        (failure: { code?: number; stderr?: string }) => {
          assert.equal(failure.code, 2);
          assert.equal(failure.stderr?.split('\n')[0], `sluice: ${error}`);
          return true;
        },
      );
    }
  });
});
