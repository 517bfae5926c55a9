import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { PeerResult } from '../../bench/peers/report.ts';
import { motoCommand } from '../../bench/targets.ts';

/**
 * `npm run bench -- --peers --quick` end to end: every system runs issue 9's workload (small counts)
 * and lands in one table, JSON and SVG; the systems speaking SNS also run the fan-out cases. A peer whose service does not answer on its port here may be
 * reported as not started; every other one must have run with nothing lost.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'sluice-peer-bench-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The port each peer needs to be running already; the SQS servers are spawned by the bench itself. */
const SERVICE_PORT: Record<string, number | undefined> = {
  rabbitmq: 5672,
  nats: 4222,
  'pg-boss': 5432,
  bullmq: 6379,
};

/** The systems that also speak SNS: the bench runs the fan-out cases on them. */
const SNS_SYSTEMS = new Set(['sluice', 'fauxqs']);

/** moto is spawned by the bench; it may be missing only where its Python package is not installed. */
function motoInstalled(): boolean {
  try {
    execFileSync(motoCommand(), ['--help'], { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(2_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

test('the peer bench measures every reachable system and reports the others as not started', {
  timeout: 120_000,
}, async () => {
  const out = join(dir, 'peers.json');
  const svg = join(dir, 'peers.svg');
  const args = [
    '--conditions=sluice-source',
    '--import',
    'tsx',
    'bench/run.ts',
    '--peers',
    '--quick',
    '--messages',
    '300',
    '--moto-messages',
    '100',
    '--duration',
    '1',
    '--wake',
    '5',
    '--out',
    out,
    '--svg',
    svg,
  ];
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { cwd: ROOT, timeout: 110_000, maxBuffer: 16 * 2 ** 20 },
      (err, text, stderr) => (err ? reject(new Error(`${err.message}\n${text}\n${stderr}`)) : resolve(text)),
    );
  });
  const report = JSON.parse(readFileSync(out, 'utf8')) as { results: PeerResult[] };
  const names = report.results.map((r) => r.name);
  assert.deepEqual(names, [
    'sluice',
    'sluice-memory',
    'moto',
    'fauxqs',
    'rabbitmq',
    'nats',
    'pg-boss',
    'bullmq',
    'null',
    'floor',
  ]);
  assert.match(stdout, /e2e of ceiling/, 'the table gives each system against the null server');
  assert.match(stdout, /server CPU µs\/msg/, 'the table gives the CPU each message cost');
  for (const r of report.results) {
    assert.ok(stdout.includes(r.label), `table names ${r.label}`);
    const port = SERVICE_PORT[r.name];
    if (r.status !== 'ok') {
      const unavailable =
        port === undefined ? r.name === 'moto' && !motoInstalled() : !(await reachable(port));
      assert.ok(unavailable, `${r.name} did not start although it is available: ${r.startError}`);
      assert.match(stdout, new RegExp(`${r.label.replace(/[()]/g, '.')}\\s*\\|\\s*did not start`));
      continue;
    }
    assert.deepEqual(r.errors, {}, `${r.name} phases failed`);
    assert.equal(r.consume.length, 2, `${r.name} consumed with 4 and 16`);
    for (const c of r.consume) {
      assert.ok(c.unique > 0, `${r.name} consumed with ${c.consumers}`);
      assert.equal(c.lost, 0, `${r.name} lost messages with ${c.consumers} consumers`);
    }
    // moto's send-to-delivery latency can exceed the 1 s window and, on a loaded machine, the phase's idle
    // wait (what has not arrived then counts as lost): only its sends must have gone through.
    if (r.name !== 'moto') {
      assert.ok((r.mixed?.e2ePerSec ?? 0) > 0, `${r.name} has an end-to-end rate`);
      assert.equal(r.mixed?.lost, 0, `${r.name} lost messages in the mixed run`);
    }
    assert.ok((r.mixed?.sentPerSec ?? 0) > 0, `${r.name} accepted sends in the mixed run`);
    assert.ok((r.wake?.ok ?? 0) > 0, `${r.name} woke an idle consumer`);
    assert.ok((r.peakRssMiB ?? 0) > 0, `${r.name} has a server RSS`);
    assert.ok((r.mixedCpu?.serverUsPerMsg ?? 0) > 0, `${r.name} has the server's CPU per message`);
    assert.ok((r.mixedCpu?.clientUsPerMsg ?? 0) > 0, `${r.name} has the client's CPU per message`);
    if (!SNS_SYSTEMS.has(r.name)) {
      assert.equal(r.fanOut, undefined, `${r.name} has no fan-out cases`);
      continue;
    }
    assert.deepEqual(
      r.fanOut?.map((f) => f.subscribers),
      [1, 5, 20],
      `${r.name} ran the fan-out cases`,
    );
    for (const f of r.fanOut ?? []) {
      const name = `${r.name} fan-out x${f.subscribers}`;
      assert.ok(f.published > 0, `${name} published`);
      assert.equal(f.delivered, f.published * f.subscribers, `${name}: every queue got every publication`);
      assert.deepEqual([f.lost, f.duplicates, f.unexpected, f.errors], [0, 0, 0, 0], `${name} was clean`);
      assert.ok(f.committedPerSec > 0 && f.drainedPerSec > 0, `${name} has its rates`);
      // Read from /proc in 10 ms ticks: a quick case may cost none, so only its presence is checked.
      assert.ok(f.commitCpuUs !== null && f.drainCpuUs !== null, `${name} has the server's CPU`);
    }
  }
  assert.ok(existsSync(svg) && readFileSync(svg, 'utf8').startsWith('<svg'), 'chart written');
  assert.match(stdout, /e2e >= 2x moto/);
  assert.match(stdout, /SNS fan-out/, 'the fan-out table is printed');
  assert.match(stdout, /fan-out x5 deliveries committed\/s >= 2\.5x plain sends\/s/);
  assert.match(stdout, /fan-out x5 received\+deleted\/s >= fauxqs/);
  assert.match(
    stdout,
    /(PASS|MISS) +in-memory server CPU <= 1\.2x fauxqs: sluice-memory [\d,.]+ server CPU µs\/msg vs fauxqs /,
  );
  assert.match(
    stdout,
    /(PASS|MISS) +server CPU <= 1\.15x floor: sluice [\d,.]+ server CPU µs\/msg vs floor /,
  );
});
