import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { freshDatabase } from '../../tools/postgres.ts';
import {
  type CodeBlock,
  type DocSession,
  docSession,
  readDoc,
  sectionBlocks,
} from '../helpers/doc-blocks.ts';
import { type RunningServer, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * docs/operations/backups.md, run as written: its shell blocks are the backup and restore steps, and the
 * test checks what the page promises around them, against really started servers.
 */

const PAGE = readDoc('docs/operations/backups.md');
const SENT = ['first', 'second', 'third'];
const HAS_SQLITE_CLI = spawnSync('sqlite3', ['-version']).status === 0;

async function sendAll(endpoint: string): Promise<void> {
  const sqs = sqsClient(endpoint);
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'kept' }));
    const { Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: SENT.map((body, i) => ({ Id: String(i), MessageBody: body })),
      }),
    );
    assert.deepEqual(Failed, []);
  } finally {
    sqs.destroy();
  }
}

/** Receives (and deletes, when asked) every message of `kept`; receives until three empty answers. */
async function drain(endpoint: string, remove: boolean): Promise<string[]> {
  const sqs: SQSClient = sqsClient(endpoint);
  const QueueUrl = `${endpoint}/000000000000/kept`;
  const bodies: string[] = [];
  try {
    for (let empty = 0; empty < 3; ) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      if (Messages.length === 0) empty++;
      bodies.push(...Messages.map((m) => m.Body ?? ''));
      if (remove && Messages.length > 0) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl,
            Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
      }
    }
  } finally {
    sqs.destroy();
  }
  return bodies.sort();
}

async function runBlocks(session: DocSession, blocks: readonly CodeBlock[]): Promise<string> {
  let output = '';
  for (const block of blocks) {
    const run = await session.run(block);
    output += run.output;
    assert.equal(run.exitCode, 0, `${block.code}\n${run.output}`);
  }
  return output;
}

interface Scene {
  session: DocSession;
  dataDir: string;
  /** The first server, on `sluice-data`, holding SENT. */
  server: RunningServer;
  /** Starts another server (stopped at the end too). */
  start(dataDir: string): Promise<RunningServer>;
}

/** A scratch directory with a server on its `sluice-data` holding SENT; every server stopped, all removed after. */
async function inScene(body: (scene: Scene) => Promise<void>): Promise<void> {
  const session = docSession('');
  const dataDir = join(session.dir, 'sluice-data');
  const started: RunningServer[] = [];
  const start = async (dir: string) => {
    const server = await startServer({ dataDir: dir });
    started.push(server);
    return server;
  };
  try {
    const server = await start(dataDir);
    await sendAll(server.endpoint);
    await body({ session, dataDir, server, start });
  } finally {
    for (const server of started) await server.stop();
    session.close();
  }
}

describe('docs/operations/backups.md, SQLite', { skip: HAS_SQLITE_CLI ? false : 'needs sqlite3' }, () => {
  const backup = sectionBlocks(PAGE, 'SQLite: stop, copy, start');
  assert.equal(backup.length, 2, 'the SQLite section has a backup block and a restore block');

  test('a running server refuses online copies; a stopped one is copied, and the copy restores', () =>
    inScene(async ({ session, dataDir, server, start }) => {
      const copy = `.backup ${join(session.dir, 'x.db')}`;
      const online = spawnSync('sqlite3', [join(dataDir, 'sluice.db'), copy], { encoding: 'utf8' });
      assert.notEqual(online.status, 0);
      assert.match(online.stderr, /database is locked/);

      await server.stop();
      assert.ok(!existsSync(join(dataDir, 'sluice.db-wal')), 'a clean stop folds the log into sluice.db');
      assert.match(await runBlocks(session, [backup[0]!]), /^ok$/m);

      // Consumed after the backup, then restored: the backup's messages are back.
      const consumed = await start(dataDir);
      assert.deepEqual(await drain(consumed.endpoint, true), [...SENT].sort());
      await consumed.stop();
      await runBlocks(session, [backup[1]!]);
      const restored = await start(dataDir);
      assert.deepEqual(await drain(restored.endpoint, false), [...SENT].sort());
    }));

  test('the directory of a server killed with SIGKILL, log included, is a complete backup', () =>
    inScene(async ({ session, dataDir, server, start }) => {
      await server.kill();
      assert.ok(existsSync(join(dataDir, 'sluice.db-wal')), 'the killed server left its log');
      // What the page warns about: sluice.db alone lacks what the log holds.
      const alone = join(session.dir, 'db-alone');
      mkdirSync(alone);
      copyFileSync(join(dataDir, 'sluice.db'), join(alone, 'sluice.db'));
      const partial = await start(alone);
      assert.notDeepEqual(await drain(partial.endpoint, false).catch(() => []), [...SENT].sort());
      await partial.stop();
      await runBlocks(session, backup);
      const restored = await start(dataDir);
      assert.deepEqual(await drain(restored.endpoint, false), [...SENT].sort());
    }));
});

describe('docs/operations/backups.md, PostgreSQL', () => {
  test('pg_dump of a running node, restored into an empty database, serves every message', async () => {
    const [dump, restore] = sectionBlocks(PAGE, 'PostgreSQL: pg_dump');
    assert.ok(dump && restore, 'the PostgreSQL section has a dump block and a restore block');
    const source = await freshDatabase('sluice_backup');
    const restored = await freshDatabase('sluice_restored');
    const session = docSession('', { SLUICE_DB: source.url, RESTORED_DB: restored.url });
    let server: RunningServer | undefined;
    try {
      server = await startServer({ args: ['--store', source.url] });
      await sendAll(server.endpoint);
      await runBlocks(session, [dump]);
      await server.stop();
      await runBlocks(session, [restore]);
      server = await startServer({ args: ['--store', restored.url] });
      assert.deepEqual(await drain(server.endpoint, false), [...SENT].sort());
    } finally {
      await server?.stop();
      session.close();
      await source.drop();
      await restored.drop();
    }
  });
});
