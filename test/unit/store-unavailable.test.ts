import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../packages/server/src/store/contract.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';

/**
 * SQLite's own read-only error (SQLITE_READONLY, here from `PRAGMA query_only`, as a running server
 * cannot have its filesystem remounted read-only while it holds files open for writing) becomes the
 * store's StoreUnavailableError; reads keep working, /health reports it, and writes resume when it clears.
 */
describe('SQLite store that cannot write', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-readonly-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('rejects writes with StoreUnavailableError(read-only), serves reads, and recovers', async () => {
    const store = new SqliteStore({ dataDir: dir, durability: 'durable' });
    const db = (store as unknown as { connection: { db: Database.Database } }).connection.db;
    const queue = await store.createQueue({ name: 'q', fifo: false, attributes: {}, tags: {}, now: 1 });
    assert.equal(await store.condition(), undefined);
    db.pragma('query_only = ON');
    await assert.rejects(
      store.updateQueue(queue.id, { tags: { a: 'b' }, now: 2 }),
      (error: unknown) =>
        error instanceof StoreUnavailableError &&
        error.reason === 'read-only' &&
        (error.cause as { code?: string }).code === 'SQLITE_READONLY',
    );
    assert.equal((await store.getQueue('q'))?.id, queue.id);
    assert.equal(await store.condition(), 'read-only', '/health names the condition');
    db.pragma('query_only = OFF');
    assert.deepEqual((await store.updateQueue(queue.id, { tags: { a: 'b' }, now: 3 }))?.tags, { a: 'b' });
    assert.equal(await store.condition(), undefined, 'and forgets it once a write succeeds');
    await store.close();
  });
});
