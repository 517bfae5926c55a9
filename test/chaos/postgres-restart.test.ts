import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { PrivatePostgres, type ShutdownMode } from '../../tools/private-postgres.ts';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * `sluice serve --store postgres://...` under a light load of SDK sends, receives and deletes, on a PostgreSQL
 * of the test's own that the test restarts (fast and immediate), stops for a while and starts again, and whose
 * sessions it ends with pg_terminate_backend, over and over. The server must never exit; while the database is
 * away it answers 503 "The server cannot reach its database." (never another status, never a hang); it answers
 * normally again within seconds of the database being back; and every send it acknowledged is received.
 *
 * A cycle ends the sessions 5 times, restarts twice (fast, immediate) and stops twice (fast, immediate).
 * `npm test` runs 1 cycle with stops of 4 s (about 20 s): every kind of interruption once, as a second cycle
 * only repeated them (it ran 2 until the suite's wall time was cut); `npm run test:chaos:postgres`
 * (SLUICE_PG_CHAOS=long) runs 5 cycles with stops of a minute. SLUICE_PG_CHAOS_CYCLES and
 * SLUICE_PG_CHAOS_STOP_SECONDS set either.
 */
const LONG = process.env.SLUICE_PG_CHAOS === 'long';
const CYCLES = Number(process.env.SLUICE_PG_CHAOS_CYCLES ?? (LONG ? 5 : 1));
const STOP_MS = Number(process.env.SLUICE_PG_CHAOS_STOP_SECONDS ?? (LONG ? 60 : 4)) * 1000;
const UNREACHABLE = 'The server cannot reach its database.';
/** How soon after the database is back the server must answer normally: "within seconds", generously. */
const RECOVERY_MS = 10_000;
/** Longer than any answer can take but a hang: an outage answers at once, a long poll waits 1 s. */
const REQUEST_TIMEOUT_MS = 20_000;
/** Generous: how long the load may take to make progress, or to drain, on a loaded machine. */
const PROGRESS_DEADLINE_MS = 60_000;
/** Pause between a producer's sends: a light load. */
const SEND_PACE_MS = 40;

let postgres: PrivatePostgres;
let server: RunningServer;
let exited: string | undefined;

before(async () => {
  postgres = await PrivatePostgres.start();
  await postgres.query('postgres', 'CREATE DATABASE sluice');
  server = await startServer({ args: ['--store', postgres.url('sluice'), '--log-level', 'error'] });
  server.process.once('exit', (code, signal) => {
    exited = `exited (code ${code}, signal ${signal}):\n${server.output().slice(-4000)}`;
  });
});

after(async () => {
  // A failed run leaves the load running: end it, or this process never exits.
  producing = false;
  consuming = false;
  if (server) {
    if (!exited) await server.stop();
    removeDataDir(server.dataDir);
  }
  await postgres?.remove();
});

function assertRunning(): void {
  assert.equal(exited, undefined, `the server ${exited}`);
}

/** One SDK client per caller, one attempt each (every answer is seen), and a timeout that catches a hang. */
const client = () => sqsClient(server.endpoint, { requestHandler: { requestTimeout: REQUEST_TIMEOUT_MS } });

/** Every answer other than a 200, by status and message: only `503 UNREACHABLE` is expected. */
const refusals = new Map<string, number>();

/** Runs `request`; a refusal is counted, and undefined returned. */
async function attempt<T>(request: () => Promise<T>): Promise<T | undefined> {
  try {
    return await request();
  } catch (error) {
    const key =
      error instanceof SQSServiceException
        ? `${error.$metadata.httpStatusCode} ${error.message}`
        : `no answer: ${String(error)}`;
    refusals.set(key, (refusals.get(key) ?? 0) + 1);
    return undefined;
  }
}

interface Queue {
  url: string;
  fifo: boolean;
}

/** Bodies acknowledged by a 200 to SendMessage, and bodies received. */
const acknowledged = new Set<string>();
const received = new Set<string>();
/** Successful sends and receives per worker, so a step can wait for the load to move again. */
const progress = new Map<string, number>();
let producing = true;
let consuming = true;

async function produce(name: string, queue: Queue): Promise<void> {
  const sqs = client();
  for (let n = 0; producing; n++) {
    const body = `${name}-${n}`;
    const sent = await attempt(() =>
      sqs.send(
        new SendMessageCommand({
          QueueUrl: queue.url,
          MessageBody: body,
          ...(queue.fifo && { MessageGroupId: `g${n % 4}`, MessageDeduplicationId: body }),
        }),
      ),
    );
    if (sent) {
      acknowledged.add(body);
      progress.set(name, (progress.get(name) ?? 0) + 1);
    }
    await sleep(SEND_PACE_MS);
  }
  sqs.destroy();
}

async function consume(name: string, queue: Queue): Promise<void> {
  const sqs = client();
  while (consuming) {
    const answer = await attempt(() =>
      sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      ),
    );
    if (!answer) {
      await sleep(100);
      continue;
    }
    progress.set(name, (progress.get(name) ?? 0) + 1);
    const messages = answer.Messages ?? [];
    for (const message of messages) received.add(message.Body!);
    if (messages.length > 0)
      // A delete refused while the database is away leaves the message to come back after its visibility timeout.
      await attempt(() =>
        sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queue.url,
            Entries: messages.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle! })),
          }),
        ),
      );
  }
  sqs.destroy();
}

/** Waits until every worker has succeeded `steps` more times: the load runs normally again. */
async function loadMoves(steps: number): Promise<void> {
  const start = new Map(progress);
  const deadline = Date.now() + PROGRESS_DEADLINE_MS;
  for (;;) {
    assertRunning();
    const behind = [...start.keys()].filter((name) => progress.get(name)! < start.get(name)! + steps);
    if (behind.length === 0) return;
    assert.ok(Date.now() < deadline, `no progress within ${PROGRESS_DEADLINE_MS} ms: ${behind.join(', ')}`);
    await sleep(50);
  }
}

const probe = () => client();
let probes = 0;

/** Sends once, as a fresh client; the answer ('ok' or the refusal) and how long it took. */
async function probeOnce(queue: Queue): Promise<{ answer: string; ms: number }> {
  const sqs = probe();
  const body = `probe-${++probes}`;
  const started = Date.now();
  try {
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body }));
    acknowledged.add(body);
    return { answer: 'ok', ms: Date.now() - started };
  } catch (error) {
    const answer =
      error instanceof SQSServiceException
        ? `${error.$metadata.httpStatusCode} ${error.message}`
        : `no answer: ${String(error)}`;
    return { answer, ms: Date.now() - started };
  } finally {
    sqs.destroy();
  }
}

/** Probes until a send succeeds; returns how long that took from now. */
async function recovery(queue: Queue): Promise<number> {
  const start = Date.now();
  for (;;) {
    assertRunning();
    const { answer } = await probeOnce(queue);
    if (answer === 'ok') return Date.now() - start;
    assert.equal(answer, `503 ${UNREACHABLE}`, 'refused while the database comes back');
    assert.ok(
      Date.now() - start < RECOVERY_MS,
      `still refused ${RECOVERY_MS} ms after the database was back`,
    );
    await sleep(50);
  }
}

test('sluice serve on PostgreSQL outlives restarts, stops and ended sessions under load, and loses nothing', {
  skip: NEEDS_OWN_SERVER,
  timeout: 10 * 60_000 + CYCLES * (2 * STOP_MS + 5 * 60_000),
}, async () => {
  const sqs = probe();
  const create = async (name: string, fifo: boolean): Promise<Queue> => {
    const attributes = { VisibilityTimeout: '5', ...(fifo && { FifoQueue: 'true' }) };
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    return { url: QueueUrl!, fifo };
  };
  const standard = await create('chaos', false);
  const fifo = await create('chaos.fifo', true);
  sqs.destroy();
  const producers = [produce('standard-a', standard), produce('standard-b', standard), produce('fifo', fifo)];
  const consumers = [
    consume('receiver-a', standard),
    consume('receiver-b', standard),
    consume('fifo-receiver', fifo),
  ];
  await loadMoves(10);

  const survived = { restarts: 0, stops: 0, endedSessions: 0 };
  const recoveries: number[] = [];
  let outageProbes = 0;
  let slowestOutageAnswerMs = 0;
  const recovered = async () => {
    recoveries.push(await recovery(standard));
    await loadMoves(10);
  };
  const restart = async (mode: ShutdownMode) => {
    await postgres.restart(mode);
    survived.restarts++;
    await recovered();
  };
  const stop = async (mode: ShutdownMode) => {
    await postgres.stopServer(mode);
    const until = Date.now() + STOP_MS;
    do {
      assertRunning();
      const { answer, ms } = await probeOnce(standard);
      assert.equal(answer, `503 ${UNREACHABLE}`, 'the answer while the database is stopped');
      outageProbes++;
      slowestOutageAnswerMs = Math.max(slowestOutageAnswerMs, ms);
      await sleep(250);
    } while (Date.now() < until);
    await postgres.startServer();
    survived.stops++;
    await recovered();
  };
  const endSessions = async () => {
    survived.endedSessions += await postgres.terminateBackends('sluice');
    await recovered();
  };

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    for (let i = 0; i < 3; i++) await endSessions();
    await restart('fast');
    await endSessions();
    await restart('immediate');
    await stop('fast');
    await endSessions();
    await stop('immediate');
  }

  // The producers' last sends are answered before the drain starts, so none is acknowledged after it ends.
  producing = false;
  await Promise.all(producers);
  const drainDeadline = Date.now() + PROGRESS_DEADLINE_MS;
  while ([...acknowledged].some((body) => !received.has(body)) && Date.now() < drainDeadline) {
    assertRunning();
    await sleep(100);
  }
  consuming = false;
  await Promise.all(consumers);
  assertRunning();

  const lost = [...acknowledged].filter((body) => !received.has(body));
  const summary = {
    ...survived,
    acknowledgedSends: acknowledged.size,
    received: received.size,
    lost: lost.length,
    refusals: Object.fromEntries(refusals),
    outageProbes,
    slowestOutageAnswerMs,
    slowestRecoveryMs: Math.max(...recoveries),
  };
  console.log(`postgres chaos: ${JSON.stringify(summary)}`);
  // Where the database has them, if it does: what a loss needs looked into.
  const rows =
    lost.length === 0
      ? []
      : await postgres.query(
          'sluice',
          'SELECT queue_id, seq, body, receive_count, visible_at, expires_at FROM messages WHERE body = ANY($1)',
          [lost],
        );
  assert.deepEqual(
    lost.slice(0, 10),
    [],
    `${lost.length} acknowledged sends never received; stored: ${JSON.stringify(rows)}`,
  );
  // Every refusal the load met says the database is unreachable, as a 503.
  for (const key of refusals.keys()) assert.equal(key, `503 ${UNREACHABLE}`);
  assert.ok(survived.restarts === 2 * CYCLES && survived.stops === 2 * CYCLES);
  assert.ok(survived.endedSessions > 0, 'sessions were ended');
  assert.ok(acknowledged.size > 200, `only ${acknowledged.size} sends acknowledged`);
});
