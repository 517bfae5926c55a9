import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { longPollsHeld } from '../helpers/long-polls.ts';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';

/**
 * A greedy client against a server with small caps: its long polls past the cap are answered at once
 * with 503 (which SDKs retry with back-off) instead of piling up, and a second client's requests are
 * still served promptly. The queue and byte caps answer with a clear OverLimit over the wire.
 */

const TOTAL_LONG_POLLS = 8;

interface Reply {
  status: number;
  body: string;
  ms: number;
}

function post(endpoint: string, agent: Agent, target: string, body: object): Promise<Reply> {
  const started = Date.now();
  const url = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/',
        agent,
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${target}` },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: Date.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('slow and greedy clients', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let greedy: Agent;
  let polite: Agent;
  before(async () => {
    server = await startServer({
      args: [
        '--max-long-polls',
        String(TOTAL_LONG_POLLS),
        '--max-queues',
        '3',
        '--max-stored-bytes',
        '400000',
      ],
    });
    greedy = new Agent({ keepAlive: true, maxSockets: 100 });
    polite = new Agent({ keepAlive: true, maxSockets: 4 });
  });
  after(async () => {
    greedy?.destroy();
    polite?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  test('long polls past the cap get 503 at once; another client is served meanwhile', async () => {
    const created = await post(server.endpoint, polite, 'CreateQueue', { QueueName: 'greedy-q' });
    const { QueueUrl } = JSON.parse(created.body) as { QueueUrl: string };
    // The greedy client holds every long-poll slot, on separate connections.
    const held = Array.from({ length: TOTAL_LONG_POLLS }, () =>
      post(server.endpoint, greedy, 'ReceiveMessage', { QueueUrl, WaitTimeSeconds: 5 }),
    );
    await longPollsHeld(server.endpoint, TOTAL_LONG_POLLS);
    const refused = await Promise.all(
      Array.from({ length: 5 }, () =>
        post(server.endpoint, greedy, 'ReceiveMessage', { QueueUrl, WaitTimeSeconds: 5 }),
      ),
    );
    for (const reply of refused) {
      assert.equal(reply.status, 503, reply.body);
      assert.match(reply.body, /Too many concurrent long polls on this server \(8 at most\)/);
      assert.ok(reply.ms < 2_000, `refusal took ${reply.ms} ms`);
    }
    // The other client's sends and short receives go through while the slots are held.
    const sent = await post(server.endpoint, polite, 'SendMessage', { QueueUrl, MessageBody: 'for polite' });
    assert.equal(sent.status, 200, sent.body);
    assert.ok(sent.ms < 2_000, `send took ${sent.ms} ms`);
    // The send woke one of the held long polls, which took the message: nothing lost.
    const results = await Promise.all(held);
    const delivered = results.filter((r) => r.body.includes('for polite'));
    assert.equal(delivered.length, 1);
    assert.ok(results.every((r) => r.status === 200));
    // Slots are released when polls end: a new long poll is accepted again.
    const again = await post(server.endpoint, polite, 'ReceiveMessage', { QueueUrl, WaitTimeSeconds: 1 });
    assert.equal(again.status, 200, again.body);
  });

  test('long polls whose client hung up free their slots at once, not when their wait ends', async () => {
    const created = await post(server.endpoint, polite, 'CreateQueue', { QueueName: 'greedy-q' });
    const { QueueUrl } = JSON.parse(created.body) as { QueueUrl: string };
    const leaving = new Agent({ keepAlive: true, maxSockets: 100 });
    const held = Array.from({ length: TOTAL_LONG_POLLS }, () =>
      post(server.endpoint, leaving, 'ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 }).catch(() => null),
    );
    await longPollsHeld(server.endpoint, TOTAL_LONG_POLLS);
    const whileHeld = await post(server.endpoint, polite, 'ReceiveMessage', { QueueUrl, WaitTimeSeconds: 1 });
    assert.equal(whileHeld.status, 503, 'the slots were not all held');
    const hungUp = Date.now();
    leaving.destroy();
    await Promise.all(held);
    // The server learns of the hang-ups as their sockets close: a slot is free well before the 20 s waits end.
    let after = await post(server.endpoint, polite, 'ReceiveMessage', { QueueUrl, WaitTimeSeconds: 1 });
    while (after.status === 503 && Date.now() - hungUp < 10_000)
      after = await post(server.endpoint, polite, 'ReceiveMessage', { QueueUrl, WaitTimeSeconds: 1 });
    assert.equal(after.status, 200, after.body);
  });

  test('the queue cap and the byte cap answer OverLimit with a clear message', async () => {
    for (const name of ['cap-a', 'cap-b']) {
      const made = await post(server.endpoint, polite, 'CreateQueue', { QueueName: name });
      assert.equal(made.status, 200, made.body);
    }
    const refused = await post(server.endpoint, polite, 'CreateQueue', { QueueName: 'cap-c' });
    assert.equal(refused.status, 403);
    assert.match(refused.body, /OverLimit.*at most 3 queues \(--max-queues\)/);

    const { QueueUrl } = JSON.parse(
      (await post(server.endpoint, polite, 'GetQueueUrl', { QueueName: 'cap-a' })).body,
    ) as { QueueUrl: string };
    let full: Reply | undefined;
    for (let i = 0; i < 40 && !full; i++) {
      const reply = await post(server.endpoint, polite, 'SendMessage', {
        QueueUrl,
        MessageBody: 'y'.repeat(100_000),
      });
      if (reply.status !== 200) full = reply;
      // The size is read at most once a second.
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.ok(full, 'the byte cap was never reached');
    assert.equal(full.status, 403);
    assert.match(full.body, /OverLimit.*storage cap of 400000 bytes is reached/);
  });
});
