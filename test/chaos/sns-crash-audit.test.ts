import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshDatabase } from '../../tools/postgres.ts';
import { NEEDS_OWN_SERVER } from '../helpers/server.ts';
import { sqliteStore } from './crash-audit.ts';
import {
  type Acknowledged,
  auditPublishes,
  describeSnsReport,
  type Found,
  type Publish,
  runSnsCrashAudit,
  type SnsAuditReport,
} from './sns-crash-audit.ts';

// The crash audit's publishes (sns-crash-audit.ts): a few SIGKILLs under a publish load on each store; the longer
// run is `SLUICE_SNS_CRASH_KILLS=N` (e.g. 40) on this file. Each kill comes 0.3-1.5 s after the load is answered
// again (it was 1-4 s, 2-6 s on PostgreSQL, from the restart, until the suite's wall time was cut): every kill
// still lands under load, and the run still acknowledges thousands of publishes.
const KILLS = Number(process.env.SLUICE_SNS_CRASH_KILLS ?? 6);
const MIN_UPTIME_MS = 300;
const MAX_UPTIME_MS = 1500;

/** The least a run must acknowledge to mean something; the load runs past the last kill until it has. */
const MINIMUM: Acknowledged = { acknowledged: 151, batchEntries: 51, fifo: 31 };

function assertWhole(label: string, report: SnsAuditReport): void {
  console.log(`SNS crash audit, ${label}: ${describeSnsReport(report)}`);
  // A run that acknowledged almost nothing would pass vacuously.
  for (const [key, least] of Object.entries(MINIMUM)) {
    const got = report[key as keyof Acknowledged];
    assert.ok(got >= least, `${key}: only ${got} publishes acknowledged`);
  }
  assert.deepEqual(report.violations.slice(0, 20), []);
  assert.equal(report.lost, 0);
  assert.equal(report.partial, 0);
  assert.equal(report.deliveriesFound, report.deliveriesExpected);
}

test('SNS crash audit on SQLite (durable): every acknowledged publish in every matching queue, none partial', {
  skip: NEEDS_OWN_SERVER,
  timeout: 300_000,
}, async () => {
  const report = await runSnsCrashAudit({
    store: sqliteStore('durable'),
    kills: KILLS,
    minUptimeMs: MIN_UPTIME_MS,
    maxUptimeMs: MAX_UPTIME_MS,
    minimum: MINIMUM,
  });
  assertWhole('SQLite durable', report);
});

test('SNS crash audit on PostgreSQL: every acknowledged publish in every matching queue, none partial', {
  skip: NEEDS_OWN_SERVER,
  timeout: 300_000,
}, async () => {
  const database = await freshDatabase('sluice_sns_crash');
  try {
    const report = await runSnsCrashAudit({
      store: { label: 'PostgreSQL', args: ['--store', database.url] },
      kills: KILLS,
      // A restart on PostgreSQL takes a few seconds (the dead process's sessions and leases): the uptime starts
      // once the load is answered again.
      minUptimeMs: MIN_UPTIME_MS,
      maxUptimeMs: MAX_UPTIME_MS,
      minimum: MINIMUM,
    });
    assertWhole('PostgreSQL', report);
  } finally {
    await database.drop();
  }
});

// The auditor itself: it must see each kind of breakage, or the runs above would pass vacuously.
test('SNS crash audit: the auditor reports a partial, a lost, a stray and a reordered delivery', () => {
  const publish = (id: string, seq: number, outcome: Publish['outcome'], fifo = false): Publish => ({
    id,
    fifo,
    group: fifo ? 'g' : undefined,
    seq,
    batch: false,
    // Red, size 60, from eu-west-1: every standard queue but sns-raw-small (size < 30) matches.
    attributes: { color: 'red', size: 60 },
    body: { id, region: 'eu-west-1' },
    outcome,
    messageId: outcome === 'acked' ? `mid-${id}` : undefined,
  });
  const everyMatching = (id: string): Found[] =>
    ['sns-all', 'sns-red', 'sns-big-not-blue', 'sns-body-eu'].map((queue) => ({
      queue,
      messageId: `mid-${id}`,
      seq: 0,
    }));
  const publishes = [
    publish('whole', 0, 'acked'),
    publish('partial-unknown', 1, 'unknown'),
    publish('lost', 2, 'acked'),
    publish('stray', 3, 'acked'),
    publish('refused', 4, 'refused'),
    publish('f1', 1, 'acked', true),
    publish('f2', 2, 'acked', true),
  ];
  const found = new Map<string, Found[]>([
    ['whole', everyMatching('whole')],
    ['partial-unknown', everyMatching('partial-unknown').slice(0, 2)],
    ['lost', everyMatching('lost').slice(1)],
    ['stray', [...everyMatching('stray'), { queue: 'sns-raw-small', seq: 3 }]],
    ['refused', everyMatching('refused')],
    [
      'f1',
      ['sns-all.fifo', 'sns-red.fifo'].map((queue) => ({ queue, messageId: 'mid-f1', seq: 1, group: 'g' })),
    ],
    [
      'f2',
      ['sns-all.fifo', 'sns-red.fifo'].map((queue) => ({ queue, messageId: 'mid-f2', seq: 2, group: 'g' })),
    ],
  ]);
  const report = auditPublishes(1, publishes, found, new Map([['sns-all.fifo g', [2, 1]]]));
  assert.equal(report.acknowledged, 5);
  assert.equal(report.deliveriesExpected, 3 * 4 + 2 * 2);
  assert.equal(report.deliveriesFound, 4 + 3 + 4 + 2 * 2);
  assert.equal(report.lost, 1);
  assert.equal(report.partial, 2);
  assert.equal(report.unknownOutcome, 1);
  assert.equal(report.notSent, 1);
  const about = (word: string) => report.violations.filter((v) => v.includes(word)).length;
  assert.equal(about('partial-unknown (unknown): partial'), 1);
  assert.equal(about('lost (acked): partial'), 1);
  assert.equal(about('stray: in sns-raw-small, whose filter does not match it'), 1);
  assert.equal(about('refused: refused, yet in'), 1);
  assert.equal(about('FIFO sns-all.fifo g: 1 received after 2'), 1);
  assert.equal(report.violations.length, 5);
});
