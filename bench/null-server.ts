/**
 * A minimal in-memory SQS (JSON protocol) that does as little as possible: it measures the ceiling
 * of the bench client on this machine, so a Sluice figure can be told apart from a harness limit.
 * Only what the scenarios call; no visibility timeouts (in-flight messages never come back).
 * Run: node --import tsx bench/null-server.ts [--port P]; prints "listening on http://127.0.0.1:P".
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';

interface Stored {
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
  inflight: Map<string, Stored>;
  waiters: Waiter[];
}

type Json = Record<string, unknown>;

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

function render(messages: Stored[], queue: Queue): Json {
  return {
    Messages: messages.map((m) => {
      const handle = randomUUID();
      queue.inflight.set(handle, m);
      return { MessageId: m.id, ReceiptHandle: handle, MD5OfBody: m.md5, Body: m.body };
    }),
  };
}

function enqueue(queue: Queue, body: string): Stored {
  const m = { id: randomUUID(), body, md5: md5(body) };
  queue.visible.push(m);
  while (queue.waiters.length > 0 && queue.head < queue.visible.length) {
    const w = queue.waiters.shift();
    if (w) w.respond(take(queue, w.max));
  }
  return m;
}

/** The response, or undefined when a long poll parked and will call reply later. */
function act(action: string, input: Json, reply: (out: Json) => void): Json | undefined {
  switch (action) {
    case 'CreateQueue': {
      const name = String(input.QueueName);
      if (!queues.has(name)) queues.set(name, { visible: [], head: 0, inflight: new Map(), waiters: [] });
      return { QueueUrl: `${origin}/000000000000/${name}` };
    }
    case 'SendMessage': {
      const m = enqueue(queueOf(input), String(input.MessageBody));
      return { MessageId: m.id, MD5OfMessageBody: m.md5 };
    }
    case 'SendMessageBatch': {
      const queue = queueOf(input);
      const entries = (input.Entries ?? []) as Json[];
      const ok = entries.map((e) => {
        const m = enqueue(queue, String(e.MessageBody));
        return { Id: e.Id, MessageId: m.id, MD5OfMessageBody: m.md5 };
      });
      return { Successful: ok, Failed: [] };
    }
    case 'ReceiveMessage': {
      const queue = queueOf(input);
      const max = Number(input.MaxNumberOfMessages ?? 1);
      const wait = Number(input.WaitTimeSeconds ?? 0);
      const now = take(queue, max);
      if (now.length > 0 || wait <= 0) return render(now, queue);
      const waiter: Waiter = {
        max,
        respond: (messages) => {
          clearTimeout(timer);
          reply(render(messages, queue));
        },
      };
      const timer = setTimeout(() => {
        queue.waiters = queue.waiters.filter((w) => w !== waiter);
        reply({ Messages: [] });
      }, wait * 1000);
      queue.waiters.push(waiter);
      return undefined;
    }
    case 'DeleteMessage':
      queueOf(input).inflight.delete(String(input.ReceiptHandle));
      return {};
    case 'DeleteMessageBatch': {
      const queue = queueOf(input);
      const entries = (input.Entries ?? []) as Json[];
      for (const e of entries) queue.inflight.delete(String(e.ReceiptHandle));
      return { Successful: entries.map((e) => ({ Id: e.Id })), Failed: [] };
    }
    case 'GetQueueAttributes': {
      const queue = queueOf(input);
      return {
        Attributes: { ApproximateNumberOfMessages: String(queue.visible.length - queue.head) },
      };
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
      const reply = (out: Json): void => send(res, 200, out);
      const out = act(action, input, reply);
      if (out) reply(out);
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
