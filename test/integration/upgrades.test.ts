import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../packages/server/src/store/postgres/schema.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../packages/server/src/store/sqlite/schema.ts';
import { freshDatabase } from '../../tools/postgres.ts';
import { docSession, readDoc, sectionBlocks } from '../helpers/doc-blocks.ts';
import { postgresAtVersion, sqliteAtVersion } from '../helpers/earlier-schema.ts';
import { startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * docs/operations/upgrades.md: a database left by an earlier version is migrated at start and keeps its
 * queues; the page's commands show the applied version.
 */

const [SQLITE_VERSION, POSTGRES_VERSION] = sectionBlocks(
  readDoc('docs/operations/upgrades.md'),
  'Where the version is kept',
);
const HAS_SQLITE_CLI = spawnSync('sqlite3', ['-version']).status === 0;
const NOW = Date.UTC(2026, 11, 1);

/** The queue an earlier version left behind is served, and takes a message, after the upgrade. */
async function assertServes(endpoint: string): Promise<void> {
  const sqs = sqsClient(endpoint);
  try {
    const QueueUrl = `${endpoint}/000000000000/left-by-an-earlier-version`;
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'after the upgrade' }));
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
    assert.deepEqual(
      Messages.map((m) => m.Body),
      ['after the upgrade'],
    );
  } finally {
    sqs.destroy();
  }
}

describe('upgrading a SQLite database', { skip: HAS_SQLITE_CLI ? false : 'needs sqlite3' }, () => {
  for (let version = 1; version < SQLITE_MIGRATIONS.length; version++) {
    test(`from version ${version}: migrated at start, queues kept, user_version shown as the page says`, async () => {
      const session = docSession('');
      const dataDir = join(session.dir, 'sluice-data');
      try {
        mkdirSync(dataDir);
        const db = new Database(join(dataDir, 'sluice.db'));
        sqliteAtVersion(db, version);
        db.prepare(
          `INSERT INTO queues (name, fifo, attributes, tags, created_at, last_modified_at)
           VALUES ('left-by-an-earlier-version', 0, '{}', '{}', ?, ?)`,
        ).run(NOW, NOW);
        db.close();

        const server = await startServer({ dataDir });
        try {
          await assertServes(server.endpoint);
        } finally {
          await server.stop();
        }
        const shown = await session.run(SQLITE_VERSION!);
        assert.equal(shown.exitCode, 0, shown.output);
        assert.equal(shown.output.trim(), String(SQLITE_MIGRATIONS.length));
      } finally {
        session.close();
      }
    });
  }
});

describe('upgrading a PostgreSQL database', () => {
  for (let version = 1; version < POSTGRES_MIGRATIONS.length; version++) {
    test(`from version ${version}: migrated at start, queues kept, schema_migrations as the page says`, async () => {
      const database = await freshDatabase('sluice_upgrade');
      const session = docSession('', { SLUICE_DB: database.url });
      try {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          await postgresAtVersion(client, version);
          await client.query(
            `INSERT INTO queues (name, fifo, attributes, tags, created_at, last_modified_at)
             VALUES ('left-by-an-earlier-version', false, '{}', '{}', $1, $1)`,
            [NOW],
          );
        } finally {
          await client.end();
        }

        const server = await startServer({ args: ['--store', database.url] });
        try {
          await assertServes(server.endpoint);
        } finally {
          await server.stop();
        }
        const shown = await session.run(POSTGRES_VERSION!);
        assert.equal(shown.exitCode, 0, shown.output);
        const versions = [...shown.output.matchAll(/^\s*(\d+) \|/gm)].map((m) => Number(m[1]));
        assert.deepEqual(
          versions,
          POSTGRES_MIGRATIONS.map((_, i) => i + 1),
        );
      } finally {
        session.close();
        await database.drop();
      }
    });
  }
});
