/**
 * Commit-to-publish latency of the transactional outbox: the polling relay against the CDC relay, on one
 * PostgreSQL with wal_level=logical (a throwaway instance when the shared server is not) and one Sluice,
 * both on 127.0.0.1, in the same run. "Published" is when SendMessageBatch returned for the row.
 *
 *   npm run bench:outbox -- [--commits 200] [--poll-ms 100]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startSluice } from 'sluice';
import { OutboxRelay, type OutboxRelayHooks, type OutboxRow } from 'sluice-client';
import { migratePostgresOutbox, PostgresCdcRelay, PostgresOutbox } from 'sluice-client/postgres';
import { commandFlags, positive } from '../tools/flags.ts';
import { logicalPostgres } from '../tools/logical-postgres.ts';
import { now, round, sleep, summarize } from './stats.ts';

const USAGE = `usage: npm run bench:outbox -- [flags]
  --commits N          single-message transactions per relay (default 200)
  --poll-ms MS         the polling relay's interval (default 100)
  --help               this text`;
const { commits, pollMs } = commandFlags(
  USAGE,
  { commits: { type: 'string' }, 'poll-ms': { type: 'string' } },
  (values) => ({
    commits: positive('commits', values.commits, 200),
    pollMs: positive('poll-ms', values['poll-ms'], 100),
  }),
);

const dataDir = mkdtempSync(join(tmpdir(), 'sluice-outbox-bench-'));
const sluice = await startSluice({ port: 0, dataDir, logLevel: 'silent' });
const client = new SQSClient({
  endpoint: sluice.endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  maxAttempts: 1,
});
const db = await logicalPostgres('sluice_outbox_bench');

interface Relay {
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

/** Commits `commits` single-message transactions at random gaps (0-20 ms) and times each to its publish. */
async function measure(name: string, makeRelay: (outbox: PostgresOutbox, hooks: OutboxRelayHooks) => Relay) {
  const table = `outbox_${name}`;
  await migratePostgresOutbox(db.pool, table);
  const outbox = new PostgresOutbox({ pool: db.pool, table });
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  const relay = makeRelay(outbox, {
    published(rows: readonly OutboxRow[]) {
      const at = now();
      for (const row of rows) latencies.push(at - committedAt.get(row.id)!);
    },
  });
  await relay.start();
  await client.send(new CreateQueueCommand({ QueueName: name }));
  for (let i = 0; i < commits; i++) {
    const tx = await db.pool.connect();
    await tx.query('BEGIN');
    const id = await outbox.add(tx, { queue: name, body: `commit ${i}` });
    await tx.query('COMMIT');
    committedAt.set(id, now());
    tx.release();
    await sleep(Math.random() * 20);
  }
  const until = now() + 10_000;
  while (latencies.length < commits && now() < until) await sleep(5);
  await relay.stop();
  return summarize(latencies);
}

const polling = await measure(
  'polling',
  (outbox, hooks) => new OutboxRelay({ outbox, client, pollIntervalMs: pollMs, hooks }),
);
const cdc = await measure(
  'cdc',
  (outbox, hooks) =>
    new PostgresCdcRelay({ outbox, client, connection: db.connection, hooks, slotName: 'bench_slot' }),
);
await new PostgresCdcRelay({
  outbox: new PostgresOutbox({ pool: db.pool, table: 'outbox_cdc' }),
  client,
  connection: db.connection,
  slotName: 'bench_slot',
}).dropSlot();

const result = {
  commits,
  pollIntervalMs: pollMs,
  postgres: db.kind,
  pollingMs: polling && { p50: round(polling.p50), p99: round(polling.p99), count: polling.count },
  cdcMs: cdc && { p50: round(cdc.p50), p99: round(cdc.p99), count: cdc.count },
  pollingOverCdc: polling &&
    cdc && { p50: round(polling.p50 / cdc.p50, 1), p99: round(polling.p99 / cdc.p99, 1) },
};
console.log(JSON.stringify(result, null, 2));
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/outbox-latency.json', `${JSON.stringify(result, null, 2)}\n`);

client.destroy();
await db.close();
await sluice.close();
rmSync(dataDir, { recursive: true, force: true });
