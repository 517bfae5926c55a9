/**
 * NATS JetStream (already running on 127.0.0.1:4222): a file-backed stream with work-queue retention
 * and one durable pull consumer with explicit acks, shared by all bench consumers; each bench consumer
 * runs its own `consume()` (a pull loop with a bounded buffer). A publish counts once its PubAck is back.
 */
import { AckPolicy, connect, type JsMsg, type NatsConnection, RetentionPolicy, StorageType } from 'nats';
import { Inbox } from './inbox.ts';
import { NOTHING, type Peer, type PeerConsumer, type PeerQueue } from './peer.ts';
import { pidsOf } from './rabbitmq.ts';

/** Messages one consumer pulls ahead, like RabbitMQ's prefetch. */
const PULL_AHEAD = 50;

export function natsPeer(): Peer {
  let nc: NatsConnection | null = null;
  const open = (): NatsConnection => {
    if (!nc) throw new Error('nats is not started');
    return nc;
  };
  return {
    name: 'nats',
    maxBatch: 10,
    async start() {
      nc = await connect({ servers: '127.0.0.1:4222' });
      await nc.jetstreamManager(); // fails here when JetStream is not enabled
    },
    serverPids: () => pidsOf('nats-server'),
    async queue(name): Promise<PeerQueue> {
      const conn = open();
      const jsm = await conn.jetstreamManager();
      const subject = `bench.${name}`;
      await jsm.streams.add({
        name,
        subjects: [subject],
        storage: StorageType.File,
        retention: RetentionPolicy.Workqueue,
      });
      await jsm.consumers.add(name, {
        durable_name: 'work',
        ack_policy: AckPolicy.Explicit,
        ack_wait: 120_000_000_000, // ns; as the SQS queues' 120 s visibility timeout
        max_ack_pending: -1,
      });
      const js = conn.jetstream();
      return {
        async send(bodies) {
          await Promise.all(bodies.map((body) => js.publish(subject, body)));
        },
        async consumer(): Promise<PeerConsumer> {
          const inbox = new Inbox<JsMsg>();
          const messages = await (await js.consumers.get(name, 'work')).consume({
            max_messages: PULL_AHEAD,
          });
          const pump = (async () => {
            for await (const m of messages) inbox.push(m);
          })();
          return {
            async next(max, waitMs) {
              const got = await inbox.take(max, waitMs);
              if (got.length === 0) return NOTHING;
              return {
                bodies: got.map((m) => m.string()),
                ack: async () => {
                  for (const m of got) m.ack();
                },
              };
            },
            async close() {
              await messages.close();
              await pump;
            },
          };
        },
        async remove() {
          await jsm.streams.delete(name);
        },
      };
    },
    async stop() {
      await nc?.drain();
      nc = null;
    },
  };
}
