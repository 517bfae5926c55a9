/**
 * A process that uses the toolkit's PostgreSQL parts as an application would, for tests that restart the
 * database under it: a polling OutboxRelay on the table `polled_outbox`, a PostgresCdcRelay on `cdc_outbox`,
 * an idempotent handler on a PostgresIdempotencyStore, and the application's own transactions, which hold a
 * client of the pool while they add to the outbox, all on one pool that, as in the docs, has no 'error'
 * listener of the application's. Each relay error and the outcome of each idempotent call and transaction is
 * printed as a JSON line; the test reads them.
 *
 * Environment: TOOLKIT_PG (a postgres:// URL), TOOLKIT_SQS (the SQS endpoint), TOOLKIT_QUEUE (a queue URL).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { idempotent, OutboxRelay } from 'sluice-client';
import { PostgresCdcRelay, PostgresIdempotencyStore, PostgresOutbox } from 'sluice-client/postgres';
import { sqsClient } from './sqs-client.ts';

export type ToolkitEvent =
  | { component: 'polled relay' | 'cdc relay'; error: string }
  | { component: 'idempotent' | 'application'; ok: boolean; error?: string };

const report = (event: ToolkitEvent) => process.stdout.write(`${JSON.stringify(event)}\n`);
const connectionString = process.env.TOOLKIT_PG!;
const client = sqsClient(process.env.TOOLKIT_SQS!);
const pool = new pg.Pool({ connectionString, max: 4 });

const polledOutbox = new PostgresOutbox({ pool, table: 'polled_outbox' });
const polled = new OutboxRelay({
  outbox: polledOutbox,
  client,
  pollIntervalMs: 100,
  hooks: { error: (error) => report({ component: 'polled relay', error: String(error) }) },
});
const cdc = new PostgresCdcRelay({
  outbox: new PostgresOutbox({ pool, table: 'cdc_outbox' }),
  client,
  connection: connectionString,
  reconnectMs: 100,
  // Long, so that what the relay publishes after a restart comes through the slot it reopened, not the catch-up.
  catchUpIntervalMs: 3_600_000,
  hooks: { error: (error) => report({ component: 'cdc relay', error: String(error) }) },
});
let calls = 0;
const handler = idempotent(async (n: number) => n, {
  store: new PostgresIdempotencyStore(pool),
  key: (n) => `call-${n}`,
});

/** The application's transaction: a client held out of the pool while it works between two statements. */
async function applicationTransaction(n: number): Promise<void> {
  const tx = await pool.connect();
  try {
    await tx.query('BEGIN');
    await polledOutbox.add(tx, { queue: process.env.TOOLKIT_QUEUE!, body: `application ${n}` });
    await sleep(200);
    await tx.query('COMMIT');
    tx.release();
  } catch (error) {
    tx.release(true);
    throw error;
  }
}

const outcome = (component: 'idempotent' | 'application', call: Promise<unknown>) =>
  call.then(
    () => report({ component, ok: true }),
    (error: unknown) => report({ component, ok: false, error: String(error) }),
  );

polled.start();
await cdc.start();
setInterval(() => void outcome('idempotent', handler(++calls)), 100);
process.stdout.write('ready\n');
for (let n = 1; ; n++) {
  await outcome('application', applicationTransaction(n));
  await sleep(20);
}
