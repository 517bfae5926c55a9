/**
 * pg-boss 10 on the local PostgreSQL (user postgres, 127.0.0.1:5432), in its own fresh database that is
 * dropped afterwards. Batches go in with insert(); consumers fetch({ batchSize }) and complete() the ids.
 * pg-boss has no long poll: an empty fetch waits its minimum polling interval (0.5 s) and tries again,
 * as its own work() loop does.
 */
import pg from 'pg';
import PgBoss from 'pg-boss';
import { sleep } from '../stats.ts';
import { NOTHING, type Peer, type PeerConsumer, type PeerQueue } from './peer.ts';
import { pidsOf } from './rabbitmq.ts';

const ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';
export const PGBOSS_POLL_MS = 500;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

interface Body {
  b: string;
}

export function pgBossPeer(): Peer {
  const database = `sluice_bench_pgboss_${process.pid}_${Date.now()}`;
  let boss: PgBoss | null = null;
  const open = (): PgBoss => {
    if (!boss) throw new Error('pg-boss is not started');
    return boss;
  };
  return {
    name: 'pg-boss',
    maxBatch: 10,
    async start() {
      await admin(`CREATE DATABASE ${database}`);
      boss = new PgBoss({
        connectionString: `postgres://postgres@127.0.0.1:5432/${database}`,
        max: 20,
        supervise: false,
        schedule: false,
      });
      boss.on('error', () => {});
      await boss.start();
    },
    serverPids: () => pidsOf('postgres'),
    async queue(name): Promise<PeerQueue> {
      const b = open();
      await b.createQueue(name);
      return {
        async send(bodies) {
          await b.insert(bodies.map((body) => ({ name, data: { b: body } })));
        },
        async consumer(): Promise<PeerConsumer> {
          return {
            async next(max, waitMs) {
              const deadline = Date.now() + waitMs;
              for (;;) {
                const jobs = await b.fetch<Body>(name, { batchSize: max });
                if (jobs.length > 0) {
                  return {
                    bodies: jobs.map((j) => j.data.b),
                    ack: () =>
                      b.complete(
                        name,
                        jobs.map((j) => j.id),
                      ),
                  };
                }
                if (Date.now() >= deadline) return NOTHING;
                await sleep(Math.min(PGBOSS_POLL_MS, Math.max(0, deadline - Date.now())));
              }
            },
            async close() {},
          };
        },
        async remove() {
          await b.deleteQueue(name);
        },
      };
    },
    async stop() {
      await boss?.stop({ graceful: false, wait: true });
      boss = null;
      await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}
