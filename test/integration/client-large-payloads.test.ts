import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { ChangeMessageVisibilityCommand, type Message, SendMessageCommand } from '@aws-sdk/client-sqs';
import {
  Consumer,
  DirectoryBlobStore,
  embedPointerInReceiptHandle,
  LargePayloadError,
  LargePayloads,
  type MessageHandler,
  pointerOf,
} from 'sluice-client';
import { S3BlobStore } from 'sluice-client/s3';
import { eventually, startToolkitServer, type ToolkitServer } from '../helpers/client-toolkit.ts';
import { type MotoS3, motoPython, startMoto } from '../helpers/moto.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const moto = motoPython();
const motoSkip = 'missing' in moto && !process.env.CI ? moto.missing : false;
const EXTENDED_CLIENT_PY = fileURLToPath(new URL('./clients/extended_client.py', import.meta.url));

/** Runs the Python Extended Client's send or receive path (boto3); its last stdout line is JSON. */
async function pythonExtendedClient(...args: string[]): Promise<Record<string, string>> {
  if ('missing' in moto) throw new Error(moto.missing);
  // Asynchronous: the Sluice under test runs in this process and must keep answering meanwhile.
  const { stdout } = await promisify(execFile)(moto.python, [EXTENDED_CLIENT_PY, ...args], {
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, string>;
}

/** A body of `bytes` ASCII characters, different every call (a 300 KiB body must not compress to nothing). */
function bodyOf(bytes: number): string {
  return randomBytes(Math.ceil(bytes / 2))
    .toString('hex')
    .slice(0, bytes);
}

async function sha256(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Large payloads against a really started Sluice through the real SDK, with blobs in a directory and in
 * moto's S3 server (a real S3 wire protocol on 127.0.0.1).
 */
describe('client large payloads', { concurrency: false, timeout: 120_000 }, () => {
  let t: ToolkitServer;
  let s3: MotoS3 | undefined;
  let directory: string;
  let dirStore: DirectoryBlobStore;
  const bucket = 'sluice-payloads';

  before(async () => {
    t = await startToolkitServer();
    directory = mkdtempSync(join(tmpdir(), 'sluice-blobs-'));
    dirStore = new DirectoryBlobStore({ directory: join(directory, 'store'), bucket: 'local-blobs' });
    if ('python' in moto) {
      s3 = await startMoto(moto.python);
      await s3.createBucket(bucket);
    }
  });
  after(async () => {
    await s3?.close();
    await t?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  function s3Store(partSizeBytes?: number): S3BlobStore {
    if ('missing' in moto) throw new Error(moto.missing);
    return new S3BlobStore({ s3: s3!.s3, bucket, partSizeBytes });
  }

  async function s3Exists(key: string): Promise<boolean> {
    try {
      await s3!.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return true;
    } catch {
      return false;
    }
  }

  /** Receives a message as any plain client sees it (the raw pointer), then makes it visible again. */
  async function peekRaw(queue: string): Promise<Message> {
    const [raw] = await t.receiveNow(queue);
    assert.ok(raw, 'a message is waiting');
    await t.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queue,
        ReceiptHandle: raw.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    return raw;
  }

  /** Deletes through the pointer-carrying handle the Extended Client gives out for this raw message. */
  async function deleteWithBlob(large: LargePayloads, queue: string): Promise<void> {
    const [plain] = await t.receiveNow(queue);
    const handle = embedPointerInReceiptHandle(plain!.ReceiptHandle!, pointerOf(plain!)!);
    await large.deleteMessage(t.sqs, queue, handle);
  }

  function largeConsumer(queue: string, large: LargePayloads, handler: MessageHandler): Consumer {
    return new Consumer({
      sqs: t.sqs,
      clock: t.clock,
      queueUrl: queue,
      stopOnSignals: [],
      largePayloads: large.consumerHook(),
      handler,
    });
  }

  async function receiveOne(large: LargePayloads, queue: string): Promise<Message> {
    const { Messages = [] } = await large.receive(t.sqs, {
      QueueUrl: queue,
      WaitTimeSeconds: 0,
      MessageAttributeNames: ['All'],
    });
    assert.equal(Messages.length, 1);
    return Messages[0]!;
  }

  test('a 300 KiB body goes to the directory store; the queue carries exactly the Java pointer format', async () => {
    const queue = await t.createQueue('large-dir');
    const large = new LargePayloads({ store: dirStore });
    const body = bodyOf(300 * KiB);
    await large.send(t.sqs, {
      QueueUrl: queue,
      MessageBody: body,
      MessageAttributes: { kind: { DataType: 'String', StringValue: 'report' } },
    });

    const raw = await peekRaw(queue);
    const pattern = new RegExp(
      `^\\["software\\.amazon\\.payloadoffloading\\.PayloadS3Pointer",\\{"s3BucketName":"local-blobs","s3Key":"(${UUID})"\\}\\]$`,
    );
    const key = pattern.exec(raw.Body!)?.[1];
    assert.ok(key, `pointer body: ${raw.Body}`);
    assert.deepEqual(raw.MessageAttributes?.SQSLargePayloadSize, {
      DataType: 'Number',
      StringValue: String(300 * KiB),
    });
    assert.equal(
      raw.MessageAttributes?.kind?.StringValue,
      'report',
      'user attributes travel beside the pointer',
    );
    const blob = join(directory, 'store', key);
    assert.ok(existsSync(blob));

    const message = await receiveOne(large, queue);
    assert.equal(message.Body, body);
    assert.equal(message.MessageAttributes?.SQSLargePayloadSize, undefined, 'the size attribute is removed');
    assert.equal(message.MessageAttributes?.kind?.StringValue, 'report');
    assert.ok(
      message.ReceiptHandle!.startsWith(
        `-..s3BucketName..-local-blobs-..s3BucketName..--..s3Key..-${key}-..s3Key..-`,
      ),
    );

    await large.deleteMessage(t.sqs, queue, message.ReceiptHandle!);
    assert.equal(existsSync(blob), false, 'the blob goes with the message');
    assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 });
  });

  test('small bodies stay in the queue unless alwaysOffload; ExtendedPayloadSize can be chosen', async () => {
    const queue = await t.createQueue('large-small');
    await new LargePayloads({ store: dirStore }).send(t.sqs, { QueueUrl: queue, MessageBody: 'small' });
    const plain = await peekRaw(queue);
    assert.equal(plain.Body, 'small');
    assert.equal(plain.MessageAttributes, undefined);
    const [again] = await t.receiveNow(queue);
    await new LargePayloads({ store: dirStore }).deleteMessage(t.sqs, queue, again!.ReceiptHandle!);

    const always = new LargePayloads({
      store: dirStore,
      alwaysOffload: true,
      sizeAttributeName: 'ExtendedPayloadSize',
    });
    await always.send(t.sqs, { QueueUrl: queue, MessageBody: 'tiny' });
    const raw = await peekRaw(queue);
    assert.match(raw.Body!, /^\["software\.amazon\.payloadoffloading\.PayloadS3Pointer",/);
    assert.deepEqual(raw.MessageAttributes, {
      ExtendedPayloadSize: { DataType: 'Number', StringValue: '4' },
    });
    const message = await receiveOne(always, queue);
    assert.equal(message.Body, 'tiny');
    await always.deleteMessage(t.sqs, queue, message.ReceiptHandle!);
  });

  test('a 50 MiB file is streamed to the directory store and read back as a stream', async () => {
    const queue = await t.createQueue('large-50m');
    const file = join(directory, 'fifty.bin');
    await pipeline(
      Readable.from(
        (function* () {
          for (let i = 0; i < 50; i++) yield randomBytes(MiB);
        })(),
      ),
      createWriteStream(file),
    );
    const expected = await sha256(createReadStream(file));
    const large = new LargePayloads({ store: dirStore });
    await large.sendStream(t.sqs, { QueueUrl: queue }, { path: file });

    const raw = await peekRaw(queue);
    assert.equal(raw.MessageAttributes?.SQSLargePayloadSize?.StringValue, String(50 * MiB));
    assert.equal(await sha256(await large.open(raw)), expected);
    await deleteWithBlob(large, queue);
    assert.deepEqual(readdirSync(join(directory, 'store')), []);
    assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 });
  });

  test('a stream over maxPayloadBytes is refused and leaves neither a blob nor a message', async () => {
    const queue = await t.createQueue('large-limit');
    const store = new DirectoryBlobStore({ directory: join(directory, 'limit'), bucket: 'limit' });
    const large = new LargePayloads({ store, maxPayloadBytes: MiB });
    const source = Readable.from([randomBytes(MiB), randomBytes(1)]);
    await assert.rejects(large.sendStream(t.sqs, { QueueUrl: queue }, source), LargePayloadError);
    assert.deepEqual(readdirSync(join(directory, 'limit')), []);
    assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 });
  });

  test('a send SQS refuses removes the blob it stored', async () => {
    const store = new DirectoryBlobStore({ directory: join(directory, 'refused'), bucket: 'refused' });
    const large = new LargePayloads({ store, alwaysOffload: true });
    const missingQueue = `${t.sluice.endpoint}/000000000000/no-such-queue`;
    await assert.rejects(large.send(t.sqs, { QueueUrl: missingQueue, MessageBody: 'x' }));
    assert.deepEqual(readdirSync(join(directory, 'refused')), []);
  });

  test('sendBatch offloads the large entries and removes the blobs of entries SQS refused', async () => {
    const queue = await t.createQueue('large-batch');
    const store = new DirectoryBlobStore({ directory: join(directory, 'batch'), bucket: 'batch' });
    const large = new LargePayloads({ store });
    const big = bodyOf(300 * KiB);
    const output = await large.sendBatch(t.sqs, {
      QueueUrl: queue,
      Entries: [
        { Id: 'big', MessageBody: big },
        { Id: 'small', MessageBody: 'small' },
        { Id: 'refused', MessageBody: bodyOf(300 * KiB), DelaySeconds: 901 },
      ],
    });
    assert.deepEqual(output.Successful?.map((s) => s.Id).sort(), ['big', 'small']);
    assert.deepEqual(
      output.Failed?.map((f) => f.Id),
      ['refused'],
    );
    assert.equal(readdirSync(join(directory, 'batch')).length, 1, "only the sent entry's blob is left");
    const { Messages = [] } = await large.receive(t.sqs, { QueueUrl: queue, MaxNumberOfMessages: 10 });
    assert.deepEqual(
      Messages.map((m) => m.Body!.length).sort((a, b) => a - b),
      [5, 300 * KiB],
    );
    assert.ok(Messages.some((m) => m.Body === big));
    for (const m of Messages) await large.deleteMessage(t.sqs, queue, m.ReceiptHandle!);
    assert.deepEqual(readdirSync(join(directory, 'batch')), []);
  });

  test('the consumer hands resolved bodies to handlers and removes processed blobs', async () => {
    const queue = await t.createQueue('large-consumer');
    const store = new DirectoryBlobStore({ directory: join(directory, 'consumer'), bucket: 'consumer' });
    const large = new LargePayloads({ store });
    const big = bodyOf(300 * KiB);
    await large.send(t.sqs, { QueueUrl: queue, MessageBody: big });
    await large.send(t.sqs, { QueueUrl: queue, MessageBody: 'small one' });
    assert.equal(readdirSync(join(directory, 'consumer')).length, 1);
    const seen: string[] = [];
    const consumer = largeConsumer(queue, large, async (message) => {
      seen.push(message.Body!);
    });
    await consumer.start();
    try {
      await eventually(
        async () => (await t.countMessages(queue)).inFlight === 0 && seen.length === 2,
        'both handled',
      );
      assert.deepEqual(
        seen.map((b) => b.length).sort((a, b) => a - b),
        [9, 300 * KiB],
      );
      assert.ok(seen.includes(big));
      await eventually(() => readdirSync(join(directory, 'consumer')).length === 0, 'blob removed');
    } finally {
      await consumer.stop();
    }
  });

  test('a dead-lettered message keeps its blob: the copy in the DLQ still resolves', async () => {
    const dlq = await t.createQueue('large-dlq');
    const dlqArn = `arn:aws:sqs:us-east-1:000000000000:${dlq.split('/').pop()}`;
    const queue = await t.createQueue('large-poison', {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
    });
    const store = new DirectoryBlobStore({ directory: join(directory, 'poison'), bucket: 'poison' });
    const large = new LargePayloads({ store });
    const body = bodyOf(300 * KiB);
    await large.send(t.sqs, { QueueUrl: queue, MessageBody: body });
    let failed = 0;
    const consumer = largeConsumer(queue, large, async (message) => {
      assert.equal(message.Body, body);
      throw new Error('cannot process');
    });
    consumer.on('failed', () => failed++);
    await consumer.start();
    try {
      await eventually(async () => (await t.countMessages(dlq)).visible === 1, 'dead-lettered');
      await eventually(async () => (await t.countMessages(queue)).inFlight === 0, 'source deleted');
    } finally {
      await consumer.stop();
    }
    assert.equal(failed, 1);
    assert.equal(readdirSync(join(directory, 'poison')).length, 1, 'blob kept');
    const dead = await receiveOne(large, dlq);
    assert.equal(dead.Body, body);
    assert.equal(dead.MessageAttributes?.SluiceError?.StringValue, 'Error: cannot process');
  });

  describe('S3 store (moto)', { skip: motoSkip }, () => {
    test('a 300 KiB body round trips through S3 and its object is deleted with the message', async () => {
      const queue = await t.createQueue('large-s3');
      const large = new LargePayloads({ store: s3Store(), keyPrefix: 'orders/' });
      const body = bodyOf(300 * KiB);
      await large.send(t.sqs, { QueueUrl: queue, MessageBody: body });
      const raw = await peekRaw(queue);
      const [, pointer] = JSON.parse(raw.Body!) as [string, { s3BucketName: string; s3Key: string }];
      assert.equal(pointer.s3BucketName, bucket);
      assert.match(pointer.s3Key, new RegExp(`^orders/${UUID}$`));
      assert.ok(await s3Exists(pointer.s3Key));

      const message = await receiveOne(large, queue);
      assert.equal(message.Body, body);
      await large.deleteMessage(t.sqs, queue, message.ReceiptHandle!);
      assert.equal(await s3Exists(pointer.s3Key), false);
      assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 });
    });

    test('a 20 MiB stream is uploaded in parts and read back intact', async () => {
      const queue = await t.createQueue('large-s3-stream');
      const large = new LargePayloads({ store: s3Store(5 * MiB) });
      const chunks = Array.from({ length: 20 }, () => randomBytes(MiB));
      const expected = createHash('sha256').update(Buffer.concat(chunks)).digest('hex');
      await large.sendStream(t.sqs, { QueueUrl: queue }, Readable.from(chunks));
      const raw = await peekRaw(queue);
      assert.equal(raw.MessageAttributes?.SQSLargePayloadSize?.StringValue, String(20 * MiB));
      assert.equal(await sha256(await large.open(raw)), expected);
      const [, pointer] = JSON.parse(raw.Body!) as [string, { s3Key: string }];
      await deleteWithBlob(large, queue);
      assert.equal(await s3Exists(pointer.s3Key), false);
    });

    test('a stream over maxPayloadBytes leaves no object and no unfinished multipart upload', async () => {
      const queue = await t.createQueue('large-s3-limit');
      const large = new LargePayloads({
        store: s3Store(5 * MiB),
        maxPayloadBytes: 12 * MiB,
        keyPrefix: 'limit/',
      });
      const chunks = Array.from({ length: 13 }, () => randomBytes(MiB));
      await assert.rejects(
        large.sendStream(t.sqs, { QueueUrl: queue }, Readable.from(chunks)),
        LargePayloadError,
      );
      const listed = await s3!.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'limit/' }));
      assert.equal(listed.KeyCount ?? 0, 0);
      const uploads = await s3!.s3.send(
        new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'limit/' }),
      );
      assert.deepEqual(uploads.Uploads ?? [], []);
      assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 });
    });

    test('what our client sends is what a Java client would find in S3: the bytes under the pointer', async () => {
      const queue = await t.createQueue('large-s3-java');
      const large = new LargePayloads({ store: s3Store() });
      const body = bodyOf(260 * KiB);
      await large.send(t.sqs, { QueueUrl: queue, MessageBody: body });
      const raw = await peekRaw(queue);
      const [cls, pointer] = JSON.parse(raw.Body!) as [string, { s3BucketName: string; s3Key: string }];
      assert.equal(cls, 'software.amazon.payloadoffloading.PayloadS3Pointer');
      const object = await s3!.s3.send(
        new GetObjectCommand({ Bucket: pointer.s3BucketName, Key: pointer.s3Key }),
      );
      assert.equal(await object.Body!.transformToString('utf8'), body);
      const message = await receiveOne(large, queue);
      await large.deleteMessage(t.sqs, queue, message.ReceiptHandle!);
    });

    for (const producer of [
      {
        name: 'Python (json.dumps spacing, ExtendedPayloadSize)',
        attribute: 'ExtendedPayloadSize',
        pointer: (key: string) =>
          `["software.amazon.payloadoffloading.PayloadS3Pointer", {"s3BucketName": "${bucket}", "s3Key": "${key}"}]`,
      },
      {
        name: 'Java 2.x defaults (SQSLargePayloadSize)',
        attribute: 'SQSLargePayloadSize',
        pointer: (key: string) =>
          `["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"${bucket}","s3Key":"${key}"}]`,
      },
      {
        name: 'legacy MessageS3Pointer class',
        attribute: 'SQSLargePayloadSize',
        pointer: (key: string) =>
          `["com.amazon.sqs.javamessaging.MessageS3Pointer",{"s3BucketName":"${bucket}","s3Key":"${key}"}]`,
      },
    ]) {
      test(`a message written by hand as ${producer.name} is resolved, and its Java-style handle deletes it`, async () => {
        const queue = await t.createQueue('large-interop');
        const key = randomUUID();
        const body = bodyOf(270 * KiB);
        // What the Extended Clients do: put_object of the UTF-8 body, then send the pointer with the size.
        await s3!.s3.send(
          new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.from(body, 'utf8') }),
        );
        await t.sqs.send(
          new SendMessageCommand({
            QueueUrl: queue,
            MessageBody: producer.pointer(key),
            MessageAttributes: {
              [producer.attribute]: { DataType: 'Number', StringValue: String(body.length) },
            },
          }),
        );
        const large = new LargePayloads({ store: s3Store() });
        const raw = await peekRaw(queue);
        assert.equal((await large.resolve(raw)).Body, body);

        const [plain] = await t.receiveNow(queue);
        // The receipt handle a Java or Python consumer hands to its delete, built as they build it.
        const javaHandle = `-..s3BucketName..-${bucket}-..s3BucketName..--..s3Key..-${key}-..s3Key..-${plain!.ReceiptHandle}`;
        await large.deleteMessage(t.sqs, queue, javaHandle);
        assert.equal(await s3Exists(key), false);
        assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 });
      });
    }

    test('a message sent through boto3 as the Python Extended Client sends it is resolved', async () => {
      const queue = await t.createQueue('large-python-send');
      const sent = await pythonExtendedClient(
        'send',
        t.sluice.endpoint,
        s3!.endpoint,
        queue,
        bucket,
        String(280 * KiB),
      );
      const raw = await peekRaw(queue);
      assert.equal(raw.Body, sent.pointer, "Python's json.dumps spacing arrives as it was sent");
      assert.equal(raw.MessageAttributes?.ExtendedPayloadSize?.StringValue, String(280 * KiB));
      const large = new LargePayloads({ store: s3Store() });
      const message = await receiveOne(large, queue);
      assert.equal(createHash('sha256').update(message.Body!, 'utf8').digest('hex'), sent.sha256);
      await large.deleteMessage(t.sqs, queue, message.ReceiptHandle!);
      assert.equal(await s3Exists(sent.key!), false);
    });

    test("a message we send is read and deleted by the Python Extended Client's receive path", async () => {
      const queue = await t.createQueue('large-python-receive');
      const body = bodyOf(300 * KiB);
      await new LargePayloads({ store: s3Store() }).send(t.sqs, { QueueUrl: queue, MessageBody: body });
      const read = await pythonExtendedClient('receive', t.sluice.endpoint, s3!.endpoint, queue);
      assert.deepEqual(
        { attribute: read.attribute, size: read.size, class: read.class },
        {
          attribute: 'SQSLargePayloadSize',
          size: String(300 * KiB),
          class: 'software.amazon.payloadoffloading.PayloadS3Pointer',
        },
      );
      assert.equal(read.sha256, createHash('sha256').update(body, 'utf8').digest('hex'));
      assert.equal(await s3Exists(read.key!), false, 'Python deleted the object through the embedded handle');
      assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 });
    });

    test('deleteBlobOnDelete: false keeps the object', async () => {
      const queue = await t.createQueue('large-keep');
      const large = new LargePayloads({ store: s3Store(), alwaysOffload: true, deleteBlobOnDelete: false });
      await large.send(t.sqs, { QueueUrl: queue, MessageBody: 'keep me' });
      const message = await receiveOne(large, queue);
      const [, key] = /-\.\.s3Key\.\.-(.*)-\.\.s3Key\.\.-/.exec(message.ReceiptHandle!)!;
      await large.deleteMessage(t.sqs, queue, message.ReceiptHandle!);
      assert.ok(await s3Exists(key!));
      assert.deepEqual(await t.countMessages(queue), { visible: 0, inFlight: 0 });
    });
  });

  test('moto is there under CI', { skip: !process.env.CI }, () => {
    assert.ok('python' in moto, 'missing' in moto ? moto.missing : '');
  });
});
