/** The toolkit's parts kept in PostgreSQL, for a `pg` pool the application opens itself. */

export {
  PostgresIdempotencyStore,
  type PostgresIdempotencyStoreOptions,
} from './idempotency/postgres-store.ts';
export { PostgresCdcRelay, type PostgresCdcRelayOptions } from './outbox/cdc.ts';
export { migratePostgresOutbox, PostgresOutbox, type PostgresOutboxOptions } from './outbox/postgres.ts';
