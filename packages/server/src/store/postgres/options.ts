/**
 * Opening the PostgreSQL store: its options and defaults, apart from the driver so that the package's types
 * and the serve flags (on the embedded store too) need no pg.
 */

/** Connections a node keeps at most, unless told otherwise (`--store-connections`). */
export const DEFAULT_MAX_CONNECTIONS = 10;

/** Where the database is and how this node uses it (PostgresStoreOptions). */
export interface ConnectionOptions {
  /** postgres://user[:password]@host[:port]/database, as libpq and every PostgreSQL tool take it. */
  connectionString: string;
  /** Connections this node keeps at most (each statement in flight holds one); DEFAULT_MAX_CONNECTIONS if not given. */
  maxConnections?: number;
  /**
   * How often long polls try again without a wake from another node, in case a notification was lost
   * (the listening connection dropped). Default 5000 ms.
   */
  fallbackWakeMs?: number;
}
