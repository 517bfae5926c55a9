export {
  IdempotencyInProgressError,
  type IdempotencyOptions,
  idempotent,
} from './idempotent.ts';
export { PostgresIdempotencyStore, type PostgresIdempotencyStoreOptions } from './postgres-store.ts';
export { SqliteIdempotencyStore, type SqliteIdempotencyStoreOptions } from './sqlite-store.ts';
export type { IdempotencyRecord, IdempotencyStore } from './store.ts';
