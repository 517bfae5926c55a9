/**
 * All time in Sluice goes through a Clock, so visibility, delay, retention, purge windows and long
 * polling can be tested by advancing a FakeClock instead of sleeping.
 */
export interface Timer {
  cancel(): void;
}

export interface TimerOptions {
  /**
   * The timer is one run of periodic work that looks at the state as it is (a sweep, a check, a sample). A
   * clock moved forward by a long step (`sluice serve --test-clock`) runs it once, at the end of the step,
   * instead of once for every period the step passes.
   */
  periodic?: boolean;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Runs `fn` once `ms` milliseconds from now have passed on this clock. When `fn` returns a promise (work
   * the timer starts, like a move task's step), a FakeClock lets it finish before time moves on.
   */
  setTimer(ms: number, fn: () => unknown, options?: TimerOptions): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  },
};

export interface PeriodicJob {
  /** No new run starts; resolves once a run under way has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `run` after `firstDelayMs`, then again `periodMs` after each run ends (runs never overlap). A failed
 * run goes to `onError` and the job carries on. The timer callback returns the run, so a FakeClock waits
 * for it before moving on.
 */
export function repeatEvery(
  clock: Clock,
  firstDelayMs: number,
  periodMs: number,
  run: () => Promise<void>,
  onError: (error: unknown) => void,
): PeriodicJob {
  let timer: Timer | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = clock.setTimer(
      delayMs,
      () => {
        running = run()
          .catch(onError)
          .finally(() => {
            running = undefined;
            schedule(periodMs);
          });
        return running;
      },
      { periodic: true },
    );
  };
  schedule(firstDelayMs);
  return {
    async stop() {
      stopped = true;
      timer?.cancel();
      await running;
    },
  };
}

interface PendingTimer {
  at: number;
  order: number;
  fn: () => unknown;
  cancelled: boolean;
}

/**
 * A clock that only moves when told to; timers fire in time order as it passes them, periodic ones at every
 * period too, so a test sees each run.
 */
export class FakeClock implements Clock {
  private current: number;
  private timers: PendingTimer[] = [];
  private order = 0;

  /**
   * `idle` resolves once a store's work under way is done, with whether there was any: a store that talks to a
   * server over the network (PostgreSQL) finishes its work in real time, which the immediates `settle` waits
   * for do not cover.
   */
  constructor(
    start = Date.UTC(2026, 0, 1),
    private readonly idle?: () => Promise<boolean>,
  ) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => unknown): Timer {
    const timer: PendingTimer = {
      at: this.current + Math.max(0, ms),
      order: this.order++,
      fn,
      cancelled: false,
    };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /**
   * Moves time forward by `ms`, firing due timers in order; awaits pending promise work between timers, and
   * the promise a timer's callback returns.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await this.settle();
      this.timers = this.timers.filter((t) => !t.cancelled);
      const due = this.timers
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (!due) break;
      this.current = Math.max(this.current, due.at);
      due.cancelled = true;
      const started = due.fn();
      if (started instanceof Promise) await started.catch(() => {});
    }
    this.current = target;
    await this.settle();
  }

  private async settle(): Promise<void> {
    await settle();
    // Work that finished may have started more (a woken long poll's receive): settle until none is left.
    while (this.idle && (await this.idle())) await settle();
  }

  /** Number of timers still waiting (lets tests check that nothing is left behind). */
  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}

/** Lets already-scheduled promise callbacks and immediates run (store group commits use setImmediate). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
