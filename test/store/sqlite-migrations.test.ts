import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import Database from 'better-sqlite3';
import type { ReceiveRequest } from '../../packages/server/src/store/contract.ts';
import { MIGRATIONS } from '../../packages/server/src/store/sqlite/schema.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';

/** Migrations that move data: a database an earlier version left, with messages in it, is served after. */

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

it("migration 9: a fair queue's rows take their group as tenant and are served by tenant; FIFO rows take none", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-migrations-'));
  dirs.push(dir);
  const file = join(dir, 'sluice.db');
  const old = new Database(file);
  for (const migration of MIGRATIONS.slice(0, 8)) old.exec(migration);
  old.pragma('user_version = 8');
  const queue = old.prepare(
    `INSERT INTO queues (id, name, fifo, attributes, tags, created_at, last_modified_at)
     VALUES (?, ?, ?, '{}', '{}', 0, 0)`,
  );
  queue.run(1, 'fair', 0);
  queue.run(2, 'ordered.fifo', 1);
  old.exec(`INSERT INTO fair_tenants (queue_id, tenant, served_at) VALUES (1, 'a', 0), (1, '', 0)`);
  old.exec(`INSERT INTO fifo_groups (queue_id, group_id, available_at) VALUES (2, 'g', 0)`);
  const message = old.prepare(
    `INSERT INTO messages (queue_id, message_id, body, md5_of_body, sender_id, sent_at, visible_at, expires_at,
       group_id, deduplication_id)
     VALUES (?, ?, ?, 'md5', 'sender', 0, 0, ?, ?, ?)`,
  );
  message.run(1, 'm1', 'a first', NOW * 10, 'a', null);
  message.run(1, 'm2', 'no tenant', NOW * 10, '', null);
  message.run(1, 'm3', 'a second', NOW * 10, 'a', null);
  message.run(2, 'm4', 'in order', NOW * 10, 'g', 'dedup-1');
  old.close();

  const store = new SqliteStore({ dataDir: dir, durability: 'durable' });
  try {
    const fair = await store.receiveMessages(receive(1));
    assert.deepEqual(fair.messages.map((m) => m.body).sort(), ['a first', 'a second', 'no tenant']);
    const fifo = await store.receiveMessages(receive(2));
    assert.deepEqual(
      fifo.messages.map((m) => m.body),
      ['in order'],
    );
  } finally {
    await store.close();
  }

  const migrated = new Database(file, { readonly: true });
  try {
    assert.equal(migrated.pragma('user_version', { simple: true }), MIGRATIONS.length);
    assert.deepEqual(migrated.prepare('SELECT message_id, tenant FROM messages ORDER BY seq').raw().all(), [
      ['m1', 'a'],
      ['m2', ''],
      ['m3', 'a'],
      ['m4', null],
    ]);
  } finally {
    migrated.close();
  }
});
