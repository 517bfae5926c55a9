import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateQueueCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
  SQSServiceException,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import pg from 'pg';
import { MIGRATION_LOCK } from '../../packages/server/src/store/postgres/connection.ts';
import { freshDatabase } from '../../tools/postgres.ts';
import {
  NEEDS_OWN_SERVER,
  type RunningServer,
  removeDataDir,
  SLUICE_CLI,
  startServer,
} from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * A connection that PostgreSQL ends (a restart, a failover, pg_terminate_backend) while Sluice holds it out
 * of its pool, in a statement or between two statements of a transaction, must fail that one operation
 * (503 for a request, a logged error for a background job), never end the process. Each test holds a lock
 * the server's statement waits for, so the statement is caught at a known point, and ends its session there.
 * "Between statements" stops the server's process (SIGSTOP) while its statement finishes and its session is
 * ended, so that the statement's answer and the end of the connection reach it together, as they do when a
 * restart comes between two statements.
 */
let database: Awaited<ReturnType<typeof freshDatabase>>;
let server: RunningServer;
let sqs: SQSClient;
/** The test's own session, which takes the locks and ends the server's sessions. */
let db: pg.Client;
/**
 * A second session that watches the server's: pg_stat_activity is read once per transaction, so the session
 * holding the lock in a transaction would see the same rows at every look.
 */
let watcher: pg.Client;

const ACCOUNT = '000000000000';
const arn = (name: string) => `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}`;
const url = (name: string) => `${server.endpoint}/${ACCOUNT}/${name}`;
const UNREACHABLE = 'The server cannot reach its database.';
/** Generous: only how long the server and the database take to get to the expected state. */
const DEADLINE_MS = 30_000;

before(async () => {
  database = await freshDatabase();
  server = await startServer({ args: ['--store', database.url, '--log-level', 'error'] });
  sqs = sqsClient(server.endpoint);
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
  watcher = new pg.Client({ connectionString: database.url });
  await watcher.connect();
});

after(async () => {
  sqs?.destroy();
  await db?.end();
  await watcher?.end();
  if (server) {
    await server.stop();
    removeDataDir(server.dataDir);
  }
  await database?.drop();
});

/** Polls `probe` until it gives a value; fails after DEADLINE_MS naming what it waited for. */
async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    assertRunning();
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`waited ${DEADLINE_MS} ms for ${what}`);
    await sleep(20);
  }
}

/** The server's sessions on the test database that wait for a lock. */
async function waitingForLock(): Promise<number[] | undefined> {
  const { rows } = await watcher.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
  );
  return rows.length > 0 ? rows.map((row) => row.pid) : undefined;
}

/** Ends the sessions and waits until they are gone. */
async function terminate(pids: readonly number[]): Promise<void> {
  for (const pid of pids) await db.query('SELECT pg_terminate_backend($1, $2)', [pid, DEADLINE_MS]);
}

type Moment = 'in a statement' | 'between statements';

/**
 * Takes `locks` in a transaction of the test's, then calls `trigger` (a request; a background job needs
 * none), waits for a statement of the server to wait for the locks, and ends that statement's session at
 * `moment`; releases the locks.
 */
async function endSessionWhileHeld(
  locks: readonly string[],
  moment: Moment,
  trigger = () => {},
): Promise<void> {
  await db.query('BEGIN');
  let held = true;
  const release = async () => {
    if (held) await db.query('COMMIT');
    held = false;
  };
  try {
    for (const lock of locks) await db.query(lock);
    trigger();
    const pids = await until('a statement of the server waiting for the lock', waitingForLock);
    if (moment === 'in a statement') {
      await terminate(pids);
      return;
    }
    const serverPid = server.process.pid!;
    process.kill(serverPid, 'SIGSTOP');
    try {
      // The statement takes the lock and finishes; its answer waits in the stopped server's socket.
      await release();
      await until('the statement to finish', async () => {
        const { rows } = await watcher.query<{ state: string }>(
          'SELECT state FROM pg_stat_activity WHERE pid = ANY($1)',
          [pids],
        );
        return rows.every((row) => row.state !== 'active') ? true : undefined;
      });
      await terminate(pids);
    } finally {
      process.kill(serverPid, 'SIGCONT');
    }
  } finally {
    await release();
  }
}

/** The request's answer: 'ok', or the status and message of its refusal. */
async function outcome(request: Promise<unknown>): Promise<string> {
  try {
    await request;
    return 'ok';
  } catch (error) {
    if (error instanceof SQSServiceException) return `${error.$metadata.httpStatusCode} ${error.message}`;
    throw error;
  }
}

function assertRunning(): void {
  assert.equal(server.process.exitCode, null, `the server exited:\n${server.output().slice(-3000)}`);
  assert.equal(server.process.signalCode, null, `the server was killed:\n${server.output().slice(-3000)}`);
}

const fifoSend = (body: string) =>
  sqs.send(
    new SendMessageCommand({
      QueueUrl: url('held.fifo'),
      MessageBody: body,
      MessageGroupId: 'g',
      MessageDeduplicationId: body.replaceAll(' ', '-'),
    }),
  );

for (const moment of ['in a statement', 'between statements'] as const) {
  test(`a request's transaction whose session is ended ${moment} answers 503, and the next one succeeds`, {
    skip: NEEDS_OWN_SERVER,
  }, async () => {
    await sqs.send(new CreateQueueCommand({ QueueName: 'held.fifo', Attributes: { FifoQueue: 'true' } }));
    await fifoSend(`first ${moment}`);
    // A FIFO send locks its group's row inside its transaction, after its deduplication statements.
    let sending: Promise<string> | undefined;
    await endSessionWhileHeld(["SELECT 1 FROM fifo_groups WHERE group_id = 'g' FOR UPDATE"], moment, () => {
      sending = outcome(fifoSend(`held ${moment}`));
    });
    assert.equal(await sending, `503 ${UNREACHABLE}`);
    assertRunning();
    assert.equal(await outcome(fifoSend(`after ${moment}`)), 'ok');
  });
}

test('the cluster lease whose session is ended as its renewal answers keeps being renewed', {
  skip: NEEDS_OWN_SERVER,
}, async () => {
  const expiry = async () =>
    (
      await db.query<{ expires_at: number }>(
        "SELECT expires_at::float8 FROM leases WHERE name = 'singletons'",
      )
    ).rows[0]?.expires_at;
  // The renewal, every 2 s, is one statement on a connection out of the pool.
  await endSessionWhileHeld(
    ["SELECT 1 FROM leases WHERE name = 'singletons' FOR UPDATE"],
    'between statements',
  );
  const endedAt = await expiry();
  assertRunning();
  await until('a renewal after the ended session', async () => {
    const expiresAt = await expiry();
    return expiresAt !== undefined && endedAt !== undefined && expiresAt > endedAt ? true : undefined;
  });
  assertRunning();
});

test("a move task whose batch's session is ended goes on, and moves each message once", {
  skip: NEEDS_OWN_SERVER,
}, async () => {
  const messages = 6;
  await sqs.send(new CreateQueueCommand({ QueueName: 'move-dlq' }));
  await sqs.send(new CreateQueueCommand({ QueueName: 'move-target' }));
  await sqs.send(
    new CreateQueueCommand({
      QueueName: 'move-src',
      Attributes: {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('move-dlq'), maxReceiveCount: 1 }),
      },
    }),
  );
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: url('move-dlq'),
      Entries: Array.from({ length: messages }, (_, i) => ({ Id: `m${i}`, MessageBody: `m${i}` })),
    }),
  );
  await sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: arn('move-dlq'),
      DestinationArn: arn('move-target'),
      MaxNumberOfMessagesPerSecond: 1,
    }),
  );
  const task = async () =>
    (await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn('move-dlq') }))).Results?.[0];
  await until('a first message moved', async () =>
    ((await task())?.ApproximateNumberOfMessagesMoved ?? 0) > 0 ? true : undefined,
  );
  // Each batch locks its task's row first; EXCLUSIVE still lets plain reads of the table through.
  await endSessionWhileHeld(['LOCK TABLE move_tasks IN EXCLUSIVE MODE'], 'in a statement');
  assertRunning();
  const done = await until('the task to complete', async () => {
    const current = await task();
    return current?.Status === 'COMPLETED' ? current : undefined;
  });
  assert.equal(done.ApproximateNumberOfMessagesMoved, messages);
  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url('move-target'),
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 60,
      }),
    );
    if (Messages.length === 0) break;
    bodies.push(...Messages.map((message) => message.Body!));
  }
  assert.deepEqual(
    bodies.sort(),
    Array.from({ length: messages }, (_, i) => `m${i}`),
  );
  assertRunning();
});

test('the LISTEN session, ended, is opened again', { skip: NEEDS_OWN_SERVER }, async () => {
  const listening = async () =>
    (
      await db.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'",
      )
    ).rows[0]?.pid;
  const first = await until('the LISTEN session', listening);
  await terminate([first]);
  const second = await until('a new LISTEN session', async () => {
    const pid = await listening();
    return pid !== undefined && pid !== first ? pid : undefined;
  });
  assert.notEqual(second, first);
  assertRunning();
});

test('a migration at start whose session is ended stops the start with the database error, not a crash', {
  skip: NEEDS_OWN_SERVER,
}, async () => {
  const fresh = await freshDatabase();
  const holder = new pg.Client({ connectionString: fresh.url });
  await holder.connect();
  try {
    // The migration waits for this lock (nodes starting together take turns).
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const child = spawn(process.execPath, [...SLUICE_CLI, 'serve', '--port', '0', '--store', fresh.url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const pids = await until('the migration to wait for its lock', async () => {
      const { rows } = await holder.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      );
      return rows.length > 0 ? rows.map((row) => row.pid) : undefined;
    });
    for (const pid of pids) await holder.query('SELECT pg_terminate_backend($1, $2)', [pid, DEADLINE_MS]);
    assert.equal(await exited, 2, output);
    assert.match(output, / FATAL cannot start: terminating connection due to administrator command/);
    assert.doesNotMatch(output, /Unhandled 'error' event/);
  } finally {
    await holder.end();
    await fresh.drop();
  }
});
