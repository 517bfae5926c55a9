import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ListQueuesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SendMessageCommandInput,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { advanceClock, NotInTestModeError, reset, serverTime } from 'sluice-client/testing';
import { eventually } from '../helpers/client-toolkit.ts';
import { type RunningServer, removeDataDir, SLUICE_CLI, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const run = promisify(execFile);

/**
 * `sluice serve --test-clock` over HTTP: every SQS time rule follows the clock the tests move, and a reset
 * brings the server back to nothing.
 */
describe('sluice serve --test-clock', () => {
  const configDir = mkdtempSync(join(tmpdir(), 'sluice-test-clock-'));
  let server: RunningServer;
  let endpoint: string;
  let sqs: SQSClient;

  before(async () => {
    // Alarm checks an hour apart: only an advance can bring the next one within a test.
    const config = join(configDir, 'sluice.json');
    writeFileSync(config, JSON.stringify({ alarms: { periodSeconds: 3600 } }));
    server = await startServer({ args: ['--test-clock', '--config', config] });
    endpoint = server.endpoint;
    sqs = sqsClient(endpoint);
  });

  after(async () => {
    sqs?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
    rmSync(configDir, { recursive: true, force: true });
  });

  beforeEach(() => reset(endpoint));

  const createQueue = async (name: string, attributes: Record<string, string> = {}) =>
    (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
  const send = (QueueUrl: string, body: string, extra: Partial<SendMessageCommandInput> = {}) =>
    sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body, ...extra }));
  const receive = async (QueueUrl: string) =>
    (
      await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 10,
          MessageSystemAttributeNames: ['All'],
        }),
      )
    ).Messages ?? [];
  const attribute = async (QueueUrl: string, name: 'QueueArn' | 'ApproximateNumberOfMessages') =>
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: [name] }))).Attributes![name]!;
  const errorName = (promise: Promise<unknown>) =>
    promise.then(
      () => 'no error',
      (error: Error) => error.name,
    );
  /** Until `count` receives wait on the server: an advance then certainly finds them waiting. */
  const receivesWaiting = async (count: number) => {
    while ((await serverTime(endpoint)).waitingReceives < count)
      await new Promise((resolve) => setTimeout(resolve, 10));
  };
  const alarmState = async (queue: string) => {
    const { alarms } = (await (await fetch(`${endpoint}/alarms`)).json()) as {
      alarms: Array<{ queue: string; state: string }>;
    };
    return alarms.find((alarm) => alarm.queue === queue)?.state;
  };

  it('starts at real time and moves only when told', async () => {
    const before = Date.now();
    const start = await serverTime(endpoint);
    assert.ok(start.now >= before - 1000 && start.now <= Date.now() + 1000);
    const moved = await advanceClock(endpoint, 90);
    assert.equal(moved.advancedSeconds - start.advancedSeconds, 90);
    assert.ok(moved.now >= start.now + 90_000);
  });

  it('redelivers a message right after an advance past its visibility timeout', async () => {
    const url = await createQueue('visibility', { VisibilityTimeout: '30' });
    await send(url, 'job');
    const [first] = await receive(url);
    assert.equal(first?.Body, 'job');
    await advanceClock(endpoint, 29);
    assert.deepEqual(await receive(url), []);
    await advanceClock(endpoint, 1);
    const [again] = await receive(url);
    assert.equal(again?.MessageId, first.MessageId);
    assert.equal(again?.Attributes?.ApproximateReceiveCount, '2');
  });

  it('shows a delayed message once its delay has passed', async () => {
    const url = await createQueue('delayed');
    await send(url, 'in 15 minutes', { DelaySeconds: 900 });
    await advanceClock(endpoint, 899);
    assert.deepEqual(await receive(url), []);
    await advanceClock(endpoint, 1);
    assert.deepEqual(
      (await receive(url)).map((m) => m.Body),
      ['in 15 minutes'],
    );
  });

  it('drops a message past its retention period', async () => {
    const url = await createQueue('retention', { MessageRetentionPeriod: '60' });
    await send(url, 'short-lived');
    assert.equal(await attribute(url, 'ApproximateNumberOfMessages'), '1');
    await advanceClock(endpoint, 60);
    assert.equal(await attribute(url, 'ApproximateNumberOfMessages'), '0');
    assert.deepEqual(await receive(url), []);
  });

  it('lets the purge window and the deleted-queue-name window lapse', async () => {
    const url = await createQueue('windows');
    await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    assert.equal(await errorName(sqs.send(new PurgeQueueCommand({ QueueUrl: url }))), 'PurgeQueueInProgress');
    await advanceClock(endpoint, 60);
    await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));

    await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    assert.equal(await errorName(createQueue('windows')), 'QueueDeletedRecently');
    await advanceClock(endpoint, 60);
    assert.equal(await createQueue('windows'), url);
  });

  it('forgets a FIFO deduplication id once its 5-minute window has passed', async () => {
    const url = await createQueue('dedup.fifo', { FifoQueue: 'true' });
    const sendOnce = () => send(url, 'pay', { MessageGroupId: 'g', MessageDeduplicationId: 'payment-1' });
    const first = await sendOnce();
    await advanceClock(endpoint, 299);
    assert.equal((await sendOnce()).MessageId, first.MessageId);
    await advanceClock(endpoint, 1);
    assert.notEqual((await sendOnce()).MessageId, first.MessageId);
  });

  it('answers a long poll right after an advance: with a message that became visible, or empty once its wait is over', async () => {
    const url = await createQueue('long-poll');
    await send(url, 'in 10 s', { DelaySeconds: 10 });
    const poll = sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 }));
    await receivesWaiting(1);
    await advanceClock(endpoint, 10);
    assert.deepEqual(
      (await poll).Messages?.map((m) => m.Body),
      ['in 10 s'],
    );

    const empty = sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 }));
    await receivesWaiting(1);
    await advanceClock(endpoint, 20);
    assert.equal((await empty).Messages, undefined);
    assert.equal((await serverTime(endpoint)).waitingReceives, 0);
  });

  it('paces a move task by the clock: one message a second moves ten in a ten-second advance', async () => {
    const dlq = await createQueue('moves-dlq');
    const dlqArn = await attribute(dlq, 'QueueArn');
    const target = await createQueue('moves', {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
    });
    const targetArn = await attribute(target, 'QueueArn');
    for (let i = 0; i < 40; i++) await send(dlq, `m${i}`);
    await sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: dlqArn,
        DestinationArn: targetArn,
        MaxNumberOfMessagesPerSecond: 1,
      }),
    );
    const task = async () =>
      (await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn }))).Results![0]!;
    await advanceClock(endpoint, 10);
    // The first step, then one each second of clock time (a single jump would have moved two); real time
    // adds a message for each second the test itself takes.
    const moved = (await task()).ApproximateNumberOfMessagesMoved!;
    assert.ok(moved >= 11 && moved < 40, `${moved} moved`);
    await advanceClock(endpoint, 30);
    const done = await task();
    assert.equal(done.Status, 'COMPLETED');
    assert.equal(done.ApproximateNumberOfMessagesMoved, 40);
    assert.equal(await attribute(target, 'ApproximateNumberOfMessages'), '40');
  });

  it('raises a DLQ alarm at the first check an advance brings', async () => {
    // The check a reset starts with runs now, before there is a DLQ; the next is an hour away.
    await advanceClock(endpoint, 0);
    const dlq = await createQueue('alarming-dlq');
    const dlqArn = await attribute(dlq, 'QueueArn');
    await createQueue('alarming', {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
    });
    await send(dlq, 'poison');
    assert.equal(await alarmState('alarming-dlq'), undefined);
    await advanceClock(endpoint, 3600);
    assert.equal(await alarmState('alarming-dlq'), 'ALARM');
  });

  it('resets to a server that holds nothing, answers waiting long polls empty, and keeps serving', async () => {
    const dlq = await createQueue('orders-dlq');
    const dlqArn = await attribute(dlq, 'QueueArn');
    const orders = await createQueue('orders', {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
    });
    const fifo = await createQueue('orders.fifo', { FifoQueue: 'true' });
    const fifoSent = await send(fifo, 'x', { MessageGroupId: 'g', MessageDeduplicationId: 'once' });
    await send(dlq, 'poison');
    await send(orders, 'waiting');
    await sqs.send(new PurgeQueueCommand({ QueueUrl: orders }));
    const gone = await createQueue('gone');
    await sqs.send(new DeleteQueueCommand({ QueueUrl: gone }));
    await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn, MaxNumberOfMessagesPerSecond: 1 }));
    // An hour: an alarm check and a history sample.
    await advanceClock(endpoint, 3600);
    assert.equal(await alarmState('orders-dlq'), 'ALARM');
    const history = async () =>
      (
        (await (await fetch(`${endpoint}/api/history?queue=orders&range=1h`)).json()) as {
          samples: unknown[];
        }
      ).samples;
    assert.ok((await history()).length > 0);
    const empty = await createQueue('empty');
    const poll = sqs.send(new ReceiveMessageCommand({ QueueUrl: empty, WaitTimeSeconds: 20 }));
    await receivesWaiting(1);
    const clockBefore = await serverTime(endpoint);
    const queueMetrics = async () =>
      (await (await fetch(`${endpoint}/metrics`)).text())
        .split('\n')
        .filter((line) =>
          /^sluice_(ApproximateNumberOfMessagesVisible|NumberOfMessagesSent)\{queue="orders"\}/.test(line),
        );
    assert.equal((await queueMetrics()).length, 2);

    await reset(endpoint);

    const clockAfter = await serverTime(endpoint);
    assert.equal(clockAfter.waitingReceives, 0);
    assert.equal((await poll).Messages, undefined);
    assert.equal(clockAfter.advancedSeconds, clockBefore.advancedSeconds, 'the clock stays where it was');
    assert.equal((await sqs.send(new ListQueuesCommand({}))).QueueUrls, undefined);
    assert.deepEqual(await history(), []);
    assert.equal(await alarmState('orders-dlq'), undefined);
    // A scrape within a second of the last is answered with the same render; the history sampler's own read
    // of every queue, 10 s after the reset, is not what this waits for.
    await eventually(async () => (await queueMetrics()).length === 0, 'the reset queues off /metrics', 5000);

    // Every name is free again, with nothing remembered: no deleted-queue window, no purge window, no
    // deduplication id, no move task.
    assert.equal(await createQueue('gone'), gone);
    assert.equal(await createQueue('orders'), orders);
    await sqs.send(new PurgeQueueCommand({ QueueUrl: orders }));
    assert.equal(await createQueue('orders.fifo', { FifoQueue: 'true' }), fifo);
    const again = await send(fifo, 'x', { MessageGroupId: 'g', MessageDeduplicationId: 'once' });
    assert.notEqual(again.MessageId, fifoSent.MessageId);
    const newDlq = await createQueue('orders-dlq');
    assert.deepEqual(
      (await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: await attribute(newDlq, 'QueueArn') })))
        .Results,
      [],
    );
    await send(orders, 'after the reset');
    assert.deepEqual(
      (await receive(orders)).map((m) => m.Body),
      ['after the reset'],
    );
  });

  it("answers moto's reset as moto does", async () => {
    await createQueue('moto-style');
    const response = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
    assert.equal(response.status, 200);
    assert.equal(await response.text(), '{"status": "ok"}');
    assert.equal((await sqs.send(new ListQueuesCommand({}))).QueueUrls, undefined);
    const get = await fetch(`${endpoint}/moto-api/reset`);
    assert.equal(get.status, 400);
    assert.equal(await get.text(), '{"Error": "Need to POST to reset Moto"}');
  });

  it('refuses web pages of other origins, and bad advances', async () => {
    const survivor = await createQueue('survivor');
    const { advancedSeconds } = await serverTime(endpoint);
    const crossOrigin: Array<Record<string, string>> = [
      { origin: 'http://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of crossOrigin) {
      for (const path of ['/_sluice/reset', '/moto-api/reset', '/_sluice/clock/advance']) {
        const response = await fetch(`${endpoint}${path}`, {
          method: 'POST',
          headers,
          body: '{"seconds": 60}',
        });
        assert.equal(response.status, 403, `${path} with ${JSON.stringify(headers)}`);
        await response.arrayBuffer();
      }
    }
    assert.deepEqual((await sqs.send(new ListQueuesCommand({}))).QueueUrls, [survivor]);
    assert.equal((await serverTime(endpoint)).advancedSeconds, advancedSeconds);

    for (const body of ['', '{}', '{"seconds": -1}', '{"seconds": "60"}', '{"seconds": 1e12}']) {
      const response = await fetch(`${endpoint}/_sluice/clock/advance`, { method: 'POST', body });
      assert.equal(response.status, 400, body);
      assert.equal(response.headers.get('x-amzn-query-error'), 'InvalidParameterValue;Sender');
      await response.arrayBuffer();
    }
    await assert.rejects(advanceClock(endpoint, -5), /seconds/);
    const get = await fetch(`${endpoint}/_sluice/reset`);
    assert.equal(get.status, 400);
    await get.arrayBuffer();
  });
});

describe('sluice serve --test-clock --in-memory with credentials', () => {
  const ADMIN = { accessKeyId: 'AKIDTESTCLOCK', secretAccessKey: 'secret' };
  const ORDERS = { accessKeyId: 'AKIDORDERS', secretAccessKey: 'orders-secret', queues: ['orders*'] };
  const configDir = mkdtempSync(join(tmpdir(), 'sluice-test-clock-keys-'));
  let server: RunningServer;
  let sqs: SQSClient;

  before(async () => {
    const config = join(configDir, 'keys.json');
    writeFileSync(config, JSON.stringify({ credentials: [ADMIN, ORDERS] }));
    server = await startServer({ inMemory: true, args: ['--test-clock', '--config', config] });
    sqs = sqsClient(server.endpoint, { credentials: ADMIN });
  });
  after(async () => {
    sqs?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
    rmSync(configDir, { recursive: true, force: true });
  });

  it('checks signatures against real time however far the clock has moved, and resets as on disk', async () => {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: 'kept-in-memory', Attributes: { DelaySeconds: '60' } }),
    );
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'tomorrow' }));
    await advanceClock(server.endpoint, 24 * 3600, { credentials: ADMIN });
    // A signature more than 15 minutes away from the server's time would be refused.
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    assert.equal(Messages?.[0]?.Body, 'tomorrow');
    await reset(server.endpoint, { credentials: ADMIN });
    assert.equal((await sqs.send(new ListQueuesCommand({}))).QueueUrls, undefined);
    await sqs.send(new CreateQueueCommand({ QueueName: 'kept-in-memory' }));
  });

  it('refuses the test endpoints to a request without a signature, or signed by a key of limited scope', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'survives' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'still here' }));
    const before = await serverTime(server.endpoint, { credentials: ADMIN });
    const unsigned: Array<[string, string, string?]> = [
      ['POST', '/moto-api/reset'],
      ['POST', '/_sluice/reset'],
      ['POST', '/_sluice/clock/advance', '{"seconds": 31536000}'],
      ['GET', '/_sluice/clock'],
    ];
    for (const [method, path, body] of unsigned) {
      const response = await fetch(`${server.endpoint}${path}`, { method, body });
      assert.equal(response.status, 401, `${method} ${path}`);
      assert.match(await response.text(), /MissingAuthenticationToken/);
    }
    await assert.rejects(reset(server.endpoint), /HTTP 401/);
    await assert.rejects(reset(server.endpoint, { credentials: ORDERS }), /AKIDORDERS may not use test mode/);
    await assert.rejects(
      advanceClock(server.endpoint, 3600, { credentials: { ...ADMIN, secretAccessKey: 'wrong' } }),
      /HTTP 403/,
    );
    const after = await serverTime(server.endpoint, { credentials: ADMIN });
    assert.equal(after.advancedSeconds, before.advancedSeconds, 'the clock did not move');
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    assert.equal(Messages?.[0]?.Body, 'still here', 'nothing was reset');
  });
});

describe('test endpoints without --test-clock', () => {
  it('answer 404, and the helpers say how to turn test mode on', async () => {
    const server = await startServer();
    try {
      for (const [method, path] of [
        ['GET', '/_sluice/clock'],
        ['POST', '/_sluice/clock/advance'],
        ['POST', '/_sluice/reset'],
        ['POST', '/moto-api/reset'],
      ] as const) {
        const response = await fetch(`${server.endpoint}${path}`, {
          method,
          body: method === 'POST' ? '{}' : undefined,
        });
        assert.equal(response.status, 404, path);
        assert.match(await response.text(), /--test-clock/);
      }
      await assert.rejects(advanceClock(server.endpoint, 1), NotInTestModeError);
      await assert.rejects(
        reset(server.endpoint),
        /has no test mode: start the server with `sluice serve --test-clock`/,
      );
      await assert.rejects(serverTime(server.endpoint), NotInTestModeError);
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
    }
  });

  it('the helpers say when no server answers', async () => {
    await assert.rejects(serverTime('http://127.0.0.1:9'), /no Sluice at http:\/\/127\.0\.0\.1:9/);
  });
});

describe('sluice serve --test-clock on a non-loopback address (as in a container)', () => {
  it('starts open with --insecure, and its clock and reset answer as on loopback', async () => {
    // The image binds 0.0.0.0 with SLUICE_INSECURE=1: whoever reaches an open server can delete every queue,
    // so the reset gives nobody more than they had.
    const server = await startServer({
      args: ['--test-clock', '--host', '0.0.0.0'],
      env: { SLUICE_INSECURE: '1' },
    });
    const endpoint = server.endpoint.replace('0.0.0.0', '127.0.0.1');
    const sqs = sqsClient(endpoint);
    try {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'open' }));
      const before = await serverTime(endpoint);
      const after = await advanceClock(endpoint, 60);
      assert.ok(after.now - before.now >= 60_000, `the clock moved ${after.now - before.now} ms`);
      await reset(endpoint);
      assert.equal((await sqs.send(new ListQueuesCommand({}))).QueueUrls, undefined, `${QueueUrl} is gone`);
    } finally {
      sqs.destroy();
      await server.stop();
      removeDataDir(server.dataDir);
    }
  });

  it('starts with access keys, and its endpoints take their signature', async () => {
    const key = { accessKeyId: 'AKIDCONTAINER', secretAccessKey: 'secret' };
    const server = await startServer({
      args: [
        '--test-clock',
        '--host',
        '0.0.0.0',
        '--credentials',
        `${key.accessKeyId}:${key.secretAccessKey}`,
      ],
    });
    const endpoint = server.endpoint.replace('0.0.0.0', '127.0.0.1');
    try {
      const unsigned = await fetch(`${endpoint}/_sluice/reset`, { method: 'POST' });
      assert.equal(unsigned.status, 401);
      await unsigned.arrayBuffer();
      assert.equal((await advanceClock(endpoint, 60, { credentials: key })).advancedSeconds, 60);
      await reset(endpoint, { credentials: key });
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
    }
  });
});

describe('sluice serve --test-clock refuses to start', () => {
  const refusal = async (args: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-refusal-'));
    try {
      await run(process.execPath, [...SLUICE_CLI, 'serve', '--port', '0', '--data', dir, ...args]);
    } catch (error) {
      const { code, stderr } = error as { code: number; stderr: string };
      return { code, stderr };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.fail(`sluice serve ${args.join(' ')} started`);
  };

  it('on a non-loopback address without keys or --insecure, as any open server', async () => {
    const { code, stderr } = await refusal(['--test-clock', '--host', '0.0.0.0']);
    assert.equal(code, 2);
    assert.match(stderr, /refusing to listen on 0\.0\.0\.0 without credentials/);
  });

  it('with PostgreSQL, before connecting to it', async () => {
    // Nothing listens on port 9: the refusal must come first.
    const { code, stderr } = await refusal(['--test-clock', '--store', 'postgres://nobody@127.0.0.1:9/none']);
    assert.equal(code, 2);
    assert.match(stderr, /--test-clock works with the embedded SQLite store only/);
  });
});
