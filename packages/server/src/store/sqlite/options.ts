/**
 * Opening the SQLite store: its options and defaults, apart from the driver so that the package's types and
 * the serve flags need no better-sqlite3.
 */

/**
 * How much a write may risk for speed (docs/guide/durability.md has the table, as measured):
 * - `full`: every commit is fsynced (WAL, synchronous=FULL) before its requests are answered.
 * - `durable` (default): commits that could lose an acknowledged message or queue change (sends, queue
 *   changes, purges) are fsynced; commits of only receives, visibility changes, deletes and expiry are
 *   written to the WAL but fsynced with the next durable commit or checkpoint. A power cut can undo those,
 *   which at worst delivers a message again (at-least-once, as SQS) and never loses one; kill -9 undoes nothing.
 * - `normal`: nothing fsynced before the answer (synchronous=NORMAL); survives kill -9, a power cut may lose
 *   the last acknowledged sends.
 * - `off`: no fsync at all (synchronous=OFF); survives kill -9, a power cut may corrupt recent data.
 */
export type Durability = 'full' | 'durable' | 'normal' | 'off';

/** The reserve is the default's 64 MiB: twice the WAL's size at a checkpoint (8,192 pages of 4 KiB). */
export const DEFAULT_DISK_RESERVE_BYTES = 64 * 1024 * 1024;
/** Sends and queue changes fsynced before the answer (docs/decisions/durable-default.md). */
export const DEFAULT_DURABILITY: Durability = 'durable';
/** The data directory that stands for no directory: everything in memory (`--in-memory`). */
export const IN_MEMORY = ':memory:';

/** Where the database lives and how much its writes risk (SqliteStoreOptions). */
export interface ConnectionOptions {
  /** Data directory; the database is `sluice.db` inside it. IN_MEMORY for a throwaway store (its messages held by memory/message-table.ts). */
  dataDir: string;
  durability?: Durability;
  /**
   * Bytes held back in the data directory (the file `sluice.reserve`) to recover from a full disk with. Default
   * 0, none; `sluice serve` passes DEFAULT_DISK_RESERVE_BYTES unless `--disk-reserve-bytes` says otherwise.
   */
  diskReserveBytes?: number;
}
