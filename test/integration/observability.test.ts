import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import pino from 'pino';
import { FakeClock, type RunningSluice, startSluice } from 'sluice';
import { eventually } from '../helpers/client-toolkit.ts';
import { SLUICE_CLI } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const run = promisify(execFile);

/** The value of one Prometheus sample line, e.g. `sluice_NumberOfMessagesSent{queue="a"}`. */
function metric(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * /metrics, /api/history and `sluice stats` against a really started server on a fake clock, driven by the
 * AWS SDK: every figure is checked against what the test did.
 */
describe('metrics and history', { concurrency: false }, () => {
  const clock = new FakeClock(Date.UTC(2026, 11, 1, 12));
  let sluice: RunningSluice;
  let dataDir: string;
  let sqs: SQSClient;
  let url: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sluice-metrics-'));
    sluice = await startSluice({ port: 0, dataDir, clock, logLevel: 'silent' });
    sqs = sqsClient(sluice.endpoint);
    url = (await sqs.send(new CreateQueueCommand({ QueueName: 'metered' }))).QueueUrl!;
    for (const body of ['a', 'bb', 'c'.repeat(300)])
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
    await clock.advance(5000);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 2, VisibilityTimeout: 60 }),
    );
    assert.equal(Messages.length, 2);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: Messages[0]!.ReceiptHandle }));
    await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 1 }));
    await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 1 }));
    // The sampler runs every 10 s of server time.
    await clock.advance(5000);
  });
  after(async () => {
    sqs?.destroy();
    await sluice?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('exposes CloudWatch-named queue metrics, request counts and latencies at /metrics', async () => {
    const response = await fetch(`${sluice.endpoint}/metrics`);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await response.text();
    const q = '{queue="metered"}';
    assert.equal(metric(text, `sluice_ApproximateNumberOfMessagesVisible${q}`), 0);
    assert.equal(metric(text, `sluice_ApproximateNumberOfMessagesNotVisible${q}`), 2);
    assert.equal(metric(text, `sluice_ApproximateNumberOfMessagesDelayed${q}`), 0);
    assert.equal(metric(text, `sluice_ApproximateAgeOfOldestMessage${q}`), 10);
    assert.equal(metric(text, `sluice_NumberOfMessagesSent${q}`), 3);
    assert.equal(metric(text, `sluice_NumberOfMessagesReceived${q}`), 3);
    assert.equal(metric(text, `sluice_NumberOfMessagesDeleted${q}`), 1);
    assert.equal(metric(text, `sluice_NumberOfEmptyReceives${q}`), 1);
    assert.equal(metric(text, `sluice_SentMessageSize_sum${q}`), 303);
    assert.equal(metric(text, `sluice_SentMessageSize_count${q}`), 3);
    assert.equal(metric(text, 'sluice_SentMessageSize_bucket{le="64",queue="metered"}'), 2);
    assert.equal(metric(text, 'sluice_requests_total{action="SendMessage",status="200"}'), 3);
    assert.equal(metric(text, 'sluice_requests_total{action="ReceiveMessage",status="200"}'), 3);
    assert.equal(metric(text, 'sluice_request_duration_seconds_count{action="ReceiveMessage"}'), 3);
    assert.match(text, /# TYPE sluice_request_duration_seconds histogram/);
    assert.match(text, /# TYPE sluice_dlq_alarm gauge/);
  });

  it('counts unknown actions under one label, so a client cannot add series at will', async () => {
    for (const action of ['Nope1', 'Nope2']) {
      const response = await fetch(`${sluice.endpoint}/`, {
        method: 'POST',
        headers: { 'x-amz-target': `AmazonSQS.${action}`, 'content-type': 'application/x-amz-json-1.0' },
        body: '{}',
      });
      assert.equal(response.status, 400);
    }
    // Scrapes within a second of a render share it: the counts show in the next one.
    let text = '';
    await eventually(async () => {
      text = await (await fetch(`${sluice.endpoint}/metrics`)).text();
      return metric(text, 'sluice_requests_total{action="unknown",status="400"}') !== undefined;
    }, 'a render after the unknown actions');
    assert.equal(metric(text, 'sluice_requests_total{action="unknown",status="400"}'), 2);
    assert.doesNotMatch(text, /Nope1/);
  });

  it('serves the 10 s samples at /api/history and refuses bad parameters', async () => {
    const history = (await (await fetch(`${sluice.endpoint}/api/history?queue=metered&range=1h`)).json()) as {
      samples: Array<{
        sent: number;
        received: number;
        deleted: number;
        emptyReceives: number;
        notVisible: number;
      }>;
      rates: {
        windowSeconds: number;
        sent: number;
        received: number;
        deleted: number;
        emptyReceives: number;
      };
    };
    assert.equal(history.samples.length, 1);
    // The rates beside the console's counts: the last minute's samples, here the one of 10 s.
    assert.deepEqual(history.rates, {
      windowSeconds: 10,
      sent: 0.3,
      received: 0.3,
      deleted: 0.1,
      emptyReceives: 0.1,
    });
    assert.deepEqual(
      [history.samples[0]!.sent, history.samples[0]!.received, history.samples[0]!.deleted],
      [3, 3, 1],
    );
    assert.equal(history.samples[0]!.notVisible, 2);
    for (const query of ['range=1h', 'queue=metered&range=7d']) {
      const response = await fetch(`${sluice.endpoint}/api/history?${query}`);
      assert.equal(response.status, 400, query);
    }
    const overview = (await (await fetch(`${sluice.endpoint}/api/overview`)).json()) as {
      queues: Array<{
        name: string;
        notVisible: number;
        sparkline: { spanSeconds: number; stepSeconds: number; visible: number[] };
      }>;
    };
    const metered = overview.queues.find((x) => x.name === 'metered');
    // The one sample, taken now, and the count now: a queue this fresh is drawn at the 10 s sample step.
    assert.deepEqual(metered && { notVisible: metered.notVisible, sparkline: metered.sparkline }, {
      notVisible: 2,
      sparkline: { spanSeconds: 0, stepSeconds: 10, visible: [0, 0] },
    });
  });

  it('prints the history with `sluice stats QUEUE`', async () => {
    await clock.advance(10_000);
    const { stdout } = await run(process.execPath, [
      ...SLUICE_CLI,
      'stats',
      'metered',
      '--endpoint',
      sluice.endpoint,
    ]);
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, 3, stdout);
    assert.match(
      lines[0]!,
      /time \(UTC\)\s+visible\s+in flight\s+delayed\s+oldest s\s+sent\s+received\s+deleted\s+empty rcv/,
    );
    assert.match(lines[1]!, /^2026-12-01 12:00:10\s+0\s+2\s+0\s+10\s+3\s+3\s+1\s+1$/);
    assert.match(lines[2]!, /^2026-12-01 12:00:20\s+0\s+2\s+0\s+20\s+0\s+0\s+0\s+0$/);

    const last = await run(process.execPath, [
      ...SLUICE_CLI,
      'stats',
      'metered',
      '--last',
      '1',
      '--json',
      '--endpoint',
      sluice.endpoint,
    ]);
    assert.equal((JSON.parse(last.stdout) as unknown[]).length, 1);

    // By URL (its server is then the endpoint) and by ARN, the same rows.
    assert.equal((await run(process.execPath, [...SLUICE_CLI, 'stats', url])).stdout, stdout);
    const arn = 'arn:aws:sqs:us-east-1:000000000000:metered';
    const byArn = await run(process.execPath, [...SLUICE_CLI, 'stats', arn, '--endpoint', sluice.endpoint]);
    assert.equal(byArn.stdout, stdout);
    // A name, or the ARN or URL of another account, that names no queue of this server.
    for (const missing of [
      'missing',
      arn.replace('000000000000', '111111111111'),
      url.replace('/000000000000/', '/111111111111/'),
    ]) {
      await assert.rejects(
        run(process.execPath, [...SLUICE_CLI, 'stats', missing, '--endpoint', sluice.endpoint]),
        (error: { code?: number; stderr?: string }) => {
          assert.equal(error.code, 1);
          assert.equal(error.stderr, `sluice stats: no queue named "${missing}" at ${sluice.endpoint}\n`);
          return true;
        },
      );
    }
    await assert.rejects(
      run(process.execPath, [...SLUICE_CLI, 'stats', 'metered', '--range', '2h']),
      (error: { code?: number }) => {
        assert.equal(error.code, 2);
        return true;
      },
    );
  });

  it('logs each request as JSON with the request id the client was given, at the level asked for', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
    const logged = await startSluice({ port: 0, dataDir: ':memory:', clock, logger });
    try {
      const response = await fetch(`${logged.endpoint}/`, {
        method: 'POST',
        headers: { 'x-amz-target': 'AmazonSQS.ListQueues', 'content-type': 'application/x-amz-json-1.0' },
        body: '{}',
      });
      const requestId = response.headers.get('x-amzn-requestid');
      assert.ok(requestId);
      const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const entry = entries.find((e) => e.requestId === requestId);
      assert.ok(entry, 'the request was logged with its id');
      assert.deepEqual(
        { msg: entry.msg, action: entry.action, status: entry.status, level: entry.level },
        { msg: 'request', action: 'ListQueues', status: 200, level: 20 },
      );
      assert.equal(typeof entry.ms, 'number');
    } finally {
      await logged.close();
    }
    // At the default level (info) request lines are not written.
    const quiet: string[] = [];
    const info = await startSluice({
      port: 0,
      dataDir: ':memory:',
      clock,
      logger: pino({ level: 'info' }, { write: (line: string) => quiet.push(line) }),
    });
    try {
      await fetch(`${info.endpoint}/health`);
      await fetch(`${info.endpoint}/`, {
        method: 'POST',
        headers: { 'x-amz-target': 'AmazonSQS.ListQueues' },
        body: '{}',
      });
      assert.equal(quiet.filter((line) => line.includes('"msg":"request"')).length, 0);
    } finally {
      await info.close();
    }
  });
});

/** The console's own API, on more queues than one overview answer describes. */
describe('console API', { concurrency: false }, () => {
  const clock = new FakeClock(Date.UTC(2026, 11, 1, 12));
  let sluice: RunningSluice;
  let sqs: SQSClient;
  const names = Array.from({ length: 260 }, (_, i) => `q-${String(i).padStart(3, '0')}`);

  type OverviewAnswer = {
    limit: number;
    matching: number;
    queueArnPrefix: string;
    queues: Array<{ name: string; deadLetterSources: string[]; deadLetterQueue?: string }>;
  };
  const overviewOf = async (query: string) => {
    const response = await fetch(`${sluice.endpoint}/api/overview?${query}`);
    const text = await response.text();
    return { bytes: Buffer.byteLength(text), answer: JSON.parse(text) as OverviewAnswer };
  };

  before(async () => {
    sluice = await startSluice({ port: 0, dataDir: ':memory:', clock, logLevel: 'silent' });
    sqs = sqsClient(sluice.endpoint);
    // Created in reverse so that the answer's order is the server's doing.
    for (const name of [...names].reverse()) await sqs.send(new CreateQueueCommand({ QueueName: name }));
  });
  after(async () => {
    sqs?.destroy();
    await sluice?.close();
  });

  it('caps the overview at its limit, by name, and says how many queues matched', async () => {
    const { bytes, answer } = await overviewOf('');
    assert.equal(answer.limit, 250);
    assert.equal(answer.matching, 260);
    assert.deepEqual(
      answer.queues.map((q) => q.name),
      names.slice(0, 250),
    );
    assert.ok(bytes < 200 * 1024, `${bytes} bytes`);
    assert.match(answer.queueArnPrefix, /^arn:aws:sqs:[a-z0-9-]+:\d{12}:$/);
  });

  it('filters on the server, and a DLQ names its sources even when they are filtered out', async () => {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'q-259' }));
    const { answer: all } = await overviewOf('queue=q-000');
    const dlqArn = `${all.queueArnPrefix}q-000`;
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl,
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }) },
      }),
    );
    const { answer: narrowed } = await overviewOf('filter=Q-25');
    assert.deepEqual(
      narrowed.queues.map((q) => q.name),
      names.slice(250),
    );
    assert.equal(narrowed.matching, 10);
    assert.equal(narrowed.queues.at(-1)?.deadLetterQueue, 'q-000');
    const { answer: one } = await overviewOf('queue=q-000');
    assert.deepEqual(
      one.queues.map((q) => [q.name, q.deadLetterSources]),
      [['q-000', ['q-259']]],
    );
    assert.equal((await overviewOf('queue=q-')).answer.queues.length, 0, 'queue= is an exact name');
  });

  it('describes the queue attributes from the server’s one list at /api/attributes', async () => {
    const catalog = (await (await fetch(`${sluice.endpoint}/api/attributes`)).json()) as {
      settable: Array<{ name: string; kind: string; createOnly: boolean; fifoOnly: boolean; max?: number }>;
      computed: string[];
    };
    const byName = new Map(catalog.settable.map((spec) => [spec.name, spec]));
    assert.deepEqual(byName.get('VisibilityTimeout'), {
      name: 'VisibilityTimeout',
      kind: 'integer',
      default: 30,
      min: 0,
      max: 43_200,
      fifoOnly: false,
      createOnly: false,
    });
    assert.equal(byName.get('FifoQueue')?.createOnly, true);
    assert.equal(byName.get('ContentBasedDeduplication')?.fifoOnly, true);
    assert.equal(byName.get('RedrivePolicy')?.kind, 'text');
    assert.ok(catalog.computed.includes('QueueArn'));
    assert.ok(!byName.has('QueueArn'), 'a computed attribute is not settable');
  });
});
