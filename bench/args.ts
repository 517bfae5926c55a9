import { resolve } from 'node:path';
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
  --postgres-messages N   PostgreSQL vs SQLite (1 and 3 nodes, 127.0.0.1:5432, a fresh database each):
                          messages per target (default 5000, --quick 1000; 0 skips it)
  --postgres-wakes N      cross-node long-poll wake samples (default 100, --quick 30)
  --toolkit-messages N    client toolkit: messages for the Consumer and Producer comparisons
                          per round (default 1000, --quick 300; the 50 ms-work runs use a quarter)
  --no-toolkit            skip the client toolkit comparisons
  --quick                 smaller defaults for a fast smoke run
  --help                  this text`;

export function positiveInt(flag: string, raw: string | undefined): number {
  const value = Number(raw);
  if (raw === undefined || !Number.isInteger(value) || value <= 0) {
    throw new Error(`${flag} needs a positive integer, got ${raw ?? 'nothing'}`);
  }
  return value;
}

export function parseArgs(argv: readonly string[]): Options | 'help' {
  const quick = argv.includes('--quick');
  const options: Options = {
    targets: [...DEFAULT_TARGETS],
    client: 'raw',
    messages: quick ? 2_000 : 20_000,
    baselineMessages: quick ? 300 : 500,
    producers: 16,
    consumers: 16,
    duration: quick ? 3 : 10,
    backlog: 500,
    fairBacklog: quick ? 2_000 : 20_000,
    longPoll: quick ? 50 : 200,
    settleMs: 30,
    million: false,
    millionMessages: 1_000_000,
    millionProducers: 16,
    millionTimeout: 600,
    metricsCostRounds: quick ? 1 : 2,
    phaseTimeout: 60,
    out: new URL('./results/latest.json', import.meta.url).pathname,
    sluiceBin: SLUICE_BIN,
    quick,
    postgresMessages: quick ? 1_000 : 5_000,
    postgresWakes: quick ? 30 : 100,
    toolkit: true,
    toolkitMessages: quick ? 300 : 1_000,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): string | undefined => argv[++i];
    switch (flag) {
      case '--help':
      case '-h':
        return 'help';
      case '--quick':
        break;
      case '--million':
        options.million = true;
        break;
      case '--no-metrics-cost':
        options.metricsCostRounds = 0;
        break;
      case '--metrics-cost-rounds':
        options.metricsCostRounds = positiveInt(flag, value());
        break;
      case '--no-toolkit':
        options.toolkit = false;
        break;
      case '--toolkit-messages':
        options.toolkitMessages = positiveInt(flag, value());
        break;
      case '--targets': {
        const list = (value() ?? '').split(',').map((t) => t.trim().replace(/^sluice-/, ''));
        const bad = list.filter((t) => !(ALL_TARGETS as readonly string[]).includes(t));
        if (list.length === 0 || bad.length > 0) {
          throw new Error(`--targets: unknown ${bad.join(', ') || '(empty)'}; use ${ALL_TARGETS.join(', ')}`);
        }
        options.targets = ALL_TARGETS.filter((t) => list.includes(t));
        break;
      }
      case '--client': {
        const kind = value();
        const found = CLIENT_KINDS.find((k) => k === kind);
        if (!found) throw new Error(`--client: use ${CLIENT_KINDS.join(' or ')}, got ${kind ?? 'nothing'}`);
        options.client = found;
        break;
      }
      case '--messages':
        options.messages = positiveInt(flag, value());
        break;
      case '--baseline-messages':
        options.baselineMessages = positiveInt(flag, value());
        break;
      case '--producers':
        options.producers = positiveInt(flag, value());
        break;
      case '--consumers':
        options.consumers = positiveInt(flag, value());
        break;
      case '--duration':
        options.duration = positiveInt(flag, value());
        break;
      case '--backlog':
        options.backlog = positiveInt(flag, value());
        break;
      case '--fair-backlog':
        options.fairBacklog = positiveInt(flag, value());
        break;
      case '--long-poll':
        options.longPoll = positiveInt(flag, value());
        break;
      case '--settle':
        options.settleMs = positiveInt(flag, value());
        break;
      case '--phase-timeout':
        options.phaseTimeout = positiveInt(flag, value());
        break;
      case '--postgres-messages': {
        const raw = value();
        options.postgresMessages = raw === '0' ? 0 : positiveInt(flag, raw);
        break;
      }
      case '--postgres-wakes':
        options.postgresWakes = positiveInt(flag, value());
        break;
      case '--million-messages':
        options.millionMessages = positiveInt(flag, value());
        break;
      case '--million-producers':
        options.millionProducers = positiveInt(flag, value());
        break;
      case '--million-timeout':
        options.millionTimeout = positiveInt(flag, value());
        break;
      case '--out': {
        const out = value();
        if (!out) throw new Error('--out needs a file name');
        options.out = out;
        break;
      }
      case '--sluice-bin': {
        const bin = value();
        if (!bin) throw new Error('--sluice-bin needs a file name');
        options.sluiceBin = resolve(bin);
        break;
      }
      default:
        throw new Error(`unknown flag ${flag}\n${USAGE}`);
    }
  }
  return options;
}
