import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { AccessKey } from '../server/auth/access.ts';
import { ACCESS_KEY_ID, isMetricsToken, METRICS_TOKEN_RULE } from '../server/config-file.ts';
import { createLogger, LOG_FORMATS, LOG_LEVELS } from '../server/logger.ts';
import { startSluice } from '../server/sluice-server.ts';
import { isWebhookUrl } from '../server/webhooks.ts';
import { audit } from './audit.ts';
import { dlq } from './dlq.ts';
import { integerFlag, usageMessage } from './flags.ts';
import { watchParent } from './parent-watch.ts';
import { stats } from './stats.ts';
import { safeText } from './terminal-text.ts';

const MAIN_HELP = `sluice — an Amazon SQS-compatible message queue server

Usage:
  sluice serve [options]     start the server (see: sluice serve --help)
  sluice redrive [options]   move messages out of a dead-letter queue at a rate (see: sluice redrive --help)
  sluice stats QUEUE         a queue's recent history from a running server (see: sluice stats --help)
  sluice audit               what was done to messages: replays, deletes, purges, move tasks (see: sluice audit --help)
  sluice dlq list|search|show|replay|delete QUEUE ...
                             triage a DLQ message by message, without receiving (see: sluice dlq --help)
  sluice --help              this text
  sluice --version           print the version

Any SQS client works against it with its endpoint set to the server's URL and any credentials.`;

const SERVE_HELP = `sluice serve — start the SQS-compatible server

Options:
  --port N            TCP port (default 9324; 0 picks a free one)
  --host ADDR         address to bind (default 127.0.0.1; 0.0.0.0 exposes it to the network)
  --data DIR          data directory of the embedded SQLite store (default ./sluice-data)
  --in-memory         keep everything in memory, nothing on disk: for tests and CI; queues and messages
                      are gone when the server stops (same as --data :memory:)
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
  --disk-reserve-bytes N  space held back in the data directory (file sluice.reserve), released when
                      the disk fills so receives and deletes still work, taken back when space
                      returns; sends are refused meanwhile (default 67108864; 0 holds none)
  --config FILE       JSON file of queues (attributes, tags) to create or update at start
  --region NAME       region in queue ARNs (default us-east-1)
  --account ID        12-digit account id in queue URLs and ARNs (default 000000000000)
  --log-level LEVEL   fatal | error | warn | info | debug | trace | silent (default info); the start and stop
                      lines are written at any level
  --log-format F      text | json (default text): every log line, on stderr, a line a person reads or one
                      JSON object
  --max-request-bytes N  largest request body accepted (default 5242880)
  --redrive-rate N    messages/s of move tasks started without MaxNumberOfMessagesPerSecond (default 100)
  --redrive-backlog N such tasks pause while a destination has N or more visible messages
                      (default 1000; 0 never pauses)
  --alarm-webhook URL POST DLQ alarm notifications as JSON to URL (repeatable)
  --audit-retention-days N  keep audit entries (sluice audit) N days, 1-36500 (default 90)
  --audit-max-entries N  keep only the newest N audit entries, 1-10000000 (default 100000)
  --credentials ID:SECRET  accept requests SigV4-signed with this access key (repeatable); with any
                      key configured (here or in --config), unsigned or wrongly signed requests fail,
                      and the console and its pages ask to sign in with a key's id and secret
  --metrics-token TOKEN  /metrics answers only requests with "Authorization: Bearer TOKEN" (or signed
                      in with a key without limits); 16-256 visible characters (also "metricsToken"
                      in --config, which keeps it out of the process list)
  --insecure          allow a --host other than loopback without credentials (prints a warning)
  --cors-origin ORIGIN  let web pages of ORIGIN (e.g. http://localhost:3000) call the API from a
                      browser, with CORS (repeatable); pages of any other origin are refused
  --allow-host NAME   accept requests whose Host header is NAME (repeatable), besides loopback names and
                      addresses and the bound address: a guard against DNS rebinding, needed when
                      clients reach a loopback or --insecure server by another name
  --max-queues N      refuse CreateQueue (OverLimit) once the server holds N queues (default: no cap)
  --max-stored-bytes N  refuse sends (OverLimit) once the store takes N bytes on disk, its WAL
                      and the audit trail included (default: no cap)
  --max-in-flight N   in-flight messages per standard queue (default 120000, SQS's)
  --max-in-flight-fifo N  in-flight messages per FIFO queue (default 20000, SQS's)
  --max-long-polls N  concurrent long polls on the server; past it, 503 (default 10000)
  --max-long-polls-per-address N  the same per client address (default 200)
  --max-long-polls-per-connection N  the same per connection (default 2)
  --max-connections-per-address N  open connections per client address; more are closed at once
                      (default 256; raise it behind a proxy, whose address every client has)
  --max-buffered-bytes N  request body bytes held at once; past it, new bodies get 503 at once
                      (default: 1/64 of the machine's memory, between 16 and 64 MiB)
  --max-response-bytes N  message bytes ReceiveMessage answers hold at once; past it, receives
                      wait for room or return fewer messages (default: 1/1024 of the memory,
                      between 4 and 16 MiB)
  --headers-timeout S  a connection must send its request headers within S seconds, also one that
                      sends nothing (default 10)
  --keep-alive-timeout S  an idle keep-alive connection is closed after S seconds (default 65)
  --send-timeout S    an answer its client takes nothing of for S seconds is cut off (default 30)
  --tls-cert FILE     PEM certificate chain: serve HTTPS (needs --tls-key)
  --tls-key FILE      PEM private key of --tls-cert
  --no-metrics        serve no /metrics and keep no per-request counters or latency histograms
  --strict-receipt-handles  standard queues refuse a stale receipt handle (superseded by a later
                      receive, or its visibility timeout lapsed) with ReceiptHandleIsInvalid, counted
                      in /metrics; by default they honour it, as AWS does (also per queue in --config)
  --outlive-parent    keep running when the process that started it exits; by default the server shuts
                      down when its parent (npx, npm, a shell script) is gone, so a wrapper killed by
                      SIGTERM or SIGKILL leaves no orphan holding the port
  --test-clock        test mode: tests read the server's time (GET /_sluice/clock) and move it forward
                      (POST /_sluice/clock/advance {"seconds": N}), and POST /_sluice/reset (or moto's
                      /moto-api/reset) forgets every queue; SQLite only; with credentials
                      these need a signature of a key without queue or action limits
  -h, --help          this text

Environment (a flag given wins; the container image sets all three):
  SLUICE_HOST=ADDR    as --host
  SLUICE_DATA=DIR     as --data
  SLUICE_INSECURE=1   as --insecure (0 or empty: off); the server says so when it starts
  SLUICE_LOG_FORMAT=F as --log-format

SIGTERM or SIGINT, or its parent process exiting (unless --outlive-parent), stops accepting requests,
answers long polls, and closes the database cleanly.`;

const DURABILITY = ['full', 'durable', 'normal', 'off'] as const;
/** The --data value of an in-memory store (SQLite's own name for one). */
const IN_MEMORY = ':memory:';

function fail(message: string): never {
  process.stderr.write(`sluice: ${message}\n`);
  process.exit(2);
}

/** A command-line mistake: one line, and where to read the options, not the whole help. */
function usage(command: 'serve' | 'redrive' | 'stats' | 'audit' | 'dlq' | undefined, message: string): never {
  const help = command === undefined ? 'sluice --help' : `sluice ${command} --help`;
  fail(`${message}\nRun \`${help}\` to see the ${command === undefined ? 'commands' : 'options'}.`);
}

function oneOf<T extends string>(
  name: string,
  value: string | undefined,
  choices: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value))
    usage('serve', `--${name} must be one of ${choices.join(', ')}`);
  return value as T;
}

function integer(name: string, value: string | undefined, min: number, max: number): number | undefined {
  try {
    return integerFlag(name, value, min, max);
  } catch (error) {
    usage('serve', (error as Error).message);
  }
}

/** A flag in whole seconds, as milliseconds. */
function seconds(name: string, value: string | undefined): number | undefined {
  const given = integer(name, value, 1, 3600);
  return given === undefined ? undefined : given * 1000;
}

/** `{ [key]: value }` when a value was given, so that it does not override a config-file setting with undefined. */
function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

function webhookUrl(value: string): string {
  if (!isWebhookUrl(value)) usage('serve', `--alarm-webhook must be an http(s) URL, got "${value}"`);
  return value;
}

function credential(value: string): AccessKey {
  const colon = value.indexOf(':');
  const accessKeyId = value.slice(0, colon);
  const secretAccessKey = value.slice(colon + 1);
  if (colon < 0 || !ACCESS_KEY_ID.test(accessKeyId) || secretAccessKey === '')
    usage('serve', '--credentials must be ACCESS_KEY_ID:SECRET (the id letters, digits or underscores)');
  return { accessKeyId, secretAccessKey };
}

function metricsToken(value: string | undefined): string | undefined {
  if (value !== undefined && !isMetricsToken(value)) fail(`--metrics-token ${METRICS_TOKEN_RULE}`);
  return value;
}

function tlsFiles(
  cert: string | undefined,
  key: string | undefined,
): { cert: string; key: string } | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) usage('serve', '--tls-cert and --tls-key go together');
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
    usage('serve', usageMessage(error) ?? (error as Error).message);
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(`${SERVE_HELP}\n`);
    return;
  }
  const account = values.account;
  if (account !== undefined && !/^\d{12}$/.test(account)) usage('serve', '--account must be 12 digits');
  // A flag wins over a variable: --in-memory over the SLUICE_DATA the container image sets.
  const dataFlag = values.data ?? (values['in-memory'] ? undefined : environment('SLUICE_DATA'));
  const inMemory = values['in-memory'] === true || dataFlag === IN_MEMORY;
  if (inMemory && dataFlag !== undefined && dataFlag !== IN_MEMORY)
    usage('serve', '--in-memory keeps no data directory: leave out --data');
  if (inMemory && values.store !== undefined) usage('serve', '--in-memory and --store do not go together');
  if (inMemory && values.durability !== undefined)
    usage('serve', '--durability has no meaning with --in-memory: nothing is written to disk');
  if (inMemory && values['disk-reserve-bytes'] !== undefined)
    usage('serve', '--disk-reserve-bytes has no meaning with --in-memory: nothing is written to disk');
  const dataDir = inMemory ? IN_MEMORY : (dataFlag ?? './sluice-data');
  const insecureFromEnvironment = values.insecure === undefined && environmentSwitch('SLUICE_INSECURE');
  const durability = oneOf('durability', values.durability, DURABILITY) ?? 'durable';
  const logLevel = oneOf('log-level', values['log-level'], LOG_LEVELS);
  const logFormat = oneOf(
    'log-format',
    values['log-format'] ?? environment('SLUICE_LOG_FORMAT'),
    LOG_FORMATS,
  );
  const logger = createLogger(logLevel, logFormat);
  // Start, stop and a failed start are said whatever the level: they are what tools and people wait for.
  const lifecycle = logger.child({}, { level: 'info' });
  let sluice: Awaited<ReturnType<typeof startSluice>>;
  try {
    sluice = await startSluice({
      logger,
      port: integer('port', values.port, 0, 65535) ?? 9324,
      host: values.host ?? environment('SLUICE_HOST') ?? '127.0.0.1',
      dataDir,
      durability,
      diskReserveBytes: integer('disk-reserve-bytes', values['disk-reserve-bytes'], 0, 2 ** 50),
      storeUrl: values.store,
      storeConnections: integer('store-connections', values['store-connections'], 1, 1000),
      configFile: values.config,
      region: values.region,
      accountId: account,
      maxRequestBytes: integer('max-request-bytes', values['max-request-bytes'], 65_536, 1 << 30),
      redrive: {
        ...optional('defaultRate', integer('redrive-rate', values['redrive-rate'], 1, 500)),
        ...optional('backlogLimit', integer('redrive-backlog', values['redrive-backlog'], 0, 1e9)),
      },
      alarms: { webhooks: (values['alarm-webhook'] ?? []).map(webhookUrl) },
      auditRetention: {
        ...optional('days', integer('audit-retention-days', values['audit-retention-days'], 1, 36_500)),
        ...optional('maxEntries', integer('audit-max-entries', values['audit-max-entries'], 1, 1e7)),
      },
      limits: {
        ...optional('maxQueues', integer('max-queues', values['max-queues'], 1, 1e9)),
        ...optional('maxStoredBytes', integer('max-stored-bytes', values['max-stored-bytes'], 1, 2 ** 50)),
        ...optional('maxInFlightStandard', integer('max-in-flight', values['max-in-flight'], 1, 1e9)),
        ...optional('maxInFlightFifo', integer('max-in-flight-fifo', values['max-in-flight-fifo'], 1, 1e9)),
      },
      longPolls: {
        ...optional('total', integer('max-long-polls', values['max-long-polls'], 1, 1e9)),
        ...optional(
          'perAddress',
          integer('max-long-polls-per-address', values['max-long-polls-per-address'], 1, 1e9),
        ),
        ...optional(
          'perConnection',
          integer('max-long-polls-per-connection', values['max-long-polls-per-connection'], 1, 1e9),
        ),
      },
      maxBufferedBytes: integer('max-buffered-bytes', values['max-buffered-bytes'], 65_536, 2 ** 40),
      maxResponseBytes: integer('max-response-bytes', values['max-response-bytes'], 65_536, 2 ** 40),
      connections: {
        ...optional(
          'perAddress',
          integer('max-connections-per-address', values['max-connections-per-address'], 1, 1e9),
        ),
        ...optional('headersTimeoutMs', seconds('headers-timeout', values['headers-timeout'])),
        ...optional('keepAliveTimeoutMs', seconds('keep-alive-timeout', values['keep-alive-timeout'])),
        ...optional('sendTimeoutMs', seconds('send-timeout', values['send-timeout'])),
      },
      credentials: (values.credentials ?? []).map(credential),
      insecure: values.insecure ?? insecureFromEnvironment,
      corsOrigins: values['cors-origin'] ?? [],
      allowedHosts: values['allow-host'] ?? [],
      tls: tlsFiles(values['tls-cert'], values['tls-key']),
      metrics: !values['no-metrics'],
      metricsToken: metricsToken(values['metrics-token']),
      strictReceiptHandles: values['strict-receipt-handles'] ?? false,
      testClock: values['test-clock'] ?? false,
    });
  } catch (error) {
    lifecycle.fatal(`cannot start: ${(error as Error).message}`);
    process.exit(2);
  }
  // Before the listening line: whoever reads it may signal at once, and an unhandled SIGTERM kills outright.
  const shutdown = (reason: string) => {
    lifecycle.info(`${reason}, shutting down`);
    sluice.close().then(
      () => process.exit(0),
      (error: unknown) => {
        lifecycle.fatal({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  if (!values['outlive-parent']) watchParent((parent) => shutdown(`parent process ${parent} exited`));
  lifecycle.info(
    `listening on ${sluice.endpoint} (${
      values.store !== undefined
        ? `store: ${withoutPassword(values.store)}`
        : inMemory
          ? 'in memory: nothing is kept when it stops'
          : `data: ${dataDir}, durability: ${durability}`
    })`,
  );
  lifecycle.info(`console at ${consoleUrl(sluice.endpoint)}`);
  if (insecureFromEnvironment)
    lifecycle.warn(
      '--insecure is on (SLUICE_INSECURE in the environment): without credentials, anyone who can reach the port can use every queue',
    );
}

/** Where a person on this machine opens the console: a browser cannot open a wildcard bind address. */
function consoleUrl(endpoint: string): string {
  const url = new URL('/console', endpoint);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  else if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.href;
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
      'in-memory': { type: 'boolean' },
      store: { type: 'string' },
      'store-connections': { type: 'string' },
      durability: { type: 'string' },
      'disk-reserve-bytes': { type: 'string' },
      config: { type: 'string' },
      region: { type: 'string' },
      account: { type: 'string' },
      'log-level': { type: 'string' },
      'log-format': { type: 'string' },
      'max-request-bytes': { type: 'string' },
      'redrive-rate': { type: 'string' },
      'redrive-backlog': { type: 'string' },
      'alarm-webhook': { type: 'string', multiple: true },
      'audit-retention-days': { type: 'string' },
      'audit-max-entries': { type: 'string' },
      credentials: { type: 'string', multiple: true },
      'max-queues': { type: 'string' },
      'max-stored-bytes': { type: 'string' },
      'max-in-flight': { type: 'string' },
      'max-in-flight-fifo': { type: 'string' },
      'max-long-polls': { type: 'string' },
      'max-long-polls-per-connection': { type: 'string' },
      'max-long-polls-per-address': { type: 'string' },
      'max-connections-per-address': { type: 'string' },
      'max-buffered-bytes': { type: 'string' },
      'max-response-bytes': { type: 'string' },
      'headers-timeout': { type: 'string' },
      'keep-alive-timeout': { type: 'string' },
      'send-timeout': { type: 'string' },
      insecure: { type: 'boolean' },
      'cors-origin': { type: 'string', multiple: true },
      'allow-host': { type: 'string', multiple: true },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'no-metrics': { type: 'boolean' },
      'metrics-token': { type: 'string' },
      'strict-receipt-handles': { type: 'boolean' },
      'test-clock': { type: 'boolean' },
      'outlive-parent': { type: 'boolean' },
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
    case 'audit':
      return runAudit(rest);
    case 'dlq':
      return runDlq(rest);
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
      usage(undefined, `unknown command "${command}"`);
  }
}

async function runRedrive(args: string[]): Promise<void> {
  try {
    // Loaded only for this command: the AWS SDK would add about 18 MiB and 100 ms to every `sluice serve`.
    const { redrive } = await import('./redrive.ts');
    // Exit now: the SDK's idle keep-alive sockets would otherwise hold the process a while.
    process.exit(await redrive(args));
  } catch (error) {
    const mistake = usageMessage(error);
    if (mistake !== undefined) usage('redrive', mistake);
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
    const mistake = usageMessage(error);
    if (mistake !== undefined) usage('stats', mistake);
    process.stderr.write(`sluice stats: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

async function runAudit(args: string[]): Promise<void> {
  try {
    process.exitCode = await audit(
      args,
      (text) => process.stdout.write(text),
      (text) => process.stderr.write(text),
    );
  } catch (error) {
    const mistake = usageMessage(error);
    if (mistake !== undefined) usage('audit', mistake);
    process.stderr.write(`sluice audit: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

async function runDlq(args: string[]): Promise<void> {
  try {
    process.exitCode = await dlq(args);
  } catch (error) {
    const mistake = usageMessage(error);
    if (mistake !== undefined) usage('dlq', safeText(mistake));
    process.stderr.write(`sluice dlq: ${safeText((error as Error).message)}\n`);
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
