import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { postForm } from '../helpers/raw-requests.ts';
import { NEEDS_OWN_SERVER, type RunningServer, startServer } from '../helpers/server.ts';

/**
 * A real disk running out: the data directory lives on a small tmpfs of its own, filled up with a file.
 * Needs root (mount); skipped otherwise. (A read-only remount is refused by the kernel while the server
 * holds its files open for writing; test/unit/store-unavailable.test.ts covers SQLite's read-only error.)
 */
const MOUNT_SIZE = '4m';

function canMount(): string | false {
  if (NEEDS_OWN_SERVER) return NEEDS_OWN_SERVER;
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'needs root on Linux to mount a tmpfs';
  const probe = mkdtempSync(join(tmpdir(), 'sluice-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return false;
  } catch {
    return 'cannot mount a tmpfs here (no CAP_SYS_ADMIN)';
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

const SKIP = canMount();

describe('disk full', { skip: SKIP }, () => {
  let mountPoint: string;
  let server: RunningServer;
  let client: SQSClient;
  let queueUrl: string;
  /** Every body the server acknowledged; none may be lost. */
  const acknowledged = new Set<string>();
  let sent = 0;

  before(async () => {
    mountPoint = mkdtempSync(join(tmpdir(), 'sluice-smalldisk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${MOUNT_SIZE}`, 'tmpfs', mountPoint]);
    server = await startServer({ dataDir: join(mountPoint, 'data') });
    client = connect(server);
    queueUrl = (await client.send(new CreateQueueCommand({ QueueName: 'smalldisk' }))).QueueUrl as string;
  });
  after(async () => {
    client?.destroy();
    await server?.stop();
    if (mountPoint) {
      execFileSync('umount', [mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    }
  });

  function connect(running: RunningServer): SQSClient {
    return new SQSClient({
      endpoint: running.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      maxAttempts: 1,
    });
  }

  /** A send; resolves to the error when the server refuses it. */
  const send = async (size = 100): Promise<SQSServiceException | undefined> => {
    const body = `m${sent++}:${'x'.repeat(size)}`;
    try {
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
      acknowledged.add(body);
      return undefined;
    } catch (error) {
      if (error instanceof SQSServiceException) return error;
      throw error;
    }
  };

  const assertUnavailable = (error: SQSServiceException | undefined, reason: RegExp) => {
    assert.ok(error, 'the write should have been refused');
    assert.equal(error.name, 'ServiceUnavailable');
    assert.equal(error.$metadata.httpStatusCode, 503);
    assert.match(error.message, reason);
  };

  const assertReadsWork = async () => {
    const attributes = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    assert.equal(Number(attributes.Attributes?.ApproximateNumberOfMessages), acknowledged.size);
    assert.equal((await client.send(new GetQueueUrlCommand({ QueueName: 'smalldisk' }))).QueueUrl, queueUrl);
    assert.deepEqual((await client.send(new ListQueuesCommand({}))).QueueUrls, [queueUrl]);
  };

  it('refuses writes with ServiceUnavailable when the disk is full, serves reads, and recovers', async () => {
    for (let i = 0; i < 20; i++) assert.equal(await send(), undefined);
    const filler = join(mountPoint, 'filler');
    const fd = openSync(filler, 'w');
    const chunk = Buffer.alloc(16 * 1024, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (error) {
      assert.equal((error as { code?: string }).code, 'ENOSPC');
    } finally {
      closeSync(fd);
    }
    // Pages SQLite already holds may take a few more small writes; large ones need new pages.
    let refused: SQSServiceException | undefined;
    for (let i = 0; i < 200 && refused === undefined; i++) refused = await send(60_000);
    assertUnavailable(refused, /disk is full/);
    // The Query protocol gets the same error, in its XML shape.
    const query = await postForm(
      server.endpoint,
      new URLSearchParams({
        Action: 'SendMessage',
        QueueUrl: queueUrl,
        MessageBody: 'q'.repeat(60_000),
      }).toString(),
    );
    assert.equal(query.status, 503);
    assert.match(await query.text(), /<Type>Receiver<\/Type><Code>ServiceUnavailable<\/Code>/);
    assert.equal(server.process.exitCode, null, 'the server keeps running');
    assert.doesNotMatch(server.output(), /unexpected error/, 'a full disk is not logged as a bug');
    await assertReadsWork();

    rmSync(filler);
    assert.equal(await send(60_000), undefined, 'writes resume once space returns');
    await assertReadsWork();
  });

  it('lost nothing it acknowledged, across a restart', async () => {
    client.destroy();
    await server.stop();
    server = await startServer({ dataDir: join(mountPoint, 'data') });
    client = connect(server);
    const received = new Set<string>();
    for (let round = 0; round < 50 && received.size < acknowledged.size; round++) {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
      );
      for (const message of Messages) received.add(message.Body as string);
      if (Messages.length > 0) {
        await client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: Messages.map((message, index) => ({
              Id: String(index),
              ReceiptHandle: message.ReceiptHandle,
            })),
          }),
        );
      }
    }
    assert.deepEqual(
      [...acknowledged].filter((body) => !received.has(body)),
      [],
    );
  });

  it('refuses to start on a read-only data directory, naming the cause', async () => {
    client.destroy();
    await server.stop();
    execFileSync('mount', ['-o', 'remount,ro', mountPoint]);
    try {
      await assert.rejects(
        startServer({ dataDir: join(mountPoint, 'data') }),
        /data directory .* is not writable/,
      );
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', mountPoint]);
    }
    server = await startServer({ dataDir: join(mountPoint, 'data') });
    client = connect(server);
    const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: 'smalldisk' }));
    assert.match(String(QueueUrl), /\/000000000000\/smalldisk$/);
  });
});
