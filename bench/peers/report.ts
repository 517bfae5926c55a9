/** The peer comparison's table (ratios against Sluice from the same run), verdicts and SVG chart. */
import type { ConsumeFigures, FanOutFigures, MixedFigures, ProduceFigures, WakeFigures } from './workload.ts';

export interface PeerResult {
  name: string;
  label: string;
  setup: string;
  onCrash: string;
  status: 'ok' | 'did not start';
  startError?: string;
  produce?: ProduceFigures;
  consume: ConsumeFigures[];
  mixed?: MixedFigures;
  wake?: WakeFigures;
  peakRssMiB?: number;
  mixedCpu?: MixedCpu;
  /** Fan-out cases (systems speaking SNS only), one per subscriber count; absent in older results. */
  fanOut?: FanOutRow[];
  errors: Record<string, string>;
}

/** One fan-out case with the server's CPU microseconds per delivery, null without a figure. */
export interface FanOutRow extends FanOutFigures {
  /** During the publishing: per delivery committed. */
  commitCpuUs: number | null;
  /** During the draining: per delivery received and deleted. */
  drainCpuUs: number | null;
}

/** CPU microseconds per message of the mixed phase (one send, receive and acknowledgement each). */
export interface MixedCpu {
  /** The server's processes, null when they could not be found. */
  serverUsPerMsg: number | null;
  /** This bench process: the client. */
  clientUsPerMsg: number | null;
}

export interface Verdict {
  target: string;
  verdict: 'PASS' | 'MISS' | 'NOT RUN';
  detail: string;
}

const SLUICE = 'sluice';
const SLUICE_MEMORY = 'sluice-memory';
/** bench/floor-server.ts: the null server plus a durable SQLite row per message. */
const FLOOR = 'floor';
/** bench/null-server.ts: an SQS server doing as little as possible, the ceiling of the client on this machine. */
const CEILING = 'null';

const fmt = (v: number | undefined, digits = 0): string =>
  v === undefined || !Number.isFinite(v) ? '-' : v.toLocaleString('en-US', { maximumFractionDigits: digits });

/** value / base as `show` writes it, or '-' when either figure is missing. */
function relative(
  value: number | undefined,
  base: number | undefined,
  show: (fraction: number) => string,
): string {
  if (value === undefined || base === undefined || base === 0 || !Number.isFinite(value)) return '-';
  return show(value / base);
}

const ratio = (value: number | undefined, base: number | undefined): string =>
  relative(value, base, (fraction) => `${fraction.toFixed(2)}x`);
const percent = (value: number | undefined, base: number | undefined): string =>
  relative(value, base, (fraction) => `${Math.round(100 * fraction)}%`);

function consumeRate(r: PeerResult, consumers: number): number | undefined {
  return r.consume.find((c) => c.consumers === consumers)?.msgPerSec;
}

function losses(r: PeerResult): { lost: number; duplicates: number; undrained: number } {
  let lost = r.mixed?.lost ?? 0;
  let duplicates = r.mixed?.duplicates ?? 0;
  let undrained = r.mixed?.undrained ?? 0;
  for (const c of r.consume) {
    lost += c.lost;
    duplicates += c.duplicates;
    undrained += c.undrained;
  }
  return { lost, duplicates, undrained };
}

/** The comparison's rows and notes, as data: the printed table and the history records (scripts/bench-docs.ts) both use it. */
export function peerTable(
  results: readonly PeerResult[],
  options: { messages: number; motoMessages: number; duration: number },
): { columns: string[]; rows: string[][]; notes: string[] } {
  const sluice = results.find((r) => r.name === SLUICE && r.status === 'ok');
  const ceiling = results.find((r) => r.name === CEILING && r.status === 'ok');
  const head = [
    'system',
    'produce/s',
    'consume/s x4',
    'consume/s x16',
    'e2e msg/s',
    'e2e vs sluice',
    'e2e of ceiling',
    'e2e p50 ms',
    'e2e p99 ms',
    'server CPU µs/msg',
    'client CPU µs/msg',
    'wake p50 ms',
    'wake p99 ms',
    'wake p99 vs sluice',
    'peak RSS MiB',
    'lost',
    'dup',
    'undrained',
  ];
  const rows = results.map((r) => {
    if (r.status !== 'ok')
      return [r.label, `did not start: ${r.startError ?? ''}`.slice(0, 60), ...head.slice(2).map(() => '')];
    const { lost, duplicates, undrained } = losses(r);
    return [
      r.label,
      fmt(r.produce?.msgPerSec),
      fmt(consumeRate(r, 4)),
      fmt(consumeRate(r, 16)),
      fmt(r.mixed?.e2ePerSec),
      ratio(r.mixed?.e2ePerSec, sluice?.mixed?.e2ePerSec),
      percent(r.mixed?.e2ePerSec, ceiling?.mixed?.e2ePerSec),
      fmt(r.mixed?.latencyMs?.p50, 1),
      fmt(r.mixed?.latencyMs?.p99, 1),
      fmt(r.mixedCpu?.serverUsPerMsg ?? undefined),
      fmt(r.mixedCpu?.clientUsPerMsg ?? undefined),
      fmt(r.wake?.wakeMs?.p50, 2),
      fmt(r.wake?.wakeMs?.p99, 2),
      ratio(r.wake?.wakeMs?.p99, sluice?.wake?.wakeMs?.p99),
      fmt(r.peakRssMiB, 1),
      String(lost),
      String(duplicates),
      String(undrained),
    ];
  });
  const notes = [
    `N = ${options.messages.toLocaleString('en-US')} per consume run (moto ${options.motoMessages.toLocaleString('en-US')}), mixed ${options.duration} s, 1 KiB bodies, 16 producers.`,
    'e2e of ceiling: against the null server of the same run (bench/null-server.ts, an SQS that keeps nothing), a measure of what this client alone drives here, as noisy as every other row.',
    "CPU µs/msg: CPU time of the mixed phase (to its drained end) per message sent, of the server (all its processes and threads; RabbitMQ, NATS, PostgreSQL and Redis are the machine's services) and of the bench process, the client. Two cores are shared by both: when their sum is near 2 s per second, the machine is the limit.",
    'lost: acknowledged, never delivered, nothing arriving any more; undrained: still arriving when the phase ran out of time.',
  ];
  return { columns: head, rows, notes };
}

export function renderPeerTable(
  results: readonly PeerResult[],
  options: { messages: number; motoMessages: number; duration: number },
): string {
  return renderTable(peerTable(results, options));
}

/** The fan-out table, or null when no system of the run had fan-out cases. */
export function renderFanOutTable(results: readonly PeerResult[]): string | null {
  const table = fanOutTable(results);
  return table.rows.length > 0 ? renderTable(table) : null;
}

/** The fan-out cases beside each system's plain queue figures of the same run, as data (see peerTable). */
export function fanOutTable(results: readonly PeerResult[]): {
  caption: string;
  columns: string[];
  rows: string[][];
  notes: string[];
} {
  const sluice = results.find((r) => r.name === SLUICE && r.status === 'ok');
  const columns = [
    'system',
    'subscribers',
    'publishes/s',
    'deliveries committed/s',
    '÷ plain sends/s',
    'received+deleted/s',
    '÷ plain e2e/s',
    'committed vs sluice',
    'received+deleted vs sluice',
    'server CPU µs/delivery committed',
    'server CPU µs/delivery received+deleted',
    'lost',
    'dup',
    'undrained',
  ];
  const rows = results
    .filter((r) => (r.fanOut ?? []).length > 0)
    .flatMap((r) => {
      const plainSends = r.produce?.msgPerSec;
      const plainE2e = r.mixed?.e2ePerSec;
      const plain = [
        r.label,
        'plain queue',
        '-',
        fmt(plainSends),
        '1.00x',
        fmt(plainE2e),
        '1.00x',
        ...columns.slice(7).map(() => '-'),
      ];
      return [
        plain,
        ...(r.fanOut ?? []).map((f) => {
          const base = fanOutCase(sluice, f.subscribers);
          return [
            r.label,
            String(f.subscribers),
            fmt(f.publishPerSec),
            fmt(f.committedPerSec),
            ratio(f.committedPerSec, plainSends),
            fmt(f.drainedPerSec),
            ratio(f.drainedPerSec, plainE2e),
            ratio(f.committedPerSec, base?.committedPerSec),
            ratio(f.drainedPerSec, base?.drainedPerSec),
            fmt(f.commitCpuUs ?? undefined, 1),
            fmt(f.drainCpuUs ?? undefined, 1),
            String(f.lost),
            String(f.duplicates),
            String(f.undrained),
          ];
        }),
      ];
    });
  return {
    caption:
      "SNS fan-out: PublishBatch of 10 entries to a topic with 1, 5 and 20 subscribed queues (raw delivery), then consumers (ReceiveMessage 10 + DeleteMessageBatch) draining every queue; beside each system's plain queue (SendMessageBatch produce and mixed end-to-end) of the same run.",
    columns,
    rows,
    notes: [
      'deliveries committed/s: publish entries accepted x subscribers / publishing time (16 publishers); received+deleted/s: deliveries received and deleted over every queue (16 consumers spread over the queues, at least one each) / time to the last one. Each case does about the same number of deliveries. Server CPU per delivery: the server process over each phase.',
    ],
  };
}

function fanOutCase(r: PeerResult | undefined, subscribers: number): FanOutRow | undefined {
  return r?.fanOut?.find((f) => f.subscribers === subscribers);
}

/** A table as aligned Markdown, with its caption and notes. */
function renderTable({
  caption,
  columns: head,
  rows,
  notes,
}: {
  caption?: string;
  columns: string[];
  rows: string[][];
  notes: string[];
}): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`;
  return [
    ...(caption ? [caption, ''] : []),
    line(head),
    rule,
    ...rows.map(line),
    '',
    ...notes,
    'Errors per phase (if any) are in the JSON.',
  ].join('\n');
}

const FIGURES = {
  e2e: { get: (r: PeerResult | undefined) => r?.mixed?.e2ePerSec, higherIsBetter: true, unit: 'msg/s' },
  wakeP99: { get: (r: PeerResult | undefined) => r?.wake?.wakeMs?.p99, higherIsBetter: false, unit: 'ms' },
  cpu: {
    get: (r: PeerResult | undefined) => r?.mixedCpu?.serverUsPerMsg ?? undefined,
    higherIsBetter: false,
    unit: 'server CPU µs/msg',
  },
  produce: { get: (r: PeerResult | undefined) => r?.produce?.msgPerSec, higherIsBetter: true, unit: 'msg/s' },
  fanOutCommitted: {
    get: (r: PeerResult | undefined) => fanOutCase(r, 5)?.committedPerSec,
    higherIsBetter: true,
    unit: 'deliveries/s',
  },
  fanOutDrained: {
    get: (r: PeerResult | undefined) => fanOutCase(r, 5)?.drainedPerSec,
    higherIsBetter: true,
    unit: 'deliveries/s',
  },
} as const;

type Figure = keyof typeof FIGURES;

/**
 * The targets: a Sluice system's `figure` (durable Sluice unless `system` says otherwise) against what the
 * `against` figure (default: the same) of `peer` in the same run asks of it. Issue 9's against moto, RabbitMQ
 * and NATS; issue 40's fan-out ones (with 5 subscribers), where `peer` is Sluice itself when fan-out is held
 * against its own plain queue; issue 43's for `--in-memory` against fauxqs and for durable against the floor
 * (bench/floor-server.ts: what Node's HTTP and a durable SQLite row cost here).
 */
const TARGETS: ReadonlyArray<{
  target: string;
  system?: string;
  figure: Figure;
  peer: string;
  against?: Figure;
  needs: (peer: number) => number;
}> = [
  { peer: 'moto', target: 'e2e >= 2x moto', figure: 'e2e', needs: (p) => 2 * p },
  { peer: 'rabbitmq', target: 'e2e >= 1.3x rabbitmq', figure: 'e2e', needs: (p) => 1.3 * p },
  { peer: 'rabbitmq', target: 'wake p99 <= rabbitmq', figure: 'wakeP99', needs: (p) => p },
  { peer: 'nats', target: 'wake p99 <= nats', figure: 'wakeP99', needs: (p) => p },
  { peer: FLOOR, target: 'e2e >= 0.9x floor', figure: 'e2e', needs: (p) => 0.9 * p },
  { peer: FLOOR, target: 'server CPU <= 1.15x floor', figure: 'cpu', needs: (p) => 1.15 * p },
  {
    system: SLUICE_MEMORY,
    peer: 'fauxqs',
    target: 'in-memory e2e >= fauxqs',
    figure: 'e2e',
    needs: (p) => p,
  },
  {
    system: SLUICE_MEMORY,
    peer: 'fauxqs',
    target: 'in-memory server CPU <= 1.2x fauxqs',
    figure: 'cpu',
    needs: (p) => 1.2 * p,
  },
  {
    peer: SLUICE,
    target: 'fan-out x5 deliveries committed/s >= 2.5x plain sends/s',
    figure: 'fanOutCommitted',
    against: 'produce',
    needs: (p) => 2.5 * p,
  },
  {
    peer: SLUICE,
    target: 'fan-out x5 received+deleted/s >= plain e2e',
    figure: 'fanOutDrained',
    against: 'e2e',
    needs: (p) => p,
  },
  {
    peer: 'fauxqs',
    target: 'fan-out x5 deliveries committed/s >= fauxqs',
    figure: 'fanOutCommitted',
    needs: (p) => p,
  },
  {
    peer: 'fauxqs',
    target: 'fan-out x5 received+deleted/s >= fauxqs',
    figure: 'fanOutDrained',
    needs: (p) => p,
  },
];

export function peerVerdicts(results: readonly PeerResult[]): Verdict[] {
  const find = (name: string): PeerResult | undefined =>
    results.find((r) => r.name === name && r.status === 'ok');
  return TARGETS.map(({ system = SLUICE, peer, target, figure, against = figure, needs }) => {
    const { get, higherIsBetter, unit } = FIGURES[figure];
    const s = get(find(system));
    const p = FIGURES[against].get(find(peer));
    const peerFigure = against === figure ? peer : `${peer} ${against}`;
    if (s === undefined || p === undefined)
      return { target, verdict: 'NOT RUN', detail: `${peer} or ${system} has no figure in this run` };
    const needed = needs(p);
    const meets = (v: number): boolean => (higherIsBetter ? v >= needed : v <= needed);
    const c = get(find(CEILING));
    // A target the null server itself misses cannot be met by any server driven by this client.
    const beyond =
      !meets(s) && c !== undefined && !meets(c)
        ? `; needs ${fmt(needed, 2)}, beyond the null server's ${fmt(c, 2)}: out of reach of any server with this client here`
        : '';
    return {
      target,
      verdict: meets(s) ? 'PASS' : 'MISS',
      detail: `${system} ${fmt(s, 2)} ${unit} vs ${peerFigure} ${fmt(p, 2)} ${FIGURES[against].unit}: ${ratio(s, p)}, needs ${ratio(needed, p)}${beyond}`,
    };
  });
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Two horizontal bar panels: mixed end-to-end msg/s and idle wake p99 (log scale, so all fit). */
export function renderPeerSvg(
  results: readonly PeerResult[],
  machine: Record<string, string | number>,
): string {
  const ok = results.filter((r) => r.status === 'ok');
  const panels: { title: string; get: (r: PeerResult) => number | undefined; unit: string }[] = [
    { title: 'mixed end-to-end msg/s (higher is better)', get: (r) => r.mixed?.e2ePerSec, unit: 'msg/s' },
    { title: 'idle consumer wake p99, ms (lower is better)', get: (r) => r.wake?.wakeMs?.p99, unit: 'ms' },
  ];
  const barH = 18;
  const gap = 6;
  const labelW = 190;
  const plotW = 420;
  const panelH = 30 + results.length * (barH + gap);
  const height = 40 + panels.length * (panelH + 20);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelW + plotW + 120}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">Sluice vs peers, ${esc(String(machine.date).slice(0, 10))}, ${esc(String(machine.cpuModel))} (${machine.cores} cores)</text>`,
  ];
  let y = 40;
  for (const panel of panels) {
    parts.push(`<text x="10" y="${y + 14}" font-weight="bold">${esc(panel.title)}, log scale</text>`);
    const values = ok.map(panel.get).filter((v): v is number => v !== undefined && v > 0);
    const max = Math.log10(Math.max(10, ...values) * 1.2);
    const min = Math.log10(Math.max(0.01, Math.min(...values, 1) / 2));
    let by = y + 26;
    for (const r of results) {
      const v = r.status === 'ok' ? panel.get(r) : undefined;
      parts.push(`<text x="${labelW - 6}" y="${by + 13}" text-anchor="end">${esc(r.label)}</text>`);
      if (v !== undefined && v > 0) {
        const w = Math.max(2, ((Math.log10(v) - min) / (max - min)) * plotW);
        const fill = r.name === SLUICE ? '#1f6feb' : '#8b949e';
        parts.push(`<rect x="${labelW}" y="${by}" width="${w.toFixed(1)}" height="${barH}" fill="${fill}"/>`);
        parts.push(
          `<text x="${labelW + w + 4}" y="${by + 13}">${fmt(v, v < 100 ? 2 : 0)} ${panel.unit}</text>`,
        );
      } else {
        parts.push(
          `<text x="${labelW + 4}" y="${by + 13}" fill="#b00">${r.status === 'ok' ? 'no figure' : 'did not start'}</text>`,
        );
      }
      by += barH + gap;
    }
    y += panelH + 20;
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
