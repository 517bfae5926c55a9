import { totalmem } from 'node:os';
import type { Clock, Timer } from '#toolkit/clock';

/** Takes of at most this many bytes are small: they may use the reserve above the capacity. */
export const SMALL_TAKE_BYTES = 64 * 1024;

const MiB = 2 ** 20;

/** The machine's memory, or the container's limit if lower. */
function memoryBytes(): number {
  return Math.min(totalmem(), process.constrainedMemory?.() || Number.POSITIVE_INFINITY);
}

/**
 * Default of the budget of request bodies: 1/64 of the memory, between 16 and 64 MiB, so a small container
 * still reads a few large requests at once and a large machine does not let clients grow the heap by
 * gigabytes.
 */
export function defaultBodyBudgetBytes(): number {
  return Math.min(64 * MiB, Math.max(16 * MiB, Math.floor(memoryBytes() / 64)));
}

/**
 * Default of the budget of message bytes in answers: 1/1024 of the memory, between 4 and 16 MiB. Each
 * such byte is held about three times over (the rows read, the rendered answer, the bytes written) and
 * leaves as much garbage; measured, a larger budget did not serve large receives faster, it only let more
 * of them hold memory at once.
 */
export function defaultAnswerBudgetBytes(): number {
  return Math.min(16 * MiB, Math.max(4 * MiB, Math.floor(memoryBytes() / 1024)));
}

interface Waiter {
  bytes: number;
  grant: (granted: boolean) => void;
}

/**
 * A server-wide bound on bytes held at once (request bodies being read, or message bytes in answers being
 * built and sent). Large takes fit within `capacity`; small ones (SMALL_TAKE_BYTES or less) may also use a
 * reserve of a quarter more, so that clients holding large bodies or answers cannot starve small requests.
 * Takes that wait are granted oldest first, and a large take does not pass a waiting one.
 */
export class ByteBudget {
  private held = 0;
  private readonly waiters: Waiter[] = [];

  constructor(
    readonly capacity: number,
    private readonly clock: Clock,
  ) {}

  /** Bytes held now. */
  get heldBytes(): number {
    return this.held;
  }

  /** Bytes takes of `bytes` each could still take now. */
  freeFor(bytes: number): number {
    if (bytes > SMALL_TAKE_BYTES && this.waiters.length > 0) return 0;
    if (this.held === 0) return Number.POSITIVE_INFINITY;
    return Math.max(0, this.limitFor(bytes) - this.held);
  }

  /** Takes `bytes` if they fit now; false otherwise (nothing taken). */
  tryTake(bytes: number): boolean {
    if (bytes > SMALL_TAKE_BYTES && this.waiters.length > 0) return false;
    if (!this.fits(bytes)) return false;
    this.held += bytes;
    return true;
  }

  /**
   * Takes `bytes` once they fit, oldest waiter first: resolves true when taken, false if `waitMs` passes or
   * `signal` aborts first (nothing taken).
   */
  waitFor(bytes: number, waitMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.tryTake(bytes)) return Promise.resolve(true);
    if (waitMs <= 0 || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      let timer: Timer | undefined;
      const waiter: Waiter = {
        bytes,
        grant: (granted) => {
          timer?.cancel();
          signal?.removeEventListener('abort', giveUp);
          resolve(granted);
        },
      };
      const giveUp = () => {
        const index = this.waiters.indexOf(waiter);
        if (index < 0) return;
        this.waiters.splice(index, 1);
        waiter.grant(false);
        // The one that gave up may have held back smaller ones behind it.
        this.grantWaiters();
      };
      timer = this.clock.setTimer(waitMs, giveUp);
      signal?.addEventListener('abort', giveUp, { once: true });
      this.waiters.push(waiter);
    });
  }

  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
    this.grantWaiters();
  }

  private limitFor(bytes: number): number {
    return bytes <= SMALL_TAKE_BYTES ? this.capacity * 1.25 : this.capacity;
  }

  private fits(bytes: number): boolean {
    // An empty budget takes anything, so one take larger than the capacity is slow, never refused forever.
    return this.held === 0 || this.held + bytes <= this.limitFor(bytes);
  }

  private grantWaiters(): void {
    for (let head = this.waiters[0]; head && this.fits(head.bytes); head = this.waiters[0]) {
      this.waiters.shift();
      this.held += head.bytes;
      head.grant(true);
    }
  }
}

/**
 * What one request holds of a budget, given back at once with `releaseAll` when its answer is sent or its
 * connection closes; after that it takes nothing more. Bytes a wait was granted are kept as credit for the
 * takes that follow it.
 */
export class BudgetShare {
  private taken = 0;
  private credit = 0;
  private released = false;

  constructor(private readonly budget: ByteBudget) {}

  fits(count: number, messageBytes: number): number {
    const free = this.credit + this.budget.freeFor(messageBytes);
    return Math.max(1, Math.min(count, Math.floor(free / messageBytes)));
  }

  tryTake(bytes: number): boolean {
    if (this.released) return false;
    if (this.credit >= bytes) {
      this.credit -= bytes;
      return true;
    }
    if (!this.budget.tryTake(bytes)) return false;
    this.taken += bytes;
    return true;
  }

  /** Waits until `bytes` are granted (see ByteBudget.waitFor), giving back unused credit first. */
  async waitFor(wanted: number, waitMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.released) return false;
    this.releaseUnused();
    // More than the capacity would only fit in an empty budget.
    const bytes = Math.min(wanted, this.budget.capacity);
    const granted = await this.budget.waitFor(bytes, waitMs, signal);
    if (!granted) return false;
    if (this.released) {
      // Released while waiting: the answer is gone, and so is the need for room.
      this.budget.release(bytes);
      return false;
    }
    this.taken += bytes;
    this.credit = bytes;
    return true;
  }

  releaseUnused(): void {
    this.budget.release(this.credit);
    this.taken -= this.credit;
    this.credit = 0;
  }

  releaseAll(): void {
    this.released = true;
    this.budget.release(this.taken);
    this.taken = 0;
    this.credit = 0;
  }
}
