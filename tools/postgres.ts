import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The local PostgreSQL every test and bench uses (trust auth); `SLUICE_TEST_PG` points elsewhere. */
export const TEST_PG_SERVER = process.env.SLUICE_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432';

/** A fresh database with a unique name, its URL, and a drop that ends its connections first. */
export async function freshDatabase(
  prefix = 'sluice_test',
): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  return {
    name,
    url: `${TEST_PG_SERVER}/${name}`,
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

export interface TestDatabase {
  name: string;
  url: string;
  pool: pg.Pool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** A fresh database with a pool on it, for one test file, so parallel runs never see each other's tables. */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const database = await freshDatabase(prefix);
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  return {
    name: database.name,
    url: database.url,
    pool,
    async drop() {
      // end() resolves before its connections have closed; the drop's FORCE ends those still open, and their
      // clients report it as an error event (57P01), thrown with no listener. It is expected here.
      pool.on('error', () => {});
      await pool.end();
      await database.drop();
    },
  };
}

/** Runs one statement on the server's `postgres` database (creating and dropping databases, and the like). */
export async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * Why the tests' PostgreSQL (TEST_PG_SERVER) cannot be used here, as a test's skip reason, or false when it
 * answers. For suites that run on both stores and skip their PostgreSQL half only where there is none.
 */
export async function postgresUnreachable(): Promise<string | false> {
  const client = new pg.Client({
    connectionString: `${TEST_PG_SERVER}/postgres`,
    connectionTimeoutMillis: 5_000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return false;
  } catch (error) {
    return `PostgreSQL unreachable at ${TEST_PG_SERVER} (${error instanceof Error ? error.message : String(error)}); set SLUICE_TEST_PG or start one`;
  } finally {
    await client.end().catch(() => {});
  }
}
