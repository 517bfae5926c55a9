import { readFileSync } from 'node:fs';
import { AUDIT_RETENTION_DEFAULTS } from '../core/audit-trail.ts';
import { MAPPING_LIMITS } from '../core/event-source/mapping-config.ts';
import { DEFAULT_CAPACITY } from '../core/limits.ts';
import { MOVE_TASK_DEFAULTS } from '../core/move-tasks.ts';
import { DEFAULT_ACCOUNT_ID, DEFAULT_REGION } from '../core/sqs-service.ts';
import { integerFlag, UsageError } from '../shared/command-flags.ts';
import { DEFAULT_MAX_CONNECTIONS } from '../store/postgres/options.ts';
import {
  DEFAULT_DISK_RESERVE_BYTES,
  DEFAULT_DURABILITY,
  type Durability,
  IN_MEMORY,
} from '../store/sqlite/options.ts';
import type { AccessKey } from './auth/access.ts';
import { ACCESS_KEY_ID, isMetricsToken, METRICS_TOKEN_RULE } from './config-file.ts';
import { CONNECTION_LIMIT_DEFAULTS } from './connections.ts';
import { DEFAULT_MAX_REQUEST_BYTES } from './http/front.ts';
import {
  DEFAULT_LOG_FORMAT,
  DEFAULT_LOG_LEVEL,
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFormat,
  type LogLevel,
} from './logger.ts';
import { LONG_POLL_CAP_DEFAULTS } from './long-poll-gate.ts';
import type { SluiceOptions } from './sluice-options.ts';
import { isWebhookUrl } from './webhooks.ts';

/**
 * `sluice serve`'s flags, one row each: the option, its value, default, environment variable, config-file
 * key and help. The command's parser and `--help` (cli/serve-args.ts), the options it passes to
 * `startSluice`, and the flag list of docs/guide/cli.md (scripts/serve-flags-doc.ts, checked by
 * test/unit/serve-flags.test.ts) are all made from it. A default is stated here once, or where a lower layer
 * applies it (a store, the core), which a row then names; `startSluice` applies the same.
 */

/** What `sluice serve` builds from its flags: the server's options, and the two that only the command reads. */
export interface ServeOptions extends SluiceOptions {
  /** Keep running when the parent process exits (cli/parent-watch.ts). */
  outliveParent?: boolean;
  /** Print the help and stop. */
  help?: boolean;
}

/** A value as parseArgs gives it: a switch's true, a value's text, a repeatable value's texts. */
export type GivenValue = string | boolean | string[];

export interface ServeFlag {
  /** Without its dashes: `port`. */
  readonly name: string;
  readonly short?: string;
  /** What the value is called (`N`, `DIR`); none for a switch. */
  readonly value?: string;
  /** Given more than once, each adds one. */
  readonly multiple: boolean;
  /** The environment variable read when the flag is not given (an empty value counts as unset). */
  readonly env?: string;
  /** Where the config file (--config) sets the same. */
  readonly configKey?: string;
  /** The default as the help and the docs say it; empty for none worth saying. */
  readonly defaultText: string;
  /** Markdown: `code`, and [links](page.md) that the help leaves out when parenthesised. */
  readonly help: string;
  /** Lines the help prints under the flag (what each choice means). */
  readonly more?: readonly string[];
  /** Checks a given value and sets it in the options; throws a UsageError naming the flag. */
  apply(options: ServeOptions, given: GivenValue): void;
}

interface Described {
  readonly help: string;
  readonly short?: string;
  readonly env?: string;
  readonly configKey?: string;
  readonly more?: readonly string[];
  /** The default in words, where it is not one value. */
  readonly defaultText?: string;
}

type Reader<T> = (text: string, flag: string) => T;
/** A row before the table names it; `flag` is its name with the dashes, for messages. */
type Row = Omit<ServeFlag, 'name' | 'apply'> & {
  apply(options: ServeOptions, given: GivenValue, flag: string): void;
};

/** A flag with one value. */
function single<T, D extends T | undefined = undefined>(
  spec: Described & {
    value: string;
    default?: D;
    /** Said after the default: `64 MiB`, `SQS's`. */
    defaultNote?: string;
    read: Reader<T>;
    set: (options: ServeOptions, value: T) => void;
  },
): Row & { readonly default: D } {
  const shown = spec.default === undefined ? undefined : `\`${String(spec.default)}\``;
  return {
    ...spec,
    default: spec.default as D,
    multiple: false,
    defaultText:
      spec.defaultText ?? (shown && spec.defaultNote ? `${shown} (${spec.defaultNote})` : (shown ?? '')),
    apply(options, given, flag) {
      spec.set(options, spec.read(given as string, flag));
    },
  };
}

/** A flag that may be given several times. */
function repeated<T>(
  spec: Described & { value: string; read: Reader<T>; set: (options: ServeOptions, values: T[]) => void },
): Row {
  return {
    ...spec,
    multiple: true,
    defaultText: spec.defaultText ?? 'none',
    apply(options, given, flag) {
      spec.set(
        options,
        (given as string[]).map((text) => spec.read(text, flag)),
      );
    },
  };
}

/** A flag without a value, off unless given. */
function toggle(spec: Described & { set: (options: ServeOptions) => void }): Row {
  return {
    ...spec,
    multiple: false,
    defaultText: spec.defaultText ?? 'off',
    apply(options) {
      spec.set(options);
    },
  };
}

const text: Reader<string> = (value) => value;

function integer(min: number, max: number): Reader<number> {
  return (value, flag) => integerFlag(flag.slice(2), value, min, max) as number;
}

/** Whole seconds, as milliseconds. */
const seconds: Reader<number> = (value, flag) => integer(1, 3600)(value, flag) * 1000;

function oneOf<T extends string>(choices: readonly T[]): Reader<T> {
  return (value, flag) => {
    if (!(choices as readonly string[]).includes(value))
      throw new UsageError(`${flag} must be one of ${choices.join(', ')}`);
    return value as T;
  };
}

const credential: Reader<AccessKey> = (value, flag) => {
  const colon = value.indexOf(':');
  const accessKeyId = value.slice(0, colon);
  const secretAccessKey = value.slice(colon + 1);
  if (colon < 0 || !ACCESS_KEY_ID.test(accessKeyId) || secretAccessKey === '')
    throw new UsageError(`${flag} must be ACCESS_KEY_ID:SECRET (the id letters, digits or underscores)`);
  return { accessKeyId, secretAccessKey };
};

const pemFile: Reader<string> = (file) => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read TLS files: ${(error as Error).message}`);
  }
};

/** The rows, keyed by flag name; each gets its name from its key. */
function flagTable<T extends Record<string, Row>>(
  rows: T,
): { readonly [K in keyof T]: Omit<T[K], 'apply'> & ServeFlag & { name: K } } {
  return Object.fromEntries(
    Object.entries(rows).map(([name, row]) => [
      name,
      {
        ...row,
        name,
        apply: (options: ServeOptions, given: GivenValue) => row.apply(options, given, `--${name}`),
      },
    ]),
  ) as { [K in keyof T]: Omit<T[K], 'apply'> & ServeFlag & { name: K } };
}

const DURABILITIES = ['full', 'durable', 'normal', 'off'] as const satisfies readonly Durability[];

export const SERVE_FLAGS = flagTable({
  port: single({
    value: 'N',
    default: 9324,
    read: integer(0, 65535),
    set: (o, v) => {
      o.port = v;
    },
    help: 'TCP port; `0` picks a free one',
  }),
  host: single({
    value: 'ADDR',
    default: '127.0.0.1',
    env: 'SLUICE_HOST',
    read: text,
    set: (o, v) => {
      o.host = v;
    },
    help: 'address to bind; anything but loopback (`0.0.0.0`) exposes the server and needs `--credentials` or `--insecure`',
  }),
  data: single({
    value: 'DIR',
    default: './sluice-data',
    env: 'SLUICE_DATA',
    read: text,
    set: (o, v) => {
      o.dataDir = v;
    },
    help: 'data directory of the embedded SQLite store (`DIR/sluice.db`); `:memory:` is `--in-memory`',
  }),
  'in-memory': toggle({
    set: (o) => {
      o.dataDir = IN_MEMORY;
    },
    help: 'keep everything in memory, nothing on disk: for tests and CI; queues and messages are gone when the server stops ([in memory](#in-memory---in-memory))',
  }),
  durability: single<Durability, Durability>({
    value: 'MODE',
    default: DEFAULT_DURABILITY,
    read: oneOf(DURABILITIES),
    set: (o, v) => {
      o.durability = v;
    },
    help: '`full`, `durable`, `normal` or `off`: which commits wait for an fsync; SQLite on disk only ([durability.md](durability.md))',
    more: [
      'full     every commit is fsynced before the answer',
      'durable  sends and queue changes are fsynced before the answer; receives,',
      '         visibility changes and deletes ride on the next fsync, so a power cut',
      '         can at worst redeliver a message, never lose an acknowledged one',
      'normal   fsynced at checkpoints; survives kill -9, a power cut may lose the',
      '         last acknowledged sends',
      'off      never fsynced; survives kill -9, a power cut may corrupt recent data',
    ],
  }),
  'disk-reserve-bytes': single({
    value: 'N',
    default: DEFAULT_DISK_RESERVE_BYTES,
    defaultNote: '64 MiB',
    read: integer(0, 2 ** 50),
    set: (o, v) => {
      o.diskReserveBytes = v;
    },
    help: 'space held back in the data directory (`sluice.reserve`), released when the disk fills so receives and deletes still work, taken back when space returns; sends are refused meanwhile; `0` holds none; SQLite on disk only ([durability.md](durability.md#full-disk))',
  }),
  store: single({
    value: 'URL',
    defaultText: 'SQLite',
    read: text,
    set: (o, v) => {
      o.storeUrl = v;
    },
    help: 'keep the queues in PostgreSQL instead: `postgres://user[:password]@host[:port]/db`; every node started on the same database serves the same queues, and `--data`, `--durability` do not apply',
  }),
  'store-connections': single({
    value: 'N',
    default: DEFAULT_MAX_CONNECTIONS,
    read: integer(1, 1000),
    set: (o, v) => {
      o.storeConnections = v;
    },
    help: 'PostgreSQL connections this node opens at most, plus one for `LISTEN` (1-1000)',
  }),
  config: single({
    value: 'FILE',
    defaultText: 'none',
    env: 'SLUICE_CONFIG',
    read: text,
    set: (o, v) => {
      o.configFile = v;
    },
    help: 'JSON file of queues, move-task and alarm settings and access keys, applied at every start ([config-file.md](config-file.md))',
  }),
  region: single({
    value: 'NAME',
    default: DEFAULT_REGION,
    read: text,
    set: (o, v) => {
      o.region = v;
    },
    help: 'region in queue ARNs',
  }),
  account: single({
    value: 'ID',
    default: DEFAULT_ACCOUNT_ID,
    read: (value, flag) => {
      if (!/^\d{12}$/.test(value)) throw new UsageError(`${flag} must be 12 digits`);
      return value;
    },
    set: (o, v) => {
      o.accountId = v;
    },
    help: '12-digit account id in queue URLs and ARNs',
  }),
  'log-level': single<LogLevel, LogLevel>({
    value: 'LEVEL',
    default: DEFAULT_LOG_LEVEL,
    read: oneOf(LOG_LEVELS),
    set: (o, v) => {
      o.logLevel = v;
    },
    help: '`fatal` `error` `warn` `info` `debug` `trace` `silent`; the start and stop lines are written at any level',
  }),
  'log-format': single<LogFormat, LogFormat>({
    value: 'F',
    default: DEFAULT_LOG_FORMAT,
    env: 'SLUICE_LOG_FORMAT',
    read: oneOf(LOG_FORMATS),
    set: (o, v) => {
      o.logFormat = v;
    },
    help: '`text` or `json`: every log line, on stderr, a line a person reads or one JSON object ([the log](#the-log))',
  }),
  'max-request-bytes': single({
    value: 'N',
    default: DEFAULT_MAX_REQUEST_BYTES,
    read: integer(65_536, 1 << 30),
    set: (o, v) => {
      o.maxRequestBytes = v;
    },
    help: 'largest request body accepted (65536 to 2^30); form encoding can triple a 1 MiB message',
  }),
  'redrive-rate': single({
    value: 'N',
    default: MOVE_TASK_DEFAULTS.defaultRate,
    configKey: 'redrive.defaultRate',
    read: integer(1, 500),
    set: (o, v) => {
      o.redrive = { ...o.redrive, defaultRate: v };
    },
    help: 'messages/s of a move task started without `MaxNumberOfMessagesPerSecond` (1-500)',
  }),
  'redrive-backlog': single({
    value: 'N',
    default: MOVE_TASK_DEFAULTS.backlogLimit,
    configKey: 'redrive.backlogLimit',
    read: integer(0, 1e9),
    set: (o, v) => {
      o.redrive = { ...o.redrive, backlogLimit: v };
    },
    help: 'such a task pauses while a destination holds N or more visible messages; `0` never pauses',
  }),
  'alarm-webhook': repeated({
    value: 'URL',
    configKey: 'alarms.webhooks',
    read: (value, flag) => {
      if (!isWebhookUrl(value)) throw new UsageError(`${flag} must be an http(s) URL, got "${value}"`);
      return value;
    },
    set: (o, v) => {
      o.alarms = { ...o.alarms, webhooks: v };
    },
    help: 'POST DLQ alarm notifications as JSON to this http(s) URL; repeat for several',
  }),
  'audit-retention-days': single({
    value: 'N',
    default: AUDIT_RETENTION_DEFAULTS.days,
    read: integer(1, 36_500),
    set: (o, v) => {
      o.auditRetention = { ...o.auditRetention, days: v };
    },
    help: 'audit entries older than N days are removed (1-36500; [the audit trail](dead-letter-queues.md#the-audit-trail))',
  }),
  'audit-max-entries': single({
    value: 'N',
    default: AUDIT_RETENTION_DEFAULTS.maxEntries,
    read: integer(1, 1e7),
    set: (o, v) => {
      o.auditRetention = { ...o.auditRetention, maxEntries: v };
    },
    help: 'only the newest N audit entries are kept (1-10,000,000)',
  }),
  credentials: repeated({
    value: 'ID:SECRET',
    defaultText: 'none: no checks',
    configKey: 'credentials',
    read: credential,
    set: (o, v) => {
      o.credentials = v;
    },
    help: 'accept requests SigV4-signed with this access key; repeat for several. With any key configured (here or in the config file), unsigned or wrongly signed requests fail, and the console asks to sign in with a key',
  }),
  'metrics-token': single({
    value: 'TOKEN',
    defaultText: '`/metrics` open without credentials',
    configKey: 'metricsToken',
    read: (value, flag) => {
      if (!isMetricsToken(value)) throw new UsageError(`${flag} ${METRICS_TOKEN_RULE}`);
      return value;
    },
    set: (o, v) => {
      o.metricsToken = v;
    },
    help: 'what a scraper sends as `Authorization: Bearer TOKEN` for `/metrics`; with it (or with credentials) `/metrics` is closed to others; 16-256 visible characters (in the config file it stays out of the process list; [metrics.md](../operations/metrics.md))',
  }),
  insecure: toggle({
    env: 'SLUICE_INSECURE',
    set: (o) => {
      o.insecure = true;
    },
    help: 'allow a non-loopback `--host` without credentials (logs a warning)',
  }),
  'cors-origin': repeated({
    value: 'ORIGIN',
    defaultText: 'no other origin',
    read: text,
    set: (o, v) => {
      o.corsOrigins = v;
    },
    help: 'let web pages of ORIGIN (e.g. `http://localhost:3000`) call the API from a browser; repeat for several ([network-safety.md](network-safety.md))',
  }),
  'allow-host': repeated({
    value: 'NAME',
    read: text,
    set: (o, v) => {
      o.allowedHosts = v;
    },
    help: 'accept requests whose `Host` header is NAME, besides loopback names and addresses and the bound address (a guard against DNS rebinding); repeat for several ([network-safety.md](network-safety.md))',
  }),
  'max-queues': single({
    value: 'N',
    defaultText: 'no cap',
    read: integer(1, 1e9),
    set: (o, v) => {
      o.limits = { ...o.limits, maxQueues: v };
    },
    help: 'refuse CreateQueue of a new name with `OverLimit` once the server holds N queues',
  }),
  'max-stored-bytes': single({
    value: 'N',
    defaultText: 'no cap',
    read: integer(1, 2 ** 50),
    set: (o, v) => {
      o.limits = { ...o.limits, maxStoredBytes: v };
    },
    help: 'refuse sends with `OverLimit` once the store takes N bytes on disk, its WAL and the audit trail included ([durability.md](durability.md#full-disk))',
  }),
  'max-in-flight': single({
    value: 'N',
    default: DEFAULT_CAPACITY.maxInFlightStandard,
    defaultNote: "SQS's",
    read: integer(1, 1e9),
    set: (o, v) => {
      o.limits = { ...o.limits, maxInFlightStandard: v };
    },
    help: 'in-flight messages per standard queue before receives get `OverLimit`',
  }),
  'max-in-flight-fifo': single({
    value: 'N',
    default: DEFAULT_CAPACITY.maxInFlightFifo,
    defaultNote: "SQS's",
    read: integer(1, 1e9),
    set: (o, v) => {
      o.limits = { ...o.limits, maxInFlightFifo: v };
    },
    help: 'the same per FIFO queue',
  }),
  'max-long-polls': single({
    value: 'N',
    default: LONG_POLL_CAP_DEFAULTS.total,
    read: integer(1, 1e9),
    set: (o, v) => {
      o.longPolls = { ...o.longPolls, total: v };
    },
    help: 'concurrent long polls on the server; past it a long poll is answered 503 at once',
  }),
  'max-long-polls-per-address': single({
    value: 'N',
    default: LONG_POLL_CAP_DEFAULTS.perAddress,
    read: integer(1, 1e9),
    set: (o, v) => {
      o.longPolls = { ...o.longPolls, perAddress: v };
    },
    help: 'the same per client address ([limits.md](limits.md))',
  }),
  'max-long-polls-per-connection': single({
    value: 'N',
    default: LONG_POLL_CAP_DEFAULTS.perConnection,
    read: integer(1, 1e9),
    set: (o, v) => {
      o.longPolls = { ...o.longPolls, perConnection: v };
    },
    help: 'the same per connection',
  }),
  'max-connections-per-address': single({
    value: 'N',
    default: CONNECTION_LIMIT_DEFAULTS.perAddress,
    read: integer(1, 1e9),
    set: (o, v) => {
      o.connections = { ...o.connections, perAddress: v };
    },
    help: 'open connections per client address; more are closed at once (raise it behind a proxy, whose address every client has)',
  }),
  'max-buffered-bytes': single({
    value: 'N',
    defaultText: '1/64 of the memory, 16-64 MiB',
    read: integer(65_536, 2 ** 40),
    set: (o, v) => {
      o.maxBufferedBytes = v;
    },
    help: 'request body bytes held at once; past it a new body gets 503 at once ([limits.md](limits.md))',
  }),
  'max-response-bytes': single({
    value: 'N',
    defaultText: '1/1024 of the memory, 4-16 MiB',
    read: integer(65_536, 2 ** 40),
    set: (o, v) => {
      o.maxResponseBytes = v;
    },
    help: 'message bytes ReceiveMessage answers hold at once; past it receives wait for room or return fewer messages',
  }),
  'headers-timeout': single({
    value: 'S',
    default: CONNECTION_LIMIT_DEFAULTS.headersTimeoutMs / 1000,
    read: seconds,
    set: (o, v) => {
      o.connections = { ...o.connections, headersTimeoutMs: v };
    },
    help: 'a connection must send its request headers within S seconds, also one that sends nothing (1-3600)',
  }),
  'keep-alive-timeout': single({
    value: 'S',
    default: CONNECTION_LIMIT_DEFAULTS.keepAliveTimeoutMs / 1000,
    read: seconds,
    set: (o, v) => {
      o.connections = { ...o.connections, keepAliveTimeoutMs: v };
    },
    help: 'an idle keep-alive connection is closed after S seconds (1-3600)',
  }),
  'send-timeout': single({
    value: 'S',
    default: CONNECTION_LIMIT_DEFAULTS.sendTimeoutMs / 1000,
    read: seconds,
    set: (o, v) => {
      o.connections = { ...o.connections, sendTimeoutMs: v };
    },
    help: 'an answer its client takes no bytes of for S seconds is cut off (1-3600)',
  }),
  'tls-cert': single({
    value: 'FILE',
    defaultText: 'plain HTTP',
    read: pemFile,
    set: (o, v) => {
      o.tls = { key: '', ...o.tls, cert: v };
    },
    help: 'PEM certificate chain: serve HTTPS (needs `--tls-key`)',
  }),
  'tls-key': single({
    value: 'FILE',
    read: pemFile,
    set: (o, v) => {
      o.tls = { cert: '', ...o.tls, key: v };
    },
    help: 'PEM private key of `--tls-cert`',
  }),
  'no-metrics': toggle({
    defaultText: 'metrics on',
    set: (o) => {
      o.metrics = false;
    },
    help: 'serve no `/metrics` and keep no per-request counters or latency histograms',
  }),
  'strict-receipt-handles': toggle({
    defaultText: 'off: stale handles honoured, as AWS',
    configKey: 'queues[].strictReceiptHandles',
    set: (o) => {
      o.strictReceiptHandles = true;
    },
    help: "standard queues refuse a stale receipt handle (superseded by a later receive, or its visibility timeout lapsed) with `ReceiptHandleIsInvalid`, counted in `/metrics`; a queue's `strictReceiptHandles` in the config file wins ([receipt-handles.md](receipt-handles.md))",
  }),
  'strict-policies': toggle({
    defaultText: 'off: delivered, with a WARN log line once per subscription',
    set: (o) => {
      o.strictPolicies = true;
    },
    help: "SNS deliveries into a queue whose policy does not allow the topic (`sqs:SendMessage` for `sns.amazonaws.com` with the topic as `aws:SourceArn`) are refused as on AWS: to the subscription's dead-letter queue, else dropped ([SNS topics](sns.md))",
  }),
  'sns-http-allow': repeated({
    value: 'HOST|CIDR',
    defaultText: 'any address but link-local and metadata ones',
    configKey: 'sns.httpAllow',
    read: text,
    set: (o, v) => {
      o.snsHttpAllow = v;
    },
    help: 'SNS HTTP/HTTPS subscriptions may reach only these endpoints: a host name, `*.example.com`, an address or a CIDR block (`10.0.0.0/8`); repeat for several. Link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10, fd00:ec2::254) are refused always ([SNS topics](sns.md#http-and-https-subscribers))',
  }),
  'sns-http-ca': single({
    value: 'FILE',
    defaultText: "Node's public roots (and `NODE_EXTRA_CA_CERTS`)",
    configKey: 'sns.httpCa',
    read: text,
    set: (o, v) => {
      o.snsHttpCa = v;
    },
    help: 'a PEM file of CA certificates that HTTPS subscription endpoints may also chain to (a private CA, a dev certificate); endpoint certificates are always verified, an untrusted one fails the delivery, which is retried ([SNS topics](sns.md#https-endpoints-and-certificates))',
  }),
  'lambda-endpoint': single({
    value: 'URL',
    defaultText: 'none',
    configKey: 'lambda.endpoint',
    read: text,
    set: (o, v) => {
      o.lambdaEndpoint = v;
    },
    help: 'where event source mappings invoke their functions: the Lambda Invoke API at `URL/2015-03-31/functions/NAME/invocations` (`sam local start-lambda`, an AWS Lambda base image, any HTTP handler); without it mappings are kept, not polled ([lambda.md](lambda.md))',
  }),
  'lambda-timeout': single({
    value: 'S',
    default: MAPPING_LIMITS.defaultFunctionTimeoutSeconds,
    configKey: 'lambda.functionTimeoutSeconds',
    read: integer(1, 900),
    set: (o, v) => {
      o.lambdaTimeoutSeconds = v;
    },
    help: "an invocation not answered within S seconds is a function error (1-900; Lambda's default function time-out)",
  }),
  'outlive-parent': toggle({
    defaultText: 'off: stop with npm',
    set: (o) => {
      o.outliveParent = true;
    },
    help: 'keep running when the npm that started the server (`npx sluice serve`, `npm start`) exits; by default it shuts down when that parent is gone, so a wrapper killed by SIGTERM or SIGKILL leaves no orphan holding the port (a server started otherwise, as `sluice serve &` from a shell, never watches its parent)',
  }),
  'test-clock': toggle({
    set: (o) => {
      o.testClock = true;
    },
    help: "test mode, for integration tests: the server's clock moves forward when a test asks (`POST /_sluice/clock/advance`), and `POST /_sluice/reset` forgets every queue; SQLite only; with access keys its endpoints take a signature ([testing-with-sluice.md](testing-with-sluice.md))",
  }),
  help: toggle({
    short: 'h',
    defaultText: '',
    set: (o) => {
      o.help = true;
    },
    help: 'the options',
  }),
});

/** The rows in the order the help and the docs list them. */
export const SERVE_FLAG_LIST: readonly ServeFlag[] = Object.values(SERVE_FLAGS);

/**
 * Rules between flags, checked before any is applied (a file is read only for a valid command line): `given`
 * are the flags on the command line, `fromEnvironment` the options the variables set (a variable, such as the
 * container's SLUICE_DATA, gives way to a flag instead of clashing with it).
 */
export function serveFlagClash(
  given: ReadonlyMap<string, GivenValue>,
  fromEnvironment: ServeOptions,
): string | undefined {
  const inMemory =
    given.has('in-memory') ||
    given.get('data') === IN_MEMORY ||
    (!given.has('data') && fromEnvironment.dataDir === IN_MEMORY);
  if (given.has('in-memory') && given.has('data') && given.get('data') !== IN_MEMORY)
    return '--in-memory keeps no data directory: leave out --data';
  if (inMemory && given.has('store')) return '--in-memory and --store do not go together';
  for (const disk of ['durability', 'disk-reserve-bytes'])
    if (inMemory && given.has(disk))
      return `--${disk} has no meaning with --in-memory: nothing is written to disk`;
  if (given.has('tls-cert') !== given.has('tls-key')) return '--tls-cert and --tls-key go together';
  return undefined;
}
