import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import pg from 'pg';
import { freshDatabase } from '../../tools/postgres.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * The cluster jobs run under a lease: with two nodes on one database, one holds it; SIGKILLed in the middle
 * of a move task, the other takes the lease over within seconds and finishes the task, and every message
 * is in the destination exactly once.
 */

const MESSAGES = 60;
const RATE = 20; // messages per second: the task takes about 3 s, so the kill lands mid-task

let database: Awaited<ReturnType<typeof freshDatabase>>;
let db: pg.Client;
const nodes: RunningServer[] = [];

before(async () => {
  database = await freshDatabase();
  db = new pg.Client({ connectionString: database.url });
  nodes.push(await startServer({ args: ['--store', database.url, '--log-level', 'warn'] }));
  nodes.push(await startServer({ args: ['--store', database.url, '--log-level', 'warn'] }));
  await db.connect();
});

after(async () => {
  await db.end();
  for (const node of nodes) {
    await node.stop();
    removeDataDir(node.dataDir);
  }
  await database.drop();
});

const sqsOf = (node: RunningServer) => sqsClient(node.endpoint, { useQueueUrlAsEndpoint: false });

async function leaseHolderPid(): Promise<number | undefined> {
  const { rows } = await db.query<{ holder: string }>(
    "SELECT holder FROM leases WHERE name = 'singletons' AND expires_at > (extract(epoch FROM clock_timestamp()) * 1000)",
  );
  return rows[0] ? Number(rows[0].holder.split(':')[1]) : undefined;
}

test('a node takes the lease over when its holder dies mid move task, and the task moves each message once', {
  timeout: 40_000,
}, async () => {
  const holderPid = await leaseHolderPid();
  assert.ok(holderPid !== undefined, 'one node holds the lease');
  const holder = nodes.find((node) => node.process.pid === holderPid)!;
  const other = nodes.find((node) => node !== holder)!;
  assert.ok(holder && other, 'the holder is one of the two nodes');

  // Everything is done through the node that does not run the jobs: the holder runs the task anyway.
  const sqs = sqsOf(other);
  const url = (name: string) => `${other.endpoint}/000000000000/${name}`;
  const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;
  await sqs.send(new CreateQueueCommand({ QueueName: 'lease-dlq' }));
  await sqs.send(new CreateQueueCommand({ QueueName: 'lease-target' }));
  await sqs.send(
    new CreateQueueCommand({
      QueueName: 'lease-src',
      Attributes: {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('lease-dlq'), maxReceiveCount: 1 }),
      },
    }),
  );
  for (let start = 0; start < MESSAGES; start += 10) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url('lease-dlq'),
        Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: `m${start + i}` })),
      }),
    );
  }
  const { TaskHandle } = await sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: arn('lease-dlq'),
      DestinationArn: arn('lease-target'),
      MaxNumberOfMessagesPerSecond: RATE,
    }),
  );
  assert.ok(TaskHandle);
  const moved = async () => {
    const { Results = [] } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn('lease-dlq') }));
    return Results[0]!;
  };
  // Let the holder move some, then kill it mid-task.
  for (let i = 0; i < 100 && ((await moved()).ApproximateNumberOfMessagesMoved ?? 0) < 10; i++)
    await sleep(50);
  const before = await moved();
  assert.ok((before.ApproximateNumberOfMessagesMoved ?? 0) < MESSAGES, 'killed mid-task');
  await holder.kill();
  const killedAt = Date.now();

  let newHolder: number | undefined;
  while (Date.now() - killedAt < 15_000) {
    newHolder = await leaseHolderPid();
    if (newHolder === other.process.pid) break;
    await sleep(100);
  }
  const takeoverMs = Date.now() - killedAt;
  assert.equal(newHolder, other.process.pid, 'the surviving node holds the lease');
  assert.ok(takeoverMs < 10_000, `took over in ${takeoverMs} ms`);
  console.log(`# lease takeover after SIGKILL: ${takeoverMs} ms`);

  for (let i = 0; i < 200 && (await moved()).Status !== 'COMPLETED'; i++) await sleep(100);
  const done = await moved();
  assert.equal(done.Status, 'COMPLETED');
  assert.equal(done.ApproximateNumberOfMessagesMoved, MESSAGES);

  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url('lease-target'),
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 60,
      }),
    );
    if (Messages.length === 0) break;
    bodies.push(...Messages.map((message) => message.Body!));
  }
  assert.equal(bodies.length, MESSAGES, 'each message moved exactly once');
  assert.equal(new Set(bodies).size, MESSAGES);
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url('lease-dlq'), AttributeNames: ['All'] }),
  );
  assert.equal(Attributes?.ApproximateNumberOfMessages, '0', 'nothing left in the source');
  sqs.destroy();
  // The killed node is not restarted: after() only stops what is still running.
  nodes.splice(nodes.indexOf(holder), 1);
  removeDataDir(holder.dataDir);
});
