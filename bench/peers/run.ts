/**
 * `npm run bench -- --peers`: issue 9's workload on Sluice and the systems a user would pick instead,
 * one after another on this machine, in one run; one table with ratios against Sluice, JSON, and an
 * SVG chart. A peer that cannot start is reported as such.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { flagsOf, positive } from '../../tools/flags.ts';
import { cpuSince } from '../cpu.ts';
import { machineFacts } from '../machine.ts';
import { errorText, now, round } from '../stats.ts';
import { stopAllTargets } from '../targets.ts';
import type { Peer, PeerInfo } from './peer.ts';
import {
  type MixedCpu,
  type PeerResult,
  peerVerdicts,
  renderFanOutTable,
  renderPeerSvg,
  renderPeerTable,
} from './report.ts';
import { peerSystems } from './systems.ts';
import { consume, drainFanOut, mixed, produce, wake } from './workload.ts';

export interface PeerOptions {
  only: string[] | null;
  messages: number;
  /** moto's ReceiveMessage scans the whole queue; it gets a smaller N (compare rates, not totals). */
  motoMessages: number;
  producers: number;
  consumerCounts: number[];
  duration: number;
  backlog: number;
  wakeIterations: number;
  settleMs: number;
  /** Fan-out: queues subscribed to the topic, one case each. */
  subscriberCounts: number[];
  /** Fan-out: deliveries per case (publishes x subscribers), so every case does about the same work. */
  fanOutDeliveries: number;
  phaseTimeout: number;
  out: string;
  svg: string;
  /** Directory for a --cpu-prof profile of the Sluice server, or null. */
  cpuProf: string | null;
  /** Another checkout's bin/sluice.js to run as one more system, or null. */
  compareBin: string | null;
  quick: boolean;
}

export const PEER_USAGE = `usage: npm run bench -- --peers [flags]
  --only a,b             systems to run (default all: sluice, moto, fauxqs, rabbitmq, nats, pg-boss, bullmq,
                         null = bench/null-server.ts, the client's ceiling; floor = bench/floor-server.ts,
                         the null server keeping each message durably in SQLite, the floor under Sluice's CPU)
  --messages N           produced per consume run (default 100000, --quick 1000)
  --moto-messages N      the same for moto (default 5000, --quick 300)
  --producers C          concurrent producers (default 16)
  --duration S           mixed window, seconds (default 30, --quick 2)
  --backlog N            mixed: producers pause above N undelivered (default 500)
  --wake N               idle-consumer wake iterations (default 1000, --quick 10)
  --fan-out N            deliveries per fan-out case (PublishBatch to 1, 5, 20 subscribed queues; systems
                         speaking SNS: sluice, fauxqs) (default 100000, --quick 300)
  --phase-timeout S      time limit of each phase (default 90, --quick 15)
  --out FILE             JSON (default bench/results/peers.json)
  --svg FILE             chart (default docs/images/peers.svg; --quick: bench/results/peers-quick.svg)
  --compare-bin FILE     also run another checkout's bin/sluice.js (before/after in one run)
  --cpu-prof DIR         profile the Sluice server (node --cpu-prof) into DIR
  --quick                small counts (for the integration test)
  --help                 this text`;

export function parsePeerArgs(argv: readonly string[]): PeerOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      peers: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      quick: { type: 'boolean' },
      only: { type: 'string' },
      messages: { type: 'string' },
      'moto-messages': { type: 'string' },
      producers: { type: 'string' },
      duration: { type: 'string' },
      backlog: { type: 'string' },
      wake: { type: 'string' },
      'fan-out': { type: 'string' },
      'phase-timeout': { type: 'string' },
      out: { type: 'string' },
      svg: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'compare-bin': { type: 'string' },
    },
  });
  if (values.help) return 'help';
  const quick = values.quick ?? false;
  return {
    only: values.only === undefined ? null : values.only.split(',').filter(Boolean),
    messages: positive('messages', values.messages, quick ? 1_000 : 100_000),
    motoMessages: positive('moto-messages', values['moto-messages'], quick ? 300 : 5_000),
    producers: positive('producers', values.producers, 16),
    consumerCounts: [4, 16],
    duration: positive('duration', values.duration, quick ? 2 : 30),
    backlog: positive('backlog', values.backlog, 500),
    wakeIterations: positive('wake', values.wake, quick ? 10 : 1_000),
    settleMs: 30,
    subscriberCounts: [1, 5, 20],
    fanOutDeliveries: positive('fan-out', values['fan-out'], quick ? 300 : 100_000),
    phaseTimeout: positive('phase-timeout', values['phase-timeout'], quick ? 15 : 90),
    out: values.out ?? 'bench/results/peers.json',
    svg: values.svg ?? (quick ? 'bench/results/peers-quick.svg' : 'docs/images/peers.svg'),
    cpuProf: values['cpu-prof'] ?? null,
    compareBin: values['compare-bin'] ?? null,
    quick,
  };
}

/** VmRSS summed over the server's processes (PostgreSQL has one per connection), MiB. */
function rssMiB(pids: readonly number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      kb += Number(match?.[1] ?? 0);
    } catch {
      // the process ended between listing and reading
    }
  }
  return kb / 1024;
}

/**
 * CPU per message of the mixed phase, from its start to its drained end: the server's processes (every
 * thread; PostgreSQL's per-connection backends that end meanwhile are missed) and this bench process, which
 * is the client of every system.
 */
function mixedCpuMeter(peer: Peer): (messages: number) => MixedCpu {
  const since = cpuSince(() => peer.serverPids());
  return (messages) => {
    const { clientS, serverS } = since();
    return { serverUsPerMsg: perItem(serverS, messages), clientUsPerMsg: perItem(clientS, messages) };
  };
}

/** CPU microseconds per item, or null without a figure. */
function perItem(seconds: number | null, items: number): number | null {
  return seconds === null || items <= 0 ? null : round((seconds * 1e6) / items, 1);
}

async function runPeer(info: PeerInfo, options: PeerOptions, log: (m: string) => void): Promise<PeerResult> {
  const result: PeerResult = {
    name: info.name,
    label: info.label,
    setup: info.setup,
    onCrash: info.onCrash,
    status: 'ok',
    consume: [],
    errors: {},
  };
  const peer = info.make();
  const plog = (m: string): void => log(`${info.name}: ${m}`);
  try {
    await peer.start();
  } catch (err) {
    result.status = 'did not start';
    result.startError = errorText(err);
    plog(`did not start: ${result.startError}`);
    await peer.stop().catch(() => {});
    return result;
  }
  let peakRss = 0;
  const sample = (): void => {
    peakRss = Math.max(peakRss, rssMiB(peer.serverPids()));
  };
  sample();
  const sampler = setInterval(sample, 250);
  const n = info.name === 'moto' ? options.motoMessages : options.messages;
  const phaseMs = options.phaseTimeout * 1000;
  const queueName = (what: string): string => `bench_${what}_${Date.now()}_${process.pid}`;
  const phase = async (name: string, fn: () => Promise<void>): Promise<void> => {
    const t0 = now();
    plog(`${name}: start`);
    try {
      await fn();
      plog(`${name}: done in ${((now() - t0) / 1000).toFixed(1)}s`);
    } catch (err) {
      result.errors[name] = errorText(err);
      plog(`${name}: FAILED ${errorText(err)}`);
    }
  };
  try {
    for (const consumers of options.consumerCounts) {
      await phase(`produce+consume x${consumers}`, async () => {
        const queue = await peer.queue(queueName(`pc${consumers}`));
        try {
          const produced = await produce(queue, n, options.producers, peer.maxBatch, phaseMs);
          result.produce ??= produced.figures;
          plog(`produced ${produced.figures.acked} at ${produced.figures.msgPerSec} msg/s`);
          const figures = await consume(
            queue,
            produced.acked,
            produced.figures.acked,
            consumers,
            phaseMs,
            5_000,
          );
          result.consume.push(figures);
          plog(`consumed ${figures.unique} with ${consumers} at ${figures.msgPerSec} msg/s`);
        } finally {
          await queue.remove().catch(() => {});
        }
      });
    }
    await phase('mixed', async () => {
      const queue = await peer.queue(queueName('mixed'));
      const cpu = mixedCpuMeter(peer);
      try {
        result.mixed = await mixed(
          queue,
          options.duration,
          options.producers,
          16,
          peer.maxBatch,
          options.backlog,
          30_000,
          5_000,
        );
        result.mixedCpu = cpu(result.mixed.sent);
        plog(`mixed e2e ${result.mixed.e2ePerSec} msg/s, p99 ${result.mixed.latencyMs?.p99 ?? '-'} ms`);
      } finally {
        await queue.remove().catch(() => {});
      }
    });
    for (const subscribers of peer.topic ? options.subscriberCounts : []) {
      await phase(`fan-out x${subscribers}`, async () => {
        const topic = await peer.topic?.(queueName(`fan${subscribers}`), subscribers);
        if (!topic) return;
        // Whole batches, so every case publishes the same batch size.
        const entries = 10 * Math.max(1, Math.round(options.fanOutDeliveries / subscribers / 10));
        const serverPids = (): number[] => peer.serverPids();
        const committing = cpuSince(serverPids);
        const published = await produce(topic, entries, options.producers, peer.maxBatch, phaseMs);
        const commitS = committing().serverS;
        const draining = cpuSince(serverPids);
        const figures = await drainFanOut(topic, published, 16, phaseMs, 5_000);
        result.fanOut = [
          ...(result.fanOut ?? []),
          {
            ...figures,
            commitCpuUs: perItem(commitS, figures.published * subscribers),
            drainCpuUs: perItem(draining().serverS, figures.delivered),
          },
        ];
        plog(
          `fan-out x${subscribers}: ${figures.committedPerSec} deliveries/s committed, ${figures.drainedPerSec}/s received and deleted`,
        );
      });
    }
    await phase('wake', async () => {
      const queue = await peer.queue(queueName('wake'));
      try {
        result.wake = await wake(queue, options.wakeIterations, options.settleMs, 60_000);
        plog(`wake p50 ${result.wake.wakeMs?.p50 ?? '-'} p99 ${result.wake.wakeMs?.p99 ?? '-'} ms`);
      } finally {
        await queue.remove().catch(() => {});
      }
    });
  } finally {
    clearInterval(sampler);
    sample();
    result.peakRssMiB = round(peakRss, 1);
    await peer.stop().catch((err: unknown) => {
      result.errors.stop = errorText(err);
    });
  }
  return result;
}

export async function runPeers(argv: readonly string[], log: (m: string) => void): Promise<number> {
  const flags = flagsOf(PEER_USAGE, () => parsePeerArgs(argv));
  if ('exitCode' in flags) return flags.exitCode;
  const { options } = flags;
  const machine = machineFacts();
  log(`peers: ${machine.cpuModel}, ${machine.cores} cores, load ${machine.loadAverage1m}, ${machine.date}`);
  const sluiceNodeArgs = options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProf}`] : [];
  const systems = peerSystems(sluiceNodeArgs, options.compareBin ?? undefined).filter(
    (s) => options.only === null || options.only.includes(s.name) || s.name.endsWith('-compare'),
  );
  const results: PeerResult[] = [];
  for (const info of systems) {
    results.push(await runPeer(info, options, log));
    await stopAllTargets();
  }
  const verdicts = peerVerdicts(results);
  process.stdout.write(
    `\nmachine: ${machine.cpuModel}, ${machine.cores} cores, node ${machine.node}, ${machine.date}, load at start ${machine.loadAverage1m}\n\n`,
  );
  process.stdout.write(`${renderPeerTable(results, options)}\n\n`);
  const fanOutTable = renderFanOutTable(results);
  if (fanOutTable) process.stdout.write(`${fanOutTable}\n\n`);
  for (const v of verdicts) process.stdout.write(`${v.verdict.padEnd(7)} ${v.target}: ${v.detail}\n`);
  for (const r of results.filter((x) => x.status !== 'ok'))
    process.stdout.write(`NOTE: ${r.label} did not start: ${r.startError}\n`);
  for (const file of [options.out, options.svg]) mkdirSync(dirname(file), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify({ machine, options, results, verdicts }, null, 2)}\n`);
  writeFileSync(options.svg, renderPeerSvg(results, machine));
  log(`results written to ${options.out} and ${options.svg}`);
  return 0;
}
