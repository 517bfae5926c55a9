import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { SoakSample, Trend } from '../../bench/soak-report.ts';

const run = promisify(execFile);
const SOAK = new URL('../../bench/soak.ts', import.meta.url).pathname;

interface Report {
  planned: number;
  sent: number;
  received: number;
  lost: number;
  duplicates: number;
  rateKept: number;
  samples: SoakSample[];
  verdict: { samplesUsed: number; trends: Trend[]; memoryFlat: boolean | null; latencyFlat: boolean | null };
}

/**
 * `npm run soak -- --quick`, shortened to 18 s: a real server process under paced load. The report must
 * come from real samples: memory read from the server, latencies measured, thirds compared with finite ratios.
 */
describe('soak run (quick)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-soak-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('samples the server and computes the flatness verdict from those samples', async () => {
    const out = join(dir, 'soak.json');
    const svg = join(dir, 'soak.svg');
    const args = [
      '--conditions=sluice-source',
      '--import',
      'tsx',
      SOAK,
      '--quick',
      '--minutes',
      '0.3',
      '--rate',
      '300',
    ];
    const { stdout } = await run(
      process.execPath,
      [...args, '--sample-seconds', '2', '--out', out, '--svg', svg],
      { timeout: 60_000 },
    );
    const report = JSON.parse(readFileSync(out, 'utf8')) as Report;

    assert.equal(report.planned, Math.round(300 * 0.3 * 60));
    assert.equal(report.sent, report.planned, stdout);
    assert.equal(report.received, report.sent);
    assert.equal(report.lost, 0);
    assert.ok(report.rateKept > 0.8 && report.rateKept < 1.2, `rate kept ${report.rateKept}`);

    assert.ok(report.samples.length >= 6, `${report.samples.length} samples`);
    for (const s of report.samples) {
      assert.ok(s.rssMiB > 10 && s.rssMiB < 4096, `RSS ${s.rssMiB} MiB at t=${s.t}`);
      assert.ok(s.heapUsedMiB !== null && s.heapUsedMiB > 1 && s.heapUsedMiB < s.rssMiB, `heap at t=${s.t}`);
    }
    // Each window counts its own deliveries: together they are what the consumers received during the load
    // (the rest came in the drain). One window may be empty: when this shared machine pauses the harness for
    // a window, its timer runs before the answers that waited, and that window truly received nothing.
    const windowSeconds = report.samples.map((s, i) => s.t - (report.samples[i - 1]?.t ?? 0));
    const inWindows = report.samples.reduce(
      (sum, s, i) => sum + s.receivedPerSec * (windowSeconds[i] ?? 0),
      0,
    );
    assert.ok(
      inWindows > 0.8 * report.received && inWindows < 1.05 * report.received,
      `windows add up to ${inWindows} of ${report.received} received\n${stdout}`,
    );
    const empty = report.samples.filter((s) => s.receivedPerSec === 0).map((s) => s.t);
    assert.ok(
      empty.length <= 1,
      `nothing received in the windows ending at t=${empty.join(', ')}\n${stdout}`,
    );
    const times = report.samples.map((s) => s.t);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    assert.equal(report.verdict.samplesUsed, report.samples.length - 1);
    const sentTotal = report.samples.reduce((sum, s) => sum + s.sentPerSec, 0);
    assert.ok(sentTotal > 0);

    for (const field of ['rssMiB', 'heapUsedMiB', 'sendP99', 'e2eP99'] as const) {
      const trend = report.verdict.trends.find((t) => t.field === field);
      assert.ok(trend, field);
      assert.ok(Number.isFinite(trend.first) && Number.isFinite(trend.last), `${field} thirds`);
      assert.ok(trend.ratio !== null && Number.isFinite(trend.ratio) && trend.ratio > 0, `${field} ratio`);
      assert.equal(trend.flat, trend.ratio <= trend.limit);
    }
    // The RSS ratio is the last third's mean over the first third's, recomputed here from the samples.
    const used = report.samples.slice(1).map((s) => s.rssMiB);
    const third = Math.floor(used.length / 3);
    const meanOf = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ratio = meanOf(used.slice(used.length - third)) / meanOf(used.slice(0, third));
    const rss = report.verdict.trends.find((t) => t.field === 'rssMiB');
    assert.ok(rss?.ratio !== undefined && rss.ratio !== null && Math.abs(rss.ratio - ratio) < 0.002);
    assert.equal(typeof report.verdict.memoryFlat, 'boolean');
    assert.equal(typeof report.verdict.latencyFlat, 'boolean');

    const chart = readFileSync(svg, 'utf8');
    assert.match(chart, /^<svg /);
    assert.equal(chart.match(/<polyline /g)?.length, 7);
    assert.match(stdout, /memory: (FLAT|NOT FLAT); latency: (FLAT|NOT FLAT)/);
  });
});
