/**
 * A plan is an algorithm written once for both stores, as a generator: at each step it hands out what a
 * store operation returned and is resumed with its answer. SQLite's operations answer at once and it runs a
 * plan to its end inside its synchronous transaction (`runNow`); PostgreSQL's answer with promises, awaited
 * inside its transaction (`runAwaiting`). The decisions are the plan's, the statements the store's.
 */

/** What a store operation gives a plan: its answer now (SQLite) or a promise of it (PostgreSQL). */
export type Answer<T> = T | Promise<T>;

/** A plan's run: steps out with operations' pending answers, is resumed with each answer, returns T. */
export type Plan<T> = Generator<unknown, T, unknown>;

/** One step of a plan: `const rows = yield* answer(steps.visible(...))` is `rows` however the store answers. */
export function* answer<T>(pending: Answer<T>): Plan<T> {
  return (yield pending) as T;
}

/** Runs a plan whose every operation answers at once. */
export function runNow<T>(plan: Plan<T>): T {
  let step = plan.next();
  while (!step.done) {
    if (step.value instanceof Promise) throw new Error('a synchronous store answered a plan with a promise');
    step = plan.next(step.value);
  }
  return step.value;
}

/** Runs a plan whose operations answer with promises, one after the other. */
export async function runAwaiting<T>(plan: Plan<T>): Promise<T> {
  let step = plan.next();
  while (!step.done) step = plan.next(await step.value);
  return step.value;
}
