import { resolve } from 'node:path';
import { parseArgs as parseFlags } from 'node:util';
import { positive } from '../tools/flags.ts';
import { CLIENT_KINDS, type ClientKind } from './client.ts';
import { ALL_TARGETS, DEFAULT_TARGETS, SLUICE_BIN, type TargetName } from './targets.ts';

export interface Options {
  targets: TargetName[];
  /** Load generator: 'raw' (bench/raw-client.ts, measures the server) or 'sdk' (@aws-sdk/client-sqs). */
  client: ClientKind;
  /** Messages for produce/consume against Sluice targets. */
  messages: number;
  /** Messages for produce/consume against the moto baseline (it is much slower). */
  baselineMessages: number;
  producers: number;
  consumers: number;
  /** Mixed scenario duration, seconds. */
  duration: number;
  backlog: number;
  /** Fair-queue scenario: messages the busy tenant has waiting before the quiet tenant sends. */
  fairBacklog: number;
  longPoll: number;
  settleMs: number;
  million: boolean;
  millionMessages: number;
  millionProducers: number;
  millionTimeout: number;
  /** Rounds of the metrics-on / --no-metrics comparison (0: skip it). */
  metricsCostRounds: number;
  /** Per-scenario time limit for produce and consume, seconds. */
  phaseTimeout: number;
  out: string;
  /** bin/sluice.js to run (this checkout's by default). */
  sluiceBin: string;
  quick: boolean;
  /** PostgreSQL comparison: messages per target (0 skips it). */
  postgresMessages: number;
  /** PostgreSQL comparison: cross-node wake samples. */
  postgresWakes: number;
  /** Run the client toolkit's consumer and producer comparisons on their own Sluice (durable). */
  toolkit: boolean;
  /** Messages for the consumer and producer comparisons (the 50 ms-work run uses a quarter). */
  toolkitMessages: number;
}

export const USAGE = `usage: npm run bench -- [flags]
  --targets a,b           targets to run, from: ${ALL_TARGETS.join(', ')} (default: ${DEFAULT_TARGETS.join(',')});
                          null = bench/null-server.ts, an in-memory fake measuring the harness ceiling
  --client raw|sdk        load generator: raw = lean JSON-over-http client, measures the server;
                          sdk = @aws-sdk/client-sqs, what an SDK user sees (default raw)
  --messages N            produce/consume messages for Sluice targets (default 20000, --quick 2000)
  --baseline-messages N   produce/consume messages for moto (default 500, --quick 300)
  --producers C           concurrent producers for produce and mixed (default 16)
  --consumers C           concurrent consumers for consume and mixed (default 16)
  --duration S            mixed scenario duration, seconds (default 10, --quick 3)
  --backlog N             mixed: producers pause above N sent-but-unreceived messages (default 500)
  --fair-backlog N        fair queue: busy-tenant messages waiting before the quiet tenant's 100
                          (default 20000, --quick 2000)
  --long-poll N           long-poll wake iterations (default 200, --quick 50)
  --settle MS             long-poll: wait before sending, so the receive is parked (default 30)
  --metrics-cost-rounds N rounds of the metrics on / --no-metrics comparison, each a mixed run per side
                          (default 2, --quick 1)
  --no-metrics-cost       skip that comparison
  --phase-timeout S       time limit for each produce/consume phase, seconds (default 60)
  --million               also fill a fresh server with 1,000,000 waiting messages, report RSS,
                          then restart it on its data and time it to the first message
  --million-messages N    message count for --million (default 1000000)
  --million-producers C   concurrent producers for --million (default 16)
  --million-timeout S     time limit for the --million fill per target, seconds (default 600)
  --out FILE              JSON results file (default bench/results/latest.json)
  --sluice-bin FILE       sluice entry point to run (default: this checkout's packages/server/bin/sluice.js)
  --postgres-messages N   PostgreSQL vs SQLite (1 and 3 nodes, 127.0.0.1:5432, a fresh database each),
                          standard and FIFO queues: messages per run (default 5000, --quick 1000; 0 skips it)
  --postgres-wakes N      cross-node long-poll wake samples (default 100, --quick 30)
  --toolkit-messages N    client toolkit: messages for the Consumer and Producer comparisons
                          per round (default 1000, --quick 300; the 50 ms-work runs use a quarter)
  --no-toolkit            skip the client toolkit comparisons
  --quick                 smaller defaults for a fast smoke run
  --help                  this text`;

export function parseArgs(argv: readonly string[]): Options | 'help' {
  const { values } = parseFlags({
    args: [...argv],
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      quick: { type: 'boolean' },
      targets: { type: 'string' },
      client: { type: 'string' },
      messages: { type: 'string' },
      'baseline-messages': { type: 'string' },
      producers: { type: 'string' },
      consumers: { type: 'string' },
      duration: { type: 'string' },
      backlog: { type: 'string' },
      'fair-backlog': { type: 'string' },
      'long-poll': { type: 'string' },
      settle: { type: 'string' },
      'metrics-cost-rounds': { type: 'string' },
      'no-metrics-cost': { type: 'boolean' },
      'phase-timeout': { type: 'string' },
      million: { type: 'boolean' },
      'million-messages': { type: 'string' },
      'million-producers': { type: 'string' },
      'million-timeout': { type: 'string' },
      out: { type: 'string' },
      'sluice-bin': { type: 'string' },
      'postgres-messages': { type: 'string' },
      'postgres-wakes': { type: 'string' },
      'toolkit-messages': { type: 'string' },
      'no-toolkit': { type: 'boolean' },
    },
  });
  if (values.help) return 'help';
  const quick = values.quick ?? false;
  return {
    targets: targetsOf(values.targets),
    client: clientOf(values.client),
    messages: positive('messages', values.messages, quick ? 2_000 : 20_000),
    baselineMessages: positive('baseline-messages', values['baseline-messages'], quick ? 300 : 500),
    producers: positive('producers', values.producers, 16),
    consumers: positive('consumers', values.consumers, 16),
    duration: positive('duration', values.duration, quick ? 3 : 10),
    backlog: positive('backlog', values.backlog, 500),
    fairBacklog: positive('fair-backlog', values['fair-backlog'], quick ? 2_000 : 20_000),
    longPoll: positive('long-poll', values['long-poll'], quick ? 50 : 200),
    settleMs: positive('settle', values.settle, 30),
    million: values.million ?? false,
    millionMessages: positive('million-messages', values['million-messages'], 1_000_000),
    millionProducers: positive('million-producers', values['million-producers'], 16),
    millionTimeout: positive('million-timeout', values['million-timeout'], 600),
    metricsCostRounds: values['no-metrics-cost']
      ? 0
      : positive('metrics-cost-rounds', values['metrics-cost-rounds'], quick ? 1 : 2),
    phaseTimeout: positive('phase-timeout', values['phase-timeout'], 60),
    out: values.out ?? new URL('./results/latest.json', import.meta.url).pathname,
    sluiceBin: values['sluice-bin'] === undefined ? SLUICE_BIN : resolve(values['sluice-bin']),
    quick,
    postgresMessages:
      values['postgres-messages'] === '0'
        ? 0
        : positive('postgres-messages', values['postgres-messages'], quick ? 1_000 : 5_000),
    postgresWakes: positive('postgres-wakes', values['postgres-wakes'], quick ? 30 : 100),
    toolkit: !values['no-toolkit'],
    toolkitMessages: positive('toolkit-messages', values['toolkit-messages'], quick ? 300 : 1_000),
  };
}

function targetsOf(raw: string | undefined): TargetName[] {
  if (raw === undefined) return [...DEFAULT_TARGETS];
  const list = raw.split(',').map((t) => t.trim().replace(/^sluice-/, ''));
  const bad = list.filter((t) => !(ALL_TARGETS as readonly string[]).includes(t));
  if (list.length === 0 || bad.length > 0)
    throw new Error(`--targets: unknown ${bad.join(', ') || '(empty)'}; use ${ALL_TARGETS.join(', ')}`);
  return ALL_TARGETS.filter((t) => list.includes(t));
}

function clientOf(raw: string | undefined): ClientKind {
  if (raw === undefined) return 'raw';
  const found = CLIENT_KINDS.find((k) => k === raw);
  if (!found) throw new Error(`--client: use ${CLIENT_KINDS.join(' or ')}, got ${raw}`);
  return found;
}
