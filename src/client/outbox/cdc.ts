import pg from 'pg';
import { checkTableName } from './message.ts';
import type { PostgresOutbox } from './postgres.ts';
import { OutboxRelay, type OutboxRelayOptions } from './relay.ts';

export interface PostgresCdcRelayOptions extends Omit<OutboxRelayOptions, 'outbox' | 'pollIntervalMs'> {
  outbox: PostgresOutbox;
  /** A connection of its own for LISTEN and the slot (a pool's clients come and go). Needs REPLICATION rights. */
  connection: string | pg.ClientConfig;
  /** The logical replication slot (test_decoding), created if missing. Default `<table>_relay`. */
  slotName?: string;
  /** The table's schema, as test_decoding names it. Default `public`. */
  schema?: string;
  /**
   * Period of the catch-up pass over the table, which publishes rows written before the slot existed or
   * while the relay was down, and retries rows SQS refused. Default 5000 ms.
   */
  catchUpIntervalMs?: number;
  /** Changes read from the slot per call. Default 1000. */
  changesPerRead?: number;
}

/**
 * A relay for the PostgreSQL outbox that follows a logical replication slot instead of polling the table:
 * `outbox.add` NOTIFYs on commit, the relay wakes, reads the committed INSERTs from the slot with
 * pg_logical_slot_get_changes (test_decoding), and publishes those rows through the same claim, publish
 * and mark steps as OutboxRelay. Reading the slot consumes the changes, so a relay that dies right after
 * leaves rows unsent in the table: the catch-up pass (at start and every `catchUpIntervalMs`) sends them.
 * Only one relay may read a slot at a time; give each CDC relay its own slot (the claim keeps them from
 * publishing a row twice at once).
 */
export class PostgresCdcRelay {
  readonly slotName: string;
  private readonly relay: OutboxRelay;
  private readonly connection: string | pg.ClientConfig;
  private readonly channel: string;
  private readonly insertPrefix: string;
  private readonly changesPerRead: number;
  private readonly onError: (error: unknown) => void;
  private listener: pg.Client | undefined;
  private following: Promise<void> | undefined;
  private wokenWhileFollowing = false;

  constructor(options: PostgresCdcRelayOptions) {
    const table = options.outbox.table;
    this.slotName = checkTableName(options.slotName ?? `${table}_relay`);
    this.connection = options.connection;
    this.channel = options.outbox.channel;
    this.insertPrefix = `table ${checkTableName(options.schema ?? 'public')}.${table}: INSERT: id[bigint]:`;
    this.changesPerRead = options.changesPerRead ?? 1000;
    this.onError = (error) => options.hooks?.error?.(error);
    this.relay = new OutboxRelay({ ...options, pollIntervalMs: options.catchUpIntervalMs ?? 5000 });
  }

  async start(): Promise<void> {
    if (this.listener) return;
    const listener = new pg.Client(this.connection);
    await listener.connect();
    listener.on('error', this.onError);
    await listener.query(
      `SELECT pg_create_logical_replication_slot($1, 'test_decoding')
       WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`,
      [this.slotName],
    );
    listener.on('notification', () => this.wake());
    await listener.query(`LISTEN ${this.channel}`);
    this.listener = listener;
    this.relay.start();
    this.wake();
  }

  /** Stops following and the catch-up pass; the slot stays, so changes made meanwhile are kept for the next start. */
  async stop(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    await this.following;
    await this.relay.stop();
    await listener?.end();
  }

  /**
   * Drops the replication slot. A slot nobody reads makes PostgreSQL keep WAL without limit, so drop it when
   * a relay is retired for good.
   */
  async dropSlot(): Promise<void> {
    const client = new pg.Client(this.connection);
    await client.connect();
    try {
      await client.query(
        'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1',
        [this.slotName],
      );
    } finally {
      await client.end();
    }
  }

  /** A commit was NOTIFYed: read the slot now, or once more after the read under way. */
  private wake(): void {
    if (this.following) {
      this.wokenWhileFollowing = true;
      return;
    }
    this.following = (async () => {
      do {
        this.wokenWhileFollowing = false;
        await this.follow().catch(this.onError);
      } while (this.wokenWhileFollowing && this.listener);
      this.following = undefined;
    })();
  }

  private async follow(): Promise<void> {
    for (;;) {
      const listener = this.listener;
      if (!listener) return;
      const { rows } = await listener.query<{ data: string }>(
        `SELECT data FROM pg_logical_slot_get_changes($1, NULL, $2, 'include-xids', '0', 'skip-empty-xacts', '1')`,
        [this.slotName, this.changesPerRead],
      );
      const ids = rows.flatMap(({ data }) => {
        if (!data.startsWith(this.insertPrefix)) return [];
        const id = /^\d+/.exec(data.slice(this.insertPrefix.length));
        return id ? [id[0]] : [];
      });
      await this.relay.publishIds(ids);
      if (rows.length < this.changesPerRead) return;
    }
  }
}
