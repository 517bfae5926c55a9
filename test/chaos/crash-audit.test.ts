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
  assert.ok(report.acknowledged.sends > 200, `only ${report.acknowledged.sends} sends acknowledged`);
  assert.ok(report.acknowledged.deletes > 50, `only ${report.acknowledged.deletes} deletes acknowledged`);
  assert.deepEqual(report.violations, []);
});
