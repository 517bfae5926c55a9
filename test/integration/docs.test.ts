import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { type BlockRun, docSession, readDoc, sectionBlocks } from '../helpers/doc-blocks.ts';
import { useServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * The README's quick start and the consumer walkthrough, run as written, block after block, each on a fresh
 * server. The test starts the server itself (on a free port, from the sources) and points the blocks at it;
 * everything else is the pages' own text (see docSession for the one rewrite).
 */

function describeRuns(runs: readonly BlockRun[]): string {
  return runs
    .map((r) => `--- ${r.lang} block (exit ${r.exitCode})\n${r.code}\n--- output\n${r.output}`)
    .join('\n');
}

/** Runs the blocks in order, stopping at the first that fails, and asserts they all succeeded. */
async function runAll(endpoint: string, blocks: ReturnType<typeof sectionBlocks>): Promise<BlockRun[]> {
  const session = docSession(endpoint);
  const runs: BlockRun[] = [];
  try {
    // Commands are `sh` blocks and programs `ts` blocks; others (json, output) are shown, not run.
    for (const block of blocks.filter((b) => b.lang === 'sh' || b.lang === 'ts')) {
      const run = await session.run(block);
      runs.push(run);
      assert.equal(run.exitCode, 0, `a block failed:\n${describeRuns(runs)}`);
    }
  } finally {
    session.close();
  }
  return runs;
}

describe('README.md', () => {
  test('the first of the two commands starts the server, and the quick start runs against it', async () => {
    const readme = readDoc('README.md');
    const [serverBlock] = sectionBlocks(readme, 'Two commands');
    // `npm ci` is the checkout's install, which CI has done before the tests; the rest starts the server.
    const command = /^npm ci && npx sluice serve(?<args>( \S+)*)$/.exec(serverBlock?.code.trim() ?? '');
    assert.ok(command, `the first command is not "npm ci && npx sluice serve ...": ${serverBlock?.code}`);
    const server = await useServer({ args: command.groups!.args!.split(' ').filter(Boolean) });
    try {
      const blocks = sectionBlocks(readme, 'Quick start');
      assert.deepEqual(
        blocks.map((b) => b.lang),
        ['sh', 'ts'],
      );
      const [cli, sdk] = await runAll(server.endpoint, blocks);
      assert.match(cli!.output, /"Body": "hello from the CLI"/);
      assert.match(sdk!.output, /hello from TypeScript/);
    } finally {
      await server.close();
    }
  });
});

describe('docs/client/consumer.md', () => {
  test('the walkthrough runs as written: queues, orders, consumer, poison message in the DLQ, redrive', async () => {
    const server = await useServer();
    const sqs = sqsClient(server.endpoint);
    try {
      const blocks = sectionBlocks(readDoc('docs/client/consumer.md'), 'Walkthrough');
      assert.deepEqual(
        blocks.map((b) => b.lang),
        ['sh', 'sh', 'ts', 'sh', 'sh'],
      );
      const [, , consumer, dlq] = await runAll(server.endpoint, blocks);
      for (const order of ['o-1', 'o-2', 'o-3'])
        assert.match(consumer!.output, new RegExp(`charged ${order}`));
      assert.match(consumer!.output, /this is not JSON: dead-lettered/);
      assert.match(dlq!.output, /"SluiceError"/);

      // What the page says happened did: the malformed message is back in `orders`, the DLQ is empty.
      const url = (name: string) => `${server.endpoint}/000000000000/${name}`;
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url('orders-dlq'), AttributeNames: ['All'] }),
      );
      assert.equal(Attributes?.ApproximateNumberOfMessages, '0');
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url('orders'), MaxNumberOfMessages: 10 }),
      );
      assert.deepEqual(
        Messages.map((m) => m.Body),
        ['this is not JSON'],
      );
    } finally {
      sqs.destroy();
      await server.close();
    }
  });
});

/** The quick start's `export AWS_...` line: the guide's pages say their commands run with it exported. */
function quickStartExports(): ReturnType<typeof sectionBlocks>[number] {
  const [cli] = sectionBlocks(readDoc('README.md'), 'Quick start');
  const line = cli?.code.split('\n').find((l) => l.startsWith('export AWS_'));
  assert.ok(line, 'the quick start exports no AWS_ variables');
  return { lang: 'sh', code: line };
}

/** Bodies left in a queue after a page ran, to check what the page says happened. */
async function bodiesIn(endpoint: string, queue: string): Promise<string[]> {
  const sqs = sqsClient(endpoint);
  try {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: `${endpoint}/000000000000/${queue}`, MaxNumberOfMessages: 10 }),
    );
    return Messages.map((m) => m.Body ?? '').sort();
  } finally {
    sqs.destroy();
  }
}

const GUIDE_PAGES = [
  { page: 'docs/guide/fifo.md', title: 'FIFO and fair queues', check: async () => {} },
  {
    page: 'docs/guide/dead-letter-queues.md',
    title: 'Dead-letter queues',
    // Dead-lettered on the third receive, then redriven back; the filtered redrive moved the other one.
    // The triage from the command line replayed every email, the mistyped address fixed.
    check: async (endpoint: string) => {
      assert.deepEqual(await bodiesIn(endpoint, 'jobs-dlq'), []);
      assert.deepEqual(await bodiesIn(endpoint, 'jobs'), [
        'resize image 17',
        '{"customer":{"id":"c-9"},"task":"resize"}',
      ]);
      assert.deepEqual(await bodiesIn(endpoint, 'emails-dlq'), []);
      assert.deepEqual(
        await bodiesIn(endpoint, 'emails'),
        ['ana@example.com', 'bo@example.com', 'cy@example.com'].map(
          (to) => `{"to":"${to}","template":"welcome"}`,
        ),
      );
    },
  },
];

for (const { page, title, check } of GUIDE_PAGES) {
  describe(page, () => {
    test("every block runs as written, in order, after the quick start's exports", async () => {
      const server = await useServer();
      try {
        const blocks = sectionBlocks(readDoc(page), title);
        assert.ok(blocks.length > 0);
        await runAll(server.endpoint, [quickStartExports(), ...blocks]);
        await check(server.endpoint);
      } finally {
        await server.close();
      }
    });
  });
}

describe('the block runner', () => {
  test('fails a run when a block fails, and stops there', async () => {
    const server = await useServer();
    try {
      const page = [
        '## Broken',
        '```sh',
        'export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1',
        'aws --endpoint-url http://127.0.0.1:9324 sqs get-queue-url --queue-name no-such-queue',
        'echo "reached-$((40 + 2))"',
        '```',
        '```ts',
        "throw new Error('never reached');",
        '```',
      ].join('\n');
      await assert.rejects(runAll(server.endpoint, sectionBlocks(page, 'Broken')), (error: Error) => {
        assert.match(error.message, /NonExistentQueue|QueueDoesNotExist/);
        // Neither the rest of the failing block nor the next block ran.
        assert.doesNotMatch(error.message, /reached-42|--- ts block/);
        return true;
      });
      const session = docSession(server.endpoint);
      try {
        const thrown = await session.run({ lang: 'ts', code: "throw new Error('a broken example');" });
        assert.notEqual(thrown.exitCode, 0);
        assert.match(thrown.output, /a broken example/);
        const stray = await session.run({ lang: 'sh', code: 'curl -s http://localhost:9324/health' });
        assert.equal(stray.exitCode, null, 'a block reaching the default port some other way is refused');
      } finally {
        session.close();
      }
    } finally {
      await server.close();
    }
  });
});
