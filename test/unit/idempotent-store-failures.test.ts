import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { type IdempotencyStore, idempotent } from 'sluice-client';
import { FakeClock } from 'sluice-client/clock';
import { SqliteIdempotencyStore } from 'sluice-client/sqlite';

const dir = mkdtempSync(join(tmpdir(), 'sluice-idem-failures-'));
const db = new Database(join(dir, 'app.db'));
after(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A real SQLite store whose `complete` and `release` fail, as a store that went away after the claim. */
function storeFailingAfterClaim(table: string): IdempotencyStore {
  const real = new SqliteIdempotencyStore(db, { table });
  return {
    claim: (...args) => real.claim(...args),
    complete: async () => {
      throw new Error('disk I/O error');
    },
    release: async () => {
      throw new Error('disk I/O error');
    },
    purgeExpired: (now) => real.purgeExpired(now),
  };
}

test('a failed completion still returns the result (the work is not redone), and is reported', async () => {
  const clock = new FakeClock();
  const reported: string[] = [];
  let runs = 0;
  const work = idempotent(async (_id: string) => ++runs, {
    store: storeFailingAfterClaim('complete_fails'),
    key: (id) => id,
    clock,
    inProgressExpirySeconds: 60,
    onStoreError: (error, key, phase) => reported.push(`${phase} ${key} ${String(error)}`),
  });
  assert.equal(await work('k'), 1);
  assert.deepEqual(reported, ['complete k Error: disk I/O error']);
  // The record stays in progress until its lock expires: a duplicate meanwhile is refused, not redone.
  await assert.rejects(work('k'), { name: 'IdempotencyInProgressError' });
  assert.equal(runs, 1);
});

test("a failed release still throws the handler's own error, and is reported", async () => {
  const reported: string[] = [];
  const work = idempotent(
    async (_id: string) => {
      throw new Error('card declined');
    },
    {
      store: storeFailingAfterClaim('release_fails'),
      key: (id) => id,
      clock: new FakeClock(),
      onStoreError: (_error, key, phase) => reported.push(`${phase} ${key}`),
    },
  );
  await assert.rejects(work('k'), /card declined/);
  assert.deepEqual(reported, ['release k']);
});

test('a result JSON cannot hold is returned and reported, not thrown after the work was done', async () => {
  const reported: string[] = [];
  let runs = 0;
  const work = idempotent(
    async (_id: string) => {
      runs++;
      return { total: 500n };
    },
    {
      store: new SqliteIdempotencyStore(db, { table: 'unserializable' }),
      key: (id) => id,
      clock: new FakeClock(),
      onStoreError: (error, key, phase) => reported.push(`${phase} ${key} ${(error as Error).name}`),
    },
  );
  assert.deepEqual(await work('k'), { total: 500n });
  assert.deepEqual(reported, ['complete k TypeError']);
  assert.equal(runs, 1);
});
