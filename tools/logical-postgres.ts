import pg from 'pg';
import { createTestDatabase, TEST_PG_SERVER } from './postgres.ts';
import { PrivatePostgres } from './private-postgres.ts';

/** A PostgreSQL with wal_level=logical, for the CDC relay: a database on the shared server, or a throwaway one. */
export interface LogicalPostgres {
  connection: pg.ClientConfig;
  pool: pg.Pool;
  /** `shared` when the local server already has wal_level=logical, else `throwaway` (own initdb). */
  kind: 'shared' | 'throwaway';
  close(): Promise<void>;
}

/**
 * The shared server must not be restarted or reconfigured, so when its wal_level is not logical this
 * starts a throwaway instance (PrivatePostgres: initdb into a temp dir, own port). Throws with the reason
 * when neither is possible.
 */
export async function logicalPostgres(prefix: string): Promise<LogicalPostgres> {
  const probe = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
  await probe.connect();
  const { rows } = await probe.query<{ wal_level: string }>('SHOW wal_level');
  await probe.end();
  if (rows[0]?.wal_level === 'logical') {
    const db = await createTestDatabase(prefix);
    return {
      connection: { connectionString: db.url },
      pool: db.pool,
      kind: 'shared',
      close: () => db.drop(),
    };
  }
  return throwawayPostgres();
}

async function throwawayPostgres(): Promise<LogicalPostgres> {
  const instance = await PrivatePostgres.start([
    'wal_level=logical',
    'max_replication_slots=8',
    'max_wal_senders=8',
    'fsync=off',
    'synchronous_commit=on',
  ]);
  const connection = instance.connection();
  const pool = new pg.Pool({ ...connection, max: 10 });
  return {
    connection,
    pool,
    kind: 'throwaway',
    async close() {
      // A client the pool is still closing sees the shutdown as an error; it is expected here.
      pool.on('error', () => {});
      await pool.end();
      await instance.remove();
    },
  };
}
