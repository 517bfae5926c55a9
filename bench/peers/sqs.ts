/**
 * One adapter for every SQS server (Sluice, moto_server, fauxqs): the bench's lean raw JSON client
 * (keep-alive agent, JSON 1.0 requests, SendMessageBatch / DeleteMessageBatch of 10), so the three are
 * driven by exactly the same client code and the client costs tens of microseconds per request.
 */
import type { QueueClient } from '../client.ts';
import { makeRawClient } from '../raw-client.ts';
import { type RunningTarget, type SluiceMode, startTarget } from '../targets.ts';
import { type Delivery, NOTHING, type Peer, type PeerConsumer, type PeerQueue } from './peer.ts';

const SOCKETS = 64;

export function sqsPeer(name: string, launch: () => Promise<RunningTarget>): Peer {
  let target: RunningTarget | null = null;
  let client: QueueClient | null = null;
  const connected = (): QueueClient => {
    if (!client) throw new Error(`${name} is not started`);
    return client;
  };
  return {
    name,
    maxBatch: 10,
    async start() {
      target = await launch();
      client = makeRawClient(target.endpoint, SOCKETS);
    },
    serverPids: () => (target ? [target.pid] : []),
    async queue(queueName) {
      const sqs = connected();
      const url = await sqs.createQueue(queueName, { VisibilityTimeout: '120' });
      return sqsQueue(sqs, url);
    },
    async stop() {
      client?.close();
      client = null;
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

export const sluicePeer = (
  name: string,
  bin?: string,
  nodeArgs: readonly string[] = [],
  mode: SluiceMode = 'durable',
): Peer => sqsPeer(name, () => startTarget(mode, bin, { nodeArgs }));
export const motoPeer = (): Peer => sqsPeer('moto', () => startTarget('moto'));
