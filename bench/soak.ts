/**
 * `npm run soak`: a bounded soak run. A real Sluice server process (SQLite, 127.0.0.1) takes a steady rate of
 * 1 KiB messages (default 1,667/s for 10 minutes: 1,000,000 messages) from paced producers while consumers
 * receive and delete them. Every window (default 10 s) it records the server's RSS (/proc/PID) and heap (its
 * /metrics), the queue depth, and send / receive / end-to-end latency percentiles; at the end it compares
 * the first third of the run with the last (bench/soak-report.ts), prints a table, writes JSON and an SVG.
 * See bench/README.md, "Soak run".
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { flagsOf, positive } from '../tools/flags.ts';
import { readRss } from '../tools/rss.ts';
import { makeClient, type QueueClient, type SendEntry } from './client.ts';
import { processCpuSeconds, processRunQueueWaitSeconds } from './cpu.ts';
import { machineFacts } from './machine.ts';
import { createQueue, deleteAll, Errors, makeBody, parseBody, receiveOrBackOff } from './scenarios.ts';
import {
  flatness,
  judge,
  renderSoakSvg,
  renderSoakTable,
  type SoakSample,
  type SoakVerdict,
} from './soak-report.ts';
import { now, round, sleep, summarize } from './stats.ts';
import { type RunningTarget, runMain, SLUICE_BIN, startTarget } from './targets.ts';

const BATCH = 10;
/** How often the pacer tops the producers up to the schedule. */
const PACE_MS = 20;
/** After the last send, consumers get this long to receive what is left. */
const DRAIN_LIMIT_MS = 60_000;

export interface SoakOptions {
  minutes: number;
  /** Messages per second the producers keep to. */
  rate: number;
  sampleSeconds: number;
  /** Most SendMessageBatch calls in flight at once (the pacer's concurrency). */
  producers: number;
  consumers: number;
  durability: 'full' | 'durable' | 'normal';
  out: string;
  svg: string;
  sluiceBin: string;
  quick: boolean;
  /** Run nothing: judge and draw the samples of this earlier report again. */
  fromJson: string | undefined;
}

const SOAK_USAGE = `usage: npm run soak -- [flags]
  --minutes N         length of the load, minutes, decimals allowed (default 10, --quick 0.5)
  --rate R            messages/s the producers keep to (default 1667: 1,000,000 in 10 minutes; --quick 500)
  --sample-seconds S  window length: one sample of memory, depth and latency per S s (default 10, --quick 3)
  --producers C       most SendMessageBatch calls in flight (default 16)
  --consumers C       ReceiveMessage + DeleteMessageBatch loops (default 16)
  --durability MODE   full | durable | normal (default durable, the server's default)
  --out FILE          JSON report (default bench/results/soak.json)
  --svg FILE          SVG chart (default docs/images/soak.svg; --quick: bench/results/soak-quick.svg)
  --sluice-bin FILE   sluice entry point to run (default: this checkout's packages/server/bin/sluice.js)
  --quick             about 30 s, for a smoke run and the integration test
  --from-json FILE    run nothing: print the table and draw the chart (--svg) of an earlier report
  --help              this text`;

function parseSoakArgs(argv: string[]): SoakOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      minutes: { type: 'string' },
      rate: { type: 'string' },
      'sample-seconds': { type: 'string' },
      producers: { type: 'string' },
      consumers: { type: 'string' },
      durability: { type: 'string' },
      out: { type: 'string' },
      svg: { type: 'string' },
      'sluice-bin': { type: 'string' },
      quick: { type: 'boolean' },
      'from-json': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const quick = values.quick ?? false;
  const durability = values.durability ?? 'durable';
  if (durability !== 'full' && durability !== 'durable' && durability !== 'normal')
    throw new Error(`--durability: use full, durable or normal, got ${durability}`);
  const results = new URL('./results/', import.meta.url).pathname;
  return {
    minutes: positive('minutes', values.minutes, quick ? 0.5 : 10, true),
    rate: positive('rate', values.rate, quick ? 500 : 1667),
    sampleSeconds: positive('sample-seconds', values['sample-seconds'], quick ? 3 : 10, true),
    producers: positive('producers', values.producers, 16),
    consumers: positive('consumers', values.consumers, 16),
    durability,
    out: values.out ?? `${results}soak.json`,
    svg:
      values.svg ??
      (quick ? `${results}soak-quick.svg` : new URL('../docs/images/soak.svg', import.meta.url).pathname),
    sluiceBin: values['sluice-bin'] ?? SLUICE_BIN,
    quick,
    fromJson: values['from-json'],
  };
}

export interface SoakReport {
  machine: Record<string, string | number>;
  options: SoakOptions;
  target: { durability: string; pid: number; endpoint: string };
  planned: number;
  sent: number;
  received: number;
  lost: number;
  duplicates: number;
  requestErrors: number;
  firstError?: string | undefined;
  /** Achieved send rate over the load phase / the asked rate. */
  rateKept: number;
  loadSeconds: number;
  drainSeconds: number;
  /** Whole-run latency percentiles, ms. */
  sendLatencyMs: ReturnType<typeof summarize>;
  e2eLatencyMs: ReturnType<typeof summarize>;
  samples: SoakSample[];
  verdict: SoakVerdict;
}

/** Latencies of one window; swapped out at every sample so a window's figures are its own. */
class Window {
  send: number[] = [];
  receive: number[] = [];
  e2e: number[] = [];
  sent = 0;
  received = 0;
}

function pct(xs: readonly number[], which: 'p50' | 'p99'): number | null {
  const s = summarize(xs);
  return s === null ? null : round(s[which], 2);
}

/** The server's V8 heap in use, MiB, from its /metrics; null if it cannot be read. */
async function heapUsedMiB(endpoint: string): Promise<number | null> {
  try {
    const text = await (await fetch(`${endpoint}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const match = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
    return match?.[1] ? round(Number(match[1]) / 2 ** 20, 1) : null;
  } catch {
    return null;
  }
}

async function queueDepth(client: QueueClient, queueUrl: string): Promise<number | null> {
  try {
    const a = await client.getQueueAttributes(queueUrl, [
      'ApproximateNumberOfMessages',
      'ApproximateNumberOfMessagesNotVisible',
    ]);
    return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
  } catch {
    return null;
  }
}

async function soak(
  options: SoakOptions,
  log: (message: string) => void,
  target: RunningTarget,
): Promise<SoakReport> {
  const client = makeClient('raw', target.endpoint);
  const queueUrl = await createQueue(client, 'soak');
  const planned = Math.round(options.rate * options.minutes * 60);
  const acked = new Uint8Array(planned);
  const seen = new Uint16Array(planned);
  const errors = new Errors();
  const allSend: number[] = [];
  const allE2e: number[] = [];
  let window = new Window();
  let issued = 0;
  let sent = 0;
  let received = 0;
  let duplicates = 0;
  let inFlightSends = 0;
  let sending = true;
  const t0 = now();
  const loadEnd = t0 + options.minutes * 60_000;

  const sendBatch = async (first: number, count: number): Promise<void> => {
    inFlightSends++;
    const sentAt = now();
    const entries: SendEntry[] = [];
    for (let seq = first; seq < first + count; seq++)
      entries.push({ Id: `m${seq}`, MessageBody: makeBody(seq, sentAt) });
    try {
      const res = await client.sendMessageBatch(queueUrl, entries);
      const took = now() - sentAt;
      window.send.push(took);
      allSend.push(took);
      for (const ok of res.Successful) {
        const seq = Number(ok.Id?.slice(1));
        if (seq >= first && seq < first + count && acked[seq] === 0) {
          acked[seq] = 1;
          sent++;
          window.sent++;
        }
      }
    } catch (err) {
      errors.add(err);
    } finally {
      inFlightSends--;
    }
  };

  // Open-loop pacing: every PACE_MS, issue the batches the schedule asks for, up to `producers` in flight.
  // A server that falls behind shows as `behind`, not as a lower rate hidden by a closed loop.
  const pacer = (async () => {
    const pending = new Set<Promise<void>>();
    while (issued < planned) {
      const due = Math.min(planned, Math.floor(((now() - t0) / 1000) * options.rate));
      while (issued < due && inFlightSends < options.producers) {
        const count = Math.min(BATCH, planned - issued);
        const p = sendBatch(issued, count);
        issued += count;
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      await sleep(PACE_MS);
    }
    await Promise.all(pending);
    sending = false;
  })();

  const drainDeadline = (): number => Math.max(loadEnd, now()) + DRAIN_LIMIT_MS;
  let deadline = Number.POSITIVE_INFINITY;
  const consumer = async (): Promise<void> => {
    while (!(!sending && received >= sent) && now() < deadline) {
      const t = now();
      const messages = await receiveOrBackOff(client, queueUrl, errors);
      const receivedAt = now();
      if (messages.length === 0) continue;
      window.receive.push(receivedAt - t);
      for (const m of messages) {
        const body = parseBody(m.Body);
        if (!body || body.seq < 0 || body.seq >= planned) continue;
        const times = (seen[body.seq] ?? 0) + 1;
        seen[body.seq] = times;
        if (times > 1) {
          duplicates++;
          continue;
        }
        received++;
        window.received++;
        window.e2e.push(receivedAt - body.sentAt);
        allE2e.push(receivedAt - body.sentAt);
      }
      await deleteAll(client, queueUrl, messages, errors);
    }
  };
  const consumers = Promise.all(Array.from({ length: options.consumers }, consumer));
  void pacer.then(() => {
    deadline = drainDeadline();
  });

  const samples: SoakSample[] = [];
  let cpuBefore = processCpuSeconds(target.pid);
  let waitBefore = processRunQueueWaitSeconds(target.pid);
  let windowStart = t0;
  const takeSample = async (): Promise<void> => {
    const w = window;
    window = new Window();
    const t = now();
    const seconds = (t - windowStart) / 1000;
    windowStart = t;
    const cpuNow = processCpuSeconds(target.pid);
    const waitNow = processRunQueueWaitSeconds(target.pid);
    const rss = readRss(target.pid);
    const [heap, depth] = await Promise.all([heapUsedMiB(target.endpoint), queueDepth(client, queueUrl)]);
    const due = Math.min(planned, Math.floor(((t - t0) / 1000) * options.rate));
    const sample: SoakSample = {
      t: round((t - t0) / 1000, 1),
      rssMiB: rss ? round(rss.rssMiB, 1) : Number.NaN,
      heapUsedMiB: heap,
      depth,
      sentPerSec: round(w.sent / seconds, 1),
      receivedPerSec: round(w.received / seconds, 1),
      sendP50: pct(w.send, 'p50'),
      sendP99: pct(w.send, 'p99'),
      receiveP50: pct(w.receive, 'p50'),
      receiveP99: pct(w.receive, 'p99'),
      e2eP50: pct(w.e2e, 'p50'),
      e2eP99: pct(w.e2e, 'p99'),
      serverCpuPct:
        cpuBefore === null || cpuNow === null ? null : round((100 * (cpuNow - cpuBefore)) / seconds, 0),
      serverRunQueueWaitPct:
        waitBefore === null || waitNow === null ? null : round((100 * (waitNow - waitBefore)) / seconds, 0),
      loadAverage1m: round(os.loadavg()[0] ?? 0, 2),
      behind: Math.max(0, due - issued),
    };
    cpuBefore = cpuNow;
    waitBefore = waitNow;
    samples.push(sample);
    log(
      `t=${sample.t}s sent ${sent}/${planned} received ${received} RSS ${sample.rssMiB} MiB heap ${sample.heapUsedMiB} MiB ` +
        `depth ${sample.depth} send p99 ${sample.sendP99} ms e2e p50/p99 ${sample.e2eP50}/${sample.e2eP99} ms ` +
        `CPU ${sample.serverCpuPct}% waiting for a core ${sample.serverRunQueueWaitPct}% load ${sample.loadAverage1m} behind ${sample.behind}`,
    );
  };
  // Samples cover the load phase, also when a slow server makes it outlast its schedule; not the drain,
  // whose windows would mix a falling rate into the comparison. A last window under half a window is dropped.
  let paced = false;
  void pacer.then(() => {
    paced = true;
  });
  const windowMs = options.sampleSeconds * 1000;
  while (!paced) {
    const end = Math.min(windowStart + windowMs, now() < loadEnd ? loadEnd : Number.POSITIVE_INFINITY);
    await Promise.race([sleep(Math.max(0, end - now())), pacer]);
    if (!paced || now() - windowStart >= windowMs / 2) await takeSample();
  }
  const loadSeconds = (now() - t0) / 1000;
  log(`load done in ${round(loadSeconds, 1)}s; draining`);
  const drainStart = now();
  await consumers;
  const drainSeconds = (now() - drainStart) / 1000;
  client.close();

  let lost = 0;
  for (let seq = 0; seq < issued; seq++) if (acked[seq] === 1 && seen[seq] === 0) lost++;
  const round3 = (s: ReturnType<typeof summarize>) =>
    s && {
      ...s,
      p50: round(s.p50, 2),
      p90: round(s.p90, 2),
      p99: round(s.p99, 2),
      max: round(s.max, 2),
      mean: round(s.mean, 2),
    };
  return {
    machine: machineFacts(),
    options,
    target: { durability: options.durability, pid: target.pid, endpoint: target.endpoint },
    planned,
    sent,
    received,
    lost,
    duplicates,
    requestErrors: errors.count,
    firstError: errors.first,
    rateKept: round(sent / loadSeconds / options.rate, 3),
    loadSeconds: round(loadSeconds, 1),
    drainSeconds: round(drainSeconds, 1),
    sendLatencyMs: round3(summarize(allSend)),
    e2eLatencyMs: round3(summarize(allE2e)),
    samples,
    verdict: judge(samples),
  };
}

/** Starts the server, soaks it, stops it. */
async function run(opts: SoakOptions, log: (m: string) => void): Promise<SoakReport> {
  const machine = machineFacts();
  log(
    `machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, load ${machine.loadAverage1m}; ` +
      `soak ${opts.minutes} min at ${opts.rate} msg/s (${Math.round(opts.rate * opts.minutes * 60)} messages), ` +
      `durability ${opts.durability}, ${opts.producers} producers, ${opts.consumers} consumers`,
  );
  const target = await startTarget(opts.durability, opts.sluiceBin);
  try {
    log(`sluice ${opts.durability} listening on ${target.endpoint}, pid ${target.pid}`);
    return await soak(opts, log, target);
  } finally {
    await target.stop();
  }
}

async function main(): Promise<number> {
  const flags = flagsOf(SOAK_USAGE, () => parseSoakArgs(process.argv.slice(2)));
  if ('exitCode' in flags) return flags.exitCode;
  const opts = flags.options;
  const started = now();
  const log = (m: string): void => {
    process.stdout.write(`[${((now() - started) / 1000).toFixed(1).padStart(6)}s] ${m}\n`);
  };
  let report: SoakReport;
  if (opts.fromJson) {
    const earlier = JSON.parse(readFileSync(opts.fromJson, 'utf8')) as SoakReport;
    report = { ...earlier, verdict: judge(earlier.samples) };
  } else {
    report = await run(opts, log);
    mkdirSync(dirname(opts.out), { recursive: true });
    writeFileSync(opts.out, `${JSON.stringify(report, null, 2)}\n`);
  }
  process.stdout.write(`\n${renderSoakTable(report.samples, report.verdict)}\n\n`);
  process.stdout.write(
    `sent ${report.sent}/${report.planned}, received ${report.received}, lost ${report.lost}, duplicates ${report.duplicates}, ` +
      `request errors ${report.requestErrors}${report.firstError ? ` (first: ${report.firstError})` : ''}; ` +
      `rate kept ${report.rateKept}; send p50/p99 ${report.sendLatencyMs?.p50}/${report.sendLatencyMs?.p99} ms, ` +
      `e2e p50/p99 ${report.e2eLatencyMs?.p50}/${report.e2eLatencyMs?.p99} ms\n`,
  );
  process.stdout.write(
    `memory: ${flatness(report.verdict.memoryFlat)}; latency: ${flatness(report.verdict.latencyFlat)} ` +
      `(first third vs last third of ${report.verdict.samplesUsed} windows after the warm-up)\n`,
  );
  mkdirSync(dirname(opts.svg), { recursive: true });
  const { machine, options: ran } = report;
  writeFileSync(
    opts.svg,
    renderSoakSvg(
      report.samples,
      `Sluice soak: ${report.sent} messages at ${ran.rate} msg/s, ${ran.durability}, ${ran.consumers} consumers, ${machine.cores} cores, ${String(machine.date).slice(0, 10)}`,
    ),
  );
  log(`${opts.fromJson ? '' : `report written to ${opts.out}, `}chart to ${opts.svg}`);
  return 0;
}

runMain('soak', main);
