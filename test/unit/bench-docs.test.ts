import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { judge, type SoakSample } from '../../bench/soak-report.ts';
import {
  BENCHMARKS_PAGE,
  type BenchRecord,
  parseRecord,
  readRecords,
  recordOf,
  renderBenchmarks,
} from '../../scripts/bench-docs.ts';

const VALID: BenchRecord = {
  title: 'A run',
  kind: 'peers',
  date: '2026-12-01',
  command: 'npm run bench -- --peers',
  machine: '2-core test machine',
  source: 'a test',
  tables: [{ columns: ['system', 'e2e msg/s'], rows: [['Sluice', '1,000']] }],
  notes: [],
};

/** The machine facts every bench result carries, as a test machine's. */
const testMachine = (loadAverage1m: number) => ({
  date: '2026-12-09T10:11:12.345Z',
  cpuModel: 'Test CPU',
  cores: 2,
  memoryGiB: 8,
  loadAverage1m,
  node: 'v20.20.2',
  commit: 'abc1234',
});

describe('docs/benchmarks.md', () => {
  test('is what the records in bench/history give (run npm run bench:docs after changing them)', () => {
    assert.equal(readFileSync(BENCHMARKS_PAGE, 'utf8'), renderBenchmarks(readRecords()));
  });

  test('a malformed record is refused with its file name and the reason', () => {
    const bad = (changes: Partial<Record<keyof BenchRecord, unknown>>) =>
      JSON.stringify({ ...VALID, ...changes });
    assert.throws(() => parseRecord('x.json', bad({ kind: 'speed' })), /x\.json: unknown kind "speed"/);
    assert.throws(() => parseRecord('x.json', bad({ date: '4 Dec 2026' })), /bad date/);
    assert.throws(() => parseRecord('x.json', bad({ machine: '' })), /"machine" must be a non-empty string/);
    assert.throws(
      () => parseRecord('x.json', bad({ tables: [{ columns: ['a', 'b'], rows: [['only one']] }] })),
      /table 1: a row of \["only one"\] does not match its 2 columns/,
    );
    assert.deepEqual(parseRecord('x.json', bad({})), VALID);
  });

  test('a fresh peers result becomes a record, and as the newest of its kind it is the current figure', () => {
    const result = {
      machine: testMachine(0.25),
      options: { messages: 1000, motoMessages: 100, duration: 5 },
      results: [
        {
          name: 'sluice',
          label: 'Sluice (SQLite, durable)',
          setup: '',
          onCrash: '',
          status: 'ok',
          consume: [{ consumers: 4, msgPerSec: 900, lost: 0, duplicates: 0, undrained: 0 }],
          mixed: { e2ePerSec: 4321, lost: 0, duplicates: 0, undrained: 0, latencyMs: { p50: 3, p99: 9 } },
          errors: {},
        },
      ],
      verdicts: [{ target: 'e2e >= rabbitmq', verdict: 'NOT RUN', detail: 'rabbitmq did not run' }],
    };
    const record = parseRecord('new.json', JSON.stringify(recordOf('peers.json', result)));
    assert.equal(record.kind, 'peers');
    assert.equal(record.date, '2026-12-09T10:11Z');
    assert.equal(record.machine, '2-core Test CPU, 8 GiB RAM, Node v20.20.2');
    assert.equal(record.commit, 'abc1234');
    const row = record.tables[0]!.rows[0]!;
    assert.equal(row[record.tables[0]!.columns.indexOf('e2e msg/s')], '4,321');

    const older = { ...VALID, title: 'An older run', date: '2026-12-04T03:24Z' };
    const page = renderBenchmarks([
      { file: 'old.json', record: older },
      { file: 'new.json', record },
    ]);
    const current = page.slice(page.indexOf('## Current figures'), page.indexOf('## Before and after'));
    assert.match(current, /Against peer systems \(issue 9 workload\)/);
    assert.doesNotMatch(current, /An older run/);
    assert.match(
      page,
      /\| 2026-12-04 03:24 UTC \| Against peer systems \| \[An older run\]\(\.\.\/bench\/history\/old\.json\) \|/,
    );
  });
  test('a peers result with fan-out cases gets the fan-out table, each case beside the plain queue', () => {
    const fanOut = (subscribers: number, committedPerSec: number) => ({
      subscribers,
      published: 100,
      publishPerSec: committedPerSec / subscribers,
      committedPerSec,
      delivered: 100 * subscribers,
      drainedPerSec: 3000,
      lost: 0,
      undrained: 0,
      duplicates: 0,
      unexpected: 0,
      errors: 0,
      commitCpuUs: 30,
      drainCpuUs: 60,
    });
    const result = {
      machine: testMachine(0.5),
      options: { messages: 1000, motoMessages: 100, duration: 5 },
      results: [
        {
          name: 'sluice',
          label: 'Sluice (SQLite, durable)',
          setup: '',
          onCrash: '',
          status: 'ok',
          produce: { acked: 1000, seconds: 0.5, msgPerSec: 2000, errors: 0 },
          consume: [],
          mixed: { e2ePerSec: 1500, lost: 0, duplicates: 0, undrained: 0, latencyMs: null },
          fanOut: [fanOut(1, 1800), fanOut(5, 6000)],
          errors: {},
        },
      ],
      verdicts: [],
    };
    const record = recordOf('peers.json', result);
    assert.equal(record.tables.length, 2);
    const table = record.tables[1]!;
    const cellOf = (row: number, column: string) => table.rows[row]![table.columns.indexOf(column)];
    assert.deepEqual(
      table.rows.map((row) => row[1]),
      ['plain queue', '1', '5'],
    );
    assert.equal(cellOf(0, 'deliveries committed/s'), '2,000');
    assert.equal(cellOf(2, 'deliveries committed/s'), '6,000');
    assert.equal(cellOf(2, '÷ plain sends/s'), '3.00x');
    assert.equal(cellOf(2, '÷ plain e2e/s'), '2.00x');
    assert.equal(cellOf(2, 'server CPU µs/delivery committed'), '30');
  });

  test('a --cpu-stages result becomes a record of its own kind, each stage a row with its µs per message', () => {
    const rows = [
      { stage: 'HTTP', sharePct: 60, usPerMsg: 30 },
      { stage: 'store statements', sharePct: 40, usPerMsg: 20 },
      { stage: 'main thread', sharePct: null, usPerMsg: 50 },
      { stage: 'other threads', sharePct: null, usPerMsg: 10 },
      { stage: 'server total', sharePct: null, usPerMsg: 60 },
    ];
    const result = {
      machine: testMachine(1.5),
      options: { duration: 30, producers: 16, consumers: 16, backlog: 500 },
      mixed: { sent: 1000, e2ePerSec: 33.3, lost: 0, duplicates: 0 },
      samples: { busy: 90, idle: 10 },
      rows,
    };
    const record = parseRecord('new.json', JSON.stringify(recordOf('cpu-stages.json', result)));
    assert.equal(record.kind, 'cpu-stages');
    assert.equal(record.command, 'npm run bench -- --cpu-stages --duration 30');
    assert.equal(record.load, '1.5 at start');
    assert.deepEqual(
      record.tables[0]!.rows.map((row) => row.slice(0, 3)),
      [
        ['HTTP', '60.0', '30.0'],
        ['store statements', '40.0', '20.0'],
        ['main thread', '', '50.0'],
        ['other threads', '', '10.0'],
        ['server total', '', '60.0'],
      ],
    );
    assert.match(renderBenchmarks([{ file: 'new.json', record }]), /### Server CPU by stage/);
  });
  test('a soak report becomes a record of its own kind: the trend table, the totals, and the chart of the page', () => {
    const samples: SoakSample[] = Array.from({ length: 31 }, (_, i) => ({
      t: (i + 1) * 10,
      rssMiB: 100 + i,
      heapUsedMiB: 20,
      depth: 0,
      sentPerSec: 1667,
      receivedPerSec: 1667,
      sendP50: 5,
      sendP99: 15,
      receiveP50: 3,
      receiveP99: 100,
      e2eP50: 2,
      e2eP99: 8,
      serverCpuPct: 25,
      loadAverage1m: 1 + (i % 3) / 2,
      behind: 0,
    }));
    const summary = { count: 10, p50: 5.5, p90: 9, p99: 17.5, max: 60, mean: 6 };
    const result = {
      machine: testMachine(0.5),
      options: {
        minutes: 5,
        rate: 1000,
        sampleSeconds: 10,
        producers: 16,
        consumers: 16,
        durability: 'durable',
        out: 'bench/results/soak.json',
        svg: '/work/docs/images/soak.svg',
      },
      planned: 300_000,
      sent: 300_000,
      received: 300_000,
      lost: 0,
      duplicates: 0,
      requestErrors: 0,
      rateKept: 1,
      loadSeconds: 300,
      drainSeconds: 1,
      sendLatencyMs: summary,
      e2eLatencyMs: summary,
      samples,
      verdict: judge(samples),
    };
    const record = parseRecord('new.json', JSON.stringify(recordOf('soak.json', result)));
    assert.equal(record.kind, 'soak');
    assert.equal(record.command, 'npm run soak -- --minutes 5 --rate 1000 --durability durable');
    assert.equal(record.load, '1-2 during the run');
    const rss = record.tables[0]!.rows.find((row) => row[0] === 'rssMiB');
    // The first third of the 30 windows after the warm-up averages 105.5 MiB, the last 125.5.
    assert.deepEqual(rss?.slice(2, 5), ['105.5', '125.5', '1.19']);
    assert.match(record.notes[0]!, /received 300,000: 0 lost, 0 duplicates, 0 request errors/);
    assert.match(record.notes[0]!, /Memory FLAT, latency FLAT\.$/);
    assert.equal(record.notes[1], '![Soak run: memory, latency and depth over time](images/soak.svg)');
    assert.match(renderBenchmarks([{ file: 'new.json', record }]), /### Soak run/);
  });
});
