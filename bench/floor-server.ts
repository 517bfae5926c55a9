/**
 * The null server's queue (bench/null-server.ts) with each message kept in SQLite as durably as Sluice's
 * `durable` mode keeps it, and nothing else: one table keyed by row id, no index, no checks, no attributes, no
 * retention. Writes of one event-loop turn share a transaction; a send is answered after an fdatasync of the
 * WAL, a receive or a delete at its commit (as Sluice answers them). It measures what Node's HTTP, JSON and
 * durable SQLite writes cost this workload before any queue logic: the floor under Sluice's CPU a message.
 * Run: node --import tsx bench/floor-server.ts --data DIR [--port P]; prints "listening on http://127.0.0.1:P".
 */
import { createHash, randomUUID } from 'node:crypto';
import { fdatasync, openSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';

interface Stored {
  seq: number;
  id: string;
  body: string;
  md5: string;
}

interface Waiter {
  max: number;
  respond: (messages: Stored[]) => void;
}

interface Queue {
  visible: Stored[];
  head: number;
  inflight: Map<string, number>;
  waiters: Waiter[];
}

type Json = Record<string, unknown>;

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

const queues = new Map<string, Queue>();
let origin = '';

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

function queueOf(input: Json): Queue {
  const url = String(input.QueueUrl ?? '');
  const queue = queues.get(url.slice(url.lastIndexOf('/') + 1));
  if (!queue) throw new Error('AWS.SimpleQueueService.NonExistentQueue');
  return queue;
}

function take(queue: Queue, max: number): Stored[] {
  const out: Stored[] = [];
  while (out.length < max && queue.head < queue.visible.length) {
    const m = queue.visible[queue.head++];
    if (m) out.push(m);
  }
  if (queue.head > 4096 && queue.head * 2 > queue.visible.length) {
    queue.visible = queue.visible.slice(queue.head);
    queue.head = 0;
  }
  return out;
}

/** Claims the messages in the store, then answers the receive with them. */
function deliver(queue: Queue, messages: Stored[], reply: (out: Json) => void): void {
  const handles = messages.map(() => randomUUID());
  const until = Date.now() + 30_000;
  write(
    () => {
      for (const [i, m] of messages.entries()) claim.run(until, handles[i], m.seq);
    },
    () =>
      reply({
        Messages: messages.map((m, i) => {
          queue.inflight.set(handles[i] as string, m.seq);
          return { MessageId: m.id, ReceiptHandle: handles[i], MD5OfBody: m.md5, Body: m.body };
        }),
      }),
    false,
  );
}

function wakeWaiters(queue: Queue): void {
  while (queue.waiters.length > 0 && queue.head < queue.visible.length) {
    const w = queue.waiters.shift();
    if (w) w.respond(take(queue, w.max));
  }
}

/** Answers by `reply`, now or once the writes it queued are committed. */
function act(action: string, input: Json, reply: (out: Json) => void): void {
  switch (action) {
    case 'CreateQueue': {
      const name = String(input.QueueName);
      if (!queues.has(name)) queues.set(name, { visible: [], head: 0, inflight: new Map(), waiters: [] });
      reply({ QueueUrl: `${origin}/000000000000/${name}` });
      return;
    }
    case 'SendMessageBatch': {
      const queue = queueOf(input);
      const entries = (input.Entries ?? []) as Json[];
      const messages = entries.map((e) => {
        const body = String(e.MessageBody);
        return { seq: 0, id: randomUUID(), body, md5: md5(body) };
      });
      const now = Date.now();
      write(
        () => {
          for (const m of messages) m.seq = Number(insert.run(m.id, m.body, m.md5, now).lastInsertRowid);
          queue.visible.push(...messages);
          wakeWaiters(queue);
        },
        () =>
          reply({
            Successful: entries.map((e, i) => ({
              Id: e.Id,
              MessageId: messages[i]?.id,
              MD5OfMessageBody: messages[i]?.md5,
            })),
            Failed: [],
          }),
        true,
      );
      return;
    }
    case 'ReceiveMessage': {
      const queue = queueOf(input);
      const max = Number(input.MaxNumberOfMessages ?? 1);
      const wait = Number(input.WaitTimeSeconds ?? 0);
      const now = take(queue, max);
      if (now.length > 0 || wait <= 0) {
        deliver(queue, now, reply);
        return;
      }
      const waiter: Waiter = {
        max,
        respond: (messages) => {
          clearTimeout(timer);
          deliver(queue, messages, reply);
        },
      };
      const timer = setTimeout(() => {
        queue.waiters = queue.waiters.filter((w) => w !== waiter);
        reply({ Messages: [] });
      }, wait * 1000);
      queue.waiters.push(waiter);
      return;
    }
    case 'DeleteMessageBatch': {
      const queue = queueOf(input);
      const entries = (input.Entries ?? []) as Json[];
      const seqs = entries.map((e) => queue.inflight.get(String(e.ReceiptHandle)));
      for (const e of entries) queue.inflight.delete(String(e.ReceiptHandle));
      write(
        () => {
          for (const seq of seqs) if (seq !== undefined) remove.run(seq);
        },
        () => reply({ Successful: entries.map((e) => ({ Id: e.Id })), Failed: [] }),
        false,
      );
      return;
    }
    case 'GetQueueAttributes': {
      const queue = queueOf(input);
      reply({ Attributes: { ApproximateNumberOfMessages: String(queue.visible.length - queue.head) } });
      return;
    }
    default:
      throw new Error(`UnsupportedOperation ${action}`);
  }
}

function send(res: ServerResponse, status: number, out: Json): void {
  const body = JSON.stringify(out);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(body),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(body);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const action = String(req.headers['x-amz-target'] ?? '').replace('AmazonSQS.', '');
    try {
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
      act(action, input, (out) => send(res, 200, out));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      send(res, 400, { __type: message.split(' ')[0], message });
    }
  });
});
server.keepAliveTimeout = 65_000;

const portFlag = process.argv.indexOf('--port');
const port = portFlag >= 0 ? Number(process.argv[portFlag + 1]) : 0;
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') {
    origin = `http://127.0.0.1:${address.port}`;
    process.stdout.write(`listening on ${origin}\n`);
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
