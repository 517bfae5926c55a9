import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type RunningServer, removeDataDir, SLUICE_CLI, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const runFile = promisify(execFile);

/** `sluice redrive` against a really started server, driven as a user runs it. */
describe('sluice redrive', () => {
  let server: RunningServer;
  let sqs: SQSClient;
  let counter = 0;
  before(async () => {
    server = await startServer();
    sqs = sqsClient(server.endpoint);
  });
  after(async () => {
    sqs?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;

  /** A source queue and its DLQ holding `bodies` as dead-lettered messages, each with a `kind` attribute. */
  async function deadLettered(bodies: Array<{ body: string; kind: string }>) {
    const id = `${++counter}-${Date.now().toString(36)}`;
    const dlq = (await sqs.send(new CreateQueueCommand({ QueueName: `r-dlq-${id}` }))).QueueUrl!;
    const source = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: `r-src-${id}`,
          Attributes: {
            MessageRetentionPeriod: '60',
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn(`r-dlq-${id}`), maxReceiveCount: 1 }),
          },
        }),
      )
    ).QueueUrl!;
    for (let i = 0; i < bodies.length; i += 10) {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: source,
          Entries: bodies.slice(i, i + 10).map(({ body, kind }, j) => ({
            Id: String(j),
            MessageBody: body,
            MessageAttributes: { kind: { DataType: 'String', StringValue: kind } },
          })),
        }),
      );
    }
    // Receive everything once with a zero timeout; the next receives move it all to the DLQ.
    for (let got = 1; got > 0; ) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: source, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
      );
      got = Messages.length;
    }
    assert.equal(await visible(dlq), bodies.length);
    return { dlq, source, dlqName: `r-dlq-${id}` };
  }

  async function visible(queueUrl: string): Promise<number> {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    return Number(Attributes?.ApproximateNumberOfMessages);
  }

  async function drain(queueUrl: string): Promise<string[]> {
    const bodies: string[] = [];
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }),
      );
      if (Messages.length === 0) return bodies;
      bodies.push(...Messages.map((m) => m.Body!));
    }
  }

  function redrive(args: string[]): {
    child: ChildProcess;
    done: Promise<{ code: number | null; output: string }>;
  } {
    const child = spawn(
      process.execPath,
      [...SLUICE_CLI, 'redrive', '--endpoint', server.endpoint, ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const done = new Promise<{ code: number | null; output: string }>((resolve) =>
      child.once('exit', (code) => resolve({ code, output })),
    );
    return { child, done };
  }

  it('runs a move task back to the source queue with a progress display, and documents its options', async () => {
    const { dlq, source, dlqName } = await deadLettered(
      Array.from({ length: 30 }, (_, i) => ({ body: `m${i}`, kind: 'order' })),
    );
    const { code, output } = await redrive(['--source', dlqName, '--rate', '100']).done;
    assert.equal(code, 0, output);
    assert.match(output, /move task started: .*r-dlq-.* back to their source queues at 100 msg\/s/);
    assert.match(output, /moved \[#+-*\] +\d+ \/ 30/);
    assert.match(output, /COMPLETED: 30 of 30 messages moved/);
    assert.equal(await visible(dlq), 0);
    assert.deepEqual((await drain(source)).sort(), Array.from({ length: 30 }, (_, i) => `m${i}`).sort());

    const help = await runFile(process.execPath, [...SLUICE_CLI, 'redrive', '--help']);
    for (const option of [
      '--source',
      '--destination',
      '--rate',
      '--filter',
      '--hold',
      '--endpoint',
      '--region',
    ])
      assert.match(help.stdout, new RegExp(`${option} `), `redrive --help does not mention ${option}`);
  });

  it('takes the queues by ARN as well as by name or URL', async () => {
    const { dlq, dlqName } = await deadLettered([{ body: 'by-arn', kind: 'order' }]);
    const targetName = `${dlqName}-by-arn`;
    const target = (await sqs.send(new CreateQueueCommand({ QueueName: targetName }))).QueueUrl!;
    const { code, output } = await redrive(['--source', arn(dlqName), '--destination', arn(targetName)]).done;
    assert.equal(code, 0, output);
    assert.match(output, /COMPLETED: 1 of 1 message moved/);
    assert.equal(await visible(dlq), 0);
    assert.deepEqual(await drain(target), ['by-arn']);
  });

  it('cancels the move task on Ctrl-C', async () => {
    const { dlq, dlqName } = await deadLettered(
      Array.from({ length: 40 }, (_, i) => ({ body: `c${i}`, kind: 'x' })),
    );
    const { child, done } = redrive(['--source', dlqName, '--rate', '2']);
    // Wait for the task to be under way, then interrupt it as a user at a terminal would.
    for (let i = 0; i < 100; i++) {
      const { Results = [] } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn(dlqName) }));
      if ((Results[0]?.ApproximateNumberOfMessagesMoved ?? 0) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill('SIGINT');
    const { code, output } = await done;
    assert.equal(code, 130, output);
    assert.match(output, /CANCELLED: \d+ of 40 messages moved/);
    const { Results = [] } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn(dlqName) }));
    assert.equal(Results[0]?.Status, 'CANCELLED');
    const moved = Results[0]?.ApproximateNumberOfMessagesMoved ?? 0;
    assert.ok(moved > 0 && moved < 40, `moved ${moved}`);
    assert.equal(await visible(dlq), 40 - moved);
  });

  it('moves only the messages a filter matches, by attribute or by JSON body field, and leaves the rest', async () => {
    const bodies = Array.from({ length: 24 }, (_, i) => ({
      body: JSON.stringify({ order: i, customer: { tier: i % 3 === 0 ? 'gold' : 'basic' } }),
      kind: i % 2 === 0 ? 'refund' : 'charge',
    }));
    const { dlq, source, dlqName } = await deadLettered(bodies);
    const byAttribute = await redrive(['--source', dlqName, '--filter', 'attr.kind=refund', '--rate', '200'])
      .done;
    assert.equal(byAttribute.code, 0, byAttribute.output);
    assert.match(byAttribute.output, /DONE: 12 moved, 12 left in the queue/);
    const refunds = (await drain(source)).map((b) => (JSON.parse(b) as { order: number }).order);
    assert.deepEqual(
      refunds.sort((a, b) => a - b),
      [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22],
    );
    assert.equal(await visible(dlq), 12, 'the non-matching messages are visible again in the DLQ');

    const target = (await sqs.send(new CreateQueueCommand({ QueueName: `${dlqName}-gold` }))).QueueUrl!;
    const byBody = await redrive([
      '--source',
      dlq,
      '--destination',
      target,
      '--filter',
      'body.customer.tier=gold',
      '--filter',
      'body.order~^(3|9|15|21)$',
    ]).done;
    assert.equal(byBody.code, 0, byBody.output);
    assert.match(byBody.output, /DONE: 4 moved, 8 left/);
    assert.equal((await drain(target)).length, 4);
    assert.equal(await visible(dlq), 8);
  });

  it('refuses bad usage with exit code 2 and reports SQS errors with exit code 1', async () => {
    for (const args of [[], ['--source', 'x', '--rate', '0'], ['--source', 'x', '--filter', 'nonsense']]) {
      const { code, output } = await redrive(args).done;
      assert.equal(code, 2, `${args.join(' ')}: ${output}`);
    }
    const missing = await redrive(['--source', 'no-such-queue']).done;
    assert.equal(missing.code, 1);
    assert.match(missing.output, /QueueDoesNotExist|NonExistentQueue/);
  });
});
