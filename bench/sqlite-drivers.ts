/**
 * better-sqlite3 against Node's built-in `node:sqlite` on the same Node, for docs/decisions/node-sqlite.md:
 * commits per second and rows per second into a WAL database with synchronous=FULL (SQLite fsyncs the WAL in
 * every commit) and NORMAL (it does not; Sluice's store then fsyncs the WAL itself), one row per commit and 100
 * rows per commit, and point reads by primary key. Each case runs for `--seconds` (default 2): under a minute
 * in all.
 *
 * Needs a Node with `node:sqlite` (22.13 or later without a flag, 24): `.ci/fetch-node 24`, then
 *   .tmp/nodes/24/bin/node --import tsx bench/sqlite-drivers.ts [--seconds 2]
 * better-sqlite3 is compiled per NODE_MODULE_VERSION: when the repository's build does not load on this Node,
 * the script first builds the same version for it in .tmp/better-sqlite3-node<modules>/ (a compile of a minute
 * or two, once; not part of the measured run), against this Node's headers as .ci/fetch-node unpacks them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';

const REPOSITORY = new URL('..', import.meta.url).pathname;

/** What both drivers have in common, and all the bench uses. */
interface Statement {
  run(...parameters: unknown[]): unknown;
  get(...parameters: unknown[]): unknown;
}
interface Database {
  exec(sql: string): unknown;
  prepare(sql: string): Statement;
  close(): unknown;
}
interface Driver {
  name: string;
  sqliteVersion: string;
  open(file: string): Database;
}

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at < 0 ? fallback : Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} takes a positive number`);
  return value;
}

async function nodeSqlite(): Promise<Driver | string> {
  // A variable, not a literal: @types/node is Node 20's, which has no node:sqlite.
  const id = 'node:sqlite';
  let module: { DatabaseSync: new (file: string) => Database };
  try {
    module = (await import(id)) as typeof module;
  } catch (error) {
    return `node:sqlite is not in Node ${process.version}: ${(error as Error).message}`;
  }
  const open = (file: string) => new module.DatabaseSync(file);
  return { name: 'node:sqlite', sqliteVersion: versionOf(open), open };
}

/** better-sqlite3 as the repository pins it, built for this Node if the repository's build is for another. */
function betterSqlite3(): Driver {
  const version = (
    JSON.parse(readFileSync(join(REPOSITORY, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  type Constructor = new (file: string) => Database;
  let DatabaseClass: Constructor;
  try {
    DatabaseClass = createRequire(join(REPOSITORY, 'package.json'))('better-sqlite3') as Constructor;
    // The native binding loads on the first open: open once to know whether it is this Node's.
    new DatabaseClass(':memory:').close();
  } catch {
    const folder = join(REPOSITORY, '.tmp', `better-sqlite3-node${process.versions.modules}`);
    const installed = join(folder, 'node_modules', 'better-sqlite3', 'package.json');
    if (!existsSync(installed) || JSON.parse(readFileSync(installed, 'utf8')).version !== version) {
      console.log(`building better-sqlite3 ${version} for Node ${process.version} in ${folder} (once)...`);
      rmSync(folder, { recursive: true, force: true });
      mkdirSync(folder, { recursive: true });
      writeFileSync(
        join(folder, 'package.json'),
        JSON.stringify({ private: true, allowScripts: { 'better-sqlite3': true } }),
      );
      const nodedir = dirname(dirname(process.execPath));
      execFileSync('npm', ['install', '--no-audit', '--no-fund', `better-sqlite3@${version}`], {
        cwd: folder,
        stdio: 'inherit',
        env: {
          ...process.env,
          PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
          ...(existsSync(join(nodedir, 'include', 'node')) ? { npm_config_nodedir: nodedir } : {}),
          JOBS: 'max',
        },
      });
    }
    DatabaseClass = createRequire(join(folder, 'package.json'))('better-sqlite3') as Constructor;
  }
  const open = (file: string) => new DatabaseClass(file);
  return { name: `better-sqlite3 ${version}`, sqliteVersion: versionOf(open), open };
}

function versionOf(open: (file: string) => Database): string {
  const db = open(':memory:');
  const { version } = db.prepare('SELECT sqlite_version() AS version').get() as { version: string };
  db.close();
  return version;
}

const BODY = 'x'.repeat(256);

/** A fresh WAL database in `dir` with Sluice's page cache, and one table of messages. */
function fresh(driver: Driver, dir: string, synchronous: 'FULL' | 'NORMAL'): Database {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const db = driver.open(join(dir, 'bench.db'));
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA synchronous = ${synchronous}`);
  db.exec('PRAGMA cache_size = -32768');
  db.exec('PRAGMA wal_autocheckpoint = 8192');
  db.exec('CREATE TABLE messages (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, body TEXT NOT NULL)');
  return db;
}

/** Commits of `rowsPerCommit` inserts for `seconds`: commits and rows per second. */
function inserts(db: Database, rowsPerCommit: number, seconds: number): { commits: number; rows: number } {
  const insert = db.prepare('INSERT INTO messages (queue, body) VALUES (?, ?)');
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const end = performance.now() + seconds * 1000;
  let commits = 0;
  const started = performance.now();
  while (performance.now() < end) {
    begin.run();
    for (let i = 0; i < rowsPerCommit; i++) insert.run('orders', BODY);
    commit.run();
    commits++;
  }
  const elapsed = (performance.now() - started) / 1000;
  return { commits: commits / elapsed, rows: (commits * rowsPerCommit) / elapsed };
}

/** Reads of one row by primary key for `seconds`, per second. */
function reads(db: Database, seconds: number): number {
  const insert = db.prepare('INSERT INTO messages (queue, body) VALUES (?, ?)');
  db.exec('BEGIN');
  for (let i = 0; i < 10_000; i++) insert.run('orders', BODY);
  db.exec('COMMIT');
  const read = db.prepare('SELECT id, queue, body FROM messages WHERE id = ?');
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  let count = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) read.get(1 + ((count + i) % 10_000));
    count += 100;
  }
  return count / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const seconds = flag('seconds', 2);
  const builtIn = await nodeSqlite();
  if (typeof builtIn === 'string') {
    console.error(`${builtIn}; run this with Node 22.13 or later (.ci/fetch-node 24)`);
    process.exit(2);
  }
  const drivers = [betterSqlite3(), builtIn];
  const dir = join(REPOSITORY, '.tmp', 'sqlite-drivers');
  console.log(
    `Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model}); ${seconds} s a case; database in ${dir}`,
  );
  const table: Record<string, string | number>[] = [];
  for (const synchronous of ['FULL', 'NORMAL'] as const)
    for (const rowsPerCommit of [1, 100])
      for (const driver of drivers) {
        const db = fresh(driver, dir, synchronous);
        const { commits, rows } = inserts(db, rowsPerCommit, seconds);
        db.close();
        table.push({
          driver: `${driver.name} (SQLite ${driver.sqliteVersion})`,
          case: `insert, synchronous=${synchronous}, ${rowsPerCommit} row(s)/commit`,
          'commits/s': Math.round(commits),
          'rows/s': Math.round(rows),
        });
      }
  for (const driver of drivers) {
    const db = fresh(driver, dir, 'NORMAL');
    const perSecond = reads(db, seconds);
    db.close();
    table.push({
      driver: `${driver.name} (SQLite ${driver.sqliteVersion})`,
      case: 'read by primary key',
      'commits/s': '',
      'rows/s': Math.round(perSecond),
    });
  }
  rmSync(dir, { recursive: true, force: true });
  console.table(table);
}

await main();
