import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { freshDatabase } from '../../tools/postgres.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * Three real `sluice serve` processes on one PostgreSQL database; producers and consumers send each request
 * to the next node in turn, and one node is SIGKILLed mid-run and started again. The client side (never
 * killed) logs every outcome, and the log is audited: every acknowledged send received, none lost, no two
 * receives of a message within its visibility timeout, FIFO groups first delivered in send order.
 */

const NODES = 3;
const VISIBILITY_S = 4;
const STANDARD_PRODUCERS = 3;
const STANDARD_PER_PRODUCER = 50;
const FIFO_GROUPS = 6;
const FIFO_PER_GROUP = 15;
const CONSUMERS_PER_QUEUE = 3;
const RUN_DEADLINE_MS = 30_000;

let database: Awaited<ReturnType<typeof freshDatabase>>;
const nodes: Array<RunningServer | undefined> = [];

interface Received {
  queue: string;
  body: string;
  messageId: string;
  started: number;
  ended: number;
}

const startNode = () => startServer({ args: ['--store', database.url, '--log-level', 'warn'] });

before(async () => {
  database = await freshDatabase();
  // Started together: the migrations' advisory lock lets one node create the schema while the others wait.
  nodes.push(...(await Promise.all(Array.from({ length: NODES }, startNode))));
});

after(async () => {
  for (const node of nodes) {
    if (!node) continue;
    await node.stop();
    removeDataDir(node.dataDir);
  }
  await database.drop();
});

test('three nodes on one database, one SIGKILLed and restarted: nothing acknowledged is lost, doubled or reordered', {
  timeout: 60_000,
}, async () => {
  const clients = new Map<string, SQSClient>();
  const client = (endpoint: string) => {
    let made = clients.get(endpoint);
    if (!made) {
      made = sqsClient(endpoint, { useQueueUrlAsEndpoint: false });
      clients.set(endpoint, made);
    }
    return made;
  };
  let turn = 0;
  const servedBy = new Map<number, number>();
  /** The next live node in turn; a request to a node that dies fails and the caller retries on the next. */
  const nextNode = () => {
    for (;;) {
      const index = turn++ % NODES;
      const node = nodes[index];
      if (node) {
        servedBy.set(index, (servedBy.get(index) ?? 0) + 1);
        return {
          sqs: client(node.endpoint),
          url: (queue: string) => `${node.endpoint}/000000000000/${queue}`,
        };
      }
    }
  };
  const attributes = { VisibilityTimeout: String(VISIBILITY_S), ReceiveMessageWaitTimeSeconds: '1' };
  const first = nextNode();
  await first.sqs.send(new CreateQueueCommand({ QueueName: 'nodes-std', Attributes: attributes }));
  await first.sqs.send(
    new CreateQueueCommand({ QueueName: 'nodes.fifo', Attributes: { ...attributes, FifoQueue: 'true' } }),
  );

  const acked = new Map<string, string>(); // body -> queue
  const received: Received[] = [];
  let producing = true;
  const begin = Date.now();

  const sendUntilAcked = async (queue: string, body: string, fifo?: { group: string; dedup: string }) => {
    for (;;) {
      const node = nextNode();
      try {
        await node.sqs.send(
          new SendMessageCommand({
            QueueUrl: node.url(queue),
            MessageBody: body,
            ...(fifo && { MessageGroupId: fifo.group, MessageDeduplicationId: fifo.dedup }),
          }),
        );
        acked.set(body, queue);
        return;
      } catch {
        // Unknown outcome (the node died): send again; a FIFO retry keeps its deduplication id.
        await sleep(20);
      }
    }
  };
  const standardProducer = async (producer: number) => {
    for (let k = 0; k < STANDARD_PER_PRODUCER; k++) await sendUntilAcked('nodes-std', `std-${producer}-${k}`);
  };
  const fifoProducer = async (group: number) => {
    for (let k = 0; k < FIFO_PER_GROUP; k++)
      await sendUntilAcked('nodes.fifo', `g${group}-${k}`, { group: `g${group}`, dedup: `g${group}-${k}` });
  };
  const deleted = new Set<string>();
  const deleteUnknown = new Set<string>();
  const consumer = async (queue: string) => {
    while (Date.now() - begin < RUN_DEADLINE_MS) {
      if (!producing && [...acked.keys()].every((body) => deleted.has(body))) return;
      const node = nextNode();
      const started = Date.now();
      let messages: Array<{ Body?: string; MessageId?: string; ReceiptHandle?: string }>;
      try {
        ({ Messages: messages = [] } = await node.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: node.url(queue),
            MaxNumberOfMessages: 5,
            WaitTimeSeconds: 1,
          }),
        ));
      } catch {
        await sleep(20);
        continue;
      }
      const ended = Date.now();
      for (const message of messages) {
        received.push({ queue, body: message.Body!, messageId: message.MessageId!, started, ended });
        try {
          await node.sqs.send(
            new DeleteMessageCommand({ QueueUrl: node.url(queue), ReceiptHandle: message.ReceiptHandle! }),
          );
          deleted.add(message.Body!);
        } catch {
          // Not acknowledged: either not deleted (it comes back after its visibility timeout) or deleted by a
          // node that died before answering; the drained check below tells the two apart.
          deleteUnknown.add(message.Body!);
        }
      }
    }
  };

  const killer = (async () => {
    await sleep(1_500);
    const victim = nodes[1]!;
    nodes[1] = undefined;
    await victim.kill();
    await sleep(1_000);
    nodes[1] = await startServer({
      dataDir: victim.dataDir,
      args: ['--store', database.url, '--log-level', 'warn'],
    });
  })();
  const consumers = [
    ...Array.from({ length: CONSUMERS_PER_QUEUE }, () => consumer('nodes-std')),
    ...Array.from({ length: CONSUMERS_PER_QUEUE }, () => consumer('nodes.fifo')),
  ];
  await Promise.all([
    ...Array.from({ length: STANDARD_PRODUCERS }, (_, i) => standardProducer(i)),
    ...Array.from({ length: FIFO_GROUPS }, (_, g) => fifoProducer(g)),
    killer,
  ]);
  producing = false;
  await Promise.all(consumers);

  // Every acknowledged send received at least once, and deleted: nothing lost.
  const receivedBodies = new Set(received.map((entry) => entry.body));
  const missing = [...acked.keys()].filter((body) => !receivedBodies.has(body));
  assert.deepEqual(missing, [], 'acknowledged sends never received');
  assert.equal(acked.size, STANDARD_PRODUCERS * STANDARD_PER_PRODUCER + FIFO_GROUPS * FIFO_PER_GROUP);
  const undeleted = [...acked.keys()].filter((body) => !deleted.has(body) && !deleteUnknown.has(body));
  assert.deepEqual(undeleted, [], 'received but never deleted before the deadline');
  for (const queue of ['nodes-std', 'nodes.fifo']) {
    const node = nextNode();
    const { Attributes } = await node.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: node.url(queue), AttributeNames: ['All'] }),
    );
    assert.equal(Attributes?.ApproximateNumberOfMessages, '0', `${queue} drained`);
    assert.equal(Attributes?.ApproximateNumberOfMessagesNotVisible, '0', `${queue} has nothing in flight`);
  }

  // Never in flight for two consumers at once: a second receive of a message ended (so was claimed) only
  // after the first one's visibility timeout, which started no earlier than that receive was sent.
  const byMessage = new Map<string, Received[]>();
  for (const entry of received)
    byMessage.set(entry.messageId, [...(byMessage.get(entry.messageId) ?? []), entry]);
  for (const [messageId, deliveries] of byMessage) {
    deliveries.sort((a, b) => a.started - b.started);
    for (let i = 1; i < deliveries.length; i++) {
      assert.ok(
        deliveries[i]!.ended >= deliveries[i - 1]!.started + VISIBILITY_S * 1000,
        `${messageId} (${deliveries[i]!.body}) was delivered twice within its visibility timeout`,
      );
    }
  }

  // FIFO: each group's messages first delivered in send order.
  const firstDeliveries = received.filter(
    (entry, index) =>
      entry.queue === 'nodes.fifo' && received.findIndex((e) => e.body === entry.body) === index,
  );
  for (let group = 0; group < FIFO_GROUPS; group++) {
    const order = firstDeliveries
      .filter((entry) => entry.body.startsWith(`g${group}-`))
      .map((entry) => Number(entry.body.split('-')[1]));
    assert.deepEqual(
      order,
      Array.from({ length: FIFO_PER_GROUP }, (_, k) => k),
      `group g${group} order`,
    );
  }
  // The requests really were spread over the three nodes.
  for (let index = 0; index < NODES; index++)
    assert.ok((servedBy.get(index) ?? 0) > 10, `node ${index} served`);
  for (const made of clients.values()) made.destroy();
});

test('a long poll on one node wakes at once when another node sends, or makes a message visible again', {
  timeout: 30_000,
}, async () => {
  const [a, b] = [nodes[0]!, nodes[2]!];
  const sqs = (node: RunningServer) => sqsClient(node.endpoint, { useQueueUrlAsEndpoint: false });
  const [onA, onB] = [sqs(a), sqs(b)];
  const url = (node: RunningServer) => `${node.endpoint}/000000000000/wake`;
  await onA.send(new CreateQueueCommand({ QueueName: 'wake', Attributes: { VisibilityTimeout: '60' } }));
  /** A receive parked on node A, then `act` through node B: how long until the receive returns. */
  const wake = async (act: () => Promise<unknown>) => {
    const parked = onA.send(new ReceiveMessageCommand({ QueueUrl: url(a), WaitTimeSeconds: 10 }));
    await sleep(200);
    const actedAt = Date.now();
    await act();
    const { Messages = [] } = await parked;
    return { ms: Date.now() - actedAt, message: Messages[0] };
  };
  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const sent = await wake(() =>
      onB.send(new SendMessageCommand({ QueueUrl: url(b), MessageBody: `w${i}` })),
    );
    assert.equal(sent.message?.Body, `w${i}`);
    latencies.push(sent.ms);
    // In flight for 60 s; made visible again through node B, it wakes node A's next long poll.
    const again = await wake(() =>
      onB.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url(b),
          ReceiptHandle: sent.message!.ReceiptHandle!,
          VisibilityTimeout: 0,
        }),
      ),
    );
    assert.equal(again.message?.Body, `w${i}`);
    latencies.push(again.ms);
    await onA.send(
      new DeleteMessageCommand({ QueueUrl: url(a), ReceiptHandle: again.message!.ReceiptHandle! }),
    );
  }
  // Well under the 5 s fallback: the wake came by NOTIFY.
  assert.ok(Math.max(...latencies) < 2_000, `cross-node wakes took ${latencies.join(', ')} ms`);
  console.log(`# cross-node wake ms: ${latencies.join(', ')}`);
  onA.destroy();
  onB.destroy();
});
