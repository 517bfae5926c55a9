/**
 * For tests against `sluice serve --test-clock`: move the server's clock forward instead of waiting out a
 * visibility timeout, a delay or a retention period, read it, and reset the server between tests. `endpoint`
 * is the server's URL (a queue URL works too: only its origin is used).
 */

export interface ServerTime {
  /** The server's time, epoch milliseconds (as SentTimestamp and the other SQS timestamps). */
  now: number;
  /** How far the advances have put the server's clock ahead of real time. */
  advancedSeconds: number;
  /** Receives (long polls) waiting on the server now: wait for your consumer's before you advance. */
  waitingReceives: number;
}

/** The server answered that it has no test mode (404): it was not started with `--test-clock`. */
export class NotInTestModeError extends Error {
  constructor(readonly endpoint: string) {
    super(`${endpoint} has no test mode: start the server with \`sluice serve --test-clock\``);
    this.name = 'NotInTestModeError';
  }
}

/**
 * Moves the server's clock `seconds` forward (fractions allowed). Resolves once the work it woke has run:
 * timers the advance passed fired in time order (a move task's steps, each at its own time), periodic work
 * (retention sweeps, DLQ alarm checks, history samples) ran once, and long polls whose wait ended answered.
 */
export async function advanceClock(endpoint: string, seconds: number): Promise<ServerTime> {
  return serverTimeOf(await call(endpoint, 'POST', '/_sluice/clock/advance', { seconds }));
}

/** The server's time. */
export async function serverTime(endpoint: string): Promise<ServerTime> {
  return serverTimeOf(await call(endpoint, 'GET', '/_sluice/clock'));
}

/**
 * Forgets every queue and all state (messages, move tasks, history, alarm states, deduplication ids, deleted
 * queue names, purge times), as after a fresh start; receives still waiting answer empty. The clock stays
 * where it is.
 */
export async function reset(endpoint: string): Promise<void> {
  await call(endpoint, 'POST', '/_sluice/reset');
}

async function call(endpoint: string, method: 'GET' | 'POST', path: string, body?: object): Promise<unknown> {
  const url = new URL(path, endpoint);
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      ...(body && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new Error(`no Sluice at ${url.origin}: is \`sluice serve --test-clock\` running?`, {
      cause: error,
    });
  }
  const text = await response.text();
  if (response.status === 404) throw new NotInTestModeError(url.origin);
  if (!response.ok)
    throw new Error(`${method} ${url.pathname} failed (HTTP ${response.status}): ${errorText(text)}`);
  return JSON.parse(text);
}

/** The message of the server's JSON error, or the answer as it came. */
function errorText(text: string): string {
  try {
    const { message } = JSON.parse(text) as { message?: unknown };
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: the text itself says what went wrong
  }
  return text;
}

function serverTimeOf(value: unknown): ServerTime {
  const { now, advancedSeconds, waitingReceives } = (value ?? {}) as Partial<
    Record<keyof ServerTime, unknown>
  >;
  if (typeof now !== 'number' || typeof advancedSeconds !== 'number' || typeof waitingReceives !== 'number')
    throw new Error(`the server's answer is not its time: ${JSON.stringify(value)}`);
  return { now, advancedSeconds, waitingReceives };
}
