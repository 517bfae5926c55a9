/**
 * A process that uses the toolkit's PostgreSQL parts as an application would, for tests that restart the
 * database under it: a polling OutboxRelay on the table `polled_outbox`, a PostgresCdcRelay on `cdc_outbox`,
 * and an idempotent handler on a PostgresIdempotencyStore, all on one pool that, as in the docs, has no
 * 'error' listener of the application's. Each relay error and each idempotent call's outcome is printed as a
 * JSON line; the test reads them.
 *
 * Environment: TOOLKIT_PG (a postgres:// URL), TOOLKIT_SQS (the SQS endpoint).
 */
import pg from 'pg';
import { idempotent, OutboxRelay } from 'sluice-client';
import { PostgresCdcRelay, PostgresIdempotencyStore, PostgresOutbox } from 'sluice-client/postgres';
import { sqsClient } from './sqs-client.ts';

export type ToolkitEvent =
  | { component: 'polled relay' | 'cdc relay'; error: string }
  | { component: 'idempotent'; ok: boolean; error?: string };

const report = (event: ToolkitEvent) => process.stdout.write(`${JSON.stringify(event)}\n`);
const connectionString = process.env.TOOLKIT_PG!;
const client = sqsClient(process.env.TOOLKIT_SQS!);
const pool = new pg.Pool({ connectionString, max: 4 });

const polled = new OutboxRelay({
  outbox: new PostgresOutbox({ pool, table: 'polled_outbox' }),
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

polled.start();
await cdc.start();
setInterval(() => {
  handler(++calls).then(
    () => report({ component: 'idempotent', ok: true }),
    (error: unknown) => report({ component: 'idempotent', ok: false, error: String(error) }),
  );
}, 100);
process.stdout.write('ready\n');
