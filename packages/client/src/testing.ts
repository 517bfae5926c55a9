import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from './node-sha256.ts';

/**
 * For tests against `sluice serve --test-clock`: move the server's clock forward instead of waiting out a
 * visibility timeout, a delay or a retention period, read it, and reset the server between tests. `endpoint`
 * is the server's URL (a queue URL works too: only its origin is used).
 */

/** How to reach a server started with credentials, whose test endpoints take signed requests only. */
export interface TestModeOptions {
  /**
   * The key to sign with (SigV4, as an SQS request): one of the server's, without queue or action limits,
   * since a reset or an advance reaches every queue.
   */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** The region the signature names: the server's `--region` (default us-east-1). */
  region?: string;
}

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
export async function advanceClock(
  endpoint: string,
  seconds: number,
  options: TestModeOptions = {},
): Promise<ServerTime> {
  return serverTimeOf(await call(endpoint, 'POST', '/_sluice/clock/advance', options, { seconds }));
}

/** The server's time. */
export async function serverTime(endpoint: string, options: TestModeOptions = {}): Promise<ServerTime> {
  return serverTimeOf(await call(endpoint, 'GET', '/_sluice/clock', options));
}

/**
 * Forgets every queue and all state (messages, move tasks, history, alarm states, deduplication ids, deleted
 * queue names, purge times), as after a fresh start; receives still waiting answer empty. The clock stays
 * where it is.
 */
export async function reset(endpoint: string, options: TestModeOptions = {}): Promise<void> {
  await call(endpoint, 'POST', '/_sluice/reset', options);
}

async function call(
  endpoint: string,
  method: 'GET' | 'POST',
  path: string,
  options: TestModeOptions,
  body?: object,
): Promise<unknown> {
  const url = new URL(path, endpoint);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = payload === undefined ? {} : { 'content-type': 'application/json' };
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: options.credentials ? await signed(url, method, headers, payload, options) : headers,
      ...(payload !== undefined && { body: payload }),
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

/** The headers of the request signed with SigV4 as an SQS request, by the AWS SDK's own signer. */
async function signed(
  url: URL,
  method: string,
  headers: Record<string, string>,
  payload: string | undefined,
  options: TestModeOptions,
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    credentials: options.credentials!,
    region: options.region ?? 'us-east-1',
    service: 'sqs',
    sha256: NodeSha256,
  });
  const request = await signer.sign({
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: url.pathname,
    query: {},
    headers: { ...headers, host: url.host },
    body: payload,
  });
  // fetch sets Host itself, from the URL signed.
  const { host: _host, ...sent } = request.headers;
  return sent;
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
