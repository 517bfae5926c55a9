import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
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
  type SQSClient,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { postForm } from '../helpers/raw-requests.ts';
import { NEEDS_OWN_SERVER, type RunningServer, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { mountTmpfs, type Tmpfs, tmpfsUnavailable } from '../helpers/tmpfs.ts';

/**
 * A real disk running out: the data directory lives on a small tmpfs of its own, filled up with a file.
 * Needs root (mount); skipped otherwise. (A read-only remount is refused by the kernel while the server
 * holds its files open for writing; test/unit/store-unavailable.test.ts covers SQLite's read-only error.)
 */
const MOUNT_SIZE = '4m';
/** A reserve that fits the small disk; sends resume once 1 MiB besides it is free. */
const SERVER_ARGS = ['--disk-reserve-bytes', String(512 * 1024)];

const SKIP = NEEDS_OWN_SERVER || tmpfsUnavailable();

describe('disk full', { skip: SKIP }, () => {
  let disk: Tmpfs;
  let mountPoint: string;
  let server: RunningServer;
  let client: SQSClient;
  let queueUrl: string;
  /** Every body the server acknowledged; none may be lost. */
  const acknowledged = new Set<string>();
  let sent = 0;

  before(async () => {
    disk = mountTmpfs(MOUNT_SIZE);
    mountPoint = disk.path;
    server = await startServer({ dataDir: join(mountPoint, 'data'), args: SERVER_ARGS });
    client = connect(server);
    queueUrl = (await client.send(new CreateQueueCommand({ QueueName: 'smalldisk' }))).QueueUrl as string;
  });
  after(async () => {
    client?.destroy();
    await server?.stop();
    disk?.unmount();
  });

  function connect(running: RunningServer): SQSClient {
    return sqsClient(running.endpoint, { credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
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

  /** Fills the disk with a file until the kernel refuses more; returns its path. */
  const fillDisk = (): string => {
    const filler = join(mountPoint, 'filler');
    const fd = openSync(filler, 'a');
    const chunk = Buffer.alloc(16 * 1024, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (error) {
      assert.equal((error as { code?: string }).code, 'ENOSPC');
    } finally {
      closeSync(fd);
    }
    return filler;
  };

  /** Sends big messages until the server refuses one, as it must once the disk is full. */
  const sendUntilRefused = async (): Promise<SQSServiceException> => {
    // Pages SQLite already holds may take a few more small writes; large ones need new pages.
    let refused: SQSServiceException | undefined;
    for (let i = 0; i < 200 && refused === undefined; i++) refused = await send(60_000);
    assert.ok(refused, 'the disk never filled');
    return refused;
  };

  /** GET /health's body; HEAD answers with the same status (200, degraded or not). */
  const health = async () => {
    const head = await fetch(`${server.endpoint}/health`, { method: 'HEAD' });
    const get = await fetch(`${server.endpoint}/health`);
    assert.equal(head.status, get.status);
    assert.equal(get.status, 200);
    return get.json();
  };

  /** Receives up to `count` acknowledged messages and deletes them; returns how many. */
  const receiveAndDelete = async (count: number): Promise<number> => {
    let done = 0;
    while (done < count) {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(10, count - done),
          VisibilityTimeout: 300,
        }),
      );
      if (Messages.length === 0) break;
      const deleted = await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Messages.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle,
          })),
        }),
      );
      assert.deepEqual(deleted.Failed ?? [], []);
      for (const message of Messages) acknowledged.delete(message.Body as string);
      done += Messages.length;
    }
    return done;
  };

  const assertReadsWork = async () => {
    const attributes = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    assert.equal(Number(attributes.Attributes?.ApproximateNumberOfMessages), acknowledged.size);
    assert.equal((await client.send(new GetQueueUrlCommand({ QueueName: 'smalldisk' }))).QueueUrl, queueUrl);
    assert.deepEqual((await client.send(new ListQueuesCommand({}))).QueueUrls, [queueUrl]);
  };

  it('refuses sends when the disk is full, says so on /health, serves reads, receives and deletes, and recovers', async () => {
    for (let i = 0; i < 20; i++) assert.equal(await send(), undefined);
    assert.deepEqual(await health(), { status: 'ok' });
    const filler = fillDisk();
    assertUnavailable(await sendUntilRefused(), /disk is full/);
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
    assert.deepEqual(await health(), { status: 'degraded', reason: 'disk full' });
    await assertReadsWork();
    // The released reserve gives the writes that free space their room; sends stay refused meanwhile.
    assert.equal(await receiveAndDelete(5), 5);
    assertUnavailable(await send(), /disk is full/);
    await assertReadsWork();

    rmSync(filler);
    assert.deepEqual(await health(), { status: 'ok' }, 'healthy again once space returns');
    assert.equal(await send(60_000), undefined, 'writes resume once space returns');
    await assertReadsWork();
  });

  it('after a clean stop on a full disk, serves receives and deletes, and sends once space returns', async () => {
    for (let i = 0; i < 10; i++) assert.equal(await send(30_000), undefined);
    const filler = fillDisk();
    assertUnavailable(await sendUntilRefused(), /disk is full/);
    // Some space returns, not enough to take the reserve back; SQLite's closing checkpoint must not use
    // the room that receives and deletes need after the restart.
    truncateSync(filler, Math.max(0, statSync(filler).size - 256 * 1024));
    client.destroy();
    await server.stop();
    server = await startServer({ dataDir: join(mountPoint, 'data'), args: SERVER_ARGS });
    client = connect(server);
    queueUrl = (await client.send(new GetQueueUrlCommand({ QueueName: 'smalldisk' }))).QueueUrl as string;
    assert.deepEqual(await health(), { status: 'degraded', reason: 'disk full' });
    assert.equal(await receiveAndDelete(8), 8, 'receives and deletes work after the restart');
    assertUnavailable(await send(), /disk is full/);

    rmSync(filler);
    assert.equal(await send(60_000), undefined, 'sends resume without a restart once space returns');
    assert.deepEqual(await health(), { status: 'ok' });
    await assertReadsWork();
  });

  it('lost nothing it acknowledged, across a restart', async () => {
    client.destroy();
    await server.stop();
    server = await startServer({ dataDir: join(mountPoint, 'data'), args: SERVER_ARGS });
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
        startServer({ dataDir: join(mountPoint, 'data'), args: SERVER_ARGS }),
        /data directory .* is not writable/,
      );
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', mountPoint]);
    }
    server = await startServer({ dataDir: join(mountPoint, 'data'), args: SERVER_ARGS });
    client = connect(server);
    const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: 'smalldisk' }));
    assert.match(String(QueueUrl), /\/000000000000\/smalldisk$/);
  });
});
