/**
 * The soak run's verdict and pictures: is memory and latency flat (first third of the run against the last
 * third), a text table, and an SVG chart. Pure functions of the samples, so they can be checked alone.
 */
import { round } from './stats.ts';

/** One window of the soak run (default 10 s): the server's memory at its end, what happened during it. */
export interface SoakSample {
  /** Seconds since the load started, at the end of the window. */
  t: number;
  /** VmRSS of the server PID (/proc), MiB. */
  rssMiB: number;
  /** V8 heap in use, from the server's /metrics (nodejs_heap_size_used_bytes), MiB; null if unreadable. */
  heapUsedMiB: number | null;
  /** ApproximateNumberOfMessages + ApproximateNumberOfMessagesNotVisible at the end of the window. */
  depth: number | null;
  /** Messages acknowledged by SendMessageBatch and first deliveries in the window, per second. */
  sentPerSec: number;
  receivedPerSec: number;
  /** Request latencies in the window, ms: SendMessageBatch, non-empty ReceiveMessage, and send start to receive. */
  sendP50: number | null;
  sendP99: number | null;
  receiveP50: number | null;
  receiveP99: number | null;
  e2eP50: number | null;
  e2eP99: number | null;
  /** Server CPU in the window, percent of one core. */
  serverCpuPct: number | null;
  /**
   * Time the server's threads were runnable but got no core, percent of the window (/proc schedstat): the
   * shared machine's share of a slow window. Absent in reports from before it was recorded.
   */
  serverRunQueueWaitPct?: number | null;
  /** The machine's 1-minute load average at the end of the window. */
  loadAverage1m?: number;
  /** Messages the producers were behind the steady schedule at the end of the window. */
  behind: number;
}

export type SampleField = Exclude<keyof SoakSample, 't'>;

/** How one figure moved from the first third of the run to the last. */
export interface Trend {
  field: SampleField;
  /** Mean over the first third (memory) or median of the window figures (latency). */
  first: number | null;
  last: number | null;
  /** last / first; null when either side has no samples or first is 0. */
  ratio: number | null;
  /** Least-squares slope over all samples after the warm-up, per minute. */
  slopePerMin: number | null;
  /** The ratio above which the figure is not flat. */
  limit: number;
  flat: boolean | null;
}

export interface SoakVerdict {
  /** Samples the thirds were taken from (all but the first, warm-up window). */
  samplesUsed: number;
  trends: Trend[];
  memoryFlat: boolean | null;
  latencyFlat: boolean | null;
}

/**
 * The rule: memory is flat when the last third's mean RSS is within 20 % of the first third's (heap in use
 * within 30 %: it saws with every GC); latency is flat when the median window p99 (send and end-to-end) is
 * within 1.5x. The first window is a warm-up (JIT, SQLite cache filling) and left out.
 */
const RULES: ReadonlyArray<{ field: SampleField; limit: number; kind: 'memory' | 'latency' | 'info' }> = [
  { field: 'rssMiB', limit: 1.2, kind: 'memory' },
  { field: 'heapUsedMiB', limit: 1.3, kind: 'memory' },
  { field: 'sendP50', limit: 1.5, kind: 'info' },
  { field: 'sendP99', limit: 1.5, kind: 'latency' },
  { field: 'receiveP99', limit: 1.5, kind: 'info' },
  { field: 'e2eP50', limit: 1.5, kind: 'info' },
  { field: 'e2eP99', limit: 1.5, kind: 'latency' },
  { field: 'depth', limit: 2, kind: 'info' },
  { field: 'serverCpuPct', limit: 1.5, kind: 'info' },
  { field: 'serverRunQueueWaitPct', limit: 1.5, kind: 'info' },
];

function values(samples: readonly SoakSample[], field: SampleField): number[] {
  const out: number[] = [];
  for (const s of samples) {
    const v = s[field];
    if (typeof v === 'number' && Number.isFinite(v)) out.push(v);
  }
  return out;
}

function mean(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? null) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Least-squares slope of field against t, per minute. */
function slopePerMinute(samples: readonly SoakSample[], field: SampleField): number | null {
  const points = samples.flatMap((s) => {
    const v = s[field];
    return typeof v === 'number' && Number.isFinite(v) ? [[s.t / 60, v] as const] : [];
  });
  if (points.length < 2) return null;
  const mx = mean(points.map((p) => p[0])) ?? 0;
  const my = mean(points.map((p) => p[1])) ?? 0;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? null : num / den;
}

export function judge(samples: readonly SoakSample[]): SoakVerdict {
  const used = samples.slice(1);
  const third = Math.floor(used.length / 3);
  const firstThird = used.slice(0, Math.max(third, 1));
  const lastThird = used.slice(used.length - Math.max(third, 1));
  const trends = RULES.map(({ field, limit }): Trend => {
    const summarize = field === 'rssMiB' || field === 'heapUsedMiB' ? mean : median;
    const first = used.length === 0 ? null : summarize(values(firstThird, field));
    const last = used.length === 0 ? null : summarize(values(lastThird, field));
    const ratio = first === null || last === null || first === 0 ? null : last / first;
    const slope = slopePerMinute(used, field);
    return {
      field,
      first: first === null ? null : round(first, 2),
      last: last === null ? null : round(last, 2),
      ratio: ratio === null ? null : round(ratio, 3),
      slopePerMin: slope === null ? null : round(slope, 3),
      limit,
      flat: ratio === null ? null : ratio <= limit,
    };
  });
  const verdictOf = (kind: 'memory' | 'latency'): boolean | null => {
    const judged = RULES.filter((r) => r.kind === kind).map((r) => trends.find((t) => t.field === r.field));
    if (judged.some((t) => t?.flat === null || t === undefined)) return null;
    return judged.every((t) => t?.flat === true);
  };
  return {
    samplesUsed: used.length,
    trends,
    memoryFlat: verdictOf('memory'),
    latencyFlat: verdictOf('latency'),
  };
}

const UNITS: Record<SampleField, string> = {
  rssMiB: 'MiB',
  heapUsedMiB: 'MiB',
  depth: 'msgs',
  sentPerSec: 'msg/s',
  receivedPerSec: 'msg/s',
  sendP50: 'ms',
  sendP99: 'ms',
  receiveP50: 'ms',
  receiveP99: 'ms',
  e2eP50: 'ms',
  e2eP99: 'ms',
  serverCpuPct: '% core',
  serverRunQueueWaitPct: '% window',
  loadAverage1m: 'load',
  behind: 'msgs',
};

function cell(v: number | boolean | null): string {
  if (v === null) return '-';
  if (typeof v === 'boolean') return v ? 'flat' : 'NOT FLAT';
  return String(v);
}

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The verdict on memory or latency, as the soak prints it and its records say it. */
export const flatness = (flat: boolean | null): string =>
  flat === null ? 'NOT JUDGED' : flat ? 'FLAT' : 'NOT FLAT';

/** The first-third / last-third comparison, one row per figure, as the printed table and the records show it. */
export const TREND_COLUMNS = [
  'figure',
  'unit',
  'first third',
  'last third',
  'ratio',
  'limit',
  'slope/min',
  'verdict',
];

export function trendRows(verdict: SoakVerdict): string[][] {
  return verdict.trends.map((t) => [
    t.field,
    UNITS[t.field],
    cell(t.first),
    cell(t.last),
    cell(t.ratio),
    String(t.limit),
    cell(t.slopePerMin),
    cell(t.flat),
  ]);
}

/** Every window, then the first-third / last-third comparison. */
export function renderSoakTable(samples: readonly SoakSample[], verdict: SoakVerdict): string {
  const windows = table(
    [
      't s',
      'RSS MiB',
      'heap MiB',
      'depth',
      'sent/s',
      'recv/s',
      'send p50/p99',
      'e2e p50/p99 ms',
      'CPU %',
      'no core %',
      'load',
    ],
    samples.map((s) => [
      String(s.t),
      cell(s.rssMiB),
      cell(s.heapUsedMiB),
      cell(s.depth),
      cell(s.sentPerSec),
      cell(s.receivedPerSec),
      `${cell(s.sendP50)}/${cell(s.sendP99)}`,
      `${cell(s.e2eP50)}/${cell(s.e2eP99)}`,
      cell(s.serverCpuPct),
      cell(s.serverRunQueueWaitPct ?? null),
      cell(s.loadAverage1m ?? null),
    ]),
  );
  const trends = table(TREND_COLUMNS, trendRows(verdict));
  return `${windows}\n\n${trends}`;
}

// ---------------------------------------------------------------------------------------------------
// SVG chart: one panel per group of figures, time on x.

interface Series {
  field: SampleField;
  label: string;
  color: string;
}

/** `log`: a log10 y axis, so one stall of seconds does not flatten the usual milliseconds to the floor. */
const PANELS: ReadonlyArray<{ title: string; series: readonly Series[]; log?: boolean }> = [
  {
    title: 'server memory (MiB)',
    series: [
      { field: 'rssMiB', label: 'RSS', color: '#1f77b4' },
      { field: 'heapUsedMiB', label: 'heap used', color: '#ff7f0e' },
    ],
  },
  {
    title: 'latency per window (ms, log scale)',
    log: true,
    series: [
      { field: 'sendP99', label: 'send p99', color: '#d62728' },
      { field: 'e2eP50', label: 'end-to-end p50', color: '#2ca02c' },
      { field: 'e2eP99', label: 'end-to-end p99', color: '#9467bd' },
    ],
  },
  {
    title: 'queue depth (messages) and throughput (msg/s)',
    series: [
      { field: 'depth', label: 'depth', color: '#8c564b' },
      { field: 'receivedPerSec', label: 'received/s', color: '#17becf' },
    ],
  },
];

const WIDTH = 860;
const PANEL_HEIGHT = 190;
const MARGIN = { left: 64, right: 20, top: 28, bottom: 26 };

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function renderSoakSvg(samples: readonly SoakSample[], title: string): string {
  const tMax = Math.max(1, ...samples.map((s) => s.t));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
  const parts: string[] = [];
  PANELS.forEach((panel, index) => {
    const y0 = 30 + index * PANEL_HEIGHT;
    const all = panel.series.flatMap((s) => values(samples, s.field));
    const vMax = Math.max(1e-9, ...all) * 1.1;
    const x = (t: number) => MARGIN.left + (t / tMax) * plotW;
    // Log axis from 10^floor(log10(min)) to vMax; values at or below the floor sit on it.
    const logMin = Math.floor(Math.log10(Math.max(1e-3, Math.min(...all.filter((v) => v > 0), vMax))));
    const logSpan = Math.max(1e-9, Math.log10(vMax) - logMin);
    const scale = (v: number): number =>
      panel.log ? Math.max(0, Math.log10(Math.max(v, 10 ** logMin)) - logMin) / logSpan : v / vMax;
    const y = (v: number) => y0 + MARGIN.top + plotH - scale(v) * plotH;
    const ticks = panel.log
      ? Array.from({ length: Math.floor(Math.log10(vMax)) - logMin + 1 }, (_, i) => 10 ** (logMin + i))
      : [0, vMax / 2, vMax];
    parts.push(
      `<text x="${MARGIN.left}" y="${y0 + 18}" font-weight="bold">${escapeXml(panel.title)}</text>`,
      `<rect x="${MARGIN.left}" y="${y0 + MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`,
    );
    for (const v of ticks) {
      parts.push(
        `<text x="${MARGIN.left - 6}" y="${y(v) + 4}" text-anchor="end">${round(v, v < 10 ? 2 : 0)}</text>`,
        `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/>`,
      );
    }
    for (const fraction of [0, 0.25, 0.5, 0.75, 1]) {
      const t = tMax * fraction;
      parts.push(
        `<text x="${x(t)}" y="${y0 + MARGIN.top + plotH + 16}" text-anchor="middle">${round(t, 0)} s</text>`,
      );
    }
    panel.series.forEach((series, i) => {
      const points = samples
        .flatMap((s) => {
          const v = s[series.field];
          return typeof v === 'number' && Number.isFinite(v) ? [`${round(x(s.t), 1)},${round(y(v), 1)}`] : [];
        })
        .join(' ');
      parts.push(
        `<polyline fill="none" stroke="${series.color}" stroke-width="1.5" points="${points}"/>`,
        `<text x="${WIDTH - MARGIN.right - 150 * (panel.series.length - i)}" y="${y0 + 18}" fill="${series.color}">${escapeXml(series.label)}</text>`,
      );
    });
  });
  const height = 30 + PANELS.length * PANEL_HEIGHT;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${MARGIN.left}" y="18" font-size="14">${escapeXml(title)}</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
