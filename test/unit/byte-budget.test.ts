import assert from 'node:assert/strict';
import { it } from 'node:test';
import { FakeClock } from 'sluice-client/clock';
import { BudgetShare, ByteBudget, SMALL_TAKE_BYTES } from '../../packages/server/src/server/byte-budget.ts';

const LARGE = 400_000;

it('takes large amounts up to the capacity, and small ones into a reserve of a quarter more', () => {
  const budget = new ByteBudget(1_000_000, new FakeClock());
  assert.ok(budget.tryTake(LARGE));
  assert.ok(budget.tryTake(LARGE));
  assert.equal(budget.tryTake(LARGE), false);
  // 800,000 held: small takes still fit, up to 1,250,000.
  for (let i = 0; i < 6; i++) assert.ok(budget.tryTake(SMALL_TAKE_BYTES), `small take ${i}`);
  assert.equal(budget.tryTake(SMALL_TAKE_BYTES), false);
  budget.release(LARGE + 6 * SMALL_TAKE_BYTES);
  assert.equal(budget.heldBytes, LARGE);
});

it('takes anything when empty, so a take larger than the capacity is never refused forever', () => {
  const budget = new ByteBudget(100_000, new FakeClock());
  assert.ok(budget.tryTake(LARGE));
  assert.equal(budget.tryTake(1), false);
});

it('grants waiters oldest first as room is released; a large take does not pass one', async () => {
  const clock = new FakeClock();
  const budget = new ByteBudget(1_000_000, clock);
  assert.ok(budget.tryTake(900_000));
  const granted: string[] = [];
  const first = budget.waitFor(LARGE, 10_000).then((ok) => ok && granted.push('first'));
  const second = budget.waitFor(LARGE, 10_000).then((ok) => ok && granted.push('second'));
  assert.equal(budget.tryTake(LARGE), false, 'a fresh large take went ahead of the waiters');
  assert.ok(budget.tryTake(SMALL_TAKE_BYTES), 'small takes still pass, into the reserve');
  budget.release(SMALL_TAKE_BYTES);
  budget.release(500_000);
  await clock.advance(0);
  assert.deepEqual(granted, ['first']);
  budget.release(400_000);
  await Promise.all([first, second]);
  assert.deepEqual(granted, ['first', 'second']);
  assert.equal(budget.heldBytes, 2 * LARGE);
});

it('a wait gives up at its time or on abort, taking nothing, and lets those behind it go', async () => {
  const clock = new FakeClock();
  const budget = new ByteBudget(1_000_000, clock);
  assert.ok(budget.tryTake(700_000));
  const timedOut = budget.waitFor(LARGE, 1_000);
  const aborted = new AbortController();
  const leaving = budget.waitFor(LARGE, 60_000, aborted.signal);
  const small = budget.waitFor(200_000, 60_000);
  await clock.advance(1_000);
  assert.equal(await timedOut, false);
  aborted.abort();
  assert.equal(await leaving, false);
  // The 200,000 fitted all along behind the larger waiters; it is granted once they have gone.
  assert.equal(await small, true);
  assert.equal(budget.heldBytes, 900_000);
  assert.equal(clock.pendingTimers(), 0);
});

it('a share gives back everything at once, keeps waited-for room as credit, and takes nothing after', async () => {
  const clock = new FakeClock();
  const budget = new ByteBudget(1_000_000, clock);
  const other = new BudgetShare(budget);
  assert.ok(other.tryTake(900_000));
  const share = new BudgetShare(budget);
  assert.equal(share.fits(10, 100_000), 1, 'at least one, so a receive still looks');
  const waited = share.waitFor(5_000_000, 10_000);
  other.releaseAll();
  assert.equal(await waited, true);
  // Capped at the capacity: the whole budget is set aside for this share.
  assert.equal(budget.heldBytes, 1_000_000);
  assert.equal(share.fits(10, 100_000), 10);
  assert.ok(share.tryTake(300_000));
  share.releaseUnused();
  assert.equal(budget.heldBytes, 300_000);
  share.releaseAll();
  assert.equal(budget.heldBytes, 0);
  assert.equal(share.tryTake(1), false);
  assert.equal(await share.waitFor(1, 1_000), false);
});
