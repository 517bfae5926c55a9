import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The local PostgreSQL the tests use (trust auth); SLUICE_TEST_PG_* override it. */
const connection = {
  host: process.env.SLUICE_TEST_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.SLUICE_TEST_PG_PORT ?? 5432),
  user: process.env.SLUICE_TEST_PG_USER ?? 'postgres',
};

export interface TestDatabase {
  name: string;
  pool: pg.Pool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** A fresh, uniquely named database for one test file, so parallel runs never see each other's tables. */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ ...connection, database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const pool = new pg.Pool({ ...connection, database: name, max: 10 });
  return {
    name,
    pool,
    async drop() {
      await pool.end();
      const dropper = new pg.Client({ ...connection, database: 'postgres' });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
