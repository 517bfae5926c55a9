/**
 * One adapter for every SQS server (Sluice, moto_server, fauxqs): the bench's lean raw JSON client
 * (keep-alive agent, JSON 1.0 requests, SendMessageBatch / DeleteMessageBatch of 10), so the three are
 * driven by exactly the same client code and the client costs tens of microseconds per request. Where the
 * server also speaks SNS on its port (Sluice, fauxqs), topics fan out to its queues through ./sns.ts.
 */
import type { QueueClient } from '../client.ts';
import { makeRawClient } from '../raw-client.ts';
import { type RunningTarget, type SluiceMode, startTarget } from '../targets.ts';
import {
  type Delivery,
  NOTHING,
  type Peer,
  type PeerConsumer,
  type PeerQueue,
  type PeerTopic,
} from './peer.ts';
import { makeRawSnsClient, type SnsClient } from './sns.ts';

const SOCKETS = 64;

/** sns: the server also speaks SNS on the same port, so the bench runs the fan-out workload on it. */
export function sqsPeer(name: string, launch: () => Promise<RunningTarget>, sns = false): Peer {
  let target: RunningTarget | null = null;
  let client: QueueClient | null = null;
  let snsClient: SnsClient | null = null;
  const connected = (): QueueClient => {
    if (!client) throw new Error(`${name} is not started`);
    return client;
  };
  const queue = async (queueName: string): Promise<{ url: string; queue: PeerQueue }> => {
    const sqs = connected();
    const url = await sqs.createQueue(queueName, { VisibilityTimeout: '120' });
    return { url, queue: sqsQueue(sqs, url) };
  };
  const topic = async (topicName: string, subscribers: number): Promise<PeerTopic> => {
    const sqs = connected();
    if (!snsClient) throw new Error(`${name} is not started`);
    const publisher = snsClient;
    const arn = await publisher.createTopic(topicName);
    const queues: PeerQueue[] = [];
    for (let i = 0; i < subscribers; i++) {
      const created = await queue(`${topicName}_${i}`);
      const { QueueArn } = await sqs.getQueueAttributes(created.url, ['QueueArn']);
      if (!QueueArn) throw new Error('GetQueueAttributes returned no QueueArn');
      await publisher.subscribeQueue(arn, QueueArn);
      queues.push(created.queue);
    }
    return { queues, send: (bodies) => publisher.publishBatch(arn, bodies) };
  };
  return {
    name,
    maxBatch: 10,
    async start() {
      target = await launch();
      client = makeRawClient(target.endpoint, SOCKETS);
      if (sns) snsClient = makeRawSnsClient(target.endpoint, SOCKETS);
    },
    serverPids: () => (target ? [target.pid] : []),
    queue: async (queueName) => (await queue(queueName)).queue,
    ...(sns ? { topic } : {}),
    async stop() {
      client?.close();
      client = null;
      snsClient?.close();
      snsClient = null;
      await target?.stop();
      target = null;
    },
  };
}

function sqsQueue(sqs: QueueClient, url: string): PeerQueue {
  return {
    async send(bodies) {
      const res = await sqs.sendMessageBatch(
        url,
        bodies.map((body, i) => ({ Id: `m${i}`, MessageBody: body })),
      );
      if (res.Failed.length > 0) throw new Error(`SendMessageBatch: ${res.Failed.length} entries failed`);
    },
    async consumer(): Promise<PeerConsumer> {
      return {
        async next(max, waitMs): Promise<Delivery> {
          const messages = await sqs.receiveMessage(url, max, Math.ceil(waitMs / 1000));
          if (messages.length === 0) return NOTHING;
          const entries = messages.flatMap((m, i) =>
            m.ReceiptHandle ? [{ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle }] : [],
          );
          return {
            bodies: messages.map((m) => m.Body ?? ''),
            async ack() {
              const res = await sqs.deleteMessageBatch(url, entries);
              if (res.Failed.length > 0) throw new Error(`DeleteMessageBatch: ${res.Failed.length} failed`);
            },
          };
        },
        async close() {},
      };
    },
    async remove() {
      // Every run uses a fresh server (and Sluice a fresh data directory), stopped afterwards.
    },
  };
}

/** Durable Sluice also runs the SNS fan-out cases (issue 40 measures them on durable SQLite). */
export const sluicePeer = (
  name: string,
  bin?: string,
  nodeArgs: readonly string[] = [],
  mode: SluiceMode = 'durable',
): Peer => sqsPeer(name, () => startTarget(mode, bin, { nodeArgs }), mode === 'durable');
export const motoPeer = (): Peer => sqsPeer('moto', () => startTarget('moto'));
