import { after, before, describe } from 'node:test';
import { CreateEventSourceMappingCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { startSluice } from 'sluice';
import { advanceClock, serverTime } from 'sluice-client/testing';
import { TestClock } from '../../packages/server/src/server/test-clock.ts';
import { freshDatabase, postgresUnreachable } from '../../tools/postgres.ts';
import { eventually } from './client-toolkit.ts';
import { type FunctionServer, startFunctionServer } from './function-server.ts';
import { removeDataDir, startServer } from './server.ts';
import { sqsClient } from './sqs-client.ts';

/**
 * Lambda event source mappings, as the event-source-mappings*.test.ts files drive them: a server on each
 * store (test mode, so time rules move with the clock) invoking a real HTTP function served over the Invoke
 * API, the SDK clients on it, and the calls the tests share. Each file gets servers of its own.
 */

export const ACCOUNT = '000000000000';
export const REGION = 'us-east-1';

/** Why the PostgreSQL variant cannot run here (PostgreSQL unreachable, outside CI), or false. */
const postgresSkip = process.env.CI ? false : await postgresUnreachable();

/** A server the suite drives, on one store, with a clock the tests move. */
export interface Backend {
  readonly endpoint: string;
  /** Moves the server's clock forward, as `POST /_sluice/clock/advance` does. */
  advance(seconds: number): Promise<void>;
  /** The server's clock now, in epoch milliseconds. */
  now(): Promise<number>;
  /** Stops it and removes what it kept. */
  close(): Promise<void>;
}

export interface StoreUnderTest {
  label: string;
  skip: string | false;
  /** Starts a server on a store of its own, invoking functions at `lambdaEndpoint`. */
  start(lambdaEndpoint: string, lambdaTimeoutSeconds?: number): Promise<Backend>;
}

const STORES: StoreUnderTest[] = [
  {
    label: 'SQLite',
    skip: false,
    // `sluice serve --test-clock`, a process of its own.
    async start(lambdaEndpoint, lambdaTimeoutSeconds) {
      const server = await startServer({
        args: [
          '--test-clock',
          '--lambda-endpoint',
          lambdaEndpoint,
          ...(lambdaTimeoutSeconds === undefined ? [] : ['--lambda-timeout', String(lambdaTimeoutSeconds)]),
        ],
      });
      return {
        endpoint: server.endpoint,
        async advance(seconds) {
          await advanceClock(server.endpoint, seconds);
        },
        now: async () => (await serverTime(server.endpoint)).now,
        async close() {
          await server.stop();
          removeDataDir(server.dataDir);
        },
      };
    },
  },
  {
    label: 'PostgreSQL',
    skip: postgresSkip,
    // `--test-clock` is refused with `--store postgres://` (other nodes would not share the clock), so the
    // server runs in this process with the test mode's clock injected: the same clock, moved directly. A fresh
    // database per server; it holds the cluster lease alone, so it polls the mappings.
    async start(lambdaEndpoint, lambdaTimeoutSeconds) {
      const database = await freshDatabase('sluice_esm');
      const clock = new TestClock();
      const node = await startSluice({
        port: 0,
        storeUrl: database.url,
        dataDir: ':memory:',
        logLevel: 'silent',
        clock,
        lambdaEndpoint,
        lambdaTimeoutSeconds,
      }).catch(async (error: unknown) => {
        await database.drop();
        throw error;
      });
      return {
        endpoint: node.endpoint,
        advance: (seconds) => clock.advance(seconds * 1000),
        now: async () => clock.now(),
        async close() {
          try {
            await node.close();
          } finally {
            await database.drop();
          }
        },
      };
    },
  },
];

/** The servers and clients describeMappings gives its tests: read them inside tests only. */
export interface Mappings {
  readonly store: StoreUnderTest;
  readonly fn: FunctionServer;
  readonly server: Backend;
  readonly sqs: SQSClient;
  readonly lambda: LambdaClient;
}

/**
 * Runs `tests` on each store, on a server and a function server of their own
 * (opened before them, closed after), with the calls they share.
 */
export function describeMappings(tests: (m: Mappings & ReturnType<typeof sharedCalls>) => void): void {
  for (const store of STORES) {
    describe(`event source mappings on ${store.label}`, { skip: store.skip }, () => {
      let fn: FunctionServer;
      let server: Backend;
      let sqs: SQSClient;
      let lambda: LambdaClient;

      before(async () => {
        // A function server per store: the tests tell invocations apart by function name.
        fn = await startFunctionServer();
        server = await store.start(fn.endpoint);
        sqs = sqsClient(server.endpoint);
        lambda = new LambdaClient({
          endpoint: server.endpoint,
          region: REGION,
          credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
          maxAttempts: 1,
        });
      });

      after(async () => {
        sqs?.destroy();
        lambda?.destroy();
        await server?.close();
        await fn?.close();
      });

      const m: Mappings = {
        store,
        get fn() {
          return fn;
        },
        get server() {
          return server;
        },
        get sqs() {
          return sqs;
        },
        get lambda() {
          return lambda;
        },
      };
      tests(Object.assign(m, sharedCalls(m)));
    });
  }
}

/** The calls the tests share, on the servers of `m`. */
function sharedCalls(m: Mappings) {
  let queues = 0;
  async function queue(attributes: Record<string, string> = {}, fifo = false) {
    const name = `esm-${++queues}${fifo ? '.fifo' : ''}`;
    const { QueueUrl } = await m.sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          ...(fifo && { FifoQueue: 'true', ContentBasedDeduplication: 'true' }),
          ...attributes,
        },
      }),
    );
    return { name, url: QueueUrl!, arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}` };
  }

  async function counts(url: string) {
    const { Attributes } = await m.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return {
      visible: Number(Attributes!.ApproximateNumberOfMessages),
      inFlight: Number(Attributes!.ApproximateNumberOfMessagesNotVisible),
    };
  }

  /** The bodies the function was invoked with for `functionName`, invocation by invocation. */
  function bodiesOf(functionName: string): string[][] {
    return m.fn.invocations
      .filter((invocation) => invocation.functionName === functionName)
      .map((invocation) => invocation.event.Records.map((record) => record.body));
  }

  const isEmpty = async (url: string) => {
    const { visible, inFlight } = await counts(url);
    return visible === 0 && inFlight === 0;
  };

  /**
   * The functions the malformed-response tests' server of its own invokes: the main server never counts their
   * answers, so waiting for it to would wait out every timeout (10 s per clock step of each later test).
   */
  const SLOW_SERVERS_FUNCTIONS = new Set(['malformed-fn']);

  const metricsText = async (endpoint = m.server.endpoint) => (await fetch(`${endpoint}/metrics`)).text();

  /**
   * Every invocation the function received has its result counted by the server: the server has read the
   * function's answer (the function having written it is not enough: it may still be on its way).
   */
  async function answersTaken(
    endpoint = m.server.endpoint,
    names = new Set(
      m.fn.invocations
        .map((invocation) => invocation.functionName)
        .filter((name) => !SLOW_SERVERS_FUNCTIONS.has(name)),
    ),
  ): Promise<boolean> {
    const counted = new Map<string, number>();
    for (const [, name, value] of (await metricsText(endpoint)).matchAll(
      /^sluice_lambda_invocations_total\{[^}]*function="([^"]+)"[^}]*\} (\d+)$/gm,
    ))
      counted.set(name!, (counted.get(name!) ?? 0) + Number(value));
    return [...names].every((name) => bodiesOf(name).length === (counted.get(name) ?? 0));
  }

  /**
   * Moves the server's clock by `seconds` until `check` holds. A step is taken only once the server has taken
   * every answer (a step during an invocation would time it out too), and the server is given a few seconds
   * to act on it.
   */
  async function advanceUntil(seconds: number, check: () => boolean | Promise<boolean>, what: string) {
    const deadline = Date.now() + 90_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await eventually(() => m.fn.idle(), 'no invocation under way', 10_000).catch(() => {});
      await eventually(answersTaken, 'every answer taken by the server', 10_000).catch(() => {});
      if (await check()) return;
      await m.server.advance(seconds);
      await eventually(check, what, 5_000).catch(() => {});
    }
  }

  const create = (input: ConstructorParameters<typeof CreateEventSourceMappingCommand>[0]) =>
    m.lambda.send(new CreateEventSourceMappingCommand(input));

  async function sendAll(url: string, bodies: string[], group?: string) {
    for (let start = 0; start < bodies.length; start += 10)
      await m.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: bodies.slice(start, start + 10).map((body, index) => ({
            Id: String(index),
            MessageBody: body,
            ...(group !== undefined && { MessageGroupId: group }),
          })),
        }),
      );
  }

  const receiveCountsOf = (functionName: string, body: string) =>
    m.fn.invocations
      .filter((invocation) => invocation.functionName === functionName)
      .flatMap((invocation) => invocation.event.Records)
      .filter((record) => record.body === body)
      .map((record) => record.attributes.ApproximateReceiveCount);

  const failures = (ids: string[]): { body: string } => ({
    body: JSON.stringify({
      batchItemFailures: ids.map((itemIdentifier) => ({ itemIdentifier })),
    } satisfies SQSBatchResponse),
  });

  return {
    queue,
    counts,
    bodiesOf,
    isEmpty,
    SLOW_SERVERS_FUNCTIONS,
    metricsText,
    answersTaken,
    advanceUntil,
    create,
    sendAll,
    receiveCountsOf,
    failures,
  };
}
