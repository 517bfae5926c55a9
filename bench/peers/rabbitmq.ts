/**
 * RabbitMQ (already running, guest/guest on 127.0.0.1:5672) over amqplib: a durable quorum queue,
 * persistent messages, publisher confirms (a batch counts once every message of it is confirmed), and
 * manual acks with a per-consumer prefetch; each delivery is acked with one `multiple` ack.
 */
import { execFileSync } from 'node:child_process';
import amqp, { type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib';
import { Inbox } from './inbox.ts';
import { NOTHING, type Peer, type PeerConsumer, type PeerQueue } from './peer.ts';

const URL = 'amqp://guest:guest@127.0.0.1:5672';
/** Unacked messages a consumer may hold: a few receives of 10 ahead, like SQS's batches in flight. */
export const RABBIT_PREFETCH = 50;

/** PIDs of a named process (pidof); empty when it is not running here. */
export function pidsOf(program: string): number[] {
  try {
    return execFileSync('pidof', [program], { encoding: 'utf8', timeout: 5_000 })
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

export function rabbitPeer(): Peer {
  let connection: ChannelModel | null = null;
  let publisher: ConfirmChannel | null = null;
  const open = (): { connection: ChannelModel; publisher: ConfirmChannel } => {
    if (!connection || !publisher) throw new Error('rabbitmq is not started');
    return { connection, publisher };
  };
  return {
    name: 'rabbitmq',
    maxBatch: 10,
    async start() {
      connection = await amqp.connect(URL);
      publisher = await connection.createConfirmChannel();
    },
    serverPids: () => pidsOf('beam.smp'),
    async queue(name): Promise<PeerQueue> {
      const { connection, publisher } = open();
      await publisher.assertQueue(name, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      return {
        send(bodies) {
          return Promise.all(
            bodies.map(
              (body) =>
                new Promise<void>((resolve, reject) => {
                  publisher.sendToQueue(name, Buffer.from(body), { persistent: true }, (err) =>
                    err ? reject(err) : resolve(),
                  );
                }),
            ),
          ).then(() => {});
        },
        async consumer(): Promise<PeerConsumer> {
          const channel = await connection.createChannel();
          await channel.prefetch(RABBIT_PREFETCH);
          const inbox = new Inbox<ConsumeMessage>();
          await channel.consume(name, (m) => m && inbox.push(m), { noAck: false });
          return {
            async next(max, waitMs) {
              const messages = await inbox.take(max, waitMs);
              const last = messages[messages.length - 1];
              if (!last) return NOTHING;
              return {
                bodies: messages.map((m) => m.content.toString()),
                // Deliveries are taken in order, so one multiple-ack covers exactly these.
                ack: async () => channel.ack(last, true),
              };
            },
            async close() {
              await channel.close();
            },
          };
        },
        async remove() {
          await publisher.deleteQueue(name);
        },
      };
    },
    async stop() {
      await connection?.close();
      connection = null;
      publisher = null;
    },
  };
}
