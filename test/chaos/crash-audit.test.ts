import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NEEDS_OWN_SERVER } from '../helpers/server.ts';
import { runCrashAudit, sqliteStore } from './crash-audit.ts';

// The CI form of `npm run test:chaos`: the default durability, 20 SIGKILLs at random moments.
test('crash audit: 20 SIGKILLs under load lose, double or reorder nothing acknowledged', {
  skip: NEEDS_OWN_SERVER,
  timeout: 240_000,
}, async () => {
  const report = await runCrashAudit({
    store: sqliteStore('durable'),
    kills: 20,
    minUptimeMs: 300,
    maxUptimeMs: 1500,
  });
  console.log(`crash audit: ${JSON.stringify(report)}`);
  assert.equal(report.kills, 20);
  // A run that acknowledged almost nothing would pass vacuously.
  const { acknowledged } = report;
  assert.ok(acknowledged.sends > 200, `only ${acknowledged.sends} sends acknowledged`);
  assert.ok(acknowledged.batchEntries > 100, `only ${acknowledged.batchEntries} batch entries acknowledged`);
  assert.ok(acknowledged.deletes > 50, `only ${acknowledged.deletes} deletes acknowledged`);
  assert.ok(acknowledged.moveTasks > 2, `only ${acknowledged.moveTasks} move tasks started`);
  assert.ok(acknowledged.moved > 20, `move tasks moved only ${acknowledged.moved} messages`);
  assert.deepEqual(report.violations, []);
  assert.deepEqual(report.findings, { lostSends: 0, undoneReceives: 0, examples: [] });
});
