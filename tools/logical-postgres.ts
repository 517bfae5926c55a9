import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';
import { createTestDatabase, TEST_PG_SERVER } from './postgres.ts';
import { alive } from './processes.ts';

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
 * starts a throwaway instance (initdb into a temp dir, own port, stopped by PID in `close`). Throws with
 * the reason when neither is possible.
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

function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const bin = join(root, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  throw new Error('CDC needs wal_level=logical: the shared server has not, and no initdb/pg_ctl was found');
}

/** PostgreSQL refuses to run as root, so as root the binaries run as the `postgres` user. */
function run(command: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const result = asRoot
    ? spawnSync('runuser', ['-u', 'postgres', '--', command, ...args], { encoding: 'utf8' })
    : spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${command} failed (${result.status}): ${result.stderr || result.stdout}`);
  }
}

async function throwawayPostgres(): Promise<LogicalPostgres> {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-logical-pg-'));
  if (process.getuid?.() === 0) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir, Number(ids.stdout), Number(gids.stdout));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  run(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const settings = [
    `-p ${port}`,
    "-c listen_addresses='127.0.0.1'",
    `-c unix_socket_directories='${dir}'`,
    '-c wal_level=logical',
    '-c max_replication_slots=8',
    '-c max_wal_senders=8',
    '-c fsync=off',
    '-c synchronous_commit=on',
  ].join(' ');
  run(join(bin, 'pg_ctl'), ['-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', 'start']);
  const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const connection: pg.ClientConfig = { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' };
  const pool = new pg.Pool({ ...connection, max: 10 });
  return {
    connection,
    pool,
    kind: 'throwaway',
    async close() {
      // A client the pool is still closing sees the shutdown as an error; it is expected here.
      pool.on('error', () => {});
      await pool.end();
      // SIGINT is PostgreSQL's fast shutdown; wait for this postmaster (and only it) to exit.
      process.kill(pid, 'SIGINT');
      for (let i = 0; i < 200 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
