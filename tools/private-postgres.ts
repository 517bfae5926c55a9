import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { chown } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.ts';

const exec = promisify(execFile);

/** How PostgreSQL stops: `fast` ends the sessions and checkpoints; `immediate` kills them, as a crash would. */
export type ShutdownMode = 'fast' | 'immediate';

/**
 * A PostgreSQL instance of a test's own, which it may restart, stop and start at will: initdb into a temp
 * directory, its own port on 127.0.0.1 and its own socket directory, trust authentication. The machine's
 * shared PostgreSQL is never touched: every command names this instance's data directory.
 *
 * The binaries run asynchronously, so a test's clients keep running while the database stops and starts.
 */
export class PrivatePostgres {
  private running = false;

  private constructor(
    /** Owned by the `postgres` user when the tests run as root (PostgreSQL refuses to run as root). */
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    private readonly settings: readonly string[],
  ) {}

  /** Initialises and starts an instance; `settings` are extra `-c name=value` server settings. */
  static async start(settings: readonly string[] = []): Promise<PrivatePostgres> {
    const bin = postgresBin();
    const dir = mkdtempSync(join(tmpdir(), 'sluice-private-pg-'));
    const instance = new PrivatePostgres(dir, await freePort(), bin, settings);
    try {
      if (asRoot()) {
        const [uid, gid] = await Promise.all([
          exec('id', ['-u', 'postgres']),
          exec('id', ['-g', 'postgres']),
        ]);
        await chown(dir, Number(uid.stdout), Number(gid.stdout));
      }
      await instance.run('initdb', [
        '-D',
        instance.data,
        '-A',
        'trust',
        '-U',
        'postgres',
        '--no-sync',
        '-E',
        'UTF8',
      ]);
      await instance.startServer();
    } catch (error) {
      await instance.remove();
      throw error;
    }
    return instance;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  /** The connection settings of a database of this instance. */
  connection(database = 'postgres'): pg.ClientConfig {
    return { host: '127.0.0.1', port: this.port, user: 'postgres', database };
  }

  /** postgres:// URL of a database of this instance. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the stopped instance; resolves once it accepts connections. */
  async startServer(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      "-c listen_addresses='127.0.0.1'",
      `-c unix_socket_directories='${this.dir}'`,
      '-c max_connections=60',
      '-c shared_buffers=16MB',
      ...this.settings.map((setting) => `-c ${setting}`),
    ].join(' ');
    // -t: a machine busy with other work may take a while to replay the WAL after an immediate stop.
    await this.run('pg_ctl', [
      '-D',
      this.data,
      '-o',
      options,
      '-l',
      join(this.dir, 'log'),
      '-w',
      '-t',
      '300',
      'start',
    ]);
    this.running = true;
  }

  /** Stops the instance in `mode`; resolves once its postmaster has exited. */
  async stopServer(mode: ShutdownMode): Promise<void> {
    await this.run('pg_ctl', ['-D', this.data, '-m', mode, '-w', '-t', '300', 'stop']);
    this.running = false;
  }

  /** Stops in `mode` and starts again, as `pg_ctl restart` does. */
  async restart(mode: ShutdownMode): Promise<void> {
    await this.stopServer(mode);
    await this.startServer();
  }

  /** Runs statements on a database of this instance, on a connection of their own. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    database: string,
    text: string,
    values: unknown[] = [],
  ): Promise<R[]> {
    const client = new pg.Client(this.connection(database));
    // A connection that the instance ends while this runs fails the query; the event alone must not throw.
    client.on('error', () => {});
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  /** Ends every session on `database` (pg_terminate_backend), waiting for each to exit; returns how many. */
  async terminateBackends(database: string): Promise<number> {
    // In the select list, so that it runs on the rows the WHERE kept, never on another database's sessions.
    const ended = await this.query(
      'postgres',
      'SELECT pg_terminate_backend(pid, 30000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    return ended.length;
  }

  /** Stops the instance (immediate: its data is thrown away) and removes its directory. */
  async remove(): Promise<void> {
    if (this.running) await this.stopServer('immediate').catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Runs one of PostgreSQL's programs, as `postgres` when the tests run as root. */
  private async run(program: string, args: string[]): Promise<void> {
    const path = join(this.bin, program);
    try {
      if (asRoot()) await exec('runuser', ['-u', 'postgres', '--', path, ...args]);
      else await exec(path, args);
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(`${program} ${args.at(-1)} failed: ${stderr || stdout || String(error)}`);
    }
  }
}

function asRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The newest PostgreSQL's binaries under Debian's /usr/lib/postgresql/<version>/bin. */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const bin = join(root, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  throw new Error('no initdb/pg_ctl under /usr/lib/postgresql/<version>/bin: install postgresql');
}
