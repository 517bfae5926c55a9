import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type StoreCondition, StoreUnavailableError } from '../contract.ts';
import { type ConnectionOptions, DEFAULT_MAX_CONNECTIONS } from './options.ts';
import { MIGRATIONS } from './schema.ts';

/** The statement runner of a transaction or of the pool (a single statement is atomic on its own). */
export interface Db {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/**
 * Runs one statement as a named prepared statement: each connection parses and plans it once. The name is
 * derived from the text, so the same text always shares one name.
 */
export function run<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: Db,
  text: string,
  values: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  return db.query<R>({ name: statementName(text), text, values });
}

const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `sluice_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name;
}

/** How long `condition()` waits for the database to answer before calling it unreachable. */
const HEALTH_TIMEOUT_MS = 3000;

/** The channel on which nodes announce that a queue may have visible messages; payload "node:queueId". */
const WAKE_CHANNEL = 'sluice_wake';

/** pg_advisory_xact_lock key under which nodes starting together take turns to migrate. */
export const MIGRATION_LOCK = 7_405_931_001;
/** Deadlocks (two transactions locking groups in opposite orders) and serialization failures: run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 5;

/** BIGINT (int8) columns hold epoch milliseconds and seqs, all well inside Number's exact range. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/**
 * The PostgreSQL store's plumbing: the pool and its transactions (run again after a deadlock), the
 * migrations, the LISTEN connection that hears other nodes' wakes, and the database's "cannot work now"
 * errors made StoreUnavailableError.
 */
export class PostgresConnection {
  readonly pool: pg.Pool;
  readonly ready: Promise<void>;
  /** Tells this node's own notifications apart from other nodes'. */
  private readonly nodeId = randomUUID();
  private readonly connectionString: string;
  private readonly fallbackWakeMs: number;
  private listener: pg.Client | undefined;
  private fallbackTimer: NodeJS.Timeout | undefined;
  private wake: ((queueId: number | undefined) => void) | undefined;
  private closed = false;
  /** Statements and transactions under way, and who waits for there to be none (tests on a fake clock). */
  private busy = 0;
  private drained: Array<() => void> = [];
  /** Single statements outside a transaction, counted in `busy`. */
  readonly direct: Db = {
    query: (config) =>
      this.track(async () => {
        const client = await this.connect();
        try {
          const result = await client.query(config);
          client.release();
          return result;
        } catch (error) {
          // As pool.query does: a connection whose statement failed is not reused.
          client.release(true);
          throw error;
        }
      }),
  };
  constructor(options: ConnectionOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      types,
    });
    // A connection the database ends (a restart, a failover, pg_terminate_backend) makes its client emit
    // 'error', and an 'error' event nobody listens to ends the process. The pool listens only while a client
    // is idle (this handler); from checkout to release, inside a transaction or between two of its statements,
    // nobody does. So every client listens for its whole life: the statement in flight, or the next one, fails
    // on its own (as StoreUnavailableError), and a client that failed is released broken, never reused.
    this.pool.on('error', () => {});
    this.pool.on('connect', (client) => client.on('error', () => {}));
    this.connectionString = options.connectionString;
    this.fallbackWakeMs = options.fallbackWakeMs ?? 5000;
    this.ready = this.migrate();
  }

  onRemoteWake(wake: (queueId: number | undefined) => void): void {
    this.wake = wake;
    if (!this.listener) void this.listen();
    this.fallbackTimer ??= setInterval(() => this.wake?.(undefined), this.fallbackWakeMs);
    this.fallbackTimer.unref();
  }

  /**
   * One connection LISTENs for the other nodes' wakes. When it drops it is opened again, and every queue
   * is woken, as notifications sent meanwhile are lost.
   */
  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    this.listener = client;
    const reconnect = () => {
      if (this.closed || this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => {});
      setTimeout(() => {
        if (this.closed) return;
        void this.listen().then(() => this.wake?.(undefined));
      }, 500).unref();
    };
    client.on('error', reconnect);
    client.on('end', reconnect);
    client.on('notification', ({ payload }) => {
      const [node, queue] = (payload ?? '').split(':');
      if (node !== this.nodeId) this.wake?.(Number(queue));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WAKE_CHANNEL}`);
      // Closed while connecting.
      if (this.closed) await client.end();
    } catch {
      reconnect();
    }
  }

  /** Tells the other nodes, when the transaction commits, that these queues may have visible messages. */
  async announce(db: Db, queueIds: Iterable<number>): Promise<void> {
    for (const queueId of new Set(queueIds))
      await run(db, 'SELECT pg_notify($1, $2)', [WAKE_CHANNEL, `${this.nodeId}:${queueId}`]);
  }

  /** The channel and payload of a wake of `queueId`, for a statement that notifies on its own. */
  wakeOf(queueId: number): [channel: string, payload: string] {
    return [WAKE_CHANNEL, `${this.nodeId}:${queueId}`];
  }

  private async migrate(): Promise<void> {
    await this.transaction(async (db) => {
      await run(db, 'SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await run(
        db,
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      );
      const { rows } = await run<{ version: number }>(
        db,
        'SELECT coalesce(max(version), 0) AS version FROM schema_migrations',
      );
      for (let version = rows[0]!.version; version < MIGRATIONS.length; version++) {
        await db.query({ text: MIGRATIONS[version]! });
        await run(db, 'INSERT INTO schema_migrations (version) VALUES ($1)', [version + 1]);
      }
    });
  }
  /** Unreachable when a trivial query gets no answer within HEALTH_TIMEOUT_MS (refused, or no reply). */
  async condition(): Promise<StoreCondition | undefined> {
    const answered = this.pool.query('SELECT 1').then(
      () => true,
      () => false,
    );
    const late = sleep(HEALTH_TIMEOUT_MS, false, { ref: false });
    return (await Promise.race([answered, late])) ? undefined : 'store unreachable';
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.fallbackTimer);
    this.wake = undefined;
    await this.listener?.end().catch(() => {});
    await this.pool.end();
  }

  /** Resolves when no statement is under way; true when it had to wait for some. */
  async idle(): Promise<boolean> {
    if (this.busy === 0) return false;
    while (this.busy > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
    return true;
  }

  /** Runs `work` counted in `busy`; the database's "cannot work now" errors become StoreUnavailableError. */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.busy++;
    try {
      return await work();
    } catch (error) {
      throw unavailableOrSelf(error);
    } finally {
      if (--this.busy === 0) for (const resolve of this.drained.splice(0)) resolve();
    }
  }

  /** A connection of the pool; failing to get one (refused, dropped, not allowed) means unreachable. */
  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw new StoreUnavailableError('unreachable', { cause: error });
    }
  }

  /** Runs `work` in one transaction on one connection; again from the start after a deadlock. */
  transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.track(() => this.runTransaction(work));
  }

  private async runTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const value = await work(client);
        await client.query('COMMIT');
        return value;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        if (attempt < MAX_ATTEMPTS && RETRYABLE.has((error as { code?: string }).code ?? '')) continue;
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }
}

/** SQLSTATEs of a database that cannot work now, by class (two characters) or in full. */
const UNAVAILABLE_STATES: ReadonlyArray<readonly [string, StoreUnavailableError['reason']]> = [
  ['53100', 'full'], // disk_full
  ['25006', 'read-only'], // read_only_sql_transaction: a read-only database, or a standby after failover
  ['58030', 'io'], // io_error
  ['08', 'unreachable'], // connection exceptions
  ['57P01', 'unreachable'], // admin_shutdown
  ['57P02', 'unreachable'], // crash_shutdown
  ['57P03', 'unreachable'], // cannot_connect_now (starting up, recovering)
  ['53300', 'unreachable'], // too_many_connections
];

/** The socket errors of a connection to a database server that is gone or cannot be reached. */
const UNREACHABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's and the network's "cannot work now" errors (disk full, read-only, I/O, connection lost)
 * become the store's StoreUnavailableError, so the server answers 503 as it does for SQLite; any other
 * error (a bug, a constraint) stays as it is.
 */
function unavailableOrSelf(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    const state = UNAVAILABLE_STATES.find(([prefix]) => code.startsWith(prefix));
    if (state) return new StoreUnavailableError(state[1], { cause: error });
    if (UNREACHABLE_SOCKET_CODES.has(code)) return new StoreUnavailableError('unreachable', { cause: error });
  }
  // node-postgres's own errors carry no code: a connection that ended under a statement, or before one
  // (the client's connection failed or ended between two statements of a transaction).
  if (
    /^Connection terminated|^Client has encountered a connection error|^Client was closed/.test(error.message)
  )
    return new StoreUnavailableError('unreachable', { cause: error });
  return error;
}
