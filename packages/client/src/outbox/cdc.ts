import type pg from 'pg';
import { type Clock, systemClock, type Timer } from '../clock.ts';
import { loadOptionalPeer } from '../optional-peer.ts';
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
  /** Pause before reopening the dedicated connection after it dropped. Default 1000 ms. */
  reconnectMs?: number;
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
  private readonly clock: Clock;
  private readonly reconnectMs: number;
  private listener: pg.Client | undefined;
  private running = false;
  private reconnectTimer: Timer | undefined;
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
    this.clock = options.clock ?? systemClock;
    this.reconnectMs = options.reconnectMs ?? 1000;
    this.relay = new OutboxRelay({ ...options, pollIntervalMs: options.catchUpIntervalMs ?? 5000 });
  }

  async start(): Promise<void> {
    if (this.running) return;
    await this.connect();
    this.running = true;
    this.relay.start();
  }

  /** Stops following and the catch-up pass; the slot stays, so changes made meanwhile are kept for the next start. */
  async stop(): Promise<void> {
    this.running = false;
    this.reconnectTimer?.cancel();
    const listener = this.listener;
    this.listener = undefined;
    await this.following;
    await this.relay.stop();
    await listener?.end();
  }

  private async newClient(): Promise<pg.Client> {
    const { Client } = (await loadOptionalPeer('pg', 'PostgresCdcRelay', () => import('pg'))).default;
    return new Client(this.connection);
  }

  /** Opens the dedicated connection: creates the slot if missing, LISTENs, and reads what the slot holds. */
  private async connect(reconnecting = false): Promise<void> {
    const listener = await this.newClient();
    listener.on('error', (error) => {
      this.onError(error);
      this.lost(listener);
    });
    listener.on('end', () => this.lost(listener));
    await listener.connect();
    try {
      await listener.query(
        `SELECT pg_create_logical_replication_slot($1, 'test_decoding')
         WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`,
        [this.slotName],
      );
      listener.on('notification', () => this.wake());
      await listener.query(`LISTEN ${this.channel}`);
    } catch (error) {
      await listener.end().catch(() => {});
      throw error;
    }
    if (reconnecting && !this.running) {
      // stop() ran while this connection was being reopened.
      await listener.end();
      return;
    }
    this.listener = listener;
    this.wake();
  }

  /** The connection died: the catch-up pass keeps publishing while it is reopened every `reconnectMs`. */
  private lost(listener: pg.Client): void {
    if (this.listener !== listener) return;
    this.listener = undefined;
    const retry = () => {
      if (!this.running) return;
      this.reconnectTimer = this.clock.setTimer(this.reconnectMs, () =>
        this.connect(true).catch((error) => {
          this.onError(error);
          retry();
        }),
      );
    };
    retry();
  }

  /**
   * Drops the replication slot. A slot nobody reads makes PostgreSQL keep WAL without limit, so drop it when
   * a relay is retired for good.
   */
  async dropSlot(): Promise<void> {
    const client = await this.newClient();
    // Ended by the database meanwhile, the statement fails on its own; the event must not end the process.
    client.on('error', () => {});
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
