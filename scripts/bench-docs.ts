/**
 * docs/benchmarks.md, generated from the records in bench/history/: one JSON file per run (where, when and
 * how it ran, its tables, notes). Usage:
 *   npm run bench:docs                         write docs/benchmarks.md
 *   npm run bench:docs -- --check              exit 1 when docs/benchmarks.md is not what the records give
 *   npm run bench:docs -- --record FILE        first turn a bench result (bench/results/latest.json from
 *                                              `npm run bench`, peers.json from `--peers`) into a new record
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Options } from '../bench/args.ts';
import { type CpuStagesResult, STAGE_RULES, type Stage } from '../bench/cpu-stages.ts';
import { fanOutTable, type PeerResult, peerTable } from '../bench/peers/report.ts';
import { type TargetResult, targetTable } from '../bench/report.ts';
import type { SoakReport } from '../bench/soak.ts';
import { flatness, TREND_COLUMNS, trendRows } from '../bench/soak-report.ts';
import { commandFlags } from '../tools/flags.ts';

const ROOT = new URL('..', import.meta.url).pathname;
export const HISTORY_DIR = join(ROOT, 'bench/history');
export const BENCHMARKS_PAGE = join(ROOT, 'docs/benchmarks.md');

/** Kinds of record, in the page's order. `current`: the latest record of the kind is a current figure. */
const KINDS = {
  peers: { heading: 'Against peer systems', current: true },
  /** A peer run of only the systems speaking SNS (`--only sluice,fauxqs`), kept beside the full one. */
  'fan-out': { heading: 'SNS fan-out', current: true },
  'cpu-stages': { heading: 'Server CPU by stage', current: true },
  targets: { heading: 'Sluice by durability level', current: true },
  million: { heading: 'A million waiting messages', current: true },
  postgres: { heading: 'PostgreSQL', current: true },
  soak: { heading: 'Soak run', current: true },
  'metrics-cost': { heading: 'The cost of metrics', current: true },
  toolkit: { heading: 'Client toolkit', current: true },
  producer: { heading: 'Producer', current: true },
  outbox: { heading: 'Outbox relays', current: true },
  chaos: { heading: 'Crash audit', current: true },
  comparison: { heading: 'Before and after a change', current: false },
  analysis: { heading: 'Profiles and analyses', current: false },
} as const;

export type RecordKind = keyof typeof KINDS;

export interface BenchTable {
  caption?: string;
  columns: string[];
  rows: string[][];
}

export interface BenchRecord {
  title: string;
  kind: RecordKind;
  /** `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MMZ` when the time is known. */
  date: string;
  command: string;
  machine: string;
  load?: string;
  commit?: string;
  /** Where the figures come from: a result file, or the page they were transcribed from. */
  source: string;
  tables: BenchTable[];
  /** Markdown paragraphs. */
  notes: string[];
}

/** A record file read and checked; a malformed one throws with its name. */
export function parseRecord(file: string, text: string): BenchRecord {
  const fail = (why: string): never => {
    throw new Error(`${file}: ${why}`);
  };
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('not a JSON object');
  const record = value as Record<string, unknown>;
  for (const key of ['title', 'kind', 'date', 'command', 'machine', 'source'] as const) {
    if (typeof record[key] !== 'string' || record[key] === '') fail(`"${key}" must be a non-empty string`);
  }
  for (const key of ['load', 'commit'] as const) {
    if (record[key] !== undefined && typeof record[key] !== 'string') fail(`"${key}" must be a string`);
  }
  if (!Object.hasOwn(KINDS, record.kind as string)) fail(`unknown kind "${record.kind}"`);
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}Z)?$/.test(record.date as string)) fail(`bad date "${record.date}"`);
  if (!Array.isArray(record.notes) || !record.notes.every((n) => typeof n === 'string'))
    fail('"notes" must be a list of strings');
  if (!Array.isArray(record.tables)) fail('"tables" must be a list');
  for (const [i, table] of (record.tables as unknown[]).entries()) {
    const t = table as Partial<BenchTable>;
    const strings = (list: unknown): boolean =>
      Array.isArray(list) && list.every((c) => typeof c === 'string');
    if (!strings(t.columns) || !Array.isArray(t.rows)) fail(`table ${i + 1} needs "columns" and "rows"`);
    if (t.caption !== undefined && typeof t.caption !== 'string')
      fail(`table ${i + 1}: "caption" must be a string`);
    for (const row of t.rows ?? []) {
      if (!strings(row) || row.length !== t.columns?.length)
        fail(
          `table ${i + 1}: a row of ${JSON.stringify(row)} does not match its ${t.columns?.length} columns`,
        );
    }
  }
  return record as unknown as BenchRecord;
}

export function readRecords(dir = HISTORY_DIR): Array<{ file: string; record: BenchRecord }> {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((file) => ({ file, record: parseRecord(file, readFileSync(join(dir, file), 'utf8')) }));
}

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function renderTable(table: BenchTable): string {
  const lines = [
    `| ${table.columns.map(cell).join(' | ')} |`,
    `| ${table.columns.map(() => '---').join(' | ')} |`,
    ...table.rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
  return [...(table.caption ? [table.caption, ''] : []), ...lines].join('\n');
}

const when = (date: string): string => date.replace(/T(\d{2}:\d{2})Z$/, ' $1 UTC');

function renderRecord(file: string, record: BenchRecord, heading: string): string {
  const facts = [
    when(record.date),
    record.machine,
    ...(record.load ? [`load ${record.load}`] : []),
    ...(record.commit ? [`commit ${record.commit}`] : []),
  ];
  return [
    heading,
    '',
    `${facts.join(' · ')}. Command: \`${record.command}\`. Record: [bench/history/${file}](../bench/history/${file}) (${record.source}).`,
    ...record.tables.flatMap((table) => ['', renderTable(table)]),
    ...record.notes.flatMap((note) => ['', note]),
  ].join('\n');
}

/** The whole page, from the records. */
export function renderBenchmarks(records: ReadonlyArray<{ file: string; record: BenchRecord }>): string {
  const latest = new Map<RecordKind, { file: string; record: BenchRecord }>();
  for (const entry of records) {
    const seen = latest.get(entry.record.kind);
    if (!seen || entry.record.date >= seen.record.date) latest.set(entry.record.kind, entry);
  }
  const current = (Object.keys(KINDS) as RecordKind[])
    .filter((kind) => KINDS[kind].current && latest.has(kind))
    .map((kind) => {
      const { file, record } = latest.get(kind)!;
      return renderRecord(file, record, `### ${KINDS[kind].heading}\n\n**${record.title}**`);
    });
  const past = (Object.keys(KINDS) as RecordKind[])
    .filter((kind) => !KINDS[kind].current)
    .flatMap((kind) => records.filter((r) => r.record.kind === kind))
    .map(({ file, record }) => renderRecord(file, record, `### ${record.title}`));
  const history = [...records]
    .sort((a, b) => b.record.date.localeCompare(a.record.date) || a.file.localeCompare(b.file))
    .map(
      ({ file, record }) =>
        `| ${when(record.date)} | ${KINDS[record.kind].heading} | [${cell(record.title)}](../bench/history/${file}) |`,
    );
  return `${[
    '<!-- Generated by `npm run bench:docs` from bench/history/*.json: edit the records, not this page. -->',
    '# Benchmarks',
    '',
    'How fast Sluice is, measured by `npm run bench` (Sluice against moto, by durability level, and the',
    'PostgreSQL backend), `npm run bench -- --peers` (the same workload on RabbitMQ, NATS JetStream, BullMQ,',
    "pg-boss, fauxqs and moto), `npm run bench -- --cpu-stages` (where the server's CPU per message goes),",
    '`npm run soak` and `npm run bench:outbox`. Every flag and scenario is in',
    "[the bench's manual](../bench/README.md).",
    '',
    "Every run here was made on the project's development machine: a virtual machine with two cores shared",
    'with other work, where the client and the server share the cores. Absolute rates move a lot between runs',
    '(the load average is given with each); ratios measured in the same run are the comparable part. Each run',
    'is a record in `bench/history/`, and this page is generated from them: below, the latest of each kind;',
    'then earlier comparisons and analyses; then the list of every run.',
    '',
    '## Current figures',
    '',
    current.join('\n\n'),
    '',
    '## Before and after, and analyses',
    '',
    past.join('\n\n'),
    '',
    '## Every recorded run',
    '',
    '| date | kind | record |',
    '| --- | --- | --- |',
    ...history,
  ].join('\n')}\n`;
}

interface BenchResultFile {
  machine: {
    date: string;
    cpuModel: string;
    cores: number;
    memoryGiB: number;
    loadAverage1m: number;
    node: string;
    commit: string;
  };
  options: Record<string, unknown>;
  results?: unknown[];
  verdicts?: Array<{ target: string; verdict: string; detail: string }>;
  evaluations?: unknown[];
}

/** A record of a fresh bench result: its table computed by the bench's own code, its machine as it recorded it. */
export function recordOf(resultFile: string, result: BenchResultFile): BenchRecord {
  const notAResult = new Error(
    `${resultFile}: not a bench (latest.json), peers (peers.json), CPU stages (cpu-stages.json) or soak (soak.json) result`,
  );
  // Every result the bench writes says on which machine it was measured.
  if (typeof result.machine?.date !== 'string') throw notAResult;
  const { machine } = result;
  const facts = {
    date: `${machine.date.slice(0, 16)}Z`,
    machine: `${machine.cores}-core ${machine.cpuModel}, ${machine.memoryGiB} GiB RAM, Node ${machine.node}`,
    load: `${machine.loadAverage1m} at start`,
    commit: machine.commit,
    source: `${basename(resultFile)} written by the bench, recorded with npm run bench:docs -- --record`,
  };
  if (isCpuStages(result)) return cpuStagesRecord(result, facts);
  if (isSoak(result)) return soakRecord(result, facts);
  if (result.verdicts) {
    const options = result.options as { messages: number; motoMessages: number; duration: number };
    const results = (result.results ?? []) as PeerResult[];
    const { notes, ...table } = peerTable(results, options);
    const { notes: fanOutNotes, ...fanOut } = fanOutTable(results);
    const withFanOut = fanOut.rows.length > 0;
    return {
      title: 'Against peer systems (issue 9 workload)',
      kind: 'peers',
      command: 'npm run bench -- --peers',
      ...facts,
      tables: withFanOut ? [table, fanOut] : [table],
      notes: [
        ...notes,
        ...(withFanOut ? fanOutNotes : []),
        result.verdicts.map((v) => `- ${v.target}: ${v.verdict} (${v.detail})`).join('\n'),
      ],
    };
  }
  if (result.evaluations) {
    const { notes, ...table } = targetTable(
      (result.results ?? []) as TargetResult[],
      result.options as unknown as Options,
    );
    return {
      title: 'Sluice by durability level, against moto and the null server',
      kind: 'targets',
      command: 'npm run bench',
      ...facts,
      tables: [table],
      notes,
    };
  }
  throw notAResult;
}

function isCpuStages(result: BenchResultFile): result is BenchResultFile & CpuStagesResult {
  return Array.isArray((result as { rows?: unknown }).rows);
}

function isSoak(result: BenchResultFile): result is BenchResultFile & SoakReport {
  return 'verdict' in result && Array.isArray((result as { samples?: unknown }).samples);
}

const count = (n: number): string => n.toLocaleString('en-US');

function soakRecord(
  result: SoakReport,
  facts: Omit<BenchRecord, 'title' | 'kind' | 'command' | 'tables' | 'notes'>,
): BenchRecord {
  const { options, verdict, sendLatencyMs: send, e2eLatencyMs: e2e } = result;
  const latency = (s: SoakReport['sendLatencyMs']) => (s ? `${s.p50}/${s.p99} ms (worst ${s.max})` : '-');
  // The report's machine facts are taken at its end; each window has the load of its own end.
  const loads = result.samples.flatMap((sample) => sample.loadAverage1m ?? []);
  return {
    title: `Soak run: ${options.minutes} minutes at ${count(options.rate)} msg/s`,
    kind: 'soak',
    command: `npm run soak -- --minutes ${options.minutes} --rate ${options.rate} --durability ${options.durability}`,
    ...facts,
    load: loads.length > 0 ? `${Math.min(...loads)}-${Math.max(...loads)} during the run` : facts.load,
    tables: [
      {
        caption:
          `${count(result.planned)} messages of 1 KiB through one sluice serve (SQLite, ${options.durability}, ` +
          `${options.producers} producers, ${options.consumers} consumers): the last third of the run against the ` +
          `first (${verdict.samplesUsed} windows of ${options.sampleSeconds} s after the warm-up).`,
        columns: TREND_COLUMNS,
        rows: trendRows(verdict),
      },
    ],
    notes: [
      `Sent ${count(result.sent)}, received ${count(result.received)}: ${result.lost} lost, ${result.duplicates} ` +
        `duplicates, ${result.requestErrors} request errors; ${Math.round(result.rateKept * 100)} % of the asked ` +
        `rate kept over ${result.loadSeconds} s of load, drained ${result.drainSeconds} s after. Whole run: send ` +
        `p50/p99 ${latency(send)}, end to end ${latency(e2e)}. Memory ${flatness(verdict.memoryFlat)}, ` +
        `latency ${flatness(verdict.latencyFlat)}.`,
      // The chart is shown when the run drew the page's own (the soak's default --svg).
      ...(options.svg.endsWith('docs/images/soak.svg')
        ? ['![Soak run: memory, latency and depth over time](images/soak.svg)']
        : []),
    ],
  };
}

const fmtUs = (us: number): string => us.toFixed(1);

function cpuStagesRecord(
  result: CpuStagesResult,
  facts: Omit<BenchRecord, 'title' | 'kind' | 'command' | 'tables' | 'notes'>,
): BenchRecord {
  const { mixed, options } = result;
  return {
    title: "Server CPU per message by stage (peer bench's durable workload, mixed phase)",
    kind: 'cpu-stages',
    command: `npm run bench -- --cpu-stages --duration ${options.duration}`,
    ...facts,
    tables: [
      {
        columns: ['stage', '% of main-thread samples', 'µs/msg', 'what'],
        rows: result.rows.map((r) => [
          r.stage,
          r.sharePct === null ? '' : r.sharePct.toFixed(1),
          fmtUs(r.usPerMsg),
          r.stage in STAGE_RULES
            ? STAGE_RULES[r.stage as Stage]
            : r.stage === 'main thread'
              ? "the server's main thread, from /proc"
              : r.stage === 'other threads'
                ? "the rest of the process: the fdatasync on libuv's pool, V8's GC helpers"
                : 'the whole server process, from /proc',
        ]),
      },
    ],
    notes: [
      `Mixed phase: ${options.producers} producers, ${options.consumers} consumers, ${options.duration} s then drained; ` +
        `${count(mixed.sent)} messages sent, e2e ${count(mixed.e2ePerSec)} msg/s, ` +
        `lost ${mixed.lost}, duplicates ${mixed.duplicates}. ${count(result.samples.busy)} busy and ` +
        `${count(result.samples.idle)} idle samples of the main thread in the phase.`,
    ],
  };
}

export const BENCH_DOCS_USAGE = `usage: npm run bench:docs -- [flags]
  (no flag)            write docs/benchmarks.md from the records in bench/history
  --record FILE        first add FILE (a result of npm run bench, --peers, --cpu-stages or npm run soak,
                       e.g. bench/results/peers.json) to bench/history as <date>-<kind>.json; edit its
                       title and notes, then run again
  --check              write nothing; exit 1 if docs/benchmarks.md is not what the records give
  --help               this text`;

function main(argv: readonly string[]): number {
  const values = commandFlags(
    BENCH_DOCS_USAGE,
    { check: { type: 'boolean' }, record: { type: 'string' } },
    (flags) => flags,
    argv,
  );
  if (values.record) {
    let record: BenchRecord;
    try {
      record = recordOf(values.record, JSON.parse(readFileSync(values.record, 'utf8')) as BenchResultFile);
    } catch (error) {
      // A file that is missing, not JSON or not a result is the caller's mistake: the reason, no stack.
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
    let name = `${record.date.slice(0, 10)}-${record.kind}.json`;
    for (let n = 2; existsSync(join(HISTORY_DIR, name)); n++)
      name = `${record.date.slice(0, 10)}-${record.kind}-${n}.json`;
    writeFileSync(join(HISTORY_DIR, name), `${JSON.stringify(record, null, 2)}\n`);
    process.stdout.write(`recorded bench/history/${name}\n`);
  }
  const page = renderBenchmarks(readRecords());
  if (values.check) {
    if (readFileSync(BENCHMARKS_PAGE, 'utf8') === page) return 0;
    process.stderr.write('docs/benchmarks.md is not what bench/history gives: run npm run bench:docs\n');
    return 1;
  }
  writeFileSync(BENCHMARKS_PAGE, page);
  process.stdout.write('wrote docs/benchmarks.md\n');
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
