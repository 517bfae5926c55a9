import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { availability, hasBoto3, PYTHONS } from './clients/clients.ts';
import { boto3Caller, jsSdkCaller, type Outcome, ok, type SqsCaller } from './clients/sqs-callers.ts';

/**
 * Strict receipt handles (issue 26) over real HTTP, through real clients in both wire protocols:
 * @aws-sdk/client-sqs (JSON), Debian's boto3 1.26 (Query), and a newer boto3 (JSON) when one is on PATH. Each
 * runs the same scenario on four kinds of queue of two servers, one started with --strict-receipt-handles
 * whose config file exempts a queue, one without it whose config file makes a queue strict; then /metrics
 * must count what each refused. Handles lapse by a receive with VisibilityTimeout 0, never by waiting.
 */

const ACTIONS = [
  'ChangeMessageVisibility',
  'ChangeMessageVisibilityBatch',
  'DeleteMessageBatch',
  'DeleteMessage',
] as const;

type Answer = 'ok' | { code: string | undefined; message: string };
type Answers = Record<(typeof ACTIONS)[number], Answer>;
interface Observation {
  lapsed: { answers: Answers; left: number };
  superseded: { answers: Answers; left: number };
  latestDelete: Answer;
  leftAtEnd: number;
}

const refusedAs = (reason: string): Answers => {
  const answer = {
    code: 'ReceiptHandleIsInvalid',
    message: `The input receipt handle "<handle>" is not a valid receipt handle. Reason: ${reason} (strict receipt handles).`,
  };
  return Object.fromEntries(ACTIONS.map((action) => [action, answer])) as Answers;
};
const allOk = Object.fromEntries(ACTIONS.map((action) => [action, 'ok'])) as Answers;

/** A strict queue refuses every stale handle and keeps the message; the latest handle still deletes it. */
const STRICT: Observation = {
  lapsed: { answers: refusedAs('its visibility timeout has lapsed'), left: 1 },
  superseded: { answers: refusedAs('the message was received again after this handle was issued'), left: 1 },
  latestDelete: 'ok',
  leftAtEnd: 0,
};
/** AWS's behaviour: a stale handle still changes the visibility and deletes the message. */
const AWS_LIKE: Observation = {
  lapsed: { answers: allOk, left: 0 },
  superseded: { answers: allOk, left: 0 },
  latestDelete: 'ok',
  leftAtEnd: 0,
};

type ServerName = 'flagged' | 'configured';
const CASES: ReadonlyArray<{ title: string; server: ServerName; queue: string; expected: Observation }> = [
  { title: 'with the flag, a queue a client creates', server: 'flagged', queue: 'created', expected: STRICT },
  {
    title: 'with the flag, a queue the config file sets non-strict',
    server: 'flagged',
    queue: 'exempt',
    expected: AWS_LIKE,
  },
  {
    title: 'without the flag, a queue the config file sets strict',
    server: 'configured',
    queue: 'guarded',
    expected: STRICT,
  },
  {
    title: 'without the flag, a queue a client creates',
    server: 'configured',
    queue: 'created',
    expected: AWS_LIKE,
  },
];

/** What a call answered: 'ok', or its error with the handle in the message replaced by <handle>. */
function answerOf(outcome: Outcome, handle: string): Answer {
  if (!outcome.error) return 'ok';
  return { code: outcome.error.code, message: outcome.error.message.replaceAll(handle, '<handle>') };
}

/** A one-entry batch's answer, in the shape of answerOf. */
function batchAnswerOf(output: Record<string, unknown>, handle: string): Answer {
  const failed = (output.Failed as Array<{ Code: string; Message: string }> | undefined)?.[0];
  return failed ? { code: failed.Code, message: failed.Message.replaceAll(handle, '<handle>') } : 'ok';
}

/** A lapsed handle, then a superseded one, through all four actions; what the server answered. */
async function staleHandles(sqs: SqsCaller, queue: string): Promise<Observation> {
  const QueueUrl = (await ok(sqs, 'CreateQueue', { QueueName: queue })).QueueUrl as string;
  const receive = async (VisibilityTimeout: number) =>
    ((await ok(sqs, 'ReceiveMessage', { QueueUrl, MaxNumberOfMessages: 1, VisibilityTimeout })).Messages ??
      []) as Array<{ ReceiptHandle: string }>;
  const handle = async (VisibilityTimeout: number) => (await receive(VisibilityTimeout))[0]!.ReceiptHandle;
  const left = async () => {
    const { Attributes } = await ok(sqs, 'GetQueueAttributes', { QueueUrl, AttributeNames: ['All'] });
    const counts = Attributes as Record<string, string>;
    return Number(counts.ApproximateNumberOfMessages) + Number(counts.ApproximateNumberOfMessagesNotVisible);
  };
  const allFour = async (ReceiptHandle: string, VisibilityTimeout: number): Promise<Answers> => {
    const entry = { Id: 'e', ReceiptHandle };
    return {
      ChangeMessageVisibility: answerOf(
        await sqs.call('ChangeMessageVisibility', { QueueUrl, ReceiptHandle, VisibilityTimeout }),
        ReceiptHandle,
      ),
      ChangeMessageVisibilityBatch: batchAnswerOf(
        await ok(sqs, 'ChangeMessageVisibilityBatch', {
          QueueUrl,
          Entries: [{ ...entry, VisibilityTimeout }],
        }),
        ReceiptHandle,
      ),
      DeleteMessageBatch: batchAnswerOf(
        await ok(sqs, 'DeleteMessageBatch', { QueueUrl, Entries: [entry] }),
        ReceiptHandle,
      ),
      DeleteMessage: answerOf(await sqs.call('DeleteMessage', { QueueUrl, ReceiptHandle }), ReceiptHandle),
    };
  };
  // A handle whose lease ended at once, with no receive since.
  await ok(sqs, 'SendMessage', { QueueUrl, MessageBody: 'lapsed' });
  const lapsedAnswers = await allFour(await handle(0), 0);
  const lapsedLeft = await left();
  for (const { ReceiptHandle } of await receive(30))
    await ok(sqs, 'DeleteMessage', { QueueUrl, ReceiptHandle });
  // A handle superseded by a second consumer's receive.
  await ok(sqs, 'SendMessage', { QueueUrl, MessageBody: 'superseded' });
  const first = await handle(0);
  const latest = await handle(30);
  const supersededAnswers = await allFour(first, 30);
  const supersededLeft = await left();
  return {
    lapsed: { answers: lapsedAnswers, left: lapsedLeft },
    superseded: { answers: supersededAnswers, left: supersededLeft },
    latestDelete: answerOf(await sqs.call('DeleteMessage', { QueueUrl, ReceiptHandle: latest }), latest),
    leftAtEnd: await left(),
  };
}

/** The refused stale handles /metrics reports for `queue`, by action. */
function staleCounts(metrics: string, queue: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of metrics.split('\n')) {
    const match = /^sluice_stale_receipt_handles_total\{queue="([^"]+)",action="([^"]+)"\} (\d+)$/.exec(line);
    if (match?.[1] === queue) counts[match[2]!] = Number(match[3]);
  }
  return counts;
}

const dir = mkdtempSync(join(tmpdir(), 'sluice-strict-'));
const servers = {} as Record<ServerName, RunningServer>;

const clients: Array<{
  label: string;
  skip: string | false;
  missing?: string;
  open: (endpoint: string) => Promise<SqsCaller>;
}> = [
  { label: '@aws-sdk/client-sqs (json)', skip: false, open: async (endpoint) => jsSdkCaller(endpoint) },
  // Debian's boto3 1.26 (Query) is required in CI; a newer boto3 on PATH (JSON) runs too when there is one.
  ...PYTHONS.map((python) => ({
    label: `${python.label} (${python.protocol})`,
    ...availability(python, python.bin !== undefined && hasBoto3(python.bin)),
    open: (endpoint: string) => boto3Caller(python.bin!, endpoint),
  })),
];
/** Each client has its own queues, named by its index. */
const queueName = (client: number, queue: string) => `c${client}-${queue}`;
/** The clients whose scenarios ran, for the /metrics check. */
const ran: number[] = [];

before(async () => {
  const config = (strictReceiptHandles: boolean) => {
    const file = join(dir, `${strictReceiptHandles}.json`);
    const queue = strictReceiptHandles ? 'guarded' : 'exempt';
    const queues = clients.map((_, index) => ({ name: queueName(index, queue), strictReceiptHandles }));
    writeFileSync(file, JSON.stringify({ queues }));
    return file;
  };
  [servers.flagged, servers.configured] = await Promise.all([
    startServer({ inMemory: true, args: ['--strict-receipt-handles', '--config', config(false)] }),
    startServer({ inMemory: true, args: ['--config', config(true)] }),
  ]);
});
after(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
  removeDataDir(dir);
});

for (const [index, client] of clients.entries()) {
  describe(client.label, { skip: client.skip, concurrency: false }, () => {
    const callers = {} as Record<ServerName, SqsCaller>;
    before(async () => {
      assert.ok(!client.missing, client.missing);
      callers.flagged = await client.open(servers.flagged.endpoint);
      callers.configured = await client.open(servers.configured.endpoint);
      assert.equal(callers.flagged.protocol, client.label.endsWith('(json)') ? 'json' : 'query');
      ran.push(index);
    });
    after(async () => {
      await Promise.all(Object.values(callers).map((caller) => caller.close()));
    });

    for (const { title, server, queue, expected } of CASES) {
      test(title, async () => {
        assert.deepEqual(await staleHandles(callers[server], queueName(index, queue)), expected);
      });
    }
  });
}

describe('/metrics', () => {
  test('counts the stale handles each queue refused, by action', async () => {
    assert.ok(ran.length > 0, 'no client ran');
    // Scraped once every client is done: a scrape within a second of another gets the same render.
    const scraped = {
      flagged: await (await fetch(`${servers.flagged.endpoint}/metrics`)).text(),
      configured: await (await fetch(`${servers.configured.endpoint}/metrics`)).text(),
    };
    const twiceEach = Object.fromEntries(ACTIONS.map((action) => [action, 2]));
    for (const client of ran) {
      for (const { server, queue, expected } of CASES) {
        const name = queueName(client, queue);
        assert.deepEqual(staleCounts(scraped[server], name), expected === STRICT ? twiceEach : {}, name);
      }
    }
  });
});
