/** One processed-key record, as the idempotency stores keep it. */
export interface IdempotencyRecord {
  status: 'in-progress' | 'completed';
  /** The handler's result as JSON (completed records); undefined when it returned nothing. */
  result: string | undefined;
  /** Epoch ms: an in-progress lock frees itself then (a crashed worker), a completed record's TTL ends then. */
  expiresAt: number;
}

/**
 * Where `idempotent` keeps its records. Every state change is one conditional statement, so two workers (or
 * two processes) never both claim a key; `token` names the claim, so a worker whose lock expired cannot
 * complete or release the claim of the worker that took the key over.
 */
export interface IdempotencyStore {
  /**
   * The conditional insert: records `key` as in progress under `token` until `expiresAt`, unless a record
   * that is still live at `now` exists. Resolves to undefined when this call claimed the key, else to the
   * live record.
   */
  claim(key: string, token: string, now: number, expiresAt: number): Promise<IdempotencyRecord | undefined>;
  /** Marks the claim completed with its result until `expiresAt` (the TTL). False if the claim was lost. */
  complete(key: string, token: string, result: string | undefined, expiresAt: number): Promise<boolean>;
  /** Removes the claim (the handler failed), so a retry can run. False if the claim was lost. */
  release(key: string, token: string): Promise<boolean>;
  /** Deletes records expired at `now`; returns how many. A claim replaces an expired record anyway. */
  purgeExpired(now: number): Promise<number>;
}

/** A stored row as both stores select it (PostgreSQL returns BIGINT as a string). */
export interface RecordRow {
  status: IdempotencyRecord['status'];
  result: string | null;
  expires_at: number | string;
}

export function recordFromRow(row: RecordRow | undefined): IdempotencyRecord | undefined {
  return row && { status: row.status, result: row.result ?? undefined, expiresAt: Number(row.expires_at) };
}

/** Table names go into SQL text, so only plain identifiers (optionally schema-qualified) are accepted. */
export function checkTableName(table: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/.test(table)) {
    throw new RangeError(`invalid table name for the idempotency store: ${table}`);
  }
  return table;
}

/** Bounds the claim-then-read race: a record that blocked the claim may be released or expire before the read. */
const CLAIM_ATTEMPTS = 5;

/**
 * A store's claim: `insert` is the conditional insert (true when it took the key), `read` the record that
 * blocked it. A record gone or expired by the time it is read means the key is free again: claim again.
 */
export async function claimOrRead(
  key: string,
  now: number,
  insert: () => Promise<boolean>,
  read: () => Promise<IdempotencyRecord | undefined>,
): Promise<IdempotencyRecord | undefined> {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    if (await insert()) return undefined;
    const record = await read();
    if (record && record.expiresAt > now) return record;
  }
  throw new Error(`idempotency key ${key}: could not claim nor read it in ${CLAIM_ATTEMPTS} attempts`);
}
