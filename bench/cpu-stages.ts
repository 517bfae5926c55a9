/**
 * `npm run bench -- --cpu-stages`: where the server's CPU per message goes, by stage, for the peer bench's
 * durable workload (Sluice `--durability durable`, or `--in-memory` with `--mode memory`; 1 KiB bodies, batches of 10, the mixed phase). The server
 * runs with `node --cpu-prof`; each sample of its main thread inside the phase is put in one stage by its call
 * stack, and the main thread's CPU from /proc is shared out in those proportions. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { flagsOf, positive } from '../tools/flags.ts';
import { processCpuSeconds, threadCpuSeconds } from './cpu.ts';
import { machineFacts } from './machine.ts';
import { sluicePeer } from './peers/sqs.ts';
import { type MixedFigures, mixed } from './peers/workload.ts';
import { round } from './stats.ts';

export const STAGES = [
  'HTTP',
  'JSON',
  'protocol',
  'core',
  'store JS',
  'store statements',
  'commit/fsync',
  'wake',
  'GC',
  'other',
] as const;
export type Stage = (typeof STAGES)[number];

/** What each stage holds, for the printed table and the docs. */
export const STAGE_RULES: Record<Stage, string> = {
  HTTP: "node:http/net/stream internals and the server's own HTTP layer (packages/server/src/server/)",
  JSON: 'lines that call JSON.parse or JSON.stringify',
  protocol: 'packages/server/src/protocol/ (wire format to calls and back)',
  core: 'packages/server/src/core/ (the SQS rules), long polling excepted',
  'store JS': 'packages/server/src/store/ JavaScript around the statements',
  'store statements':
    'lines of the store that call a prepared statement (better-sqlite3 and SQLite itself: V8 samples its native calls as the calling line)',
  'commit/fsync':
    'the group commit: store functions named flush/commit/sync with their SQLite calls (BEGIN, COMMIT, WAL checkpoints); the fsync itself runs on another thread',
  wake: 'long polling: core/long-poll and server/long-poll-gate',
  GC: "V8's garbage collector on the main thread",
  other:
    'everything else: the event loop, timers, metrics (server/metrics, metric-families, prom-client), native code V8 cannot attribute ("(program)")',
};

/** The parts of a V8 CPU profile (`.cpuprofile`) read here. */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
  /** Samples of this node by source line (1-based), over the whole profile. */
  positionTicks?: Array<{ line: number; ticks: number }>;
}

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** The server's own modules, built (dist) or from source: directory under the package, and file name. */
const SERVER_FILE = /\/packages\/server\/(?:src|dist)\/([\w-]+)\/(?:[\w-]+\/)*([\w-]+)\.(?:ts|js)$/;
const HTTP_MODULE =
  /^node:(?:_http_|http|https|net|stream|internal\/(?:http|streams|stream_base_commons|net|js_stream_socket))/;
/**
 * A line of the store that runs a prepared statement (named as the store names them). V8 has no frame for
 * better-sqlite3's native methods: their time is sampled on the line of JavaScript that called them.
 */
const STATEMENT_CALL =
  /\b(?:statements\.\w+|statement|begin|commit|rollback|rollbackTo|savepoint|release|db)\.(?:run|get|all|iterate|exec|pragma)\(/;
/** Likewise JSON.parse and JSON.stringify: builtins, sampled on the calling line. */
const JSON_CALL = /\bJSON\.(?:parse|stringify)\(/;
const COMMIT_FUNCTION = /flush|commit|sync/i;
const WAKE_FILES = new Set(['long-poll', 'long-poll-gate']);
/** The server's metrics, observed by the HTTP front but counted apart from it, as prom-client's frames are. */
const METRICS_FILES = new Set(['metrics', 'metric-families']);

function serverFile(frame: CallFrame): { dir: string; file: string } | null {
  const match = SERVER_FILE.exec(frame.url);
  return match?.[1] && match[2] ? { dir: match[1], file: match[2] } : null;
}

/**
 * The stage of one sample, from its stack (leaf first): the innermost frame that says which stage it is;
 * frames that do not (builtins, node:events, timers) leave it to their caller. Statements and JSON inside a
 * server function are told apart by line (`lineStages`).
 */
export function stageOf(stack: readonly CallFrame[]): Stage {
  for (let i = 0; i < stack.length; i++) {
    const frame = stack[i]!;
    if (frame.functionName === '(garbage collector)') return 'GC';
    if (frame.functionName === '(program)' || frame.functionName === '(root)') return 'other';
    if (frame.url.includes('/node_modules/better-sqlite3/')) return 'store statements';
    const own = serverFile(frame);
    if (own) {
      if (WAKE_FILES.has(own.file)) return 'wake';
      if (METRICS_FILES.has(own.file)) return 'other';
      if (own.dir === 'store') return COMMIT_FUNCTION.test(frame.functionName) ? 'commit/fsync' : 'store JS';
      if (own.dir === 'core') return 'core';
      if (own.dir === 'protocol') return 'protocol';
      if (own.dir === 'server') return 'HTTP';
      return 'other';
    }
    if (HTTP_MODULE.test(frame.url)) return 'HTTP';
    if (frame.url.includes('/node_modules/prom-client/')) return 'other';
  }
  return 'other';
}

export interface StageSamples {
  /** Samples of the main thread at work (not idle) in the window. */
  busy: number;
  /** Idle samples in the window (waiting in the event loop). */
  idle: number;
  /** Busy samples by stage (fractions where a function's lines fell in two stages). */
  byStage: Record<Stage, number>;
  /** Each stage's most sampled innermost frames ("other"'s show what the rules miss). */
  topFrames: Record<Stage, Array<{ frame: string; samples: number }>>;
}

/** The lines of a script by its profile URL; null when it cannot be read. */
export type SourceLines = (url: string) => readonly string[] | null;

const readSourceLines = (): SourceLines => {
  const cache = new Map<string, readonly string[] | null>();
  return (url) => {
    if (!cache.has(url)) {
      try {
        cache.set(url, readFileSync(fileURLToPath(url), 'utf8').split('\n'));
      } catch {
        cache.set(url, null);
      }
    }
    return cache.get(url) ?? null;
  };
};

/**
 * How one profile node's samples split over stages: by its stack, and for a server function by the lines its
 * samples fell on (a statement call or a JSON call is that stage, the rest the function's own).
 */
export function lineStages(
  node: ProfileNode,
  stack: readonly CallFrame[],
  lines: SourceLines,
): Map<Stage, number> {
  const base = stageOf(stack);
  const own = serverFile(node.callFrame);
  const ticks = node.positionTicks ?? [];
  const text = own && ticks.length > 0 && base !== 'commit/fsync' ? lines(node.callFrame.url) : null;
  if (!own || !text) return new Map([[base, 1]]);
  const total = ticks.reduce((sum, t) => sum + t.ticks, 0);
  const shares = new Map<Stage, number>();
  for (const { line, ticks: n } of ticks) {
    const source = text[line - 1] ?? '';
    // A statement whose arguments are JSON is mostly the statement.
    const stage: Stage =
      own.dir === 'store' && STATEMENT_CALL.test(source)
        ? 'store statements'
        : JSON_CALL.test(source)
          ? 'JSON'
          : base;
    shares.set(stage, (shares.get(stage) ?? 0) + n / total);
  }
  return shares;
}

/** Samples of `profile` between from and to (µs of the monotonic clock, as the profile's own times), by stage. */
export function stageSamples(
  profile: CpuProfile,
  from = Number.NEGATIVE_INFINITY,
  to = Number.POSITIVE_INFINITY,
  lines: SourceLines = readSourceLines(),
): StageSamples {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const sharesById = new Map<number, Map<Stage, number>>();
  const sharesOf = (node: ProfileNode): Map<Stage, number> => {
    let shares = sharesById.get(node.id);
    if (shares === undefined) {
      const stack: CallFrame[] = [];
      for (let at: number | undefined = node.id; at !== undefined; at = parent.get(at)) {
        const n = byId.get(at);
        if (n) stack.push(n.callFrame);
      }
      shares = lineStages(node, stack, lines);
      sharesById.set(node.id, shares);
    }
    return shares;
  };
  const byStage = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  const frames = new Map<Stage, Map<string, number>>(STAGES.map((stage) => [stage, new Map()]));
  let busy = 0;
  let idle = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (t < from || t > to || !node) return;
    const frame = node.callFrame;
    if (frame.functionName === '(idle)') {
      idle++;
      return;
    }
    busy++;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url}:${frame.lineNumber + 1}`;
    for (const [stage, share] of sharesOf(node)) {
      byStage[stage] += share;
      const counts = frames.get(stage)!;
      counts.set(name, (counts.get(name) ?? 0) + share);
    }
  });
  const top = (counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([frame, samples]) => ({ frame, samples: round(samples, 1) }));
  const topFrames = Object.fromEntries(STAGES.map((stage) => [stage, top(frames.get(stage)!)])) as Record<
    Stage,
    Array<{ frame: string; samples: number }>
  >;
  return { busy, idle, byStage, topFrames };
}

export interface StageRow {
  stage: Stage | 'main thread' | 'other threads' | 'server total';
  /** Share of the main thread's busy samples (null for the /proc rows). */
  sharePct: number | null;
  usPerMsg: number;
}

export interface CpuStagesResult {
  machine: Record<string, string | number>;
  options: StagesOptions;
  mixed: MixedFigures;
  /** CPU seconds over the phase, from /proc: the server's main thread and all its threads. */
  mainThreadS: number;
  serverS: number;
  samples: StageSamples;
  rows: StageRow[];
}

/** µs per message sent: the main thread's CPU shared out by samples, then the other threads and the total. */
export function stageRows(
  samples: StageSamples,
  mainThreadS: number,
  serverS: number,
  messages: number,
): StageRow[] {
  const us = (seconds: number): number => round((seconds * 1e6) / messages, 1);
  const share = (n: number): number => (samples.busy > 0 ? n / samples.busy : 0);
  return [
    ...STAGES.map((stage) => ({
      stage,
      sharePct: round(100 * share(samples.byStage[stage]), 1),
      usPerMsg: us(mainThreadS * share(samples.byStage[stage])),
    })),
    { stage: 'main thread', sharePct: null, usPerMsg: us(mainThreadS) },
    { stage: 'other threads', sharePct: null, usPerMsg: us(serverS - mainThreadS) },
    { stage: 'server total', sharePct: null, usPerMsg: us(serverS) },
  ];
}

export function renderStages(result: CpuStagesResult): string {
  const width = Math.max(...result.rows.map((r) => r.stage.length));
  const lines = [
    `${'stage'.padEnd(width)} | % of main-thread samples | µs/msg`,
    `${'-'.repeat(width)}-+--------------------------+-------`,
    ...result.rows.map(
      (r) =>
        `${r.stage.padEnd(width)} | ${(r.sharePct === null ? '' : r.sharePct.toFixed(1)).padStart(24)} | ${r.usPerMsg.toFixed(1).padStart(6)}`,
    ),
    '',
    `messages sent ${result.mixed.sent.toLocaleString('en-US')} in ${result.mixed.durationS} s + drain, ` +
      `e2e ${result.mixed.e2ePerSec.toLocaleString('en-US')} msg/s, lost ${result.mixed.lost}, ` +
      `${result.samples.busy} busy / ${result.samples.idle} idle samples; load at start ${result.machine.loadAverage1m}`,
    "other threads: the fdatasync on libuv's pool, V8's GC helpers, the kernel work they cause.",
    'most sampled in "other":',
    ...result.samples.topFrames.other.map((o) => `  ${o.samples} ${o.frame}`),
  ];
  return lines.join('\n');
}

export interface StagesOptions {
  duration: number;
  producers: number;
  consumers: number;
  backlog: number;
  out: string;
  /** Keep the .cpuprofile here (open it in Chrome DevTools); null: a temporary directory, removed. */
  keepProfile: string | null;
  sluiceBin: string | null;
  /** `durable` (the default) or `memory` (`--in-memory`). */
  mode: 'durable' | 'memory';
}

export const STAGES_USAGE = `usage: npm run bench -- --cpu-stages [flags]
  --duration S         mixed window, seconds (default 30, as --peers)
  --producers C        (default 16)
  --consumers C        (default 16)
  --backlog N          producers pause above N undelivered (default 500)
  --out FILE           JSON (default bench/results/cpu-stages.json)
  --keep-profile DIR   keep the server's .cpuprofile in DIR
  --sluice-bin FILE    Sluice entry point to run (default packages/server/bin/sluice.js)
  --mode M             durable (default) or memory: the server with --in-memory
  --help               this text`;

export function parseStagesArgs(argv: readonly string[]): StagesOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      'cpu-stages': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      duration: { type: 'string' },
      producers: { type: 'string' },
      consumers: { type: 'string' },
      backlog: { type: 'string' },
      out: { type: 'string' },
      'keep-profile': { type: 'string' },
      'sluice-bin': { type: 'string' },
      mode: { type: 'string' },
    },
  });
  if (values.help) return 'help';
  const mode = values.mode ?? 'durable';
  if (mode !== 'durable' && mode !== 'memory') throw new Error(`--mode: durable or memory, not ${mode}`);
  return {
    duration: positive('duration', values.duration, 30),
    producers: positive('producers', values.producers, 16),
    consumers: positive('consumers', values.consumers, 16),
    backlog: positive('backlog', values.backlog, 500),
    out: values.out ?? 'bench/results/cpu-stages.json',
    keepProfile: values['keep-profile'] ?? null,
    sluiceBin: values['sluice-bin'] ?? null,
    mode,
  };
}

/** µs of the monotonic clock, the one V8 stamps profile samples with. */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

export async function runCpuStages(argv: readonly string[], log: (m: string) => void): Promise<number> {
  const flags = flagsOf(STAGES_USAGE, () => parseStagesArgs(argv));
  if ('exitCode' in flags) return flags.exitCode;
  const { options } = flags;
  const machine = machineFacts();
  log(`cpu stages: ${machine.cpuModel}, ${machine.cores} cores, load ${machine.loadAverage1m}`);
  const profileDir = options.keepProfile ?? mkdtempSync(join(tmpdir(), 'sluice-cpu-stages-'));
  mkdirSync(profileDir, { recursive: true });
  const before = new Set(readdirSync(profileDir));
  try {
    const peer = sluicePeer(
      'sluice',
      options.sluiceBin ?? undefined,
      ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
      options.mode,
    );
    await peer.start();
    let figures: MixedFigures;
    let window: { from: number; to: number; mainThreadS: number; serverS: number };
    try {
      const [pid] = peer.serverPids();
      if (pid === undefined) throw new Error('the server has no pid');
      const queue = await peer.queue(`bench_stages_${Date.now()}`);
      log(`mixed: ${options.duration} s, ${options.producers} producers, ${options.consumers} consumers`);
      const cpu = (): { main: number; all: number } => {
        const main = threadCpuSeconds(pid, pid);
        const all = processCpuSeconds(pid);
        if (main === null || all === null) throw new Error(`cannot read /proc/${pid}`);
        return { main, all };
      };
      const cpu0 = cpu();
      const from = monotonicUs();
      figures = await mixed(
        queue,
        options.duration,
        options.producers,
        options.consumers,
        10,
        options.backlog,
        30_000,
        5_000,
      );
      const to = monotonicUs();
      const cpu1 = cpu();
      window = { from, to, mainThreadS: cpu1.main - cpu0.main, serverS: cpu1.all - cpu0.all };
      log(`mixed: e2e ${figures.e2ePerSec} msg/s, ${figures.sent} sent; stopping the server for its profile`);
    } finally {
      await peer.stop();
    }
    const written = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
    if (written.length !== 1)
      throw new Error(`expected one new .cpuprofile in ${profileDir}, found ${written.length}`);
    const profile = JSON.parse(readFileSync(join(profileDir, written[0]!), 'utf8')) as CpuProfile;
    const samples = stageSamples(profile, window.from, window.to);
    if (samples.busy === 0) throw new Error('no profile samples inside the measured phase');
    const result: CpuStagesResult = {
      machine,
      options,
      mixed: figures,
      mainThreadS: round(window.mainThreadS, 2),
      serverS: round(window.serverS, 2),
      samples,
      rows: stageRows(samples, window.mainThreadS, window.serverS, figures.sent),
    };
    process.stdout.write(`\n${renderStages(result)}\n`);
    mkdirSync(dirname(options.out), { recursive: true });
    writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
    log(`results written to ${options.out}${options.keepProfile ? `, profile in ${profileDir}` : ''}`);
    return 0;
  } finally {
    if (options.keepProfile === null) rmSync(profileDir, { recursive: true, force: true });
  }
}
