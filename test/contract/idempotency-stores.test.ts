import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { IdempotencyInProgressError, type IdempotencyStore, idempotent } from 'sluice-client';
import { FakeClock } from 'sluice-client/clock';
import { PostgresIdempotencyStore } from 'sluice-client/postgres';
import { SqliteIdempotencyStore } from 'sluice-client/sqlite';
import { createTestDatabase, type TestDatabase } from '../../tools/postgres.ts';
import { gate } from '../helpers/client-toolkit.ts';

interface StoreBackend {
  /** A store over the shared database; two calls give two independent handles (connections) on it. */
  open(table: string): IdempotencyStore;
  close(): Promise<void>;
}

/** One contract for every idempotency store: the wrapper's rules, then the store's own guarantees. */
function idempotencyStoreSuite(name: string, backend: () => Promise<StoreBackend>) {
  describe(`idempotency store: ${name}`, { concurrency: false }, () => {
    let b: StoreBackend;
    let tables = 0;
    let clock: FakeClock;
    before(async () => {
      b = await backend();
    });
    after(async () => {
      await b?.close();
    });
    const freshStore = () => {
      clock = new FakeClock(Date.UTC(2026, 11, 3));
      return b.open(`idem_${++tables}`);
    };

    test('a completed key returns its stored result without running the handler again', async () => {
      const store = freshStore();
      let runs = 0;
      const charge = idempotent(
        async (order: { id: string; amount: number }) => {
          runs++;
          return { charged: order.amount, run: runs };
        },
        { store, key: (order) => order.id, clock },
      );
      assert.deepEqual(await charge({ id: 'o-1', amount: 500 }), { charged: 500, run: 1 });
      assert.deepEqual(await charge({ id: 'o-1', amount: 500 }), { charged: 500, run: 1 });
      assert.deepEqual(await charge({ id: 'o-2', amount: 7 }), { charged: 7, run: 2 });
      assert.equal(runs, 2);
      const nothing = idempotent(async (_id: string) => undefined, { store, key: (id) => `n-${id}`, clock });
      assert.equal(await nothing('x'), undefined);
      assert.equal(await nothing('x'), undefined);
    });

    test('a concurrent duplicate is refused while the first runs, then gets the stored result', async () => {
      const store = freshStore();
      const release = gate();
      let runs = 0;
      const work = idempotent(
        async (_id: string) => {
          runs++;
          await release.promise;
          return 'done';
        },
        { store, key: (id) => id, clock, inProgressExpirySeconds: 60 },
      );
      const first = work('k');
      await new Promise((resolve) => setImmediate(resolve));
      await clock.advance(10);
      const refused = await work('k').catch((error: unknown) => error);
      assert.ok(refused instanceof IdempotencyInProgressError);
      assert.equal(refused.key, 'k');
      assert.ok(refused.lockExpiresAt > clock.now() && refused.lockExpiresAt <= clock.now() + 60_000);
      release.open();
      assert.equal(await first, 'done');
      assert.equal(await work('k'), 'done');
      assert.equal(runs, 1);
    });

    test("a crashed worker's in-progress lock frees itself after inProgressExpirySeconds", async () => {
      const store = freshStore();
      let runs = 0;
      const work = idempotent(
        async (_id: string) => {
          runs++;
          return runs;
        },
        { store, key: (id) => id, clock, inProgressExpirySeconds: 30 },
      );
      // The crashed worker: claimed, never completed nor released.
      assert.equal(await store.claim('k', 'crashed', clock.now(), clock.now() + 30_000), undefined);
      await clock.advance(29_999);
      await assert.rejects(work('k'), IdempotencyInProgressError);
      await clock.advance(1);
      assert.equal(await work('k'), 1);
      assert.equal(await work('k'), 1);
      // Woken late, the crashed worker cannot overwrite nor free the key it lost.
      assert.equal(await store.complete('k', 'crashed', '"stale"', clock.now() + 1000), false);
      assert.equal(await store.release('k', 'crashed'), false);
      assert.equal(await work('k'), 1);
    });

    test('a completed result is kept for ttlSeconds, then the key runs again', async () => {
      const store = freshStore();
      let runs = 0;
      const work = idempotent(async (_id: string) => ++runs, {
        store,
        key: (id) => id,
        clock,
        ttlSeconds: 100,
      });
      assert.equal(await work('k'), 1);
      await clock.advance(99_999);
      assert.equal(await work('k'), 1);
      await clock.advance(1);
      assert.equal(await work('k'), 2);
      assert.equal(await work('k'), 2);
    });

    test('a failure removes the in-progress record, so a retry runs', async () => {
      const store = freshStore();
      let runs = 0;
      const work = idempotent(
        async (_id: string) => {
          runs++;
          if (runs === 1) throw new Error('database down');
          return 'ok';
        },
        { store, key: (id) => id, clock },
      );
      await assert.rejects(work('k'), /database down/);
      assert.equal(await work('k'), 'ok');
      assert.equal(runs, 2);
    });

    test('of many simultaneous claims on two handles, exactly one wins', async () => {
      const first = freshStore();
      const second = b.open(`idem_${tables}`);
      const now = clock.now();
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? first : second).claim('race', `worker-${i}`, now, now + 60_000),
        ),
      );
      assert.equal(outcomes.filter((o) => o === undefined).length, 1);
      for (const o of outcomes.filter((o) => o !== undefined)) assert.equal(o.status, 'in-progress');
    });

    test('purgeExpired removes only expired records', async () => {
      const store = freshStore();
      const now = clock.now();
      await store.claim('old', 't1', now, now + 1000);
      await store.claim('new', 't2', now, now + 5000);
      assert.equal(await store.complete('new', 't2', '1', now + 5000), true);
      assert.equal(await store.purgeExpired(now + 1000), 1);
      assert.equal(await store.purgeExpired(now + 1000), 0);
      assert.equal((await store.claim('new', 't3', now + 1000, now + 2000))?.result, '1');
      assert.equal(await store.claim('old', 't4', now + 1000, now + 2000), undefined);
    });
  });
}

// A real SQLite file; each handle is its own connection to it.
idempotencyStoreSuite('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-idem-'));
  const file = join(dir, 'app.db');
  const connections: Database.Database[] = [];
  return {
    open(table) {
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
      connections.push(db);
      return new SqliteIdempotencyStore(db, { table });
    },
    async close() {
      for (const db of connections) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// The local PostgreSQL, in a database of this run's own that is dropped afterwards.
idempotencyStoreSuite('PostgreSQL', async () => {
  const database: TestDatabase = await createTestDatabase('sluice_idem');
  return {
    open: (table) => new PostgresIdempotencyStore(database.pool, { table }),
    close: () => database.drop(),
  };
});
