import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  ChangeMessageVisibilityCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { deadLetteredOrders } from '../helpers/dead-lettered.ts';
import {
  NEEDS_OWN_SERVER,
  type RunningServer,
  removeDataDir,
  SLUICE_CLI,
  startServer,
} from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const run = promisify(execFile);

interface AuditEntry {
  actor: string;
  via: string;
  action: string;
  source: string;
  destination?: string;
  count: number;
  skipped: number;
}

/**
 * `sluice redrive --id/--search` replays a selection through the server's triage API, skipping what a
 * consumer holds, and `sluice audit` lists it with the move task the CLI started; run as real processes.
 */
describe('sluice redrive --id/--search and sluice audit', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let sqs: SQSClient;
  let dlqUrl: string;
  let sourceUrl: string;
  /** The DLQ message a consumer holds during the replay by id. */
  let held: { MessageId?: string; ReceiptHandle?: string } | undefined;

  const sluice = (...args: string[]) =>
    run(process.execPath, [...SLUICE_CLI, ...args], {
      env: { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' },
    });
  const visible = async (url: string) => {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    return Number(Attributes!.ApproximateNumberOfMessages);
  };

  before(async () => {
    server = await startServer();
    sqs = sqsClient(server.endpoint, { credentials: { accessKeyId: 'sluice', secretAccessKey: 'sluice' } });
    ({ dlqUrl, sourceUrl } = await deadLetteredOrders(
      sqs,
      [0, 1, 2, 3, 4].map((order) => ({ MessageBody: JSON.stringify({ order }) })),
    ));
    assert.equal(await visible(dlqUrl), 5);
  });
  after(async () => {
    sqs?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  it('replays the messages a search finds, back to their source', async () => {
    const { stderr } = await sluice(
      'redrive',
      '--source',
      'orders-dlq',
      '--search',
      '"order":1',
      '--endpoint',
      server.endpoint,
    );
    assert.match(stderr, /replaying 1 message of orders-dlq back to their source queues/);
    assert.match(stderr, /DONE: 1 moved, 0 skipped/);
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: sourceUrl, VisibilityTimeout: 0 }),
    );
    assert.equal(Messages?.[0]?.Body, '{"order":1}');
    assert.equal(await visible(dlqUrl), 4);
  });

  it('replays messages by id, skipping and listing one a consumer holds (exit 1)', async () => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 2, VisibilityTimeout: 300 }),
    );
    assert.equal(Messages.length, 2);
    const [freed] = Messages.slice(1);
    held = Messages[0]!;
    // The second is visible again before the replay; the first stays with its consumer.
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: dlqUrl,
        ReceiptHandle: freed!.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    await assert.rejects(
      sluice(
        'redrive',
        '--source',
        'orders-dlq',
        '--destination',
        'orders',
        '--id',
        held!.MessageId!,
        '--id',
        freed!.MessageId!,
        // Two messages: off a terminal, only with --yes (the question is tested in dlq-cli.test.ts).
        '--yes',
        '--endpoint',
        server.endpoint,
      ),
      (failure: { code?: number; stderr?: string }) => {
        assert.equal(failure.code, 1);
        assert.match(failure.stderr ?? '', /DONE: 1 moved, 1 skipped/);
        assert.match(failure.stderr ?? '', new RegExp(`skipped ${held!.MessageId}: in flight`));
        return true;
      },
    );
    assert.equal(await visible(dlqUrl), 2);
  });

  it('refuses --id against AWS and bad audit options with exit code 2', async () => {
    for (const args of [
      ['redrive', '--source', 'orders-dlq', '--id', 'x', '--endpoint', 'aws'],
      ['redrive', '--source', 'orders-dlq', '--filter', 'nonsense', '--search', 'x'],
      ['audit', '--limit', '0'],
      ['audit', '--before', 'x'],
      ['audit', '--bogus'],
    ]) {
      await assert.rejects(sluice(...args), (failure: { code?: number; stderr?: string }) => {
        assert.equal(failure.code, 2, args.join(' '));
        assert.match(failure.stderr ?? '', /^sluice: /);
        return true;
      });
    }
  });

  it('lists the trail: the CLI replays and the move task it started', async () => {
    // Its consumer gives the held message up: the move task then takes all three left.
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: dlqUrl,
        ReceiptHandle: held!.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const moved = await sluice('redrive', '--source', 'orders-dlq', '--endpoint', server.endpoint);
    assert.match(moved.stderr, /COMPLETED/);
    const { stdout } = await sluice('audit', '--json', '--endpoint', server.endpoint);
    const entries = (JSON.parse(stdout) as AuditEntry[]).map(
      ({ actor, via, action, source, destination, count, skipped }) => ({
        actor,
        via,
        action,
        source,
        destination,
        count,
        skipped,
      }),
    );
    assert.deepEqual(entries, [
      {
        actor: 'anonymous',
        via: 'unauthenticated',
        action: 'move-task',
        source: 'orders-dlq',
        destination: 'origin',
        count: 3,
        skipped: 0,
      },
      {
        actor: 'anonymous',
        via: 'unauthenticated',
        action: 'replay',
        source: 'orders-dlq',
        destination: 'orders',
        count: 1,
        skipped: 1,
      },
      {
        actor: 'anonymous',
        via: 'unauthenticated',
        action: 'replay',
        source: 'orders-dlq',
        destination: 'origin',
        count: 1,
        skipped: 0,
      },
    ]);
    const table = await sluice('audit', '--limit', '1', '--endpoint', server.endpoint);
    const lines = table.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2);
    assert.match(
      lines[0]!,
      /^id\s+time \(UTC\)\s+actor\s+via\s+action\s+from\s+to\s+count\s+skipped\s+detail$/,
    );
    assert.match(lines[1]!, /anonymous\s+unauthenticated\s+move-task\s+orders-dlq\s+origin\s+3\s+0\s+task /);
  });
});
