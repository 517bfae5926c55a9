import type { Pool } from 'pg';

const listened = new WeakSet<Pool>();
const ignore = () => {};

/**
 * Keeps a database restart from ending the process through `pool`. When the server ends a connection (a
 * restart, a failover, pg_terminate_backend), node-postgres emits 'error' on its client, and on the pool if
 * the client was idle there; an 'error' event that nobody listens to throws and ends the process. The pool
 * listens on its idle clients only, so a client held out of it (the application's transaction that calls
 * `outbox.add`) had nobody. The event itself needs no handling: the pool drops an idle client that failed, and
 * a held client's statement in flight, or its next one, fails and goes to its caller. So the pool, and every
 * client it opens from now on, get a listener that does nothing; the application's own listeners still hear
 * the event.
 */
export function listenForDroppedConnections(pool: Pool): void {
  if (listened.has(pool)) return;
  listened.add(pool);
  pool.on('error', ignore);
  pool.on('connect', (client) => client.on('error', ignore));
}
