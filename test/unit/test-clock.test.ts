import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { repeatEvery, type Timer } from 'sluice-client/clock';
import { TestClock } from '../../packages/server/src/server/test-clock.ts';

/** Resolves with the clock's time when the timer fires. */
function firing(clock: TestClock, ms: number): Promise<number> {
  return new Promise((resolve) => clock.setTimer(ms, () => resolve(clock.now())));
}

describe('TestClock (sluice serve --test-clock)', () => {
  it('starts at real time and runs on by itself', async () => {
    const clock = new TestClock();
    const before = Date.now();
    const first = clock.now();
    assert.ok(first >= before && first <= Date.now());
    assert.equal(clock.advancedMs, 0);
    // A short timer fires on its own, on real time.
    assert.ok((await firing(clock, 5)) >= first + 5);
  });

  it('moves forward by the advance, never back', async () => {
    const clock = new TestClock();
    const before = clock.now();
    await clock.advance(3_600_000);
    assert.ok(clock.now() >= before + 3_600_000);
    assert.equal(clock.advancedMs, 3_600_000);
    await clock.advance(0);
    assert.equal(clock.advancedMs, 3_600_000);
    assert.throws(() => clock.advance(-1), RangeError);
  });

  it('fires the one-off timers an advance passes in time order, each at its own time', async () => {
    const clock = new TestClock();
    const start = clock.now();
    const fired: Array<{ name: string; at: number }> = [];
    for (const [name, ms] of [
      ['third', 30_000],
      ['first', 10_000],
      ['second', 20_000],
    ] as const)
      clock.setTimer(ms, () => fired.push({ name, at: clock.now() - start }));
    const later = clock.setTimer(60_000, () => fired.push({ name: 'later', at: clock.now() - start }));
    await clock.advance(45_000);
    later.cancel();
    assert.deepEqual(
      fired.map((f) => f.name),
      ['first', 'second', 'third'],
    );
    // Each saw the clock at its own deadline (give or take the real time the advance took), not at the end.
    fired.forEach(({ at }, index) => {
      assert.ok(at >= (index + 1) * 10_000 && at < (index + 2) * 10_000, `fired at +${at} ms`);
    });
  });

  it('runs a chain of timers step by step through an advance (a move task at 10 steps a second)', async () => {
    const clock = new TestClock();
    let steps = 0;
    let next: Timer | undefined;
    const step = () => {
      steps++;
      next = clock.setTimer(100, step);
    };
    clock.setTimer(100, step);
    await clock.advance(1000);
    next?.cancel();
    // Ten steps fall within the second; real time spent between steps may push the last past it.
    assert.ok(steps >= 9 && steps <= 10, `${steps} steps`);
  });

  it('runs periodic work once per advance, at its end, however many periods it passes', async () => {
    const clock = new TestClock();
    const runs: number[] = [];
    const job = repeatEvery(
      clock,
      10_000,
      10_000,
      async () => {
        runs.push(clock.now());
      },
      (error) => assert.fail(String(error)),
    );
    const target = clock.now() + 24 * 3_600_000;
    await clock.advance(24 * 3_600_000);
    assert.equal(runs.length, 1);
    assert.ok(runs[0]! >= target);
    await clock.advance(10_000);
    assert.equal(runs.length, 2);
    await job.stop();
  });

  it('waits for the work a timer starts before it goes on', async () => {
    const clock = new TestClock();
    const order: string[] = [];
    clock.setTimer(1000, async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push('first finished');
    });
    clock.setTimer(2000, () => order.push('second started'));
    await clock.advance(5000);
    assert.deepEqual(order, ['first finished', 'second started']);
  });

  it('waits for work a timer started on real time, and passes the timers that work sets', async () => {
    const clock = new TestClock();
    let next: number | undefined;
    // A move task's first step: fired by its real timeout, still at work when the advance comes.
    clock.setTimer(0, async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      clock.setTimer(1000, () => (next = clock.now()));
    });
    await new Promise((resolve) => setImmediate(resolve));
    const periodicRuns: number[] = [];
    clock.setTimer(100, () => periodicRuns.push(clock.now()), { periodic: true });
    await clock.advance(5000);
    assert.notEqual(next, undefined, 'the step the work set fired within the advance');
    assert.equal(periodicRuns.length, 1);
    assert.ok(next! < periodicRuns[0]!, 'at its own time, before the periodic run at the end');
  });

  it('fires no cancelled timer', async () => {
    const clock = new TestClock();
    let fired = false;
    clock.setTimer(1000, () => (fired = true)).cancel();
    await clock.advance(5000);
    assert.equal(fired, false);
  });

  it('runs advances one after the other', async () => {
    const clock = new TestClock();
    const start = clock.now();
    const at = firing(clock, 1500);
    await Promise.all([clock.advance(1000), clock.advance(1000)]);
    assert.equal(clock.advancedMs, 2000);
    const fired = (await at) - start;
    assert.ok(fired >= 1500 && fired < 2000, `fired at +${fired} ms`);
  });

  it('brings the timers an advance did not reach nearer in real time', async () => {
    const clock = new TestClock();
    let fired = false;
    const timer = firing(clock, 60_000).then(() => {
      fired = true;
    });
    await clock.advance(59_980);
    assert.equal(fired, false);
    // 20 ms of real time are left, not a minute.
    await timer;
  });
});
