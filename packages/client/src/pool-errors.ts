import type { Pool } from 'pg';

const listened = new WeakSet<Pool>();

/**
 * Keeps a database restart from ending the process through `pool`. When the server ends one of the pool's idle
 * connections (a restart, a failover, pg_terminate_backend), node-postgres emits 'error' on the pool, and an
 * 'error' event that nobody listens to throws and ends the process. The pool has already dropped that
 * connection and opens a new one for the next query, whose failure, while the database is away, goes to that
 * query's caller; so the event itself needs no handling. The application's own listeners still hear it.
 */
export function listenForDroppedConnections(pool: Pool): void {
  if (listened.has(pool)) return;
  listened.add(pool);
  pool.on('error', () => {});
}
