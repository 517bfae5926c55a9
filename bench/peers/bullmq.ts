/**
 * BullMQ 5 on the local Redis (127.0.0.1:6379). Batches go in with addBulk (removeOnComplete, so
 * finished jobs do not pile up in Redis); each consumer is a Worker in manual mode: getNextJob() (a
 * blocking pop, so an idle consumer wakes on a push) and moveToCompleted() per job.
 */
import { randomUUID } from 'node:crypto';
import { type Job, Queue, Worker } from 'bullmq';
import { NOTHING, type Peer, type PeerConsumer, type PeerQueue } from './peer.ts';

const CONNECTION = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null };

interface Body {
  b: string;
}

export function bullPeer(): Peer {
  let serverPid: number | null = null;
  const queues: Queue<Body>[] = [];
  return {
    name: 'bullmq',
    maxBatch: 10,
    async start() {
      const probe = new Queue<Body>('sluice-bench-probe', { connection: CONNECTION });
      try {
        const client = await probe.client;
        const info = await client.info();
        serverPid = Number(/process_id:(\d+)/.exec(info)?.[1] ?? Number.NaN);
      } finally {
        await probe.close();
      }
    },
    serverPids: () => (serverPid && Number.isFinite(serverPid) ? [serverPid] : []),
    async queue(name): Promise<PeerQueue> {
      const queue = new Queue<Body>(name, { connection: CONNECTION });
      queues.push(queue);
      return {
        async send(bodies) {
          await queue.addBulk(
            bodies.map((body) => ({ name: 'm', data: { b: body }, opts: { removeOnComplete: true } })),
          );
        },
        async consumer(): Promise<PeerConsumer> {
          const worker = new Worker<Body>(name, null, {
            connection: CONNECTION,
            autorun: false,
            lockDuration: 120_000,
          });
          const token = randomUUID();
          return {
            async next(max, waitMs) {
              worker.opts.drainDelay = Math.max(1, Math.ceil(waitMs / 1000));
              const jobs: Job<Body>[] = [];
              // The first call after a job (or after start) does not block; blocking starts once drained.
              const deadline = Date.now() + waitMs;
              let first = await worker.getNextJob(token, { block: true });
              while (!first && Date.now() < deadline) first = await worker.getNextJob(token, { block: true });
              if (!first) return NOTHING;
              jobs.push(first);
              while (jobs.length < max) {
                const more = await worker.getNextJob(token, { block: false });
                if (!more) break;
                jobs.push(more);
              }
              return {
                bodies: jobs.map((j) => j.data.b),
                ack: async () => {
                  await Promise.all(jobs.map((j) => j.moveToCompleted('ok', token, false)));
                },
              };
            },
            async close() {
              await worker.close(true);
            },
          };
        },
        async remove() {
          await queue.obliterate({ force: true });
        },
      };
    },
    async stop() {
      await Promise.allSettled(queues.map((q) => q.close()));
      queues.length = 0;
    },
  };
}
