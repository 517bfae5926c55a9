/** The toolkit's parts kept in SQLite, for a better-sqlite3 `Database` the application opens itself. */

export { SqliteIdempotencyStore, type SqliteIdempotencyStoreOptions } from './idempotency/sqlite-store.ts';
export { migrateSqliteOutbox, SqliteOutbox, type SqliteOutboxOptions } from './outbox/sqlite.ts';
