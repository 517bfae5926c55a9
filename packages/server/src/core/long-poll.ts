import type { Clock, Timer } from '#toolkit/clock';

interface Waiter {
  attempt: () => Promise<number>;
  finish: () => void;
  busy: boolean;
  timedOut: boolean;
}

interface QueueWaiters {
  waiters: Waiter[];
  /** A wake came while every waiter was busy: the next one to come back empty tries again. */
  missedWake: boolean;
  timer: Timer | undefined;
  timerAt: number;
}

/**
 * Long polling without a polling loop. A receive that found nothing waits here; it is woken when a
 * message may have become visible (a send, a ChangeMessageVisibility to 0) or at the time the next
 * invisible message becomes visible (delay end, visibility timeout). Wakes go to one waiter at a time,
 * oldest first, and pass on to the next only while the woken one found messages, so one send does not
 * wake a hundred receivers for one message.
 */
export class LongPoll {
  private readonly queues = new Map<number, QueueWaiters>();

  constructor(private readonly clock: Clock) {}

  /**
   * Runs `attempt` (the receive itself) now and again whenever woken, until it returns a non-zero count,
   * `waitMs` passes or `signal` aborts. Registering before the first attempt means a send that lands
   * during that attempt still wakes this waiter. An attempt under way when time runs out is let finish,
   * so messages it claimed are returned, not stranded in flight.
   */
  wait(
    queueId: number,
    waitMs: number,
    signal: AbortSignal | undefined,
    attempt: () => Promise<number>,
  ): Promise<void> {
    return new Promise<void>((resolve) => {
      const entry = this.entry(queueId);
      let done = false;
      const waiter: Waiter = {
        attempt,
        busy: false,
        timedOut: false,
        finish: () => {
          if (done) return;
          if (waiter.busy) {
            waiter.timedOut = true;
            return;
          }
          done = true;
          deadline.cancel();
          signal?.removeEventListener('abort', waiter.finish);
          entry.waiters = entry.waiters.filter((w) => w !== waiter);
          this.release(queueId, entry);
          resolve();
        },
      };
      const deadline = this.clock.setTimer(waitMs, waiter.finish);
      signal?.addEventListener('abort', waiter.finish, { once: true });
      entry.waiters.push(waiter);
      if (signal?.aborted) waiter.finish();
      else this.run(queueId, entry, waiter);
    });
  }

  /** Whether anyone waits on the queue (callers skip work such as next-visible look-ups otherwise). */
  hasWaiters(queueId: number): boolean {
    return (this.queues.get(queueId)?.waiters.length ?? 0) > 0;
  }

  /** Receives waiting now, on every queue. */
  waiting(): number {
    let count = 0;
    for (const entry of this.queues.values()) count += entry.waiters.length;
    return count;
  }

  /** Messages may be visible now. */
  notify(queueId: number): void {
    const entry = this.queues.get(queueId);
    if (!entry) return;
    const waiter = entry.waiters.find((w) => !w.busy && !w.timedOut);
    if (waiter) this.run(queueId, entry, waiter);
    else entry.missedWake = true;
  }

  /** Messages of any queue may be visible now (a wake from another node that names no queue). */
  notifyAll(): void {
    for (const queueId of [...this.queues.keys()]) this.notify(queueId);
  }

  private run(queueId: number, entry: QueueWaiters, waiter: Waiter): void {
    waiter.busy = true;
    entry.missedWake = false;
    waiter.attempt().then(
      (count) => {
        waiter.busy = false;
        if (count > 0) {
          waiter.finish();
          this.notify(queueId);
          return;
        }
        if (waiter.timedOut) waiter.finish();
        if (entry.missedWake) this.notify(queueId);
      },
      () => {
        // A failed attempt (store error) ends the wait empty rather than leaving the caller hanging.
        waiter.busy = false;
        waiter.finish();
      },
    );
  }

  /** A message becomes visible at `at`: wake waiters then. Keeps only the earliest such time per queue. */
  notifyAt(queueId: number, at: number): void {
    const entry = this.queues.get(queueId);
    if (!entry || entry.waiters.length === 0) return;
    if (entry.timer && entry.timerAt <= at) return;
    entry.timer?.cancel();
    entry.timerAt = at;
    entry.timer = this.clock.setTimer(at - this.clock.now(), () => {
      entry.timer = undefined;
      this.notify(queueId);
    });
  }

  /** Ends every wait at once (server shutdown); each returns empty. */
  closeAll(): void {
    for (const entry of this.queues.values()) for (const waiter of [...entry.waiters]) waiter.finish();
  }

  private entry(queueId: number): QueueWaiters {
    let entry = this.queues.get(queueId);
    if (!entry) {
      entry = { waiters: [], missedWake: false, timer: undefined, timerAt: 0 };
      this.queues.set(queueId, entry);
    }
    return entry;
  }

  private release(queueId: number, entry: QueueWaiters): void {
    if (entry.waiters.length > 0) return;
    entry.timer?.cancel();
    this.queues.delete(queueId);
  }
}
