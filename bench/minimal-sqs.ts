/**
 * The smallest SQS (JSON protocol) the bench scenarios run against: queues in memory, only the actions they
 * call, no checks and no visibility timeouts (in-flight messages never come back). The null server runs it
 * keeping nothing; the floor server hands each write to SQLite first (`Keeper`).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';

export interface Stored {
  /** The keeper's row id; 0 when it keeps no rows. */
  seq: number;
  id: string;
  body: string;
  md5: string;
}

/** What is kept beyond memory. Each call runs `done` once its write may be answered. */
export interface Keeper {
  /** `applied` puts the messages in the queue, as soon as they are written (before `done`). */
  sent(messages: Stored[], applied: () => void, done: () => void): void;
  claimed(messages: readonly Stored[], handles: readonly string[], done: () => void): void;
  deleted(messages: readonly Stored[], done: () => void): void;
}

/** Keeps nothing: every write is answered at once. */
export const keepNothing: Keeper = {
  sent: (_messages, applied, done) => {
    applied();
    done();
  },
  claimed: (_messages, _handles, done) => done(),
  deleted: (_messages, done) => done(),
};

interface Waiter {
  max: number;
  respond: (messages: Stored[]) => void;
}

interface Queue {
  visible: Stored[];
  head: number;
  inflight: Map<string, Stored>;
  waiters: Waiter[];
}

type Json = Record<string, unknown>;

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/** Serves on 127.0.0.1:`port` (0: any free port) and prints "listening on http://127.0.0.1:P". */
export function serveMinimalSqs(keeper: Keeper, port: number): void {
  const queues = new Map<string, Queue>();
  let origin = '';

  const queueOf = (input: Json): Queue => {
    const url = String(input.QueueUrl ?? '');
    const queue = queues.get(url.slice(url.lastIndexOf('/') + 1));
    if (!queue) throw new Error('AWS.SimpleQueueService.NonExistentQueue');
    return queue;
  };

  const take = (queue: Queue, max: number): Stored[] => {
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
  };

  const deliver = (queue: Queue, messages: Stored[], reply: (out: Json) => void): void => {
    const handles = messages.map(() => randomUUID());
    keeper.claimed(messages, handles, () =>
      reply({
        Messages: messages.map((m, i) => {
          const handle = handles[i] as string;
          queue.inflight.set(handle, m);
          return { MessageId: m.id, ReceiptHandle: handle, MD5OfBody: m.md5, Body: m.body };
        }),
      }),
    );
  };

  const send = (queue: Queue, bodies: string[], answer: (messages: Stored[]) => void): void => {
    const messages = bodies.map((body) => ({ seq: 0, id: randomUUID(), body, md5: md5(body) }));
    const applied = () => {
      queue.visible.push(...messages);
      while (queue.waiters.length > 0 && queue.head < queue.visible.length) {
        const w = queue.waiters.shift();
        if (w) w.respond(take(queue, w.max));
      }
    };
    keeper.sent(messages, applied, () => answer(messages));
  };

  const remove = (queue: Queue, handles: string[], done: () => void): void => {
    const messages: Stored[] = [];
    for (const handle of handles) {
      const m = queue.inflight.get(handle);
      if (m) messages.push(m);
      queue.inflight.delete(handle);
    }
    keeper.deleted(messages, done);
  };

  /** Answers by `reply`, at once or once the keeper's writes are done. */
  const act = (action: string, input: Json, reply: (out: Json) => void): void => {
    switch (action) {
      case 'CreateQueue': {
        const name = String(input.QueueName);
        if (!queues.has(name)) queues.set(name, { visible: [], head: 0, inflight: new Map(), waiters: [] });
        reply({ QueueUrl: `${origin}/000000000000/${name}` });
        return;
      }
      case 'SendMessage':
        send(queueOf(input), [String(input.MessageBody)], ([m]) =>
          reply({ MessageId: m?.id, MD5OfMessageBody: m?.md5 }),
        );
        return;
      case 'SendMessageBatch': {
        const entries = (input.Entries ?? []) as Json[];
        send(
          queueOf(input),
          entries.map((e) => String(e.MessageBody)),
          (messages) =>
            reply({
              Successful: entries.map((e, i) => ({
                Id: e.Id,
                MessageId: messages[i]?.id,
                MD5OfMessageBody: messages[i]?.md5,
              })),
              Failed: [],
            }),
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
      case 'DeleteMessage':
        remove(queueOf(input), [String(input.ReceiptHandle)], () => reply({}));
        return;
      case 'DeleteMessageBatch': {
        const entries = (input.Entries ?? []) as Json[];
        remove(
          queueOf(input),
          entries.map((e) => String(e.ReceiptHandle)),
          () => reply({ Successful: entries.map((e) => ({ Id: e.Id })), Failed: [] }),
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
  };

  const respond = (res: ServerResponse, status: number, out: Json): void => {
    const body = JSON.stringify(out);
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': Buffer.byteLength(body),
      'x-amzn-requestid': randomUUID(),
    });
    res.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const action = String(req.headers['x-amz-target'] ?? '').replace('AmazonSQS.', '');
      try {
        const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
        act(action, input, (out) => respond(res, 200, out));
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        respond(res, 400, { __type: message.split(' ')[0], message });
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1', () => {
    const address = server.address();
    if (address && typeof address === 'object') {
      origin = `http://127.0.0.1:${address.port}`;
      process.stdout.write(`listening on ${origin}\n`);
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
}

/** The `--port P` flag of a bench server's command line; 0 (any free port) without it. */
export function portFlag(argv: readonly string[]): number {
  const at = argv.indexOf('--port');
  return at >= 0 ? Number(argv[at + 1]) : 0;
}
