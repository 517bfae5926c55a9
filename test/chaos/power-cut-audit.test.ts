import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { postJson } from '../helpers/raw-requests.ts';
import { NEEDS_OWN_SERVER, startServer } from '../helpers/server.ts';
import { runCrashAudit, sqliteStore } from './crash-audit.ts';
import { PowerCut, powerCutUnavailable } from './powercut/power-cut.ts';

// The CI form of `npm run test:powercut`: the default durability, 6 power cuts at random moments. Needs
// root (a tmpfs) and gcc (the shim); skipped with the reason otherwise.
test('power-cut audit: 6 cuts under load lose no acknowledged send in durable mode', {
  skip: NEEDS_OWN_SERVER || powerCutUnavailable(),
  timeout: 300_000,
}, async () => {
  const cut = new PowerCut();
  try {
    const report = await runCrashAudit({
      store: sqliteStore('durable'),
      kills: 6,
      minUptimeMs: 300,
      maxUptimeMs: 2000,
      crash: cut.crashMode({ sends: true, receives: false }),
    });
    console.log(`power-cut audit: ${JSON.stringify(report)}; restored ${JSON.stringify(cut.restored)}`);
    const { acknowledged } = report;
    assert.ok(acknowledged.sends > 200, `only ${acknowledged.sends} sends acknowledged`);
    assert.ok(
      acknowledged.batchEntries > 100,
      `only ${acknowledged.batchEntries} batch entries acknowledged`,
    );
    // The cuts must have taken something away, or they tested nothing.
    assert.ok(cut.restored.undone > 0, 'the cuts undid no write');
    assert.deepEqual(report.violations, []);
    assert.equal(report.findings.lostSends, 0);
  } finally {
    cut.dispose();
  }
});

// A server's first start makes its data directory: the directory's name must be as durable as what it holds.
test('a new data directory keeps its first acknowledged send through a power cut', {
  skip: NEEDS_OWN_SERVER || powerCutUnavailable(),
  timeout: 60_000,
}, async () => {
  const cut = new PowerCut();
  try {
    const dataDir = join(cut.root, 'new', 'data');
    const args = ['--durability', 'full'];
    let server = await startServer({ dataDir, env: cut.env, args });
    const call = async (action: string, input: object) => {
      const response = await postJson(server.endpoint, action, JSON.stringify(input));
      assert.equal(response.status, 200, await response.clone().text());
      return response.json();
    };
    const queueUrl = () => `${server.endpoint}/000000000000/first`;
    await call('CreateQueue', { QueueName: 'first' });
    await call('SendMessage', { QueueUrl: queueUrl(), MessageBody: 'acknowledged' });
    await server.kill();
    cut.cut();
    server = await startServer({ dataDir, env: cut.env, args, port: server.port });
    try {
      const { Messages } = await call('ReceiveMessage', { QueueUrl: queueUrl() });
      assert.deepEqual(
        Messages.map((message: { Body: string }) => message.Body),
        ['acknowledged'],
      );
    } finally {
      await server.kill();
    }
  } finally {
    cut.dispose();
  }
});
