/**
 * Connections a node keeps at most, unless told otherwise (`--store-connections`). A module of its own, so
 * the serve flags state the default without loading the PostgreSQL driver on the embedded store.
 */
export const DEFAULT_MAX_CONNECTIONS = 10;
