import type Database from 'better-sqlite3';
import type pg from 'pg';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../packages/server/src/store/postgres/schema.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../packages/server/src/store/sqlite/schema.ts';

/**
 * A database as an earlier version left it: its first `version` migrations applied and recorded the way each
 * store records them, so that the store's start applies the rest.
 */
export function sqliteAtVersion(db: Database.Database, version: number): void {
  for (const migration of SQLITE_MIGRATIONS.slice(0, version)) db.exec(migration);
  db.pragma(`user_version = ${version}`);
}

export async function postgresAtVersion(client: pg.Client, version: number): Promise<void> {
  await client.query(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
  );
  for (const [index, migration] of POSTGRES_MIGRATIONS.slice(0, version).entries()) {
    await client.query(migration);
    await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [index + 1]);
  }
}
