import type { Clock } from '#toolkit/clock';
import type { AuditRetention } from '../core/audit-trail.ts';
import type { AlarmSettings } from '../core/dlq-alarms.ts';
import type { CapacityLimits } from '../core/limits.ts';
import type { MoveTaskSettings } from '../core/move-tasks.ts';
import type { Store } from '../store/contract.ts';
import type { Durability } from '../store/sqlite/options.ts';
import type { AccessKey } from './auth/access.ts';
import type { ConnectionLimits } from './connections.ts';
import type { LogFormat, Logger, LogLevel } from './logger.ts';
import type { LongPollCaps } from './long-poll-gate.ts';

/**
 * What `startSluice` takes. Each setting that `sluice serve` has a flag for is one row of `serve-flags.ts`,
 * which states its default once (the server applies the same); the settings below without a default there
 * take none.
 */
export interface SluiceOptions {
  /** 0 picks a free port; the default is ElasticMQ's, so existing local setups keep working. */
  port?: number;
  /** Loopback by default: a queue is not exposed to the network unless asked. */
  host?: string;
  /** Data directory of the SQLite store; `:memory:` keeps everything in memory. */
  dataDir?: string;
  durability?: Durability;
  /** Bytes the SQLite store holds back in its data directory to recover from a full disk. */
  diskReserveBytes?: number;
  accountId?: string;
  region?: string;
  configFile?: string;
  logLevel?: LogLevel;
  /** The log's lines: a line a person reads, or one JSON object; on stderr. Not with `logger`. */
  logFormat?: LogFormat;
  maxRequestBytes?: number;
  clock?: Clock;
  /**
   * Test mode: the server's clock starts at real time, runs on by itself, and moves forward when a test asks
   * (`POST /_sluice/clock/advance`); `POST /_sluice/reset` forgets every queue. Loopback hosts and the SQLite
   * store only; not with `clock`.
   */
  testClock?: boolean;
  /** Use this store instead of opening SQLite in dataDir (tests, other backends). */
  store?: Store;
  /**
   * postgres://user[:password]@host[:port]/database: keep the queues in this PostgreSQL database instead of
   * SQLite, shared with every other node started on it. The schema is created and migrated at start.
   */
  storeUrl?: string;
  /** Connections this node opens to PostgreSQL at most, besides one for LISTEN. */
  storeConnections?: number;
  logger?: Logger;
  /** Move tasks started without MaxNumberOfMessagesPerSecond (the config file's "redrive" can set these too). */
  redrive?: Partial<MoveTaskSettings>;
  /** DLQ alarms (the config file's "alarms" can set these too). */
  alarms?: Partial<AlarmSettings> & { webhooks?: string[]; topics?: string[] };
  /** How long and how many audit entries are kept. */
  auditRetention?: Partial<AuditRetention>;
  /** Access keys; with any (here or in the config file), every request must be SigV4-signed by one. */
  credentials?: AccessKey[];
  /** Allow a non-loopback host without credentials (an open queue on the network). */
  insecure?: boolean;
  /** PEM certificate chain and key: serve HTTPS. */
  tls?: { cert: string; key: string };
  /** In-flight limits (SQS's by default) and caps on queues and stored bytes (none by default). */
  limits?: Partial<CapacityLimits>;
  /** Caps on concurrent long polls per connection, per client address and in total. */
  longPolls?: Partial<LongPollCaps>;
  /** Request body bytes held at once; past it new bodies get 503 (by default a share of the memory). */
  maxBufferedBytes?: number;
  /** Message bytes ReceiveMessage answers hold at once; past it receives wait (by default a share of the memory). */
  maxResponseBytes?: number;
  /** Connection and request timeouts, and the cap on connections per client address. */
  connections?: Partial<ConnectionLimits>;
  /** On by default. false: no /metrics and no per-request counters or histograms (their cost is benched). */
  metrics?: boolean;
  /** Origins (`http(s)://host[:port]`) whose web pages may call the API, with CORS; by default none. */
  corsOrigins?: string[];
  /**
   * Host header names accepted besides loopback names and addresses and the bound address. The Host check
   * guards against DNS rebinding; it is off on a non-loopback host with credentials unless names are given.
   */
  allowedHosts?: string[];
  /**
   * `Authorization: Bearer TOKEN` opens /metrics (the config file's "metricsToken" can set it too). With it or
   * with credentials, /metrics needs it or a key without limits; with neither, /metrics is open.
   */
  metricsToken?: string;
  /**
   * Standard queues refuse a stale receipt handle (superseded by a later receive, or its visibility timeout
   * lapsed) with ReceiptHandleIsInvalid instead of honouring it as SQS does; the config file's per-queue
   * `strictReceiptHandles` wins over this.
   */
  strictReceiptHandles?: boolean;
  /**
   * Refuse SNS deliveries into queues whose policy does not let the topic send (as AWS does, even in one
   * account); by default they are delivered, with a warning in the log.
   */
  strictPolicies?: boolean;
  /**
   * Where event source mappings invoke their functions: the base URL of a Lambda Invoke API
   * (`POST {URL}/2015-03-31/functions/{FunctionName}/invocations`), e.g. `sam local start-lambda`'s. Without
   * it (here or in the config file) mappings are kept but not polled.
   */
  lambdaEndpoint?: string;
  /**
   * `--sns-http-allow`: the only endpoints SNS's HTTP/HTTPS subscriptions may reach (host names, `*.domain`,
   * CIDR blocks); link-local and metadata addresses are refused whatever it says.
   */
  snsHttpAllow?: string[];
  /**
   * `--sns-http-ca`: a PEM file of CA certificates HTTPS endpoints may chain to, besides Node's public roots
   * (a private CA's, a dev server's). The endpoint's certificate is verified whatever is given.
   */
  snsHttpCa?: string;
  /** How long an invocation may take before it counts as a function error (default 3 s, Lambda's). */
  lambdaTimeoutSeconds?: number;
}
