import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { advanceClock } from 'sluice-client/testing';
import { removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const client = (endpoint: string) => sqsClient(endpoint);

/** The visibility timeout of the messages held across a kill: far longer than any restart takes. */
const HIDDEN_SECONDS = 300;

describe('graceful shutdown', () => {
  it('answers a pending long poll, finishes, and exits 0 on SIGTERM; the data survives', async () => {
    const server = await startServer();
    const sqs = client(server.endpoint);
    try {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'drain' }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'kept' }));
      const empty = await sqs.send(new CreateQueueCommand({ QueueName: 'drain-empty' }));
      const started = Date.now();
      const polling = sqs.send(new ReceiveMessageCommand({ QueueUrl: empty.QueueUrl, WaitTimeSeconds: 20 }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const exited = new Promise<number | null>((resolve) =>
        server.process.once('exit', (code) => resolve(code)),
      );
      server.process.kill('SIGTERM');
      const answer = await polling;
      assert.equal(answer.Messages, undefined);
      assert.equal(await exited, 0);
      assert.ok(Date.now() - started < 10_000, 'the long poll held the shutdown');
    } finally {
      sqs.destroy();
    }
    const again = await startServer({ dataDir: server.dataDir });
    const next = client(again.endpoint);
    try {
      const url = `${again.endpoint}/000000000000/drain`;
      const { Messages } = await next.send(new ReceiveMessageCommand({ QueueUrl: url }));
      assert.equal(Messages?.[0]?.Body, 'kept');
    } finally {
      next.destroy();
      await again.stop();
      removeDataDir(server.dataDir);
    }
  });
});

describe('durability across kill -9', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) removeDataDir(dir);
  });

  // Both servers run on the test clock: real time, moved past the deadline only when the test says so, so a slow
  // restart on a loaded machine cannot let the deadline pass before the test looks.
  it('keeps sent and in-flight messages; an in-flight one is redelivered with receive count 2 after its deadline', async () => {
    const first = await startServer({ args: ['--test-clock'] });
    dirs.push(first.dataDir);
    let sqs = client(first.endpoint);
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: 'restart',
        Attributes: { VisibilityTimeout: String(HIDDEN_SECONDS) },
      }),
    );
    const inFlight = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'in flight' }));
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1 }));
    assert.equal(received.Messages?.[0]?.MessageId, inFlight.MessageId);
    const waiting = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'waiting' }));
    sqs.destroy();
    await first.kill();

    const second = await startServer({ dataDir: first.dataDir, args: ['--test-clock'] });
    try {
      sqs = client(second.endpoint);
      const url = QueueUrl!.replace(first.endpoint, second.endpoint);
      const visibleNow = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 2 * HIDDEN_SECONDS,
        }),
      );
      // Only the waiting message is visible: the other is still in flight until its deadline.
      assert.deepEqual(
        visibleNow.Messages?.map((m) => m.MessageId),
        [waiting.MessageId],
      );
      await advanceClock(second.endpoint, HIDDEN_SECONDS);
      const redelivered = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      const message = redelivered.Messages?.[0];
      assert.equal(message?.MessageId, inFlight.MessageId);
      assert.equal(message?.Attributes?.ApproximateReceiveCount, '2');
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message!.ReceiptHandle! }));
      sqs.destroy();
    } finally {
      await second.stop();
    }
  });

  it('keeps FIFO group order and blocking: an in-flight group stays blocked until its deadline, then resumes in order', async () => {
    const first = await startServer({ args: ['--test-clock'] });
    dirs.push(first.dataDir);
    let sqs = client(first.endpoint);
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: 'restart.fifo',
        Attributes: {
          FifoQueue: 'true',
          ContentBasedDeduplication: 'true',
          VisibilityTimeout: String(HIDDEN_SECONDS),
        },
      }),
    );
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: ['a1', 'a2', 'a3', 'b1'].map((body) => ({
          Id: body,
          MessageBody: body,
          MessageGroupId: body[0],
        })),
      }),
    );
    const held = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1 }));
    assert.equal(held.Messages?.[0]?.Body, 'a1');
    sqs.destroy();
    await first.kill();

    const second = await startServer({ dataDir: first.dataDir, args: ['--test-clock'] });
    try {
      sqs = client(second.endpoint);
      const url = QueueUrl!.replace(first.endpoint, second.endpoint);
      const now = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 2 * HIDDEN_SECONDS,
        }),
      );
      assert.deepEqual(
        now.Messages?.map((m) => m.Body),
        ['b1'],
        'group a is still blocked by its in-flight message',
      );
      await advanceClock(second.endpoint, HIDDEN_SECONDS);
      const resumed = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      assert.deepEqual(
        resumed.Messages?.map((m) => m.Body),
        ['a1', 'a2', 'a3'],
      );
      assert.equal(resumed.Messages?.[0]?.Attributes?.ApproximateReceiveCount, '2');
      sqs.destroy();
    } finally {
      await second.stop();
    }
  });

  it('loses and doubles nothing when killed during a move task, and resumes the task after the restart', async () => {
    let server = await startServer();
    dirs.push(server.dataDir);
    let sqs = client(server.endpoint);
    const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;
    const urlOf = (name: string) => `${server.endpoint}/000000000000/${name}`;
    await sqs.send(new CreateQueueCommand({ QueueName: 'kill-dlq' }));
    await sqs.send(new CreateQueueCommand({ QueueName: 'kill-target' }));
    await sqs.send(
      new CreateQueueCommand({
        QueueName: 'kill-source',
        Attributes: {
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('kill-dlq'), maxReceiveCount: 1 }),
        },
      }),
    );
    const total = 1500;
    for (let i = 0; i < total; i += 10) {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: urlOf('kill-source'),
          Entries: Array.from({ length: 10 }, (_, j) => ({ Id: String(j), MessageBody: `k${i + j}` })),
        }),
      );
    }
    for (let got = 1; got > 0; ) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: urlOf('kill-source'),
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
        }),
      );
      got = Messages.length;
    }
    await sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: arn('kill-dlq'),
        DestinationArn: arn('kill-target'),
        MaxNumberOfMessagesPerSecond: 500,
      }),
    );
    const visible = async (name: string) =>
      Number(
        (
          await sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: urlOf(name),
              AttributeNames: ['ApproximateNumberOfMessages'],
            }),
          )
        ).Attributes?.ApproximateNumberOfMessages,
      );
    // Kill it twice while the task is moving messages.
    for (let kill = 0; kill < 2; kill++) {
      while ((await visible('kill-target')) < (kill + 1) * 300) await new Promise((r) => setTimeout(r, 20));
      sqs.destroy();
      await server.kill();
      server = await startServer({ dataDir: server.dataDir });
      sqs = client(server.endpoint);
      const counted = (await visible('kill-dlq')) + (await visible('kill-target'));
      assert.equal(counted, total, `after kill ${kill + 1}: every message in exactly one of the two queues`);
    }
    let status = '';
    for (let i = 0; i < 300 && status !== 'COMPLETED'; i++) {
      const { Results = [] } = await sqs.send(
        new ListMessageMoveTasksCommand({ SourceArn: arn('kill-dlq') }),
      );
      status = Results[0]?.Status ?? '';
      if (status !== 'COMPLETED') await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status, 'COMPLETED', 'the task resumed after the restarts and finished');
    const bodies: string[] = [];
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: urlOf('kill-target'),
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 300,
        }),
      );
      if (Messages.length === 0) break;
      bodies.push(...Messages.map((m) => m.Body!));
    }
    assert.equal(bodies.length, total, 'nothing doubled');
    assert.equal(new Set(bodies).size, total, 'nothing lost');
    assert.equal(await visible('kill-dlq'), 0);
    sqs.destroy();
    await server.stop();
  });
});
