import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../clock.ts';
import type { IdempotencyStore } from './store.ts';

export interface IdempotencyOptions<Args extends unknown[]> {
  store: IdempotencyStore;
  /**
   * The idempotency key of a call. For SQS messages prefer a business key from the body (an order id) to
   * the MessageId: a producer that sends the same thing twice makes two MessageIds.
   */
  key: (...args: Args) => string;
  /** How long a completed key's result is kept and returned to duplicates. Default 3600 (1 hour). */
  ttlSeconds?: number;
  /**
   * How long an in-progress record blocks duplicates before it frees itself (a crashed worker never
   * completes nor releases it). Must exceed the handler's longest run, or a duplicate may run alongside.
   * Default 300.
   */
  inProgressExpirySeconds?: number;
  clock?: Clock;
  /**
   * Called when recording the outcome fails after the handler ran: `complete` (the result is still returned,
   * so the message is deleted rather than redone; the lock expires later) or `release` (the handler's error is
   * still thrown; the lock expires later). Default: a process warning.
   */
  onStoreError?: (error: unknown, key: string, phase: 'complete' | 'release') => void;
}

/**
 * A duplicate arrived while the first call with its key is still running. Thrown to the caller (for the
 * Consumer, a failed delivery), so the duplicate comes back later and then gets the stored result.
 */
export class IdempotencyInProgressError extends Error {
  override readonly name = 'IdempotencyInProgressError';
  constructor(
    readonly key: string,
    /** Epoch ms when the in-progress lock frees itself if its worker never finishes. */
    readonly lockExpiresAt: number,
  ) {
    super(`idempotency key ${key} is being processed (lock until ${new Date(lockExpiresAt).toISOString()})`);
  }
}

/**
 * Wraps `handler` so that each key runs once per TTL: the first call claims the key (a conditional insert
 * of an in-progress record), runs, and stores its result as JSON; a later call with a completed key returns
 * that stored result without running; a call while the key is in progress throws IdempotencyInProgressError;
 * a failed run removes its claim so a retry can run. Results must survive JSON (a Date comes back a string).
 */
export function idempotent<Args extends unknown[], Result>(
  handler: (...args: Args) => Promise<Result>,
  options: IdempotencyOptions<Args>,
): (...args: Args) => Promise<Result> {
  const clock = options.clock ?? systemClock;
  const ttlMs = positiveSeconds('ttlSeconds', options.ttlSeconds ?? 3600) * 1000;
  const lockMs = positiveSeconds('inProgressExpirySeconds', options.inProgressExpirySeconds ?? 300) * 1000;
  const { store } = options;
  const onStoreError =
    options.onStoreError ??
    ((error: unknown, key: string, phase: string) =>
      process.emitWarning(
        `idempotency store failed to ${phase} key ${key}: ${String(error)}`,
        'IdempotencyWarning',
      ));
  return async (...args: Args): Promise<Result> => {
    const key = options.key(...args);
    const token = randomUUID();
    const now = clock.now();
    const existing = await store.claim(key, token, now, now + lockMs);
    if (existing?.status === 'completed') {
      return (existing.result === undefined ? undefined : JSON.parse(existing.result)) as Result;
    }
    if (existing) throw new IdempotencyInProgressError(key, existing.expiresAt);
    let result: Result;
    try {
      result = await handler(...args);
    } catch (error) {
      await store
        .release(key, token)
        .catch((storeError: unknown) => onStoreError(storeError, key, 'release'));
      throw error;
    }
    // A lost claim (the lock expired and another worker took the key) is not an error of this call: its
    // work is done; the other worker's record stands. A failed write is not either: throwing would make the
    // message come back and, once the lock expired, redo the work.
    // JSON.stringify runs inside the promise so that a result it cannot serialize (a BigInt, a cycle) is
    // reported the same way.
    await Promise.resolve()
      .then(() => store.complete(key, token, JSON.stringify(result), clock.now() + ttlMs))
      .catch((storeError: unknown) => onStoreError(storeError, key, 'complete'));
    return result;
  };
}

function positiveSeconds(name: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number`);
  return value;
}
