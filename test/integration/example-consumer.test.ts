import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { answeredRequests } from '../../tools/metrics.ts';
import { eventually, startToolkitServer } from '../helpers/client-toolkit.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const EXAMPLE = join(ROOT, 'examples/consumer.ts');

interface LogLine {
  event: string;
  [field: string]: unknown;
}

interface ExampleProcess {
  child: ChildProcess;
  lines: LogLine[];
  events(name: string): LogLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** examples/consumer.ts as a real child process; its JSON log lines are collected as they arrive. */
function runExample(env: Record<string, string>): ExampleProcess {
  const child = spawn(process.execPath, ['--conditions=sluice-source', '--import', 'tsx', EXAMPLE], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  let output = '';
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    partial += chunk.toString();
    const complete = partial.split('\n');
    partial = complete.pop() ?? '';
    for (const line of complete) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    events: (name) => lines.filter((l) => l.event === name),
    exited,
    output: () => output,
  };
}

function order(orderId: string, amountCents: number): string {
  return JSON.stringify({ orderId, amountCents });
}

describe('examples/consumer.ts against a started Sluice', () => {
  let server: RunningServer;
  let sqs: SQSClient;
  let dir: string;

  before(async () => {
    server = await startServer();
    sqs = sqsClient(server.endpoint);
    dir = mkdtempSync(join(tmpdir(), 'sluice-example-'));
  });

  after(async () => {
    sqs.destroy();
    await server.stop();
    removeDataDir(server.dataDir);
    rmSync(dir, { recursive: true, force: true });
  });

  it('charges each order once, dead-letters the poison message with its reason, and exits 0 on SIGTERM', async () => {
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `orders-dlq-${process.pid}` }));
    const queue = await sqs.send(
      new CreateQueueCommand({
        QueueName: `orders-${process.pid}`,
        Attributes: {
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:orders-dlq-${process.pid}`,
            maxReceiveCount: 2,
          }),
        },
      }),
    );
    const queueUrl = queue.QueueUrl!;
    const bodies = [1, 2, 3, 4, 5].map((i) => order(`o-${i}`, i * 100));
    // o-3 twice (a producer retry): the idempotent step must charge it once; and one body that is no order.
    bodies.push(order('o-3', 300), 'not an order');
    for (const body of bodies)
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));

    const example = runExample({
      QUEUE_URL: queueUrl,
      SQS_ENDPOINT: server.endpoint,
      IDEMPOTENCY_DB: join(dir, 'idempotency.db'),
      WORK_MS: '20',
    });
    try {
      const deadLettered = () =>
        example.events('failed').filter((l) => (l.handling as { kind: string }).kind === 'dead-lettered');
      await eventually(
        () => example.events('processed').length === 6 && deadLettered().length === 1,
        `6 processed and the poison message dead-lettered:\n${example.output()}`,
        15_000,
      );
      const charged = example.events('charged').map((l) => l.orderId);
      assert.deepEqual([...charged].sort(), ['o-1', 'o-2', 'o-3', 'o-4', 'o-5']);
      assert.equal(
        deadLettered()[0]!.receiveCount,
        2,
        'dead-lettered on the last receive before maxReceiveCount',
      );

      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: dlq.QueueUrl,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
        }),
      );
      assert.equal(Messages.length, 1);
      assert.equal(Messages[0]!.Body, 'not an order');
      assert.match(Messages[0]!.MessageAttributes?.SluiceError?.StringValue ?? '', /not an order|JSON/);

      example.child.kill('SIGTERM');
      const exit = await example.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, example.output());
      assert.equal(example.lines.at(-1)?.event, 'stopped');
      const { Messages: left = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }),
      );
      assert.equal(left.length, 0, 'every message was deleted or dead-lettered');
    } finally {
      example.child.kill('SIGKILL');
    }
  });
});

describe('a consumer process killed mid-handler', () => {
  it('leaves its message to reappear within one visibility timeout of the kill: the heartbeat dies with it', async () => {
    const toolkit = await startToolkitServer();
    const dir = mkdtempSync(join(tmpdir(), 'sluice-killed-'));
    // Visibility 3 s, so the consumer's default heartbeat runs every second of real time.
    const queueUrl = await toolkit.createQueue('killed', { VisibilityTimeout: '3' });
    const messageId = await toolkit.send(queueUrl, order('o-killed', 100));
    const heartbeats = () => answeredRequests(toolkit.sluice.endpoint, 'ChangeMessageVisibilityBatch');
    const example = runExample({
      QUEUE_URL: queueUrl,
      SQS_ENDPOINT: toolkit.sluice.endpoint,
      IDEMPOTENCY_DB: join(dir, 'idempotency.db'),
      WORK_MS: String(3_600_000), // a handler that does not finish while the test runs
    });
    try {
      await eventually(
        async () => (await toolkit.countMessages(queueUrl)).inFlight === 1 && (await heartbeats()) >= 1,
        `the message in flight and a heartbeat:\n${example.output()}`,
      );
      // Two seconds on (server time), a live heartbeat pushes the message's visibility to t=5 s.
      await toolkit.clock.advance(2_000);
      const sent = await heartbeats();
      await eventually(async () => (await heartbeats()) > sent, 'a heartbeat after the clock moved');

      assert.ok(example.child.pid);
      process.kill(example.child.pid, 'SIGKILL');
      assert.equal((await example.exited).signal, 'SIGKILL');

      // Still hidden just before the last heartbeat's lease ends (without it the message was due at t=3 s)...
      await toolkit.clock.advance(2_900);
      assert.deepEqual(await toolkit.receiveNow(queueUrl), []);
      // ...and back, one visibility timeout after the kill: nothing extends it any more.
      await toolkit.clock.advance(200);
      const again = await toolkit.receiveNow(queueUrl);
      assert.equal(again.length, 1);
      assert.equal(again[0]!.MessageId, messageId);
      assert.equal(again[0]!.Attributes?.ApproximateReceiveCount, '2');
    } finally {
      example.child.kill('SIGKILL');
      await toolkit.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
