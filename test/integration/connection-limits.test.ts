import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect } from 'node:tls';
import { longPollsHeld } from '../helpers/long-polls.ts';
import { rawRequest } from '../helpers/raw-requests.ts';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';

/**
 * Connections a server must not keep for a client: ones that send nothing (HTTP and TLS), send their headers
 * too slowly, stay idle between requests, stop reading their answer, or come in too great a number from one
 * address. The timeouts are set to one second here; the defaults are in docs/guide/limits.md.
 */

const TIMEOUT_ARGS = ['--headers-timeout', '1', '--keep-alive-timeout', '1', '--send-timeout', '1'];
/** Generous for a loaded machine: each timeout is 1 s, and Node checks its own every second. */
const CLOSED_WITHIN_MS = 4_000;

/** Resolves with how long after now `socket` was closed (by the server: the tests never close first). */
function closedAfter(socket: Socket): Promise<number> {
  const started = Date.now();
  socket.on('error', () => {});
  // Read and drop what the server sends: a socket nobody reads never sees the server's FIN, and never closes.
  socket.resume();
  return new Promise((resolve) => socket.once('close', () => resolve(Date.now() - started)));
}

function rawHttp(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** An SQS JSON request from `agent`'s connections. */
function jsonPost(endpoint: string, agent: Agent | false, action: string, input: object) {
  return rawRequest(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    body: JSON.stringify(input),
    agent,
  });
}

/** The status of GET /health from a given local address (127.0.0.0/8 is all loopback on Linux). */
async function health(endpoint: string, localAddress: string): Promise<number> {
  const agent = new Agent({ localAddress });
  try {
    return (await rawRequest(endpoint, { path: '/health', agent })).status;
  } finally {
    agent.destroy();
  }
}

describe('connection limits over HTTP', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      args: [...TIMEOUT_ARGS, '--max-connections-per-address', '6', '--max-long-polls-per-address', '2'],
    });
  });
  after(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  it('closes a connection that sends nothing, and one that sends half its headers, at the headers timeout', async () => {
    const silent = closedAfter(await rawHttp(server.port));
    const slow = await rawHttp(server.port);
    slow.write('POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const slowClosed = closedAfter(slow);
    for (const ms of [await silent, await slowClosed]) {
      assert.ok(ms >= 500 && ms < CLOSED_WITHIN_MS, `closed after ${ms} ms`);
    }
  });

  it('closes a keep-alive connection left idle after its request, at the keep-alive timeout', async () => {
    const socket = await rawHttp(server.port);
    const answered = new Promise((resolve) => socket.once('data', resolve));
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await answered;
    const ms = await closedAfter(socket);
    assert.ok(ms >= 500 && ms < CLOSED_WITHIN_MS, `closed after ${ms} ms`);
  });

  it('closes connections past the cap of one address at once, and serves another address meanwhile', async () => {
    const held = await Promise.all(Array.from({ length: 6 }, () => rawHttp(server.port)));
    const closed = held.map(closedAfter);
    const extra = await rawHttp(server.port);
    const extraClosed = await closedAfter(extra);
    assert.ok(extraClosed < 500, `the seventh connection stayed ${extraClosed} ms`);
    assert.equal(await health(server.endpoint, '127.0.0.2'), 200);
    // The held ones go at the headers timeout; then the address may connect again.
    await Promise.all(closed);
    assert.equal(await health(server.endpoint, '127.0.0.1'), 200);
  });

  it('caps long polls per address, so one client cannot take every slot', async () => {
    const created = await jsonPost(server.endpoint, false, 'CreateQueue', { QueueName: 'polled' });
    const { QueueUrl } = JSON.parse(created.text) as { QueueUrl: string };
    const greedy = new Agent({ keepAlive: true, maxSockets: 10 });
    const other = new Agent({ keepAlive: true, localAddress: '127.0.0.2' });
    try {
      // Long enough to outlast the check that they are held, on a loaded machine too.
      const held = [1, 2].map(() =>
        jsonPost(server.endpoint, greedy, 'ReceiveMessage', { QueueUrl, WaitTimeSeconds: 5 }),
      );
      await longPollsHeld(server.endpoint, 2);
      const refused = await jsonPost(server.endpoint, greedy, 'ReceiveMessage', {
        QueueUrl,
        WaitTimeSeconds: 2,
      });
      assert.equal(refused.status, 503, refused.text);
      assert.match(refused.text, /Too many concurrent long polls from this address \(2 at most\)/);
      // A long poll that finds a message at once takes no slot: it is answered as a short poll is.
      const ready = await jsonPost(server.endpoint, false, 'CreateQueue', { QueueName: 'ready' });
      const readyUrl = (JSON.parse(ready.text) as { QueueUrl: string }).QueueUrl;
      await jsonPost(server.endpoint, false, 'SendMessage', { QueueUrl: readyUrl, MessageBody: 'waiting' });
      const found = await jsonPost(server.endpoint, greedy, 'ReceiveMessage', {
        QueueUrl: readyUrl,
        WaitTimeSeconds: 2,
      });
      assert.equal(found.status, 200, found.text);
      assert.match(found.text, /"Body":"waiting"/);
      const elsewhere = await jsonPost(server.endpoint, other, 'ReceiveMessage', {
        QueueUrl,
        WaitTimeSeconds: 1,
      });
      assert.equal(elsewhere.status, 200, elsewhere.text);
      for (const reply of await Promise.all(held)) assert.equal(reply.status, 200, reply.text);
    } finally {
      greedy.destroy();
      other.destroy();
    }
  });

  it('cuts off an answer its client stops reading, at the send timeout', async () => {
    const created = await jsonPost(server.endpoint, false, 'CreateQueue', { QueueName: 'unread' });
    const { QueueUrl } = JSON.parse(created.text) as { QueueUrl: string };
    const body = 'u'.repeat(1024 * 1024 - 64);
    for (let i = 0; i < 10; i++)
      await jsonPost(server.endpoint, false, 'SendMessage', { QueueUrl, MessageBody: body });
    const socket = await rawHttp(server.port);
    const input = JSON.stringify({ QueueUrl, MaxNumberOfMessages: 10 });
    socket.write(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ReceiveMessage\r\nContent-Length: ${input.length}\r\n\r\n${input}`,
    );
    // Take the first bytes of the 10 MiB answer, then stop reading for longer than the send timeout.
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
    };
    socket.on('data', onData);
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    await sleep(3_000);
    // The server has cut the answer off: what reaches the client ends short of the whole of it.
    const closed = closedAfter(socket);
    socket.resume();
    await closed;
    assert.ok(received < 10 * (1024 * 1024 - 64), `received ${received} bytes, the whole answer`);
  });

  it('logs clients that cut their uploads off once per address, at info, not as errors', async () => {
    for (let i = 0; i < 20; i++) {
      const socket = await rawHttp(server.port, '127.0.0.3');
      socket.write(
        'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: 1000\r\n\r\n{"',
      );
      await sleep(20);
      const closed = closedAfter(socket);
      socket.destroy();
      await closed;
    }
    await sleep(300);
    const lines = server.output().split('\n');
    assert.equal(lines.filter((line) => line.includes('went away before its request was read')).length, 1);
    assert.equal(lines.filter((line) => / (ERROR|FATAL) /.test(line)).length, 0, server.output());
  });
});

describe('connection limits over TLS', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-tls-idle-'));
    const { cert, key } = await selfSignedCertificate(dir);
    server = await startServer({
      dataDir: dir,
      args: [...TIMEOUT_ARGS, '--tls-cert', cert, '--tls-key', key],
    });
  });
  after(async () => {
    await server?.stop();
    if (dir) removeDataDir(dir);
  });

  it('closes a connection that never starts its handshake, and one that sends nothing after it', async () => {
    const raw = closedAfter(await rawHttp(server.port));
    const quiet = tlsConnect({ host: '127.0.0.1', port: server.port, rejectUnauthorized: false });
    await new Promise((resolve) => quiet.once('secureConnect', resolve));
    const quietClosed = closedAfter(quiet);
    for (const ms of [await raw, await quietClosed]) {
      assert.ok(ms >= 500 && ms < CLOSED_WITHIN_MS, `closed after ${ms} ms`);
    }
  });
});
