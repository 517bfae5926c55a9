/**
 * The per-request cost of the server's metrics (counters and histograms per action, the
 * SentMessageSize histogram per queue): the mixed scenario against a fresh `sluice serve --durability normal`
 * with metrics on and with `--no-metrics`, alternating, in the same run. `normal` leaves out the fsync
 * waits, so the server is CPU-bound and its CPU per message is what the metrics add to.
 */
import { systemClock } from 'sluice-client/clock';
import { SqsService } from '../packages/server/src/core/sqs-service.ts';
import { createServerMetrics, MIN_RENDER_INTERVAL_MS } from '../packages/server/src/server/metrics.ts';
import { SqliteStore } from '../packages/server/src/store/sqlite/sqlite-store.ts';
import { makeClient } from './client.ts';
import { processCpuSeconds } from './cpu.ts';
import { createQueue, type MixedResult, mixed } from './scenarios.ts';
import { round } from './stats.ts';
import { startTarget } from './targets.ts';

export type MetricsMode = 'on' | 'off';

export interface MetricsCostRun {
  mode: MetricsMode;
  round: number;
  e2ePerSec: number;
  /** Server CPU (user + system) per message sent, received and deleted, microseconds. */
  serverCpuUsPerMessage: number | null;
  latencyP50Ms: number | null;
  lost: number;
  requestErrors: number;
}

export interface MetricsCostSide {
  /** Medians over the rounds. */
  e2ePerSec: number;
  serverCpuUsPerMessage: number | null;
  /** Lowest and highest over the rounds: how much the machine moved the figure between runs. */
  e2eRange: [number, number];
  cpuRange: [number, number] | null;
}

/** The metrics' own work, timed in this process without a network or a neighbour in the way. */
export interface MetricsCallCost {
  calls: number;
  /** observeRequest: the request counter and the latency histogram, per answered request. */
  perRequestUs: number;
  /** The SentMessageSize observation, per message sent (a service with metrics minus one without). */
  perSentMessageUs: number;
}

/** One /metrics render on a server of many idle queues, in this process (no HTTP). */
export interface MetricsScrapeCost {
  queues: number;
  /**
   * CPU of the first render, which reads every queue's counts (what every scrape cost before they were
   * kept); CPU rather than wall time, which a loaded machine inflates.
   */
  firstRenderCpuMs: number;
  /** CPU of a later render with nothing touched since: the counts come from memory. */
  steadyRenderCpuMs: number;
  /** Store reads of a queue's counts by the steady render. */
  steadyCountReads: number;
  /** Renders made for five concurrent scrapes. */
  rendersForFiveScrapes: number;
  bytes: number;
}

export interface MetricsCost {
  durability: 'normal';
  inProcess: MetricsCallCost;
  scrape: MetricsScrapeCost;
  durationS: number;
  rounds: number;
  runs: MetricsCostRun[];
  on: MetricsCostSide;
  off: MetricsCostSide;
  /** on / off: below 1 means metrics cost throughput. */
  throughputRatio: number | null;
  /** on / off: above 1 means metrics cost CPU per message. */
  cpuPerMessageRatio: number | null;
}

export interface MetricsCostSettings {
  rounds: number;
  durationS: number;
  producers: number;
  consumers: number;
  backlog: number;
  sluiceBin: string;
}

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? null) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

async function runOnce(
  mode: MetricsMode,
  roundNo: number,
  settings: MetricsCostSettings,
  log: (m: string) => void,
): Promise<MetricsCostRun> {
  const target = await startTarget('normal', settings.sluiceBin, {
    serverArgs: mode === 'off' ? ['--no-metrics'] : [],
  });
  const client = makeClient('raw', target.endpoint);
  try {
    const queueUrl = await createQueue(client, `metrics-${mode}`);
    const cpuBefore = processCpuSeconds(target.pid);
    const ctx = { client, log: (m: string) => log(`metrics ${mode}: ${m}`) };
    const result: MixedResult = await mixed(
      ctx,
      queueUrl,
      settings.durationS,
      settings.producers,
      settings.consumers,
      settings.backlog,
      30_000,
      5_000,
    );
    // Window and drain: every message sent was also received and deleted in this span.
    const cpuAfter = processCpuSeconds(target.pid);
    const serverCpuS = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    return {
      mode,
      round: roundNo,
      e2ePerSec: result.e2ePerSec,
      serverCpuUsPerMessage:
        serverCpuS === null || result.sent === 0 ? null : round((serverCpuS * 1e6) / result.sent, 1),
      latencyP50Ms: result.latencyMs?.p50 ?? null,
      lost: result.lost,
      requestErrors: result.requestErrors,
    };
  } finally {
    client.close();
    await target.stop();
  }
}

function timeUs(calls: number, fn: () => void): number {
  for (let i = 0; i < Math.min(calls, 10_000); i++) fn(); // warm up the JIT first
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) fn();
  return ((performance.now() - t0) * 1000) / calls;
}

/** The real createServerMetrics on a real (in-memory SQLite) service, called `calls` times. */
export async function metricsCallCost(calls = 200_000): Promise<MetricsCallCost> {
  const sizes = Array.from({ length: 10 }, () => 1024);
  const meteredStore = new SqliteStore({ dataDir: ':memory:', durability: 'normal' });
  const bareStore = new SqliteStore({ dataDir: ':memory:', durability: 'normal' });
  const metered = new SqsService({ store: meteredStore, clock: systemClock });
  const bare = new SqsService({ store: bareStore, clock: systemClock });
  const metrics = createServerMetrics(metered, async () => []);
  try {
    const perRequestUs = timeUs(calls, () => metrics.observeRequest('SendMessageBatch', 200, 0.004));
    const batchCalls = Math.ceil(calls / sizes.length);
    const withMetrics = timeUs(batchCalls, () => metered.activity.sent('q', sizes));
    const without = timeUs(batchCalls, () => bare.activity.sent('q', sizes));
    return {
      calls,
      perRequestUs: round(perRequestUs, 2),
      perSentMessageUs: round(Math.max(0, withMetrics - without) / sizes.length, 2),
    };
  } finally {
    await Promise.all([meteredStore.close(), bareStore.close()]);
  }
}

/** The scrape of `queues` idle queues on a real (in-memory SQLite) service: first, steady, concurrent. */
export async function metricsScrapeCost(queues = 10_000): Promise<MetricsScrapeCost> {
  const store = new SqliteStore({ dataDir: ':memory:', durability: 'normal' });
  let countReads = 0;
  const countMessages = store.countMessages.bind(store);
  store.countMessages = (queueId, now) => {
    countReads++;
    return countMessages(queueId, now);
  };
  const service = new SqsService({ store, clock: systemClock });
  const context = { baseUrl: 'http://127.0.0.1:9324', senderId: 'bench' };
  for (let i = 0; i < queues; i++) await service.actions.CreateQueue({ QueueName: `idle-${i}` }, context);
  let monotonic = 0;
  let renders = 0;
  const metrics = createServerMetrics(
    service,
    async () => {
      renders++;
      return [];
    },
    undefined,
    () => monotonic,
  );
  const cpuMs = async (work: () => Promise<unknown>) => {
    const before = process.cpuUsage();
    await work();
    const used = process.cpuUsage(before);
    return round((used.user + used.system) / 1000, 1);
  };
  try {
    let bytes = 0;
    const firstRenderCpuMs = await cpuMs(async () => {
      bytes = (await metrics.render()).length;
    });
    monotonic += MIN_RENDER_INTERVAL_MS;
    countReads = 0;
    const steadyRenderCpuMs = await cpuMs(() => metrics.render());
    const steadyCountReads = countReads;
    monotonic += MIN_RENDER_INTERVAL_MS;
    renders = 0;
    await Promise.all(Array.from({ length: 5 }, () => metrics.render()));
    // Each render reads the alarm states twice (two gauges).
    return {
      queues,
      firstRenderCpuMs,
      steadyRenderCpuMs,
      steadyCountReads,
      rendersForFiveScrapes: renders / 2,
      bytes,
    };
  } finally {
    await store.close();
  }
}

/** Rounds of (on, off), the order flipped every round so drift on a shared machine hits both sides. */
export async function metricsCost(
  settings: MetricsCostSettings,
  log: (m: string) => void,
): Promise<MetricsCost> {
  const runs: MetricsCostRun[] = [];
  for (let r = 1; r <= settings.rounds; r++) {
    const order: MetricsMode[] = r % 2 === 1 ? ['on', 'off'] : ['off', 'on'];
    for (const mode of order) {
      const run = await runOnce(mode, r, settings, log);
      log(
        `metrics ${mode} round ${r}: ${run.e2ePerSec} msg/s, server CPU ${run.serverCpuUsPerMessage ?? '?'} us/msg`,
      );
      runs.push(run);
    }
  }
  const side = (mode: MetricsMode): MetricsCostSide => {
    const mine = runs.filter((r) => r.mode === mode);
    const e2e = mine.map((r) => r.e2ePerSec);
    const cpus = mine.flatMap((r) => (r.serverCpuUsPerMessage === null ? [] : [r.serverCpuUsPerMessage]));
    const cpu = median(cpus);
    return {
      e2ePerSec: round(median(e2e) ?? 0, 1),
      serverCpuUsPerMessage: cpu === null ? null : round(cpu, 1),
      e2eRange: [Math.min(...e2e), Math.max(...e2e)],
      cpuRange: cpus.length === 0 ? null : [Math.min(...cpus), Math.max(...cpus)],
    };
  };
  const on = side('on');
  const off = side('off');
  const inProcess = await metricsCallCost();
  log(
    `metrics in process: ${inProcess.perRequestUs} us/request, ${inProcess.perSentMessageUs} us/sent message`,
  );
  const scrape = await metricsScrapeCost();
  log(`metrics scrape of ${scrape.queues} queues: ${JSON.stringify(scrape)}`);
  return {
    durability: 'normal',
    inProcess,
    scrape,
    durationS: settings.durationS,
    rounds: settings.rounds,
    runs,
    on,
    off,
    throughputRatio: off.e2ePerSec > 0 ? round(on.e2ePerSec / off.e2ePerSec, 3) : null,
    cpuPerMessageRatio:
      on.serverCpuUsPerMessage !== null && off.serverCpuUsPerMessage
        ? round(on.serverCpuUsPerMessage / off.serverCpuUsPerMessage, 3)
        : null,
  };
}

export function renderMetricsCost(cost: MetricsCost): string {
  const withRange = (median: number | null, range: [number, number] | null): string =>
    median === null ? '-' : range === null ? String(median) : `${median} (${range[0]}-${range[1]})`;
  const rows: Array<[string, string, string, string]> = [
    [
      'end-to-end msg/s [hi]',
      withRange(cost.on.e2ePerSec, cost.on.e2eRange),
      withRange(cost.off.e2ePerSec, cost.off.e2eRange),
      String(cost.throughputRatio ?? '-'),
    ],
    [
      'server CPU us/msg [lo]',
      withRange(cost.on.serverCpuUsPerMessage, cost.on.cpuRange),
      withRange(cost.off.serverCpuUsPerMessage, cost.off.cpuRange),
      String(cost.cpuPerMessageRatio ?? '-'),
    ],
  ];
  const header: [string, string, string, string] = [
    '(median (min-max))',
    'metrics on',
    '--no-metrics',
    'on / off',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  const lost = cost.runs.reduce((n, r) => n + r.lost, 0);
  const errors = cost.runs.reduce((n, r) => n + r.requestErrors, 0);
  return [
    `Metrics cost (sluice normal, mixed ${cost.durationS}s, median of ${cost.rounds} round(s) each, alternating; lost ${lost}, errors ${errors}):`,
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    `In process (${cost.inProcess.calls} calls of the real metrics): ${cost.inProcess.perRequestUs} us per request ` +
      `(counter + latency histogram), ${cost.inProcess.perSentMessageUs} us per sent message (SentMessageSize).`,
    `Scrape of ${cost.scrape.queues} idle queues (${Math.round(cost.scrape.bytes / 1024)} KiB): first ${cost.scrape.firstRenderCpuMs} ms of CPU ` +
      `(reads every queue), then ${cost.scrape.steadyRenderCpuMs} ms with ${cost.scrape.steadyCountReads} store reads; ` +
      `5 concurrent scrapes, ${cost.scrape.rendersForFiveScrapes} render.`,
  ].join('\n');
}
