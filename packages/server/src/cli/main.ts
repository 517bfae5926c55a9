import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { AccessKey } from '../server/auth/access.ts';
import { ACCESS_KEY_ID } from '../server/config-file.ts';
import { startSluice } from '../server/sluice-server.ts';
import { isWebhookUrl } from '../server/webhooks.ts';
import { integerFlag, UsageError } from './flags.ts';
import { REDRIVE_HELP, redrive } from './redrive.ts';
import { STATS_HELP, stats } from './stats.ts';

const MAIN_HELP = `sluice — an Amazon SQS-compatible message queue server

Usage:
  sluice serve [options]     start the server (see: sluice serve --help)
  sluice redrive [options]   move messages out of a dead-letter queue at a rate (see: sluice redrive --help)
  sluice stats QUEUE         a queue's recent history from a running server (see: sluice stats --help)
  sluice --help              this text
  sluice --version           print the version

Any SQS client works against it with its endpoint set to the server's URL and any credentials.`;

const SERVE_HELP = `sluice serve — start the SQS-compatible server

Options:
  --port N            TCP port (default 9324; 0 picks a free one)
  --host ADDR         address to bind (default 127.0.0.1; 0.0.0.0 exposes it to the network)
  --data DIR          data directory of the embedded SQLite store (default ./sluice-data)
  --store URL         keep the queues in PostgreSQL instead: postgres://user[:password]@host[:port]/db;
                      every node started on the same database serves the same queues
  --store-connections N  PostgreSQL connections this node opens at most, plus one (default 10)
  --durability MODE   full | durable | normal | off (default durable):
                        full     every commit is fsynced before the answer
                        durable  sends and queue changes are fsynced before the answer; receives,
                                 visibility changes and deletes ride on the next fsync, so a power
                                 cut can at worst redeliver a message, never lose an acknowledged one
                        normal   written before the answer, fsynced at checkpoints; survives kill -9,
                                 a power cut may lose the last acknowledged sends
                        off      never fsynced; survives kill -9, a power cut may corrupt recent data
  --config FILE       JSON file of queues (attributes, tags) to create or update at start
  --region NAME       region in queue ARNs (default us-east-1)
  --account ID        12-digit account id in queue URLs and ARNs (default 000000000000)
  --log-level LEVEL   fatal | error | warn | info | debug | trace | silent (default info)
  --max-request-bytes N  largest request body accepted (default 5242880)
  --redrive-rate N    messages/s of move tasks started without MaxNumberOfMessagesPerSecond (default 100)
  --redrive-backlog N such tasks pause while a destination has N or more visible messages
                      (default 1000; 0 never pauses)
  --alarm-webhook URL POST DLQ alarm notifications as JSON to URL (repeatable)
  --credentials ID:SECRET  accept requests SigV4-signed with this access key (repeatable); with any
                      key configured (here or in --config), unsigned or wrongly signed requests fail
  --insecure          allow a --host other than loopback without credentials (prints a warning)
  --cors-origin ORIGIN  let web pages of ORIGIN (e.g. http://localhost:3000) call the API from a
                      browser, with CORS (repeatable); pages of any other origin are refused
  --allow-host NAME   accept requests whose Host header is NAME (repeatable), besides loopback names and
                      addresses and the bound address: a guard against DNS rebinding, needed when
                      clients reach a loopback or --insecure server by another name
  --max-queues N      refuse CreateQueue (OverLimit) once the server holds N queues (default: no cap)
  --max-stored-bytes N  refuse sends (OverLimit) once the store takes N bytes (default: no cap)
  --max-in-flight N   in-flight messages per standard queue (default 120000, SQS's)
  --max-in-flight-fifo N  in-flight messages per FIFO queue (default 20000, SQS's)
  --max-long-polls N  concurrent long polls on the server; past it, 503 (default 10000)
  --max-long-polls-per-connection N  the same per connection (default 2)
  --tls-cert FILE     PEM certificate chain: serve HTTPS (needs --tls-key)
  --tls-key FILE      PEM private key of --tls-cert
  --no-metrics        serve no /metrics and keep no per-request counters or latency histograms
  -h, --help          this text

Environment (a flag given wins; the container image sets all three):
  SLUICE_HOST=ADDR    as --host
  SLUICE_DATA=DIR     as --data
  SLUICE_INSECURE=1   as --insecure (0 or empty: off); the server says so when it starts

SIGTERM or SIGINT stops accepting requests, answers long polls, and closes the database cleanly.`;

const DURABILITY = ['full', 'durable', 'normal', 'off'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function fail(message: string): never {
  process.stderr.write(`sluice: ${message}\n`);
  process.exit(2);
}

function oneOf<T extends string>(
  name: string,
  value: string | undefined,
  choices: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value)) fail(`--${name} must be one of ${choices.join(', ')}`);
  return value as T;
}

function integer(name: string, value: string | undefined, min: number, max: number): number | undefined {
  try {
    return integerFlag(name, value, min, max);
  } catch (error) {
    fail((error as Error).message);
  }
}

/** `{ [key]: value }` when a value was given, so that it does not override a config-file setting with undefined. */
function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

function webhookUrl(value: string): string {
  if (!isWebhookUrl(value)) fail(`--alarm-webhook must be an http(s) URL, got "${value}"`);
  return value;
}

function credential(value: string): AccessKey {
  const colon = value.indexOf(':');
  const accessKeyId = value.slice(0, colon);
  const secretAccessKey = value.slice(colon + 1);
  if (colon < 0 || !ACCESS_KEY_ID.test(accessKeyId) || secretAccessKey === '')
    fail('--credentials must be ACCESS_KEY_ID:SECRET (the id letters, digits or underscores)');
  return { accessKeyId, secretAccessKey };
}

function tlsFiles(
  cert: string | undefined,
  key: string | undefined,
): { cert: string; key: string } | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) fail('--tls-cert and --tls-key go together');
  try {
    return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
  } catch (error) {
    fail(`cannot read TLS files: ${(error as Error).message}`);
  }
}

async function serve(args: string[]): Promise<void> {
  let parsed: ReturnType<typeof parseServeArgs>;
  try {
    parsed = parseServeArgs(args);
  } catch (error) {
    fail(`${(error as Error).message}\n\n${SERVE_HELP}`);
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(`${SERVE_HELP}\n`);
    return;
  }
  const account = values.account;
  if (account !== undefined && !/^\d{12}$/.test(account)) fail('--account must be 12 digits');
  const dataDir = values.data ?? environment('SLUICE_DATA') ?? './sluice-data';
  const insecureFromEnvironment = values.insecure === undefined && environmentSwitch('SLUICE_INSECURE');
  const durability = oneOf('durability', values.durability, DURABILITY) ?? 'durable';
  let sluice: Awaited<ReturnType<typeof startSluice>>;
  try {
    sluice = await startSluice({
      port: integer('port', values.port, 0, 65535) ?? 9324,
      host: values.host ?? environment('SLUICE_HOST') ?? '127.0.0.1',
      dataDir,
      durability,
      storeUrl: values.store,
      storeConnections: integer('store-connections', values['store-connections'], 1, 1000),
      configFile: values.config,
      region: values.region,
      accountId: account,
      logLevel: oneOf('log-level', values['log-level'], LOG_LEVELS),
      maxRequestBytes: integer('max-request-bytes', values['max-request-bytes'], 65_536, 1 << 30),
      redrive: {
        ...optional('defaultRate', integer('redrive-rate', values['redrive-rate'], 1, 500)),
        ...optional('backlogLimit', integer('redrive-backlog', values['redrive-backlog'], 0, 1e9)),
      },
      alarms: { webhooks: (values['alarm-webhook'] ?? []).map(webhookUrl) },
      limits: {
        ...optional('maxQueues', integer('max-queues', values['max-queues'], 1, 1e9)),
        ...optional('maxStoredBytes', integer('max-stored-bytes', values['max-stored-bytes'], 1, 2 ** 50)),
        ...optional('maxInFlightStandard', integer('max-in-flight', values['max-in-flight'], 1, 1e9)),
        ...optional('maxInFlightFifo', integer('max-in-flight-fifo', values['max-in-flight-fifo'], 1, 1e9)),
      },
      longPolls: {
        ...optional('total', integer('max-long-polls', values['max-long-polls'], 1, 1e9)),
        ...optional(
          'perConnection',
          integer('max-long-polls-per-connection', values['max-long-polls-per-connection'], 1, 1e9),
        ),
      },
      credentials: (values.credentials ?? []).map(credential),
      insecure: values.insecure ?? insecureFromEnvironment,
      corsOrigins: values['cors-origin'] ?? [],
      allowedHosts: values['allow-host'] ?? [],
      tls: tlsFiles(values['tls-cert'], values['tls-key']),
      metrics: !values['no-metrics'],
    });
  } catch (error) {
    fail(`cannot start: ${(error as Error).message}`);
  }
  process.stdout.write(
    `sluice: listening on ${sluice.endpoint} (${
      values.store === undefined
        ? `data: ${dataDir}, durability: ${durability}`
        : `store: ${withoutPassword(values.store)}`
    })\n`,
  );
  if (insecureFromEnvironment)
    process.stdout.write(
      'sluice: --insecure is on (SLUICE_INSECURE in the environment): without credentials, anyone who can reach the port can use every queue\n',
    );
  const shutdown = (signal: string) => {
    process.stdout.write(`sluice: ${signal}, shutting down\n`);
    sluice.close().then(
      () => process.exit(0),
      (error: unknown) => fail(`shutdown failed: ${(error as Error).message}`),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/** A setting from the environment; empty counts as unset, as for a flag not given. */
function environment(name: string): string | undefined {
  return process.env[name] || undefined;
}

function environmentSwitch(name: string): boolean {
  const value = environment(name);
  if (value === undefined || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  fail(`${name} must be 1, true, 0 or false, not "${value}"`);
}

/** A store URL fit for a log line: its password left out. */
function withoutPassword(url: string): string {
  return url.replace(/^(\w+:\/\/[^:@/]*):[^@/]*@/, '$1:***@');
}

function parseServeArgs(args: string[]) {
  return parseArgs({
    args,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      store: { type: 'string' },
      'store-connections': { type: 'string' },
      durability: { type: 'string' },
      config: { type: 'string' },
      region: { type: 'string' },
      account: { type: 'string' },
      'log-level': { type: 'string' },
      'max-request-bytes': { type: 'string' },
      'redrive-rate': { type: 'string' },
      'redrive-backlog': { type: 'string' },
      'alarm-webhook': { type: 'string', multiple: true },
      credentials: { type: 'string', multiple: true },
      'max-queues': { type: 'string' },
      'max-stored-bytes': { type: 'string' },
      'max-in-flight': { type: 'string' },
      'max-in-flight-fifo': { type: 'string' },
      'max-long-polls': { type: 'string' },
      'max-long-polls-per-connection': { type: 'string' },
      insecure: { type: 'boolean' },
      'cors-origin': { type: 'string', multiple: true },
      'allow-host': { type: 'string', multiple: true },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'no-metrics': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'redrive':
      return runRedrive(rest);
    case 'stats':
      return runStats(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${MAIN_HELP}\n`);
      return;
    case '--version':
      process.stdout.write(`sluice ${packageVersion()}\n`);
      return;
    default:
      fail(`unknown command "${command}"\n\n${MAIN_HELP}`);
  }
}

async function runRedrive(args: string[]): Promise<void> {
  try {
    // Exit now: the SDK's idle keep-alive sockets would otherwise hold the process a while.
    process.exit(await redrive(args));
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
      fail(`${(error as Error).message}\n\n${REDRIVE_HELP}`);
    const name = (error as { name?: string }).name;
    process.stderr.write(
      `sluice redrive: ${name && name !== 'Error' ? `${name}: ` : ''}${(error as Error).message}\n`,
    );
    process.exit(1);
  }
}

async function runStats(args: string[]): Promise<void> {
  try {
    process.exitCode = await stats(args, (text) => process.stdout.write(text));
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
      fail(`${(error as Error).message}\n\n${STATS_HELP}`);
    process.stderr.write(`sluice stats: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

// Sluice is tested on Node 20 as on 22 and 24 (docs/decisions/node-versions.md). The AWS SDK's notice that its
// releases after January 2027 will need Node 22 is not about this install: `sluice redrive` does not repeat it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
await main(process.argv.slice(2));
