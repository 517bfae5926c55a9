/**
 * A Lambda function served over the Invoke API (`POST /2015-03-31/functions/{name}/invocations`), as `sam
 * local start-lambda` serves one: the tests' stand-in for a function, with every invocation recorded.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSEvent } from 'aws-lambda';

export interface FunctionAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Invocation {
  functionName: string;
  qualifier: string | null;
  event: SQSEvent;
}

/** What the function does with an invocation; `undefined` answers 200 with `null`. */
export type FunctionBehaviour = (
  invocation: Invocation,
) => FunctionAnswer | undefined | Promise<FunctionAnswer | undefined>;

export interface FunctionServer {
  readonly endpoint: string;
  readonly invocations: Invocation[];
  /** Invocations of the function under way now. */
  runningOf(functionName: string): number;
  /** The most invocations of the function there ever were at once. */
  mostRunningOf(functionName: string): number;
  /** No invocation of any function is under way. */
  idle(): boolean;
  /** What the function of this name does (each answers 200 `null` until told otherwise). */
  behave(functionName: string, behaviour: FunctionBehaviour): void;
  /** Resolves once `count` invocations have been received (polling every 20 ms, up to `timeoutMs`). */
  waitForInvocations(count: number, timeoutMs?: number): Promise<Invocation[]>;
  close(): Promise<void>;
}

const PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.once('error', reject);
  });
}

export async function startFunctionServer(): Promise<FunctionServer> {
  const behaviours = new Map<string, FunctionBehaviour>();
  const invocations: Invocation[] = [];
  const running = new Map<string, number>();
  const mostRunning = new Map<string, number>();
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const match = PATH.exec(url.pathname);
    if (request.method !== 'POST' || !match) {
      response.writeHead(404).end();
      return;
    }
    const functionName = decodeURIComponent(match[1]!);
    const now = (running.get(functionName) ?? 0) + 1;
    running.set(functionName, now);
    mostRunning.set(functionName, Math.max(mostRunning.get(functionName) ?? 0, now));
    // An invocation ends when it is answered or when its caller gives up on it (a time-out).
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      running.set(functionName, (running.get(functionName) ?? 1) - 1);
    };
    response.once('close', end);
    void (async () => {
      try {
        const event = JSON.parse(await readBody(request)) as SQSEvent;
        const invocation = {
          functionName,
          qualifier: url.searchParams.get('Qualifier'),
          event,
        };
        invocations.push(invocation);
        const answer = await (behaviours.get(functionName) ?? (() => undefined))(invocation);
        if (!response.destroyed)
          response
            .writeHead(answer?.status ?? 200, { 'content-type': 'application/json', ...answer?.headers })
            .end(answer?.body ?? 'null');
      } catch (error) {
        response.writeHead(500).end(String(error));
      } finally {
        end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    invocations,
    runningOf: (functionName) => running.get(functionName) ?? 0,
    mostRunningOf: (functionName) => mostRunning.get(functionName) ?? 0,
    idle: () => [...running.values()].every((count) => count === 0),
    behave(functionName, behaviour) {
      behaviours.set(functionName, behaviour);
    },
    async waitForInvocations(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (invocations.length < count) {
        if (Date.now() > deadline)
          throw new Error(`expected ${count} invocations, got ${invocations.length} in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return invocations;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
