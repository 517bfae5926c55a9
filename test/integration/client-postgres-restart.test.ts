import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import pg from 'pg';
import { migratePostgresOutbox, PostgresOutbox } from 'sluice-client/postgres';
import { PrivatePostgres } from '../../tools/private-postgres.ts';
import { eventually } from '../helpers/client-toolkit.ts';
import type { ToolkitEvent } from '../helpers/postgres-toolkit-child.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * The toolkit's PostgreSQL parts (the polling relay, the CDC relay, the idempotency store) in a process of
 * their own, on a PostgreSQL of the test's own that it restarts, stops and starts, and whose sessions it ends:
 * the process must outlive each, the parts must report the failures to their hooks and callers, and publish and
 * claim again once the database is back. The application's pool has no 'error' listener, as in the docs.
 */
const DATABASE = 'toolkit';
/** Generous: how long a relay may take to publish once the database is back, on a loaded machine. */
const DEADLINE_MS = 60_000;

describe('the toolkit on a PostgreSQL that restarts', { concurrency: false }, () => {
  let postgres: PrivatePostgres;
  let pool: pg.Pool;
  let sqsServer: RunningServer;
  let sqs: SQSClient;
  let queueUrl: string;
  let child: ChildProcess;
  let output = '';
  let errors = '';
  const events: ToolkitEvent[] = [];

  before(async () => {
    postgres = await PrivatePostgres.start([
      'wal_level=logical',
      'max_replication_slots=4',
      'max_wal_senders=4',
    ]);
    await postgres.query('postgres', `CREATE DATABASE ${DATABASE}`);
    pool = new pg.Pool({ ...postgres.connection(DATABASE), max: 2 });
    // The test's own pool: each disruption ends its idle connections too.
    pool.on('error', () => {});
    await migratePostgresOutbox(pool, 'polled_outbox');
    await migratePostgresOutbox(pool, 'cdc_outbox');
    sqsServer = await startServer({ inMemory: true, args: ['--log-level', 'error'] });
    sqs = sqsClient(sqsServer.endpoint);
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'published' }))).QueueUrl!;
    child = spawn(
      process.execPath,
      [
        '--conditions=sluice-source',
        '--import',
        import.meta.resolve('tsx'),
        new URL('../helpers/postgres-toolkit-child.ts', import.meta.url).pathname,
      ],
      {
        env: {
          ...process.env,
          TOOLKIT_PG: postgres.url(DATABASE),
          TOOLKIT_SQS: sqsServer.endpoint,
          TOOLKIT_QUEUE: queueUrl,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) if (line.startsWith('{')) events.push(JSON.parse(line) as ToolkitEvent);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      errors += chunk;
    });
    await eventually(
      () => output.includes('ready\n') || child.exitCode !== null,
      'the toolkit process',
      DEADLINE_MS,
    );
    // Under way: its pool holds connections, idle between its calls, when the first disruption comes.
    await reported(0, 'a first idempotent call', (e) => e.component === 'idempotent' && e.ok);
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await exited;
    }
    sqs?.destroy();
    if (sqsServer) {
      await sqsServer.stop();
      removeDataDir(sqsServer.dataDir);
    }
    await pool?.end().catch(() => {});
    await postgres?.remove();
  });

  function assertRunning(): void {
    // The start of its error output says why (node-postgres's errors print their whole client after).
    assert.equal(child.exitCode, null, `the toolkit process exited:\n${errors.slice(0, 2000)}`);
    assert.equal(child.signalCode, null, `the toolkit process was killed:\n${errors.slice(0, 2000)}`);
  }

  /** Records one outbox row in a transaction of its own (a client of its own: the database just came back). */
  async function addRow(table: string, body: string): Promise<void> {
    const tx = new pg.Client(postgres.connection(DATABASE));
    await tx.connect();
    try {
      await tx.query('BEGIN');
      await new PostgresOutbox({ pool, table }).add(tx, { queue: queueUrl, body });
      await tx.query('COMMIT');
    } finally {
      await tx.end();
    }
  }

  /** Receives (and deletes) until every body has arrived. */
  async function published(bodies: readonly string[]): Promise<void> {
    const missing = new Set(bodies);
    const deadline = Date.now() + DEADLINE_MS;
    while (missing.size > 0) {
      assertRunning();
      assert.ok(Date.now() < deadline, `not published within ${DEADLINE_MS} ms: ${[...missing].join(', ')}`);
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      for (const message of Messages) {
        missing.delete(message.Body!);
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle! }),
        );
      }
    }
  }

  /** Waits until the events since `from` include one that `matches`. */
  async function reported(from: number, what: string, matches: (event: ToolkitEvent) => boolean) {
    await eventually(
      () => {
        assertRunning();
        return events.slice(from).some(matches);
      },
      what,
      DEADLINE_MS,
    );
  }

  const disruptions: ReadonlyArray<readonly [string, (from: number) => Promise<void>]> = [
    ['its sessions ended', async () => void (await postgres.terminateBackends(DATABASE))],
    ['a fast restart', () => postgres.restart('fast')],
    ['an immediate restart', () => postgres.restart('immediate')],
    [
      'a stop and a start',
      async (from) => {
        await postgres.stopServer('fast');
        // While the database is away each part says so to its hook or its caller, and keeps running.
        await reported(from, 'the polled relay to report an error', (e) => e.component === 'polled relay');
        await reported(from, 'the CDC relay to report an error', (e) => e.component === 'cdc relay');
        await reported(from, 'an idempotent call to fail', (e) => e.component === 'idempotent' && !e.ok);
        await reported(
          from,
          "the application's transaction to fail",
          (e) => e.component === 'application' && !e.ok,
        );
        await postgres.startServer();
      },
    ],
  ];

  for (const [name, disrupt] of disruptions) {
    test(`outlives ${name}, and publishes and claims again`, async () => {
      const from = events.length;
      await disrupt(from);
      assertRunning();
      await addRow('polled_outbox', `polled after ${name}`);
      await addRow('cdc_outbox', `cdc after ${name}`);
      await published([`polled after ${name}`, `cdc after ${name}`]);
      const back = events.length;
      await reported(back, 'an idempotent call to succeed', (e) => e.component === 'idempotent' && e.ok);
      await reported(
        back,
        "the application's transaction to commit",
        (e) => e.component === 'application' && e.ok,
      );
      assertRunning();
    });
  }
});
