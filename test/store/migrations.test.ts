import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { ReceiveRequest, Store } from '../../packages/server/src/store/contract.ts';
import { PostgresStore } from '../../packages/server/src/store/postgres/postgres-store.ts';
import { MIGRATIONS } from '../../packages/server/src/store/sqlite/schema.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { freshDatabase } from '../../tools/postgres.ts';
import { postgresAtVersion, sqliteAtVersion } from '../helpers/earlier-schema.ts';

/** Migrations that move data: a database an earlier version left, with messages or audit entries in it, is served after. */

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const NOW = 1_000_000;

function receive(queueId: number): ReceiveRequest {
  let tokens = 0;
  return {
    queueId,
    now: NOW,
    max: 10,
    visibleUntil: NOW + 30_000,
    newReceiptToken: () => `token-${++tokens}`,
    maxInFlight: 120_000,
  };
}

/** The fair queue (1) serves all three of its messages by tenant, the FIFO queue (2) its one. */
async function assertServed(store: Store): Promise<void> {
  const fair = await store.receiveMessages(receive(1));
  assert.deepEqual(fair.messages.map((m) => m.body).sort(), ['a first', 'a second', 'no tenant']);
  const fifo = await store.receiveMessages(receive(2));
  assert.deepEqual(
    fifo.messages.map((m) => m.body),
    ['in order'],
  );
}

/** What each row's tenant is after the upgrade: its group in the fair queue, none in the FIFO queue. */
const TENANTS = [
  ['m1', 'a'],
  ['m2', ''],
  ['m3', 'a'],
  ['m4', null],
];

/** What an earlier version left: a fair queue (two tenants) and a FIFO queue, with messages; SQL of both. */
function leftBehind(fifo: (yes: boolean) => string): string {
  const message = (queue: number, id: string, body: string, group: string, dedup: string | null) =>
    `(${queue}, '${id}', '${body}', '${group}', ${dedup === null ? 'NULL' : `'${dedup}'`}, 'md5', 'sender', 0, 0, ${NOW * 10})`;
  return `
  INSERT INTO queues (id, name, fifo, attributes, tags, created_at, last_modified_at)
    VALUES (1, 'fair', ${fifo(false)}, '{}', '{}', 0, 0), (2, 'ordered.fifo', ${fifo(true)}, '{}', '{}', 0, 0);
  INSERT INTO fair_tenants (queue_id, tenant, served_at) VALUES (1, 'a', 0), (1, '', 0);
  INSERT INTO fifo_groups (queue_id, group_id, available_at) VALUES (2, 'g', 0);
  INSERT INTO messages (queue_id, message_id, body, group_id, deduplication_id, md5_of_body, sender_id, sent_at,
      visible_at, expires_at)
    VALUES ${[
      message(1, 'm1', 'a first', 'a', null),
      message(1, 'm2', 'no tenant', '', null),
      message(1, 'm3', 'a second', 'a', null),
      message(2, 'm4', 'in order', 'g', 'dedup-1'),
    ].join(', ')};`;
}

/**
 * A SQLite store opened on a database that an earlier version left at `version` with `leftBehind` (SQL) in
 * it, given to `check`, then closed; the database file.
 */
async function upgradedSqlite(
  version: number,
  leftBehind: string,
  check: (store: Store) => Promise<void>,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-migrations-'));
  dirs.push(dir);
  const file = join(dir, 'sluice.db');
  const old = new Database(file);
  sqliteAtVersion(old, version);
  old.exec(leftBehind);
  old.close();
  const store = new SqliteStore({ dataDir: dir, durability: 'durable' });
  try {
    await check(store);
  } finally {
    await store.close();
  }
  return file;
}

/** The same on a fresh PostgreSQL database, whose URL `inspect` gets after the store is closed, before the drop. */
async function upgradedPostgres(
  version: number,
  leftBehind: string,
  check: (store: Store) => Promise<void>,
  inspect: (url: string) => Promise<void> = async () => {},
): Promise<void> {
  const database = await freshDatabase('sluice_migrations');
  try {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await postgresAtVersion(client, version);
      await client.query(leftBehind);
    } finally {
      await client.end();
    }
    const store = await PostgresStore.open({ connectionString: database.url });
    try {
      await check(store);
    } finally {
      await store.close();
    }
    await inspect(database.url);
  } finally {
    await database.drop();
  }
}

it("SQLite migration 9: a fair queue's rows take their group as tenant and are served by tenant; FIFO rows take none", async () => {
  const file = await upgradedSqlite(
    8,
    leftBehind((yes) => (yes ? '1' : '0')),
    assertServed,
  );
  const migrated = new Database(file, { readonly: true });
  try {
    assert.equal(migrated.pragma('user_version', { simple: true }), MIGRATIONS.length);
    assert.deepEqual(
      migrated.prepare('SELECT message_id, tenant FROM messages ORDER BY seq').raw().all(),
      TENANTS,
    );
  } finally {
    migrated.close();
  }
});

it("PostgreSQL migration 7: a fair queue's rows take their group as tenant and are served by tenant; FIFO rows take none", async () => {
  await upgradedPostgres(
    6,
    leftBehind((yes) => String(yes)),
    assertServed,
    async (url) => {
      const migrated = new pg.Client({ connectionString: url });
      await migrated.connect();
      try {
        const { rows } = await migrated.query({
          text: 'SELECT message_id, tenant FROM messages ORDER BY seq',
          rowMode: 'array',
        });
        assert.deepEqual(rows, TENANTS);
      } finally {
        await migrated.end();
      }
    },
  );
});

/** Queues an earlier version made: FIFO per group, FIFO queue-wide, and standard; SQL of both stores. */
function queuesLeftBehind(fifo: (yes: boolean) => string): string {
  const queue = (id: number, name: string, isFifo: boolean, attributes: Record<string, string>) =>
    `(${id}, '${name}', ${fifo(isFifo)}, '${JSON.stringify(attributes)}', '{}', 0, 0)`;
  return `INSERT INTO queues (id, name, fifo, attributes, tags, created_at, last_modified_at) VALUES ${[
    queue(1, 'per-group.fifo', true, { FifoQueue: 'true', DeduplicationScope: 'messageGroup' }),
    queue(2, 'queue-wide.fifo', true, { FifoQueue: 'true', DeduplicationScope: 'queue' }),
    queue(3, 'standard', false, {}),
  ].join(', ')};`;
}

/** Each queue deduplicates in the scope it showed before the upgrade. */
async function assertScopes(store: Store): Promise<void> {
  const scopes: Record<string, boolean | undefined> = {};
  for (const name of ['per-group.fifo', 'queue-wide.fifo', 'standard'])
    scopes[name] = (await store.getQueue(name))?.deduplicatesPerGroup;
  assert.deepEqual(scopes, { 'per-group.fifo': true, 'queue-wide.fifo': false, standard: false });
}

it('SQLite migration 10: a FIFO queue keeps deduplicating in the scope its attribute showed', async () => {
  await upgradedSqlite(
    9,
    queuesLeftBehind((yes) => (yes ? '1' : '0')),
    assertScopes,
  );
});

it('PostgreSQL migration 8: a FIFO queue keeps deduplicating in the scope its attribute showed', async () => {
  await upgradedPostgres(
    7,
    queuesLeftBehind((yes) => String(yes)),
    assertScopes,
  );
});

/** An audit entry an earlier version left: the whole 4 MiB selection a request named, as it was copied. */
const HUGE_DETAIL = 'x'.repeat(4 * 1024 * 1024);
const OLD_AUDIT_ROW = `INSERT INTO audit_log (at, actor, via, action, source, destination, count, skipped, detail)
  VALUES (${NOW}, 'AKIDOPS', 'cli', 'delete', 'orders-dlq', NULL, 0, 0, '${HUGE_DETAIL}')`;

/** After the migration the entry is kept, its detail cut to 500 characters and an ellipsis, its via as it was. */
function assertAuditCut(row: { detail: string; via: string; edit: unknown; messages: unknown }): void {
  assert.equal(row.detail, `${'x'.repeat(500)}…`);
  assert.equal(row.via, 'cli');
  assert.equal(row.edit, null);
  assert.equal(row.messages, null);
}

it('SQLite migration 11: an audit entry copied whole is cut to its bound, and the trail listed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-migrations-'));
  dirs.push(dir);
  const file = join(dir, 'sluice.db');
  const old = new Database(file);
  sqliteAtVersion(old, 10);
  old.exec(OLD_AUDIT_ROW);
  old.close();

  const store = new SqliteStore({ dataDir: dir, durability: 'durable' });
  try {
    const [entry] = await store.listAudit({ limit: 10 });
    assert.equal(entry?.detail?.length, 501);
  } finally {
    await store.close();
  }
  const migrated = new Database(file, { readonly: true });
  try {
    assertAuditCut(migrated.prepare('SELECT * FROM audit_log').get() as Parameters<typeof assertAuditCut>[0]);
  } finally {
    migrated.close();
  }
});

it('PostgreSQL migration 9: an audit entry copied whole is cut to its bound, and the trail listed', async () => {
  const database = await freshDatabase('sluice_migrations');
  try {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await postgresAtVersion(client, 8);
      await client.query(OLD_AUDIT_ROW);
    } finally {
      await client.end();
    }

    const store = await PostgresStore.open({ connectionString: database.url });
    try {
      const [entry] = await store.listAudit({ limit: 10 });
      assert.equal(entry?.detail?.length, 501);
    } finally {
      await store.close();
    }
    const migrated = new pg.Client({ connectionString: database.url });
    await migrated.connect();
    try {
      const { rows } = await migrated.query('SELECT * FROM audit_log');
      assertAuditCut(rows[0]);
    } finally {
      await migrated.end();
    }
  } finally {
    await database.drop();
  }
});
