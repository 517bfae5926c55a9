import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { CreateTopicCommand, PublishCommand, type SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { signRequest } from '../../packages/server/src/server/auth/sigv4.ts';
import { eventually } from '../helpers/client-toolkit.ts';
import { type RunningServer, SLUICE_CLI, startServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';
import { type Backend, backends } from '../helpers/sns-http.ts';

/**
 * Operating HTTP/HTTPS subscriptions (issue 41 item 5), on both stores, against a real node receiver that
 * answers 500: each subscription's state and stored deliveries with the last error (never the answer's
 * body) and the next attempt, an operator's retry-now and drop, the drop counted in the metrics and written to
 * the audit trail.
 */

interface Listed {
  subscriptions: Array<{
    subscriptionArn: string;
    topic: string;
    endpoint: string;
    state: string;
    pending: number;
    failing: number;
    more: boolean;
    deliveries: Array<{
      id: string;
      messageId: string;
      attempts: number;
      lastError: string | undefined;
      nextAttemptAt: number;
    }>;
  }>;
}

/** Confirms through SubscribeURL unless the path is /never; answers every notification 500 while `failing`. */
async function receiver() {
  const notified: string[] = [];
  const state = { failing: true };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const type = request.headers['x-amz-sns-message-type'];
      if (type === 'SubscriptionConfirmation' && request.url !== '/never') {
        const message = JSON.parse(body) as { SubscribeURL: string };
        await fetch(message.SubscribeURL);
      }
      if (type === 'Notification') notified.push(String(request.headers['x-amz-sns-message-id']));
      const status = type === 'Notification' && state.failing ? 500 : 200;
      response.writeHead(status, { 'content-type': 'text/plain' });
      response.end(status === 200 ? 'ok' : 'secret internal error text');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    notified,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const [label, start] of backends) {
  describe(`operating SNS HTTP subscriptions on ${label}`, { concurrency: false }, () => {
    let backend: Backend;
    let sns: SNSClient;
    let hook: Awaited<ReturnType<typeof receiver>>;
    let topicArn: string;

    before(async () => {
      backend = await start();
      sns = snsClient(backend.endpoint);
      hook = await receiver();
      ({ TopicArn: topicArn } = (await sns.send(new CreateTopicCommand({ Name: 'ops-hooks' }))) as {
        TopicArn: string;
      });
    });
    after(async () => {
      sns?.destroy();
      await backend?.close();
      await hook?.close();
    });

    const listed = async (): Promise<Listed> => {
      const answer = await fetch(`${backend.endpoint}/api/sns/http-subscriptions?topic=ops-hooks`);
      const text = await answer.text();
      assert.equal(answer.status, 200, text);
      assert.doesNotMatch(text, /secret internal error text/, 'the answer body is never shown');
      return JSON.parse(text) as Listed;
    };
    const post = (path: string, body: unknown) =>
      fetch(`${backend.endpoint}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: backend.endpoint },
        body: JSON.stringify(body),
      });
    const metric = async (subscription: string, outcome: string) =>
      (await (await fetch(`${backend.endpoint}/metrics`)).text())
        .split('\n')
        .find(
          (line) =>
            line.startsWith('sluice_sns_deliveries_total{') &&
            line.includes(`subscription="${subscription}"`) &&
            line.includes(`outcome="${outcome}"`),
        )
        ?.split(' ')
        .at(-1);

    test('the listing shows state, failing deliveries with the last error and the next attempt; retry now and drop act on one', async () => {
      await sns.send(
        new SubscribeCommand({ TopicArn: topicArn, Protocol: 'http', Endpoint: `${hook.url}/never` }),
      );
      await sns.send(
        new SubscribeCommand({ TopicArn: topicArn, Protocol: 'http', Endpoint: `${hook.url}/hook` }),
      );
      await eventually(
        async () => (await listed()).subscriptions.some((s) => s.state === 'Confirmed'),
        'the /hook subscription confirmed',
        30_000,
      );
      // --test-clock runs on from its start in real time: the attempts happen between these two readings.
      const publishedAt = await backend.now();
      const { MessageId: first } = await sns.send(new PublishCommand({ TopicArn: topicArn, Message: 'one' }));
      const { MessageId: second } = await sns.send(
        new PublishCommand({ TopicArn: topicArn, Message: 'two' }),
      );
      await backend.advance(0);
      await eventually(() => hook.notified.length >= 2, 'both first attempts', 30_000);
      const attemptedAt = await backend.now();

      const answer = await listed();
      const pending = answer.subscriptions.find((s) => s.endpoint.endsWith('/never'))!;
      assert.equal(pending.state, 'PendingConfirmation');
      assert.deepEqual(pending.deliveries, [], 'nothing is delivered to an unconfirmed endpoint');
      const confirmed = answer.subscriptions.find((s) => s.endpoint.endsWith('/hook'))!;
      assert.equal(confirmed.state, 'Confirmed');
      assert.match(confirmed.subscriptionArn, new RegExp(`^${topicArn}:`));
      assert.equal(confirmed.failing, 2);
      assert.equal(confirmed.pending, 0);
      assert.equal(confirmed.more, false);
      assert.deepEqual(
        confirmed.deliveries.map((d) => [d.messageId, d.attempts, d.lastError]).sort(),
        [
          [first, 1, 'HTTP 500'],
          [second, 1, 'HTTP 500'],
        ].sort(),
      );
      for (const { nextAttemptAt } of confirmed.deliveries)
        assert.ok(
          nextAttemptAt >= publishedAt + 20_000 && nextAttemptAt <= attemptedAt + 20_000,
          `AWS's default policy: the first retry 20 s after the attempt (${nextAttemptAt - publishedAt} ms after the publish)`,
        );
      const arn = confirmed.subscriptionArn;

      // `sluice stats --topic` shows the same.
      const { stdout } = await promisify(execFile)(process.execPath, [
        ...SLUICE_CLI,
        'stats',
        '--topic',
        topicArn,
        '--endpoint',
        backend.endpoint,
      ]);
      const blocks = stdout.trimEnd().split('\n\n');
      const hookBlock = blocks.find((block) => block.includes('/hook'))!;
      assert.match(hookBlock, /\/hook {2}confirmed {2}0 pending, 2 failing\n/);
      assert.match(
        hookBlock,
        new RegExp(`\\n {2}${first} +1 +HTTP 500 +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(\\n|$)`),
      );
      assert.match(hookBlock, new RegExp(`\\n {2}${second} +1 +HTTP 500 `));
      assert.match(
        blocks.find((block) => block.includes('/never'))!,
        /\/never {2}pending confirmation {2}0 pending, 0 failing\n/,
      );
      const idOf = (messageId: string | undefined) =>
        confirmed.deliveries.find((d) => d.messageId === messageId)!.id;

      // Retry now: sent again without the clock reaching its next attempt.
      const retried = await post('/api/sns/deliveries/retry', { subscriptionArn: arn, id: idOf(first) });
      assert.equal(retried.status, 200, await retried.clone().text());
      assert.deepEqual(await retried.json(), { subscriptionArn: arn, id: idOf(first), retried: true });
      await backend.advance(0);
      await eventually(() => hook.notified.length >= 3, 'the retried attempt', 30_000);
      assert.equal(hook.notified[2], first);
      await eventually(async () => {
        const row = (await listed()).subscriptions
          .find((s) => s.subscriptionArn === arn)!
          .deliveries.find((d) => d.messageId === first);
        return row?.attempts === 2;
      }, 'the retried delivery recorded its second failure');

      // Drop: gone, never sent again, counted, audited.
      const dropped = await post('/api/sns/deliveries/drop', { subscriptionArn: arn, id: idOf(second) });
      assert.equal(dropped.status, 200, await dropped.clone().text());
      const after = (await listed()).subscriptions.find((s) => s.subscriptionArn === arn)!;
      assert.deepEqual(
        after.deliveries.map((d) => d.messageId),
        [first],
      );
      // /metrics serves a render again for a second: wait for the next one.
      await eventually(async () => (await metric(arn, 'dropped')) === '1', 'dropped counted', 30_000);
      const audit = (await (await fetch(`${backend.endpoint}/api/audit`)).json()) as {
        entries: Array<{ action: string; source: string; count: number; detail: string }>;
      };
      const entry = audit.entries.find((e) => e.action === 'drop-sns-delivery');
      assert.ok(entry, JSON.stringify(audit));
      assert.equal(entry.source, 'ops-hooks');
      assert.equal(entry.count, 1);
      assert.match(entry.detail, new RegExp(`message ${second}`));

      const again = await post('/api/sns/deliveries/drop', { subscriptionArn: arn, id: idOf(second) });
      assert.equal(again.status, 404);
      assert.match(await again.text(), /NotFound/);
      const bad = await post('/api/sns/deliveries/retry', { subscriptionArn: arn });
      assert.equal(bad.status, 400);
      assert.match(await bad.text(), /InvalidParameterValue/);
      const unknown = await post('/api/sns/deliveries/retry', {
        subscriptionArn: `${topicArn}:nope`,
        id: 'x',
      });
      assert.equal(unknown.status, 404);

      // The endpoint recovers: the first message is delivered at its next attempt, the dropped one never.
      hook.state.failing = false;
      await backend.advance(120);
      await eventually(
        async () =>
          (await listed()).subscriptions.find((s) => s.subscriptionArn === arn)!.deliveries.length === 0,
        'the first message delivered',
        30_000,
      );
      assert.equal(
        hook.notified.filter((id) => id === second).length,
        1,
        'the dropped one was sent once only',
      );
      await eventually(async () => (await metric(arn, 'delivered')) === '1', 'delivered counted', 30_000);
      // Publication to 2xx, per subscription: published at the start, delivered at the retry 20 s after the
      // operator's retry-now (or later: the clock runs on in real time under --test-clock).
      const scraped = (await (await fetch(`${backend.endpoint}/metrics`)).text()).split('\n');
      const series = (suffix: string) =>
        Number(
          scraped
            .find((line) =>
              line.startsWith(`sluice_sns_http_delivery_seconds_${suffix}{subscription="${arn}"}`),
            )
            ?.split(' ')
            .at(-1),
        );
      assert.equal(series('count'), 1);
      assert.ok(series('sum') >= 20 && series('sum') <= 140, `latency ${series('sum')} s`);
    });
  });
}

const ADMIN = { accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret' };
/** Sees the orders* topics, and may not act on them (GetQueueAttributes only). */
const WATCHER = {
  accessKeyId: 'AKIDWATCH',
  secretAccessKey: 'watch-secret',
  queues: ['orders*'],
  actions: ['sqs:GetQueueAttributes'],
};
/** Sees and acts on the orders* topics. */
const ORDERS = { accessKeyId: 'AKIDORDERS', secretAccessKey: 'orders-secret', queues: ['orders*'] };

describe('operating SNS HTTP subscriptions with credentials: a key sees and acts on the topics it may use', () => {
  let server: RunningServer;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let dir: string;
  const arns: Record<string, string> = {};

  const signed = (
    key: { accessKeyId: string; secretAccessKey: string },
    method: 'GET' | 'POST',
    path: string,
    body = '',
  ) => {
    const url = new URL(`${server.endpoint}${path}`);
    const { host: _host, ...signature } = signRequest({ method, url, body }, key, 'us-east-1', Date.now());
    return fetch(url, {
      method,
      headers: signature,
      ...(method === 'POST' ? { body: Buffer.from(body) } : {}),
    });
  };
  const listed = async (key: typeof ADMIN) => {
    const answer = await signed(key, 'GET', '/api/sns/http-subscriptions');
    assert.equal(answer.status, 200);
    return ((await answer.json()) as Listed).subscriptions;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-sns-ops-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ credentials: [ORDERS, WATCHER] }));
    server = await startServer({
      args: [
        '--credentials',
        `${ADMIN.accessKeyId}:${ADMIN.secretAccessKey}`,
        '--config',
        join(dir, 'config.json'),
      ],
    });
    hook = await receiver();
    const sns = snsClient(server.endpoint, { credentials: ADMIN });
    for (const name of ['orders-hooks', 'payroll-hooks']) {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: name }));
      await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: `${hook.url}/${name}` }));
    }
    await eventually(
      async () => (await listed(ADMIN)).filter((s) => s.state === 'Confirmed').length === 2,
      'both subscriptions confirmed',
      30_000,
    );
    for (const subscription of await listed(ADMIN)) arns[subscription.topic] = subscription.subscriptionArn;
    for (const name of ['orders-hooks', 'payroll-hooks'])
      await sns.send(new PublishCommand({ TopicArn: arns[name]!.replace(/:[^:]+$/, ''), Message: name }));
    await eventually(
      async () => (await listed(ADMIN)).every((s) => (s.deliveries[0]?.attempts ?? 0) >= 1),
      'both first attempts failed',
      30_000,
    );
    sns.destroy();
  });
  after(async () => {
    await server?.stop();
    await hook?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a key limited to orders* lists only orders-hooks and may not act on payroll-hooks', async () => {
    assert.deepEqual(
      (await listed(ORDERS)).map((s) => s.topic),
      ['orders-hooks'],
    );
    const payroll = (await listed(ADMIN)).find((s) => s.topic === 'payroll-hooks')!;
    const refused = await signed(
      ORDERS,
      'POST',
      '/api/sns/deliveries/drop',
      JSON.stringify({ subscriptionArn: payroll.subscriptionArn, id: payroll.deliveries[0]!.id }),
    );
    assert.equal(refused.status, 404, 'answered as a subscription that does not exist');
    assert.equal((await listed(ADMIN)).find((s) => s.topic === 'payroll-hooks')!.deliveries.length, 1);
  });

  test('a key that may read orders-hooks but not configure it sees its deliveries and may not drop them', async () => {
    const [orders] = await listed(WATCHER);
    assert.equal(orders?.topic, 'orders-hooks');
    assert.equal(orders.deliveries[0]?.lastError, 'HTTP 500');
    const refused = await signed(
      WATCHER,
      'POST',
      '/api/sns/deliveries/drop',
      JSON.stringify({ subscriptionArn: orders.subscriptionArn, id: orders.deliveries[0]!.id }),
    );
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /AuthorizationError/);
    const dropped = await signed(
      ORDERS,
      'POST',
      '/api/sns/deliveries/drop',
      JSON.stringify({ subscriptionArn: orders.subscriptionArn, id: orders.deliveries[0]!.id }),
    );
    assert.equal(dropped.status, 200);
    const audit = await signed(ADMIN, 'GET', '/api/audit');
    const entries = (
      (await audit.json()) as { entries: Array<{ action: string; actor: string; via: string }> }
    ).entries;
    assert.deepEqual(
      entries.filter((e) => e.action === 'drop-sns-delivery').map((e) => [e.actor, e.via]),
      [[ORDERS.accessKeyId, 'signature']],
    );
  });
});
