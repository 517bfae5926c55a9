import { PostgresStore } from '../../packages/server/src/store/postgres/postgres-store.ts';
import { freshDatabase } from '../../tools/postgres.ts';
import type { StoreFactory } from '../contract/harness.ts';

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
