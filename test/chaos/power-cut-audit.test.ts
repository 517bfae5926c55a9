import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NEEDS_OWN_SERVER } from '../helpers/server.ts';
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
