import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresStore } from '../../packages/server/src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { freshDatabase } from '../../tools/postgres.ts';
import type { StoreFactory } from '../contract/harness.ts';

/**
 * A real SQLite file in a fresh temp directory, durable as users run it, removed in destroy; opened again, a
 * store sees the same data. `beforeRemove` may look at the database file the suite left first.
 */
export function sqliteFactory(beforeRemove?: (file: string) => void): StoreFactory {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-store-'));
  return {
    open: async () => new SqliteStore({ dataDir: dir, durability: 'durable' }),
    async destroy() {
      try {
        beforeRemove?.(join(dir, 'sluice.db'));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** SQLite in memory, as `sluice serve --in-memory` runs it: the same semantics, nothing kept once closed. */
export function sqliteInMemoryFactory(): StoreFactory {
  return {
    open: async () => new SqliteStore({ dataDir: ':memory:' }),
    destroy: async () => {},
  };
}

/**
 * A fresh PostgreSQL database per suite, dropped in destroy; opened again, a store sees the same data.
 * `beforeDrop` may look at what the suite left in it (by URL) first.
 */
export function postgresFactory(beforeDrop?: (url: string) => Promise<void>): StoreFactory {
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  return {
    async open() {
      database ??= await freshDatabase();
      // Semantics tests do not need commits to survive an OS crash: skipping the WAL flush per commit
      // (a per-session setting, not the server's) keeps the suites fast; nodes and benches keep the default.
      return PostgresStore.open({
        connectionString: `${database.url}?options=-c%20synchronous_commit%3Doff`,
      });
    },
    async idle(store) {
      return (store as PostgresStore).idle();
    },
    async destroy() {
      try {
        if (database) await beforeDrop?.(database.url);
      } finally {
        await database?.drop();
      }
    },
  };
}
