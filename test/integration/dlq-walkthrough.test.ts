import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { FakeClock, type RunningSluice, startSluice } from 'sluice';
import { postForm } from '../helpers/raw-requests.ts';
import { startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { AwsCli } from './clients/aws-cli.ts';
import { availability, CLIS } from './clients/clients.ts';

interface Notification {
  type: string;
  event: string;
  queue: string;
  visible: number;
  sourceQueues: string[];
}

/**
 * A local webhook receiver, as an operator would run one; its first answer is a 503, so the server's retry
 * is exercised too.
 */
async function webhookReceiver() {
  const received: Notification[] = [];
  const waiting: Array<{ match: (n: Notification) => boolean; resolve: (n: Notification) => void }> = [];
  let attempts = 0;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      if (++attempts === 1) {
        response.writeHead(503).end();
        return;
      }
      const notification = JSON.parse(body) as Notification;
      received.push(notification);
      for (const waiter of waiting.filter((w) => w.match(notification))) waiter.resolve(notification);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    attempts: () => attempts,
    next(match: (n: Notification) => boolean): Promise<Notification> {
      const seen = received.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.push({ match, resolve }));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The poison-message walkthrough from the SQS lesson, with each AWS CLI, against a really started server on an
 * injected clock (so the 3-minute visibility timeouts pass without waiting): create a DLQ with 14-day
 * retention and a source queue (visibility 180 s, 20 s long polling, maxReceiveCount 3); send; receive three
 * times without deleting while the timeout passes; the next receive moves it, and it is found in the DLQ; the
 * alarm fires (log, webhook, /alarms); a move task at 10 messages/s brings it back; ListMessageMoveTasks shows
 * COMPLETED with 1 moved.
 *
 * Debian's AWS CLI 2.9 predates the move-task commands (2023), so for it the move task is started and listed
 * with the same Query-protocol requests the CLI would send.
 */
describe('poison-message walkthrough', { concurrency: false }, () => {
  const clock = new FakeClock(Date.UTC(2026, 11, 1));
  let sluice: RunningSluice;
  let hook: Awaited<ReturnType<typeof webhookReceiver>>;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sluice-dlq-'));
    hook = await webhookReceiver();
    sluice = await startSluice({
      port: 0,
      dataDir,
      clock,
      logLevel: 'silent',
      alarms: { webhooks: [hook.url], periodSeconds: 10 },
    });
  });
  after(async () => {
    await sluice?.close();
    await hook?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  for (const client of CLIS) {
    const { skip, missing } = availability(client, client.bin !== undefined);
    test(`${client.label} (${client.protocol})`, { skip, timeout: 120_000 }, async () => {
      assert.ok(!missing, missing);
      const cli = new AwsCli(client.bin!, sluice.endpoint);
      try {
        await walkthrough(cli, client.protocol === 'json');
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new Error(`${message}\n--- ${client.label} transcript ---\n${cli.output()}`, { cause: error });
      }
    });
  }

  /**
   * Moves the fake clock a second at a time until `arrival` (a webhook POST, which travels over real
   * sockets) has come; the short real pause only lets that I/O happen, the alarm's timing is the fake clock's.
   */
  async function passTimeUntil<T>(arrival: Promise<T>): Promise<T> {
    let arrived = false;
    void arrival.then(() => {
      arrived = true;
    });
    for (let second = 0; !arrived; second++) {
      assert.ok(second < 120, 'no webhook notification within 120 s of server time');
      await clock.advance(1000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return arrival;
  }

  async function walkthrough(cli: AwsCli, cliHasMoveTasks: boolean) {
    const id = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const dlq = await cli.ok<{ QueueUrl: string }>([
      'create-queue',
      '--queue-name',
      `orders-dlq-${id}`,
      '--attributes',
      'MessageRetentionPeriod=1209600',
    ]);
    const dlqArn = `arn:aws:sqs:us-east-1:000000000000:orders-dlq-${id}`;
    const source = await cli.ok<{ QueueUrl: string }>([
      'create-queue',
      '--queue-name',
      `orders-${id}`,
      '--attributes',
      JSON.stringify({
        VisibilityTimeout: '180',
        ReceiveMessageWaitTimeSeconds: '20',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: '3' }),
      }),
    ]);
    const sent = await cli.ok<{ MessageId: string }>([
      'send-message',
      '--queue-url',
      source.QueueUrl,
      '--message-body',
      '{"order":1001,"action":"charge"}',
    ]);
    type Received = {
      Messages?: Array<{ MessageId: string; Body: string; Attributes: Record<string, string> }>;
    };
    for (let attempt = 1; attempt <= 3; attempt++) {
      const got = await cli.ok<Received>([
        'receive-message',
        '--queue-url',
        source.QueueUrl,
        '--attribute-names',
        'All',
      ]);
      assert.equal(got.Messages?.[0]?.MessageId, sent.MessageId);
      assert.equal(got.Messages?.[0]?.Attributes.ApproximateReceiveCount, String(attempt));
      await clock.advance(181_000); // the consumer crashed: the visibility timeout passes
    }
    // The fourth receive moves it to the DLQ (no long wait: nothing else is on the queue).
    const fourth = await cli.ok<Received>([
      'receive-message',
      '--queue-url',
      source.QueueUrl,
      '--wait-time-seconds',
      '0',
    ]);
    assert.equal(fourth.Messages, undefined);
    const dead = await cli.ok<Received>([
      'receive-message',
      '--queue-url',
      dlq.QueueUrl,
      '--attribute-names',
      'All',
      '--visibility-timeout',
      '0',
    ]);
    assert.equal(dead.Messages?.[0]?.MessageId, sent.MessageId);
    assert.equal(
      dead.Messages?.[0]?.Attributes.DeadLetterQueueSourceArn,
      `arn:aws:sqs:us-east-1:000000000000:orders-${id}`,
    );

    // The alarm: checked every 10 s; the webhook answers 503 first, the retry (1 s later) is delivered.
    const raised = await passTimeUntil(
      hook.next((n) => n.queue === `orders-dlq-${id}` && n.event === 'raised'),
    );
    assert.equal(raised.type, 'dlq-alarm');
    assert.ok(hook.attempts() > hook.received.length, 'the first delivery got a 503 and was retried');
    assert.equal(raised.visible, 1);
    assert.deepEqual(raised.sourceQueues, [`orders-${id}`]);
    const states = (await (await fetch(`${sluice.endpoint}/alarms`)).json()) as {
      alarms: Array<{ queue: string; state: string }>;
    };
    assert.equal(states.alarms.find((a) => a.queue === `orders-dlq-${id}`)?.state, 'ALARM');
    const metrics = await (await fetch(`${sluice.endpoint}/metrics`)).text();
    assert.match(metrics, new RegExp(`sluice_dlq_alarm\\{queue="orders-dlq-${id}",silenced="false"\\} 1`));

    type Listed = { Results: Array<{ Status: string; ApproximateNumberOfMessagesMoved: number }> };
    let listed: Listed;
    if (cliHasMoveTasks) {
      const started = await cli.ok<{ TaskHandle: string }>([
        'start-message-move-task',
        '--source-arn',
        dlqArn,
        '--max-number-of-messages-per-second',
        '10',
      ]);
      assert.ok(started.TaskHandle);
      await clock.advance(1000);
      listed = await cli.ok<Listed>(['list-message-move-tasks', '--source-arn', dlqArn]);
    } else {
      const start = await postForm(
        sluice.endpoint,
        `Action=StartMessageMoveTask&Version=2012-11-05&SourceArn=${encodeURIComponent(dlqArn)}&MaxNumberOfMessagesPerSecond=10`,
      );
      const startXml = await start.text();
      assert.equal(start.status, 200, startXml);
      assert.match(startXml, /<TaskHandle>[^<]+<\/TaskHandle>/);
      await clock.advance(1000);
      const list = await postForm(
        sluice.endpoint,
        `Action=ListMessageMoveTasks&Version=2012-11-05&SourceArn=${encodeURIComponent(dlqArn)}`,
      );
      const xml = await list.text();
      assert.equal(list.status, 200, xml);
      listed = {
        Results: [
          {
            Status: /<Status>(\w+)<\/Status>/.exec(xml)?.[1] ?? '',
            ApproximateNumberOfMessagesMoved: Number(
              /<ApproximateNumberOfMessagesMoved>(\d+)</.exec(xml)?.[1] ?? Number.NaN,
            ),
          },
        ],
      };
    }
    assert.equal(listed.Results[0]?.Status, 'COMPLETED');
    assert.equal(listed.Results[0]?.ApproximateNumberOfMessagesMoved, 1);
    const back = await cli.ok<Received>([
      'receive-message',
      '--queue-url',
      source.QueueUrl,
      '--attribute-names',
      'All',
    ]);
    assert.equal(back.Messages?.[0]?.Body, '{"order":1001,"action":"charge"}');
    assert.notEqual(back.Messages?.[0]?.MessageId, sent.MessageId, 'a redriven message is a new message');
    assert.equal(back.Messages?.[0]?.Attributes.ApproximateReceiveCount, '1');

    // The DLQ is empty again: the next check resolves the alarm.
    const resolved = await passTimeUntil(
      hook.next((n) => n.queue === `orders-dlq-${id}` && n.event === 'resolved'),
    );
    assert.equal(resolved.visible, 0);
    for (const url of [source.QueueUrl, dlq.QueueUrl]) await cli.ok(['delete-queue', '--queue-url', url]);
  }
});

/**
 * A DLQ alarm raised before a restart is still raised after it, not announced again: two runs of
 * `sluice serve` on one data directory, checking alarms every second (config file), over the SQS JSON API.
 */
describe('DLQ alarms across a restart of sluice serve', () => {
  type Alarm = {
    queue: string;
    state: string;
    visible: number;
    since: number;
    history: Array<{ event: string }>;
  };
  const alarmOf = async (endpoint: string): Promise<Alarm | undefined> => {
    const { alarms } = (await (await fetch(`${endpoint}/alarms`)).json()) as { alarms: Alarm[] };
    return alarms.find((alarm) => alarm.queue === 'orders-dlq');
  };
  /** Polls /alarms until `ready` holds for the DLQ's alarm (each check is a second apart). */
  const alarmWhen = async (endpoint: string, ready: (alarm: Alarm | undefined) => boolean) => {
    for (let tries = 0; ; tries++) {
      const alarm = await alarmOf(endpoint);
      if (ready(alarm)) return alarm!;
      assert.ok(tries < 300, `no such alarm state within 30 s: ${JSON.stringify(alarm)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  test('is not raised again when the server restarts with the DLQ still over its threshold', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-alarm-restart-'));
    const config = join(dir, 'sluice.json');
    const dlqArn = 'arn:aws:sqs:us-east-1:000000000000:orders-dlq';
    writeFileSync(
      config,
      JSON.stringify({
        alarms: { periodSeconds: 1 },
        queues: [
          { name: 'orders-dlq', attributes: { MessageRetentionPeriod: 1209600 } },
          {
            name: 'orders',
            attributes: { RedrivePolicy: { deadLetterTargetArn: dlqArn, maxReceiveCount: 1 } },
          },
        ],
      }),
    );
    const start = () => startServer({ dataDir: join(dir, 'data'), args: ['--config', config] });
    const sqsOf = (endpoint: string) => sqsClient(endpoint);
    const first = await start();
    const firstSqs = sqsOf(first.endpoint);
    let raisedAt: number;
    try {
      const QueueUrl = `${first.endpoint}/000000000000/orders`;
      await firstSqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'poison' }));
      // Received once and not deleted; the next receive moves it to the DLQ.
      for (let round = 0; round < 2; round++)
        await firstSqs.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 0 }));
      raisedAt = (await alarmWhen(first.endpoint, (alarm) => alarm?.state === 'ALARM')).since;
    } finally {
      firstSqs.destroy();
      await first.stop();
    }
    assert.match(first.output(), /DLQ alarm raised/);

    const second = await start();
    const secondSqs = sqsOf(second.endpoint);
    try {
      // A second dead letter, straight into the DLQ: the alarm state shows 2 once a check after the restart ran.
      await secondSqs.send(
        new SendMessageCommand({
          QueueUrl: `${second.endpoint}/000000000000/orders-dlq`,
          MessageBody: 'more',
        }),
      );
      const after = await alarmWhen(second.endpoint, (alarm) => alarm?.visible === 2);
      assert.equal(after.state, 'ALARM');
      assert.equal(after.since, raisedAt, 'the alarm raised before the restart goes on');
      assert.deepEqual(
        after.history.map((n) => n.event),
        ['raised', 'growing'],
      );
      assert.doesNotMatch(second.output(), /DLQ alarm raised/);
    } finally {
      secondSqs.destroy();
      await second.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
