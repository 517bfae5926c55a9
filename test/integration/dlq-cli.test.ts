import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
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
import { runInTerminal } from '../helpers/terminal.ts';

const runFile = promisify(execFile);

/** What a finished command printed, and its exit status, whatever the status. */
interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Characters that must never reach a terminal raw from a message: CR, C1 controls, bidi overrides. */
const RAW_CONTROL = /[\r\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

interface ListedMessage {
  messageId: string;
  body: string;
  receiveCount: number;
  state: string;
}

/**
 * `sluice dlq` (list, search, show, replay, delete) against a really started server, each command a real CLI
 * process: with stdin a pipe, as scripts run it, and on a pseudo-terminal for its questions. Also the preview and
 * the confirmation of `sluice redrive --id/--search`.
 */
describe('sluice dlq', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let sqs: SQSClient;
  let scratch: string;
  /** Unsigned, as a server without credentials takes it. */
  const env = { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' };

  const sluice = async (...args: string[]): Promise<Ran> => {
    try {
      const { stdout, stderr } = await runFile(process.execPath, [...SLUICE_CLI, ...args], { env });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failure = error as { code?: number; stdout?: string; stderr?: string };
      if (typeof failure.code !== 'number') throw error;
      return { code: failure.code, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
    }
  };
  /** `sluice dlq ARGS --endpoint SERVER`. */
  const dlq = (...args: string[]) => sluice('dlq', ...args, '--endpoint', server.endpoint);
  /** `sluice ARGS --endpoint SERVER` on a terminal. */
  const terminal = (...args: string[]) =>
    runInTerminal([process.execPath, ...SLUICE_CLI, ...args, '--endpoint', server.endpoint], {
      env: { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' },
    });
  const url = (name: string) => `${server.endpoint}/000000000000/${name}`;
  const visible = async (name: string) => {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url(name),
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(Attributes!.ApproximateNumberOfMessages) +
      Number(Attributes!.ApproximateNumberOfMessagesNotVisible)
    );
  };
  /** `SOURCE-dlq` holding `count` dead-lettered messages `{"order":1}`... of `SOURCE`. */
  const scene = async (source: string, count: number) => {
    await deadLetteredOrders(
      sqs,
      Array.from({ length: count }, (_, i) => ({ MessageBody: `{"order":${i + 1}}` })),
      source,
    );
    assert.equal(await visible(`${source}-dlq`), count);
  };
  const listed = async (queue: string): Promise<ListedMessage[]> => {
    const { code, stdout } = await dlq('list', queue, '--all', '--json');
    assert.equal(code, 0);
    return (JSON.parse(stdout) as { messages: ListedMessage[] }).messages;
  };
  /** The lines of a table below its header. */
  const rows = (table: string) => table.trimEnd().split('\n').slice(1);

  before(async () => {
    server = await startServer();
    sqs = sqsClient(server.endpoint);
    scratch = mkdtempSync(join(tmpdir(), 'sluice-dlq-cli-'));
    await scene('page', 5);
  });
  after(async () => {
    sqs?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('lists a queue a page at a time off a terminal, with the next page’s cursor, --all and --json, receiving nothing', async () => {
    const first = await dlq('list', 'page-dlq', '--limit', '2');
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^message id +state +receives +sent \(UTC\) +origin +body\n/);
    assert.deepEqual(
      rows(first.stdout).map((line) => line.split(/\s{2,}/).slice(1)),
      [
        ['visible', '1', first.stdout.match(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/)![0], 'page', '{"order":1}'],
        ['visible', '1', first.stdout.match(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g)![1], 'page', '{"order":2}'],
      ],
    );
    const cursor = /more after this page: --after (\S+) \(or --all\)/.exec(first.stderr)?.[1];
    assert.ok(cursor, first.stderr);
    const second = await dlq('list', 'page-dlq', '--limit', '2', '--after', cursor);
    assert.deepEqual(
      rows(second.stdout).map((line) => line.split(/\s{2,}/).at(-1)),
      ['{"order":3}', '{"order":4}'],
    );
    const all = await dlq('list', 'page-dlq', '--all');
    assert.equal(rows(all.stdout).length, 5);
    assert.equal(all.stderr, '');

    const page = JSON.parse((await dlq('list', 'page-dlq', '--limit', '2', '--json')).stdout) as {
      queue: string;
      messages: ListedMessage[];
      next?: string;
    };
    assert.equal(page.queue, 'page-dlq');
    assert.deepEqual(
      page.messages.map((m) => m.body),
      ['{"order":1}', '{"order":2}'],
    );
    assert.equal(page.next, cursor);
    const everything = await listed('page-dlq');
    assert.equal(everything.length, 5);
    // Read five times over, received never: the counts and states are as the dead-letter move left them.
    assert.deepEqual(
      everything.map((m) => [m.receiveCount, m.state]),
      Array(5).fill([1, 'visible']),
    );
  });

  it('pages on a terminal: Enter shows the next page, q stops', async () => {
    const run = terminal('dlq', 'list', 'page-dlq', '--limit', '2');
    await run.waitFor(/-- more: Enter for the next 2, q to stop -- /);
    assert.match(run.output(), /\{"order":2\}/);
    assert.doesNotMatch(run.output(), /\{"order":3\}/);
    run.type('\r');
    await run.waitFor(/\{"order":4\}[\s\S]*-- more: Enter for the next 2/);
    run.type('q\r');
    assert.equal(await run.exited, 0);
    assert.doesNotMatch(run.output(), /\{"order":5\}/);
  });

  it('searches by text and filter, and shows one message with every field escaped; --json gives it exactly', async () => {
    await sqs.send(new CreateQueueCommand({ QueueName: 'raw' }));
    // SQS takes CR, LF, C1 controls and bidi overrides in a body: each could drive or mislead a terminal.
    const hostile = 'forged\rOK\nline 2 \u009b2J \u202eevil \\n end';
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: url('raw'),
        MessageBody: hostile,
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'x\ny' } },
      }),
    );
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: url('raw'),
        MessageBody: '{"customer":"c-9"}',
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'refund' } },
      }),
    );
    const escaped = 'forged\\rOK\\nline 2 \\x9b2J \\u{202e}evil \\\\n end';

    const found = await dlq('search', 'raw', '--text', 'forged');
    assert.equal(found.code, 0, found.stderr);
    assert.equal(rows(found.stdout).length, 1);
    assert.ok(found.stdout.trimEnd().endsWith(escaped), found.stdout);
    assert.doesNotMatch(found.stdout, RAW_CONTROL);
    const refunds = await dlq('search', 'raw', '--filter', 'attr.kind=refund');
    assert.deepEqual(
      rows(refunds.stdout).map((line) => line.split(/\s{2,}/).at(-1)),
      ['{"customer":"c-9"}'],
    );
    const none = await dlq('search', 'raw', '--text', 'nowhere');
    assert.equal(none.stdout, 'no message of raw matches\n');

    const [message] = (
      JSON.parse((await dlq('search', 'raw', '--text', 'forged', '--json')).stdout) as {
        messages: ListedMessage[];
      }
    ).messages;
    const shown = await dlq('show', 'raw', message!.messageId);
    assert.equal(shown.code, 0, shown.stderr);
    assert.doesNotMatch(shown.stdout, RAW_CONTROL);
    const lines = shown.stdout.trimEnd().split('\n');
    assert.deepEqual(lines.slice(0, 2), [`message id  ${message!.messageId}`, 'state       visible']);
    assert.ok(lines.includes('attributes  kind (String) = x\\ny'), shown.stdout);
    assert.ok(lines.includes(`body        ${Buffer.byteLength(hostile)} bytes`), shown.stdout);
    assert.equal(lines.at(-1), escaped);

    const json = await dlq('show', 'raw', message!.messageId, '--json');
    assert.doesNotMatch(json.stdout, RAW_CONTROL);
    const exact = JSON.parse(json.stdout) as ListedMessage & { messageAttributes: unknown };
    assert.equal(exact.body, hostile);
    assert.deepEqual(exact.messageAttributes, { kind: { DataType: 'String', StringValue: 'x\ny' } });

    // An id typed with an escape sequence in it is printed escaped too.
    const missing = await dlq('show', 'raw', 'no\u001b]0;title\u0007such');
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'sluice dlq: no message no\\x1b]0;title\\x07such in raw\n');
  });

  it('--dry-run lists what a replay or delete would touch, and changes nothing', async () => {
    await scene('dry', 3);
    const dry = await dlq('replay', 'dry-dlq', '--text', 'order', '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    const [title, , ...messages] = dry.stdout.trimEnd().split('\n');
    assert.equal(title, 'would replay 3 messages of dry-dlq back to their source queues:');
    assert.equal(messages.length, 3);
    const json = JSON.parse(
      (await dlq('delete', 'dry-dlq', '--filter', 'body.order=2', '--dry-run', '--json')).stdout,
    ) as {
      dryRun: boolean;
      action: string;
      messages: ListedMessage[];
    };
    assert.deepEqual(
      [json.dryRun, json.action, json.messages.map((m) => m.body)],
      [true, 'delete', ['{"order":2}']],
    );
    assert.equal(await visible('dry-dlq'), 3);
    assert.equal(await visible('dry'), 0);
    const audit = JSON.parse(
      (await sluice('audit', '--json', '--endpoint', server.endpoint)).stdout,
    ) as Array<{
      source: string;
    }>;
    assert.deepEqual(
      audit.filter((entry) => entry.source === 'dry-dlq'),
      [],
    );
  });

  it('refuses to change several messages without --yes when there is no terminal to ask on (exit 2)', async () => {
    for (const args of [
      ['delete', 'dry-dlq', '--text', 'order'],
      ['replay', 'dry-dlq', ...(await listed('dry-dlq')).slice(0, 2).map((m) => m.messageId)],
    ]) {
      const refused = await dlq(...args);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(
        refused.stderr,
        /^sluice: this would (delete|replay) \d messages of dry-dlq.*confirm with --yes/,
      );
    }
    assert.equal(await visible('dry-dlq'), 3);
  });

  it('asks on a terminal before touching several messages: "n" keeps them, "y" goes ahead', async () => {
    const declined = terminal('dlq', 'delete', 'dry-dlq', '--text', 'order');
    await declined.waitFor(/Delete 3 messages\? \[y\/N\] /);
    assert.match(declined.output(), /this would delete 3 messages of dry-dlq:\nmessage id +state/);
    declined.type('n\r');
    assert.equal(await declined.exited, 1);
    assert.match(declined.output(), /nothing changed/);
    assert.equal(await visible('dry-dlq'), 3);

    const accepted = terminal('dlq', 'replay', 'dry-dlq', '--filter', 'body.order~[12]');
    await accepted.waitFor(/Replay 2 messages\? \[y\/N\] /);
    accepted.type('y\r');
    assert.equal(await accepted.exited, 0, accepted.output());
    assert.match(accepted.output(), /DONE: 2 moved, 0 skipped/);
    assert.equal(await visible('dry-dlq'), 1);
    assert.equal(await visible('dry'), 2);
  });

  it('replays one message with a body from a file and new attributes to another queue; --json says what it did', async () => {
    await scene('edit', 2);
    await sqs.send(new CreateQueueCommand({ QueueName: 'edit-fixed' }));
    const [first] = await listed('edit-dlq');
    const bodyFile = join(scratch, 'body.json');
    // Taken exactly as it is: the editor's final newline too.
    writeFileSync(bodyFile, '{"order":"fixed"}\n');

    for (const [args, error] of [
      [
        ['--text', 'order', '--body', 'x', '--yes'],
        /a new body is for one message at a time, and 2 are selected/,
      ],
      [
        [first!.messageId, '--body', 'x', '--body-file', bodyFile],
        /--body and --body-file exclude each other/,
      ],
      [[first!.messageId, '--attributes', '[1]'], /the message attributes must be a JSON object/],
    ] as const) {
      const refused = await dlq('replay', 'edit-dlq', ...args);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, error);
    }
    const replayed = await dlq(
      'replay',
      'edit-dlq',
      first!.messageId,
      '--body-file',
      bodyFile,
      '--attributes',
      '{"kind": {"DataType": "String", "StringValue": "fixed"}}',
      '--destination',
      'edit-fixed',
      '--json',
    );
    assert.equal(replayed.code, 0, replayed.stderr);
    const outcome = JSON.parse(replayed.stdout) as {
      action: string;
      done: Array<{ messageId: string; destination: string; newMessageId: string }>;
      skipped: unknown[];
      audit: Array<{ action: string; via: string; destination: string; count: number }>;
    };
    assert.deepEqual(
      outcome.done.map(({ messageId, destination }) => ({ messageId, destination })),
      [{ messageId: first!.messageId, destination: 'edit-fixed' }],
    );
    assert.deepEqual(outcome.skipped, []);
    assert.deepEqual(
      outcome.audit.map(({ action, via, destination, count }) => ({ action, via, destination, count })),
      [{ action: 'replay', via: 'unauthenticated', destination: 'edit-fixed', count: 1 }],
    );
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url('edit-fixed'), MessageAttributeNames: ['All'] }),
    );
    assert.equal(Messages[0]?.MessageId, outcome.done[0]?.newMessageId);
    assert.equal(Messages[0]?.Body, '{"order":"fixed"}\n');
    assert.equal(Messages[0]?.MessageAttributes?.kind?.StringValue, 'fixed');
    assert.equal(await visible('edit-dlq'), 1);
  });

  it('skips and lists a message a consumer holds, in the preview and in the deletion (exit 1)', async () => {
    await scene('held', 3);
    const ids = (await listed('held-dlq')).map((m) => m.messageId);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url('held-dlq'), VisibilityTimeout: 300 }),
    );
    const held = Messages[0]!.MessageId!;
    const preview = await dlq('delete', 'held-dlq', ...ids, '--dry-run');
    assert.match(preview.stdout, new RegExp(`${held} +in flight`));
    assert.match(preview.stdout, /1 message in flight: a consumer holds it, so it would be skipped/);
    const deleted = await dlq('delete', 'held-dlq', ...ids, 'not-there', '--yes');
    assert.equal(deleted.code, 1);
    assert.match(deleted.stderr, /DONE: 2 deleted, 2 skipped/);
    assert.match(deleted.stderr, new RegExp(`skipped ${held}: in flight \\(a consumer holds it\\)`));
    assert.match(deleted.stderr, /skipped not-there: missing/);
    assert.deepEqual(
      (await listed('held-dlq')).map((m) => m.messageId),
      [held],
    );
  });

  it('answers usage mistakes with one line and exit status 2', async () => {
    for (const [args, error] of [
      [['bogus'], 'unknown command "dlq bogus": list, search, show, replay, delete'],
      [['list'], 'name the queue: its name, URL or ARN'],
      [['list', 'q', '--body', 'x'], '--body does not go with `sluice dlq list`'],
      [['list', 'q', '--limit', '0'], '--limit must be an integer from 1 to 100'],
      [['search', 'q'], 'search with --text, --filter or both'],
      [['show', 'q'], '`sluice dlq show` takes the queue and one message id'],
      [['replay', 'q'], 'name the messages: their ids, --text, --filter, or several of these'],
      [
        ['delete', 'q', '--filter', 'nonsense'],
        'filter "nonsense" must look like id=ID, attr.NAME=VALUE, body.PATH=VALUE or body~REGEX',
      ],
      [['list', 'q', '--endpoint', 'aws'], 'triage needs a Sluice server, not AWS'],
    ] as const) {
      const failed = await sluice('dlq', ...args);
      assert.equal(failed.code, 2, args.join(' '));
      assert.equal(failed.stderr, `sluice: ${error}\nRun \`sluice dlq --help\` to see the options.\n`);
    }
  });

  it('signs its requests with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, as a server with credentials requires', async () => {
    const guarded = await startServer({ args: ['--credentials', 'AKIDTRIAGE:triage-secret'] });
    const signed = sqsClient(guarded.endpoint, {
      credentials: { accessKeyId: 'AKIDTRIAGE', secretAccessKey: 'triage-secret' },
    });
    try {
      await signed.send(new CreateQueueCommand({ QueueName: 'locked' }));
      await signed.send(
        new SendMessageCommand({ QueueUrl: `${guarded.endpoint}/000000000000/locked`, MessageBody: 'a' }),
      );
      const withKey = (...args: string[]) =>
        runFile(process.execPath, [...SLUICE_CLI, 'dlq', ...args, '--endpoint', guarded.endpoint], {
          env: { ...process.env, AWS_ACCESS_KEY_ID: 'AKIDTRIAGE', AWS_SECRET_ACCESS_KEY: 'triage-secret' },
        });
      const { stdout } = await withKey('list', 'locked', '--json');
      const [message] = (JSON.parse(stdout) as { messages: ListedMessage[] }).messages;
      assert.equal(message?.body, 'a');
      const deleted = JSON.parse(
        (await withKey('delete', 'locked', message!.messageId, '--json')).stdout,
      ) as {
        audit: Array<{ actor: string; via: string }>;
      };
      assert.deepEqual(
        deleted.audit.map(({ actor, via }) => ({ actor, via })),
        [{ actor: 'AKIDTRIAGE', via: 'signature' }],
      );
      const unsigned = await sluice('dlq', 'list', 'locked', '--endpoint', guarded.endpoint);
      assert.equal(unsigned.code, 1);
      assert.match(unsigned.stderr, /^sluice dlq: GET .* HTTP 401/);
    } finally {
      signed.destroy();
      await guarded.stop();
      removeDataDir(guarded.dataDir);
    }
  });

  describe('sluice redrive --id/--search', () => {
    const replayOrders = ['redrive', '--source', 'redrive-dlq', '--search', 'order'];
    before(() => scene('redrive', 3));

    it('--dry-run lists the messages it would replay and replays none', async () => {
      const dry = await sluice(...replayOrders, '--dry-run', '--endpoint', server.endpoint);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /^would replay 3 messages of redrive-dlq back to their source queues:\n/);
      assert.equal(rows(dry.stdout.split('\n').slice(1).join('\n')).length, 3);
      assert.equal(await visible('redrive-dlq'), 3);
      const misplaced = await sluice(
        'redrive',
        '--source',
        'redrive-dlq',
        '--dry-run',
        '--endpoint',
        server.endpoint,
      );
      assert.equal(misplaced.code, 2);
      assert.match(misplaced.stderr, /--dry-run and --yes go with --id or --search/);
    });

    it('asks before replaying several: refused without a terminal and --yes, done after "y" on a terminal', async () => {
      const refused = await sluice(...replayOrders, '--endpoint', server.endpoint);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /this would replay 3 messages of redrive-dlq .*confirm with --yes/);
      assert.equal(await visible('redrive-dlq'), 3);

      const run = terminal(...replayOrders);
      await run.waitFor(/Replay 3 messages\? \[y\/N\] /);
      run.type('yes\r');
      assert.equal(await run.exited, 0, run.output());
      assert.match(run.output(), /DONE: 3 moved, 0 skipped/);
      assert.equal(await visible('redrive-dlq'), 0);
      assert.equal(await visible('redrive'), 3);
    });
  });
});
