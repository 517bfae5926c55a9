import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { type RunningSluice, startSluice } from 'sluice';
import { flushActivity } from '../../packages/server/src/core/queue-history.ts';
import { serviceReads } from '../../packages/server/src/core/sqs-service.ts';
import { freshDatabase } from '../../tools/postgres.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * Two nodes on one PostgreSQL database, each a real server over HTTP: what only the lease holder computes
 * (history samples, DLQ alarm states) covers the traffic of both, and either node answers with it.
 */

let database: Awaited<ReturnType<typeof freshDatabase>>;
let nodes: RunningSluice[];

before(async () => {
  database = await freshDatabase();
  nodes = [];
  for (let i = 0; i < 2; i++)
    nodes.push(
      await startSluice({ port: 0, storeUrl: database.url, logLevel: 'silent', dataDir: ':memory:' }),
    );
});

after(async () => {
  for (const node of nodes) await node.close();
  await database.drop();
});

const sqsOf = (node: RunningSluice) => sqsClient(node.endpoint);

function roles(): { holder: RunningSluice; other: RunningSluice } {
  const holder = nodes.find((node) => node.lease.isHolder);
  const other = nodes.find((node) => !node.lease.isHolder);
  assert.ok(holder && other, 'one of the two nodes holds the lease');
  return { holder, other };
}

test('the history counts the traffic of both nodes, not only the lease holder', async () => {
  const { holder, other } = roles();
  const start = Date.now();
  const traffic = async (node: RunningSluice, sends: number) => {
    const sqs = sqsOf(node);
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'cluster-history' }));
    for (let i = 0; i < sends; i++) await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'xy' }));
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: sends, VisibilityTimeout: 60 }),
    );
    for (const message of Messages)
      await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: message.ReceiptHandle }));
    return Messages.length;
  };
  const receivedOnHolder = await traffic(holder, 3);
  const receivedOnOther = await traffic(other, 4);
  // What the other node's periodic flush does, now rather than within its next 2 s.
  await flushActivity(serviceReads(other.service, other.store));
  await holder.sampler.sample();

  const samples = await holder.store.queueSamples('cluster-history', start - 1);
  const sum = (pick: (s: (typeof samples)[number]) => number) => samples.reduce((t, s) => t + pick(s), 0);
  assert.equal(
    sum((s) => s.sent),
    7,
  );
  assert.equal(
    sum((s) => s.received),
    receivedOnHolder + receivedOnOther,
  );
  assert.equal(
    sum((s) => s.deleted),
    receivedOnHolder + receivedOnOther,
  );
  assert.equal(
    sum((s) => s.sentBytes),
    14,
  );
  assert.ok(receivedOnOther > 0, 'the other node received some messages');
});

test('every node answers /alarms and the console overview with the alarm states the holder checked', async () => {
  const { holder, other } = roles();
  const sqs = sqsOf(other);
  const { QueueUrl: dlq } = await sqs.send(new CreateQueueCommand({ QueueName: 'cluster-dlq' }));
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] }),
  );
  // The source's RedrivePolicy is what makes cluster-dlq a watched DLQ.
  await sqs.send(
    new CreateQueueCommand({
      QueueName: 'cluster-source',
      Attributes: {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes!.QueueArn, maxReceiveCount: 1 }),
      },
    }),
  );
  await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'dead' }));
  await holder.alarms.check();

  for (const node of [other, holder]) {
    const alarms = (await (await fetch(`${node.endpoint}/alarms`)).json()) as {
      alarms: Array<{ queue: string; state: string; visible: number }>;
    };
    const state = alarms.alarms.find((a) => a.queue === 'cluster-dlq');
    assert.deepEqual([state?.state, state?.visible], ['ALARM', 1], `${node.endpoint}/alarms`);
    const overview = (await (await fetch(`${node.endpoint}/api/overview?queue=cluster-dlq`)).json()) as {
      queues: Array<{ name: string; alarm?: { state: string } }>;
    };
    assert.equal(overview.queues.find((q) => q.name === 'cluster-dlq')?.alarm?.state, 'ALARM');
  }
  // The other node never checked: it answers from the store, not from its own watches.
  assert.deepEqual(other.alarms.states(), []);
});
