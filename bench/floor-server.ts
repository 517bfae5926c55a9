/**
 * The null server's minimal SQS (bench/minimal-sqs.ts) with each message kept in SQLite as durably as Sluice's
 * `durable` mode keeps it, and nothing else: one table keyed by row id, no index, no checks, no attributes,
 * no retention. Writes of one event-loop turn share a transaction; a send is answered after an fdatasync of
 * the WAL, a receive or a delete at its commit (as Sluice answers them). It measures what Node's HTTP, JSON
 * and durable SQLite writes cost this workload before any queue logic: the floor under Sluice's CPU a message.
 * Run: node --import tsx bench/floor-server.ts --data DIR [--port P]; prints "listening on http://127.0.0.1:P".
 */
import { fdatasync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Keeper, portFlag, serveMinimalSqs } from './minimal-sqs.ts';

const dataFlag = process.argv.indexOf('--data');
const dir = dataFlag >= 0 ? process.argv[dataFlag + 1] : undefined;
if (!dir) throw new Error('usage: floor-server.ts --data DIR [--port P]');
const file = join(dir, 'floor.db');
const db = new Database(file);
db.pragma('locking_mode = EXCLUSIVE');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('cache_size = -32768');
db.pragma('wal_autocheckpoint = 8192');
db.exec(`CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY, message_id TEXT NOT NULL, body TEXT NOT NULL, md5 TEXT NOT NULL,
  visible_at INTEGER NOT NULL, receive_count INTEGER NOT NULL DEFAULT 0, receipt TEXT)`);
const insert = db.prepare('INSERT INTO messages (message_id, body, md5, visible_at) VALUES (?, ?, ?, ?)');
const claim = db.prepare(
  'UPDATE messages SET receive_count = receive_count + 1, visible_at = ?, receipt = ? WHERE seq = ?',
);
const remove = db.prepare('DELETE FROM messages WHERE seq = ?');
const walFd = openSync(`${file}-wal`, 'r+');

/** Writes queued in this turn of the event loop, and what to do once they are committed (and synced). */
let writes: Array<() => void> = [];
let committed: Array<() => void> = [];
let synced: Array<() => void> = [];
let flushQueued = false;

function write(run: () => void, done: () => void, durable: boolean): void {
  if (!flushQueued) setImmediate(flush);
  flushQueued = true;
  writes.push(run);
  (durable ? synced : committed).push(done);
}

/** One transaction for the turn's writes, and for those they queue (a woken receive's claim joins its send's). */
function flush(): void {
  db.exec('BEGIN');
  for (let i = 0; i < writes.length; i++) writes[i]?.();
  db.exec('COMMIT');
  const [atCommit, atSync] = [committed, synced];
  writes = [];
  committed = [];
  synced = [];
  flushQueued = false;
  for (const done of atCommit) done();
  waitingSync.push(...atSync);
  if (!syncing) sync();
}

/** Commits waiting for an fdatasync; one runs at a time and covers every commit made before it started. */
let waitingSync: Array<() => void> = [];
let syncing = false;

function sync(): void {
  if (waitingSync.length === 0) return;
  const covered = waitingSync;
  waitingSync = [];
  syncing = true;
  fdatasync(walFd, () => {
    syncing = false;
    for (const done of covered) done();
    sync();
  });
}

/** Sends are answered once fsynced; claims and deletes at their commit, as `durable` answers them. */
const keepInSqlite: Keeper = {
  sent: (messages, applied, done) =>
    write(
      () => {
        const now = Date.now();
        for (const m of messages) m.seq = Number(insert.run(m.id, m.body, m.md5, now).lastInsertRowid);
        // In the transaction: a receive it wakes claims its messages in this commit.
        applied();
      },
      done,
      true,
    ),
  claimed: (messages, handles, done) => {
    const until = Date.now() + 30_000;
    write(
      () => {
        for (const [i, m] of messages.entries()) claim.run(until, handles[i], m.seq);
      },
      done,
      false,
    );
  },
  deleted: (messages, done) =>
    write(
      () => {
        for (const m of messages) remove.run(m.seq);
      },
      done,
      false,
    ),
};

serveMinimalSqs(keepInSqlite, portFlag(process.argv));
