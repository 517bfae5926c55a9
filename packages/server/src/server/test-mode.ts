import { errors } from '../core/errors.ts';
import type { LongPoll } from '../core/long-poll.ts';
import type { QueueActivity } from '../core/queue-activity.ts';
import type { QueueCounts } from '../core/queue-counts.ts';
import { parseJsonObject } from '../shared/json-object.ts';
import type { Store } from '../store/contract.ts';
import { json } from './console-api.ts';
import type { Logger } from './logger.ts';
import type { Endpoint, Page } from './page.ts';
import { MAX_ADVANCE_MS, type TestClock } from './test-clock.ts';

/** What `sluice serve --test-clock` adds: a clock tests move, and a reset. */
export interface TestMode {
  clock: TestClock;
  /** Forgets every queue and all state, as after a fresh start; the clock stays where it is. */
  reset(): Promise<void>;
  /** Receives (long polls) waiting now, so a test can tell its consumer's poll is in before it advances. */
  waitingReceives(): number;
}

/** The server's parts a reset reaches. */
export interface ResetParts {
  clock: TestClock;
  store: Store;
  service: { activity: QueueActivity; longPoll: LongPoll };
  /** SNS's counts of publications and deliveries, which /metrics serves. */
  sns: { activity: { clear(): void } };
  /** The counts /metrics serves and the history sampler reads. */
  queueCounts: QueueCounts;
  /** Retention sweeps, DLQ alarms, history samples, move tasks: stopped across the reset when running. */
  clusterJobs: { readonly running: boolean; start(): Promise<void>; stop(): Promise<void> };
  logger: Logger;
}

/**
 * The reset: the jobs stop first, so that none writes after it what it read before it; the store forgets
 * everything in one write; receives still waiting answer empty; the jobs start again from nothing. Requests
 * under way may finish against the queues they found, which no request after the reset can name. Resets run
 * one after the other.
 */
export function createTestMode(parts: ResetParts): TestMode {
  const { store, service, sns, queueCounts, clusterJobs, logger } = parts;
  if (!store.reset) throw new Error('--test-clock needs a store that can be reset (SQLite)');
  const resetStore = store.reset.bind(store);
  const resetAll = async () => {
    const running = clusterJobs.running;
    if (running) await clusterJobs.stop();
    await resetStore();
    service.activity.clear();
    sns.activity.clear();
    await queueCounts.readAll();
    service.longPoll.closeAll();
    if (running) await clusterJobs.start();
    logger.info('test mode: every queue and all state forgotten (reset)');
  };
  let resets: Promise<void> = Promise.resolve();
  return {
    clock: parts.clock,
    waitingReceives: () => service.longPoll.waiting(),
    reset() {
      const done = resets.then(resetAll);
      resets = done.catch(() => {});
      return done;
    },
  };
}

/** moto's answer to its reset, word for word, for test suites written against moto. */
const MOTO_RESET_DONE = '{"status": "ok"}';
const MOTO_RESET_NOT_POSTED = '{"Error": "Need to POST to reset Moto"}';

const PATHS = ['/_sluice/clock', '/_sluice/clock/advance', '/_sluice/reset', '/moto-api/reset'] as const;

/**
 * The test endpoints by path: GET /_sluice/clock, POST /_sluice/clock/advance {"seconds": N}, POST
 * /_sluice/reset and moto's POST /moto-api/reset. Without test mode each path answers 404 with how to turn
 * it on, rather than being read as an SQS request.
 */
export function testEndpoints(mode: TestMode | undefined): Map<string, Endpoint> {
  const endpoints = mode && enabledEndpoints(mode);
  const off = (path: string) => async (): Promise<Page> => {
    throw errors.testModeOff(path);
  };
  return new Map(PATHS.map((path) => [path, endpoints?.[path] ?? off(path)]));
}

function enabledEndpoints(mode: TestMode): Record<(typeof PATHS)[number], Endpoint> {
  const time = () =>
    json({
      now: mode.clock.now(),
      advancedSeconds: mode.clock.advancedMs / 1000,
      waitingReceives: mode.waitingReceives(),
    });
  return {
    '/_sluice/clock': async ({ method }) => {
      if (method !== 'GET') throw errors.wrongMethod('/_sluice/clock', method, 'GET');
      return time();
    },
    '/_sluice/clock/advance': async ({ method, body }) => {
      if (method !== 'POST') throw errors.wrongMethod('/_sluice/clock/advance', method, 'POST');
      await mode.clock.advance(advanceMs(body));
      return time();
    },
    '/_sluice/reset': async ({ method }) => {
      if (method !== 'POST') throw errors.wrongMethod('/_sluice/reset', method, 'POST');
      await mode.reset();
      return json({ status: 'ok' });
    },
    '/moto-api/reset': async ({ method }) => {
      if (method !== 'POST')
        return { status: 400, contentType: 'application/json', body: MOTO_RESET_NOT_POSTED };
      await mode.reset();
      return { contentType: 'application/json', body: MOTO_RESET_DONE };
    },
  };
}

/** `{"seconds": N}`, N from 0 to a year, fractions allowed (a move task's steps are 100 ms apart). */
function advanceMs(body: string): number {
  const seconds = parseJsonObject(body)?.seconds;
  if (typeof seconds !== 'number' || !(seconds >= 0 && seconds * 1000 <= MAX_ADVANCE_MS))
    throw errors.invalidParameterValue(
      `The body must be {"seconds": N}, N a number of seconds from 0 to ${MAX_ADVANCE_MS / 1000}.`,
    );
  return Math.round(seconds * 1000);
}
