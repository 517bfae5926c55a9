import type { RssReading } from '../tools/rss.ts';
import type { Options } from './args.ts';
import type { CpuUse } from './cpu.ts';
import type { FairnessResult, FifoComparison, QueueRun } from './fifo-and-fair.ts';
import type {
  ConsumeResult,
  LongPollResult,
  MillionResult,
  MixedResult,
  ProduceResult,
  QueueDepth,
} from './scenarios.ts';
import { round } from './stats.ts';
import { BASELINE, TARGET_LABELS, type TargetName } from './targets.ts';

export interface MillionOutcome extends MillionResult {
  rssAfter: RssReading | null;
  maxSampledMiB: number;
  /** The filled server stopped with SIGTERM and started again on its data directory. */
  restart?: RestartOutcome;
  restartError?: string;
}

export interface RestartOutcome {
  /** SIGTERM to the filled server's exit, ms. */
  stopMs: number;
  /** Spawn of the new server to its "listening on" line, ms. */
  listeningMs: number;
  /** Spawn to the first ReceiveMessage that returned a message, ms: ready with the messages. */
  readyMs: number;
  /**
   * The slowest GET /health (one every 50 ms) while the first message was awaited, ms: how long the server
   * was held by the first receive's reading of the queue.
   */
  slowestHealthMs: number;
  /** ReceiveMessage calls until then, and how many of them failed. */
  attempts: number;
  failedReceives: number;
  /** Right after the first message, and 2 s later. */
  rssReady: RssReading | null;
  rssSettled: RssReading | null;
  /** Read after the first message (which is then in flight); null if GetQueueAttributes failed. */
  depth: QueueDepth | null;
  /** Waiting + in flight after the restart equals what was waiting before it. */
  intact: boolean;
}

export interface TargetResult {
  name: TargetName;
  label: string;
  status: 'ok' | 'failed-to-start';
  startError?: string;
  endpoint?: string;
  pid?: number;
  /** produce/consume message count used for this target. */
  messages: number;
  produce?: ProduceResult;
  consume?: ConsumeResult;
  mixed?: MixedResult;
  longPoll?: LongPollResult;
  fifo?: FifoComparison;
  fair?: FairnessResult;
  rssAfter: Partial<Record<'start' | 'produce' | 'consume' | 'mixed' | 'longPoll', number>>;
  /** Scenario name -> CPU of client and server during it (percent of one core). */
  cpu: Record<string, CpuUse>;
  /** VmHWM just before the server was stopped. */
  peakHwmMiB?: number;
  maxSampledMiB?: number;
  million?: MillionOutcome;
  millionStartError?: string;
  /** Scenario name -> error that aborted it. */
  errors: Record<string, string>;
}

export type Verdict = 'PASS' | 'MISS' | 'NOT RUN';

export interface Evaluation {
  goal: string;
  target: TargetName;
  verdict: Verdict;
  value: string;
}

type Better = 'higher' | 'lower' | null;

interface Row {
  label: string;
  better: Better;
  value: (r: TargetResult) => number | null;
  text?: (r: TargetResult) => string | null;
}

function fmt(v: number): string {
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  if (v >= 1000) return Math.round(v).toLocaleString('en-US');
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

interface Tally {
  lost: number;
  duplicates: number;
  unexpected: number;
  undrained?: number;
  stoppedBy?: 'complete' | 'idle' | 'time';
}

function lostDup(x: Tally | undefined): string | null {
  if (!x) return null;
  const extra = [
    x.unexpected ? `+${x.unexpected} unexpected` : '',
    x.undrained ? `${x.undrained} not drained in time` : '',
    x.stoppedBy === 'time' ? 'hit time limit' : x.stoppedBy === 'idle' ? 'gave up after 5 s idle' : '',
  ].filter(Boolean);
  return `${x.lost} / ${x.duplicates}${extra.length ? ` (${extra.join(', ')})` : ''}`;
}

function quietText(run: FairnessResult['fair']): string {
  return run.served ? fmt(run.deliveriesUntilServed) : `not served in ${fmt(run.deliveriesUntilServed)}`;
}

function queueRunErrors(run: QueueRun): number {
  return (
    run.produce.requestErrors +
    run.produce.failedEntries +
    run.consume.requestErrors +
    run.consume.deleteFailed
  );
}

function totalErrors(r: TargetResult): number {
  return (
    (r.produce ? r.produce.requestErrors + r.produce.failedEntries : 0) +
    (r.consume ? r.consume.requestErrors + r.consume.deleteFailed : 0) +
    (r.mixed?.requestErrors ?? 0) +
    (r.longPoll ? r.longPoll.requestErrors + r.longPoll.misses + r.longPoll.stale : 0) +
    (r.fifo ? queueRunErrors(r.fifo.standard) + queueRunErrors(r.fifo.fifo) : 0) +
    (r.fair ? r.fair.fair.requestErrors + r.fair.unkeyed.requestErrors : 0) +
    Object.keys(r.errors).length
  );
}

const ROWS: Row[] = [
  {
    label: 'produce/consume N (messages)',
    better: null,
    value: (r) => r.messages,
    text: (r) =>
      r.produce?.timedOut ? `${fmt(r.messages)} (${fmt(r.produce.acked)} sent in time limit)` : null,
  },
  {
    label: `produce msg/s (SendMessageBatch x10)`,
    better: 'higher',
    value: (r) => r.produce?.msgPerSec ?? null,
  },
  {
    label: 'consume msg/s (Receive 10 + DeleteBatch)',
    better: 'higher',
    value: (r) => r.consume?.msgPerSec ?? null,
  },
  { label: 'consume lost / duplicates', better: null, value: () => null, text: (r) => lostDup(r.consume) },
  { label: 'mixed end-to-end msg/s', better: 'higher', value: (r) => r.mixed?.e2ePerSec ?? null },
  { label: 'mixed sent msg/s', better: 'higher', value: (r) => r.mixed?.sentPerSec ?? null },
  { label: 'mixed e2e latency p50 ms', better: 'lower', value: (r) => r.mixed?.latencyMs?.p50 ?? null },
  { label: 'mixed e2e latency p99 ms', better: 'lower', value: (r) => r.mixed?.latencyMs?.p99 ?? null },
  {
    label: 'mixed CPU % client / server',
    better: null,
    value: () => null,
    text: (r) => {
      const c = r.cpu.mixed;
      return c ? `${c.clientPct} / ${c.serverPct ?? '?'}` : null;
    },
  },
  { label: 'mixed lost / duplicates', better: null, value: () => null, text: (r) => lostDup(r.mixed) },
  { label: 'long-poll wake p50 ms', better: 'lower', value: (r) => r.longPoll?.wakeMs?.p50 ?? null },
  { label: 'long-poll wake p99 ms', better: 'lower', value: (r) => r.longPoll?.wakeMs?.p99 ?? null },
  {
    label: 'long-poll ok / misses',
    better: null,
    value: () => null,
    text: (r) => (r.longPoll ? `${r.longPoll.ok} / ${r.longPoll.misses + r.longPoll.stale}` : null),
  },
  {
    label: 'standard e2e msg/s (produce, then 4 consumers)',
    better: 'higher',
    value: (r) => r.fifo?.standard.endToEndPerSec ?? null,
  },
  {
    label: 'FIFO e2e msg/s (100 groups, 4 consumers)',
    better: 'higher',
    value: (r) => r.fifo?.fifo.endToEndPerSec ?? null,
  },
  { label: 'FIFO / standard (same server)', better: null, value: (r) => r.fifo?.ratio ?? null },
  {
    label: 'FIFO lost / duplicates',
    better: null,
    value: () => null,
    text: (r) => lostDup(r.fifo?.fifo.consume),
  },
  {
    label: 'fair: deliveries until quiet tenant served',
    better: null,
    value: () => null,
    text: (r) => (r.fair ? `${quietText(r.fair.fair)} (unkeyed ${quietText(r.fair.unkeyed)})` : null),
  },
  {
    label: 'fair: ms until quiet tenant served',
    better: null,
    value: () => null,
    text: (r) =>
      r.fair ? `${fmt(r.fair.fair.msUntilServed)} (unkeyed ${fmt(r.fair.unkeyed.msUntilServed)})` : null,
  },
  { label: 'peak RSS MiB (VmHWM)', better: 'lower', value: (r) => r.peakHwmMiB ?? null },
  {
    label: 'errors (requests, failed entries)',
    better: null,
    value: (r) => (r.status === 'ok' ? totalErrors(r) : null),
  },
];

const MILLION_ROWS: Row[] = [
  {
    label: 'million: messages waiting (acked)',
    better: null,
    value: (r) => r.million?.produce.acked ?? null,
  },
  { label: 'million: fill msg/s', better: 'higher', value: (r) => r.million?.produce.msgPerSec ?? null },
  {
    label: 'million: RSS after MiB (VmRSS)',
    better: 'lower',
    value: (r) => r.million?.rssAfter?.rssMiB ?? null,
  },
  {
    label: 'million: peak RSS MiB (VmHWM)',
    better: 'lower',
    value: (r) => r.million?.rssAfter?.hwmMiB ?? null,
  },
  {
    label: 'million: in flight before restart (0: none delivered)',
    better: null,
    value: (r) => r.million?.depth?.inFlight ?? null,
  },
  {
    label: 'million: SIGTERM to exit ms',
    better: 'lower',
    value: (r) => r.million?.restart?.stopMs ?? null,
  },
  {
    label: 'million: restart, spawn to listening ms',
    better: 'lower',
    value: (r) => r.million?.restart?.listeningMs ?? null,
  },
  {
    label: 'million: restart, spawn to first message ms',
    better: 'lower',
    value: (r) => r.million?.restart?.readyMs ?? null,
  },
  {
    label: 'million: slowest /health while awaiting the first message ms',
    better: 'lower',
    value: (r) => r.million?.restart?.slowestHealthMs ?? null,
  },
  {
    label: 'million: RSS after restart MiB (VmRSS, +2 s)',
    better: 'lower',
    value: (r) => r.million?.restart?.rssSettled?.rssMiB ?? null,
  },
  {
    label: 'million: held after restart (waiting + in flight)',
    better: null,
    value: (r) => {
      const depth = r.million?.restart?.depth;
      return depth ? depth.visible + depth.inFlight : null;
    },
  },
];

/** The targets' table and its notes, as data: the printed table and the history records (scripts/bench-docs.ts) both use it. */
export function targetTable(
  results: readonly TargetResult[],
  options: Options,
): { columns: string[]; rows: string[][]; notes: string[] } {
  const baseline = results.find((r) => r.name === BASELINE && r.status === 'ok');
  const header = [`scenario (client: ${options.client})`];
  for (const r of results) {
    header.push(r.label);
    if (r.name !== BASELINE) header.push(`vs ${TARGET_LABELS[BASELINE].split(' ')[0]}`);
  }
  const lines: string[][] = [header];
  const rows = options.million ? [...ROWS, ...MILLION_ROWS] : ROWS;
  for (const row of rows) {
    const suffix = row.better === 'higher' ? ' [hi]' : row.better === 'lower' ? ' [lo]' : '';
    const line = [row.label + suffix];
    const base = baseline ? row.value(baseline) : null;
    for (const r of results) {
      if (r.status !== 'ok') {
        line.push('did not start');
      } else {
        const text = row.text?.(r);
        const v = row.value(r);
        line.push(text ?? (v === null ? '-' : fmt(v)));
      }
      if (r.name !== BASELINE) {
        const v = r.status === 'ok' ? row.value(r) : null;
        line.push(row.better && v !== null && base !== null && base > 0 ? `${fmt(v / base)}x` : '');
      }
    }
    lines.push(line);
  }
  const notes: string[] = [];
  if (!baseline)
    notes.push(`No ratios: the baseline (${TARGET_LABELS[BASELINE]}) did not run or did not start.`);
  notes.push('[hi] higher is better, [lo] lower is better; "vs moto" = target / moto, measured in this run.');
  if (baseline && options.baselineMessages !== options.messages) {
    notes.push(
      `moto runs produce/consume with N=${options.baselineMessages} (others ${options.messages}): ` +
        'rates are compared, not totals.',
    );
  }
  return { columns: header, rows: lines.slice(1), notes };
}

export function renderTable(results: readonly TargetResult[], options: Options): string {
  const { columns, rows, notes } = targetTable(results, options);
  const lines = [columns, ...rows];
  const widths = columns.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length)));
  const render = (l: string[]): string =>
    l.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(' | ');
  return [render(columns), widths.map((w) => '-'.repeat(w)).join('-+-'), ...rows.map(render), ...notes].join(
    '\n',
  );
}

export function evaluate(results: readonly TargetResult[], options: Options): Evaluation[] {
  const evaluations: Evaluation[] = [];
  for (const r of results) {
    if (r.name === BASELINE || r.name === 'null') continue;
    const ran = r.status === 'ok';
    if (r.name === 'full' || r.name === 'durable') {
      const v = r.mixed?.e2ePerSec;
      evaluations.push({
        goal: 'durable end-to-end >= 10,000 msg/s (mixed, batches of 10)',
        target: r.name,
        verdict: !ran || v === undefined ? 'NOT RUN' : v >= 10_000 ? 'PASS' : 'MISS',
        value: v === undefined ? (r.startError ?? r.errors.mixed ?? 'no result') : `${fmt(v)} msg/s`,
      });
    }
    const lp = r.longPoll;
    const p99 = lp?.wakeMs?.p99;
    evaluations.push({
      goal: 'long-poll wake p99 < 5 ms',
      target: r.name,
      verdict:
        !ran || !lp || p99 === undefined
          ? 'NOT RUN'
          : p99 < 5 && lp.misses + lp.stale === 0
            ? 'PASS'
            : 'MISS',
      value:
        p99 === undefined
          ? (r.startError ?? r.errors.longPoll ?? 'no result')
          : `p99 ${round(p99, 2)} ms over ${lp?.ok} wakes, ${(lp?.misses ?? 0) + (lp?.stale ?? 0)} misses`,
    });
    const fifo = r.fifo;
    evaluations.push({
      goal: "FIFO end-to-end >= 0.5x standard on the same server, and above SQS's 3,000 msg/s FIFO cap",
      target: r.name,
      verdict:
        !ran || !fifo ? 'NOT RUN' : fifo.ratio >= 0.5 && fifo.fifo.endToEndPerSec > 3_000 ? 'PASS' : 'MISS',
      value: fifo
        ? `${fmt(fifo.fifo.endToEndPerSec)} msg/s = ${fmt(fifo.ratio)}x standard (${fmt(fifo.standard.endToEndPerSec)})`
        : (r.errors.fifo ?? r.startError ?? 'no result'),
    });
    const fair = r.fair;
    evaluations.push({
      goal: `fair queue: quiet tenant's ${fair?.quiet ?? 100} served within 300 deliveries`,
      target: r.name,
      verdict:
        !ran || !fair
          ? 'NOT RUN'
          : fair.fair.served && fair.fair.deliveriesUntilServed <= 300
            ? 'PASS'
            : 'MISS',
      value: fair
        ? `${quietText(fair.fair)} deliveries, ${fmt(fair.fair.msUntilServed)} ms; unkeyed ${quietText(fair.unkeyed)}`
        : (r.errors.fair ?? r.startError ?? 'no result'),
    });
    const m = r.million;
    const rss = m?.rssAfter?.rssMiB;
    const full = m !== undefined && m.produce.acked >= 1_000_000;
    evaluations.push({
      goal: 'RSS < 300 MiB with 1,000,000 waiting',
      target: r.name,
      verdict: !options.million || rss === undefined ? 'NOT RUN' : full && rss < 300 ? 'PASS' : 'MISS',
      value: !options.million
        ? 'needs --million'
        : rss === undefined
          ? (r.millionStartError ?? r.errors.million ?? r.startError ?? 'no result')
          : `${fmt(rss)} MiB with ${m?.produce.acked.toLocaleString('en-US')} waiting${full ? '' : ' (incomplete)'}`,
    });
    const restart = m?.restart;
    evaluations.push({
      goal: 'restart with 1,000,000 waiting: first message < 5 s, none lost or delivered before',
      target: r.name,
      verdict:
        !options.million || !restart
          ? 'NOT RUN'
          : full && restart.readyMs < 5_000 && restart.intact && m.depth?.inFlight === 0
            ? 'PASS'
            : 'MISS',
      value: !options.million
        ? 'needs --million'
        : !restart
          ? (m?.restartError ?? r.millionStartError ?? r.errors.million ?? r.startError ?? 'no result')
          : `${fmt(restart.readyMs)} ms to the first message, ${restart.intact ? 'all' : 'NOT all'} ${m?.produce.acked.toLocaleString('en-US')} still held${full ? '' : ' (incomplete fill)'}`,
    });
  }
  return evaluations;
}

export function renderEvaluation(evaluations: readonly Evaluation[]): string {
  return evaluations
    .map((e) => `${e.verdict.padEnd(7)} ${TARGET_LABELS[e.target].padEnd(15)} ${e.goal}: ${e.value}`)
    .join('\n');
}
