import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../core/clock.ts';
import { startRetentionSweeper } from '../core/retention.ts';
import { SqsService } from '../core/sqs-service.ts';
import type { Store } from '../store/contract.ts';
import { type Durability, SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { applyConfig, readConfigFile } from './config-file.ts';
import { createHttpServer } from './http-server.ts';
import { createLogger, type Logger, type LogLevel } from './logger.ts';

/** How long a shutdown waits for requests under way before cutting their connections. */
const SHUTDOWN_DRAIN_MS = 10_000;

export interface SluiceOptions {
  /** Default 9324 (ElasticMQ's, so existing local setups keep working). 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: a queue is not exposed to the network unless asked. */
  host?: string;
  /** Data directory of the SQLite store. Default ./sluice-data. */
  dataDir?: string;
  durability?: Durability;
  accountId?: string;
  region?: string;
  configFile?: string;
  logLevel?: LogLevel;
  maxRequestBytes?: number;
  clock?: Clock;
  /** Use this store instead of opening SQLite in dataDir (tests, other backends). */
  store?: Store;
  logger?: Logger;
}

export interface RunningSluice {
  /** http://host:port */
  readonly endpoint: string;
  readonly service: SqsService;
  /** Stops accepting requests, ends long polls, lets requests under way finish, closes the store. */
  close(): Promise<void>;
}

export async function startSluice(options: SluiceOptions = {}): Promise<RunningSluice> {
  const logger = options.logger ?? createLogger(options.logLevel);
  const dataDir = options.dataDir ?? './sluice-data';
  const store = options.store ?? new SqliteStore({ dataDir, durability: options.durability ?? 'durable' });
  const service = new SqsService({
    store,
    clock: options.clock ?? systemClock,
    accountId: options.accountId,
    region: options.region,
  });
  const host = options.host ?? '127.0.0.1';
  const server = createHttpServer({ service, logger, maxRequestBytes: options.maxRequestBytes });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 9324, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (options.configFile) {
    await applyConfig(service, readConfigFile(options.configFile), {
      baseUrl: endpoint,
      senderId: service.accountId,
    });
  }
  const sweeper = startRetentionSweeper(service, (error) =>
    logger.error({ err: error }, 'retention sweep failed'),
  );
  let closing: Promise<void> | undefined;
  return {
    endpoint,
    service,
    close() {
      closing ??= (async () => {
        sweeper.stop();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        service.longPoll.closeAll();
        // Keep-alive connections become idle as their last answers go out; close each as soon as it does,
        // and cut whatever is left after the drain deadline.
        const idleSweep = setInterval(() => server.closeIdleConnections(), 20);
        const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_DRAIN_MS);
        server.closeIdleConnections();
        await closed;
        clearInterval(idleSweep);
        clearTimeout(deadline);
        await store.close();
      })();
      return closing;
    },
  };
}
