import { type Clock, settle, type Timer, type TimerOptions } from '#toolkit/clock';

/** The longest single advance: more than any SQS period (14 days of retention, a 36-hour move task). */
export const MAX_ADVANCE_MS = 366 * 24 * 60 * 60 * 1000;

interface PendingTimer {
  at: number;
  order: number;
  fn: () => unknown;
  periodic: boolean;
  handle: NodeJS.Timeout | undefined;
}

/**
 * The clock of `sluice serve --test-clock`: real time plus an offset that only grows. Between advances it runs
 * on as the system clock does, each timer on a real timeout; an advance moves it forward at once. Timers the
 * advance passes fire in time order, each at its own time, so a chain of them (a move task's paced steps)
 * runs as it would have over that time; periodic work (sweeps, DLQ alarm checks, history samples) runs once,
 * at the end, as after a machine wakes from sleep, so a long advance costs no more than a short one.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  private readonly timers = new Set<PendingTimer>();
  /** Work that timers fired on real time started and has not finished: an advance waits for it first. */
  private readonly running = new Set<Promise<void>>();
  private order = 0;
  private advancing: Promise<void> = Promise.resolve();

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** How far ahead of real time the advances have put the clock. */
  get advancedMs(): number {
    return this.offsetMs;
  }

  setTimer(ms: number, fn: () => unknown, options?: TimerOptions): Timer {
    const timer: PendingTimer = {
      at: this.now() + Math.max(0, ms),
      order: this.order++,
      fn,
      periodic: options?.periodic === true,
      handle: undefined,
    };
    this.timers.add(timer);
    this.arm(timer);
    return {
      cancel: () => {
        this.timers.delete(timer);
        clearTimeout(timer.handle);
      },
    };
  }

  /**
   * Moves the clock `ms` forward and fires the timers it passes, waiting for the work each one starts (the
   * promise its callback returns) before the next. Advances run one after the other.
   */
  advance(ms: number): Promise<void> {
    if (!(ms >= 0 && ms <= MAX_ADVANCE_MS))
      throw new RangeError(`an advance must be 0 to ${MAX_ADVANCE_MS} ms`);
    const done = this.advancing.then(() => this.moveForward(ms));
    this.advancing = done.catch(() => {});
    return done;
  }

  private async moveForward(ms: number): Promise<void> {
    // The offset grows by exactly `ms`; real time spent firing timers passes on top, as it would anyway.
    const offsetAfter = this.offsetMs + ms;
    for (;;) {
      // Work under way may set timers the advance must pass (a move task's step sets its next).
      await settle();
      while (this.running.size > 0) {
        await Promise.all(this.running);
        await settle();
      }
      const end = Date.now() + offsetAfter;
      const due = this.nextDue(end);
      if (!due) break;
      // Never backwards: real time may already have passed the timer's deadline.
      this.offsetMs = Math.max(this.offsetMs, (due.periodic ? end : due.at) - Date.now());
      const started = this.fire(due);
      if (started instanceof Promise) await started.catch(() => {});
    }
    this.offsetMs = offsetAfter;
    // The timers left are nearer in real time now.
    for (const timer of this.timers) this.arm(timer);
  }

  /** The one-off timer due first by `end`, else the first periodic one: periodic work waits for the end. */
  private nextDue(end: number): PendingTimer | undefined {
    let next: PendingTimer | undefined;
    for (const timer of this.timers) {
      if (timer.at > end) continue;
      if (
        !next ||
        (next.periodic && !timer.periodic) ||
        (next.periodic === timer.periodic &&
          (timer.at < next.at || (timer.at === next.at && timer.order < next.order)))
      )
        next = timer;
    }
    return next;
  }

  private fire(timer: PendingTimer): unknown {
    if (!this.timers.delete(timer)) return undefined;
    clearTimeout(timer.handle);
    return timer.fn();
  }

  /** A real timeout for the time left; one that wakes early (a delay past Node's maximum) arms again. */
  private arm(timer: PendingTimer): void {
    clearTimeout(timer.handle);
    timer.handle = setTimeout(
      () => {
        if (timer.at > this.now()) {
          this.arm(timer);
          return;
        }
        const started = this.fire(timer);
        if (!(started instanceof Promise)) return;
        const done: Promise<void> = started.then(
          () => void this.running.delete(done),
          () => void this.running.delete(done),
        );
        this.running.add(done);
      },
      Math.min(MAX_TIMEOUT_MS, Math.max(0, timer.at - this.now())),
    );
  }
}

/** setTimeout's longest delay; a longer one fires at once. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
