import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import * as sqsSdk from '@aws-sdk/client-sqs';
import { clientEnv, type Protocol } from './clients.ts';

/**
 * One SQS action at a time through a real client, the same way over either wire protocol, so a test states a
 * behaviour once and checks it in both: @aws-sdk/client-sqs speaks AWS JSON 1.0, Debian's boto3 1.26 (driven
 * through sqs_bridge.py) speaks Query. Inputs and outputs use the API's member names.
 */
export interface CallError {
  /** The error code the client exposes (the Query code in both protocols, as SDKs read x-amzn-query-error). */
  readonly code: string;
  readonly message: string;
  readonly status: number | undefined;
}

export type Outcome =
  | { readonly output: Record<string, unknown>; readonly error?: undefined }
  | { readonly error: CallError; readonly output?: undefined };

export interface SqsCaller {
  readonly label: string;
  readonly protocol: Protocol;
  call(action: string, input: Record<string, unknown>): Promise<Outcome>;
  close(): Promise<void>;
}

/** The call must succeed; its output. */
export async function ok(
  caller: SqsCaller,
  action: string,
  input: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const outcome = await caller.call(action, input);
  assert.equal(outcome.error, undefined, `${caller.label} ${action}: ${JSON.stringify(outcome.error)}`);
  return outcome.output ?? {};
}

/** The call must fail; the error the client exposed. */
export async function fails(
  caller: SqsCaller,
  action: string,
  input: Record<string, unknown>,
): Promise<CallError> {
  const outcome = await caller.call(action, input);
  assert.ok(outcome.error, `${caller.label} ${action} should have failed: ${JSON.stringify(outcome.output)}`);
  return outcome.error;
}

/** The call must fail with `expected` (only the fields given are compared). */
export async function failsWith(
  caller: SqsCaller,
  action: string,
  input: Record<string, unknown>,
  expected: Partial<CallError>,
): Promise<void> {
  const error = await fails(caller, action, input);
  const compared = Object.fromEntries(
    Object.keys(expected).map((key) => [key, error[key as keyof CallError]]),
  );
  assert.deepEqual(compared, expected, `${caller.label} ${action}`);
}

type SdkCommand = Parameters<sqsSdk.SQSClient['send']>[0];
type SdkCommandClass = new (input: Record<string, unknown>) => SdkCommand;

/** @aws-sdk/client-sqs: `<Action>Command` for every action. */
export function jsSdkCaller(endpoint: string): SqsCaller {
  const client = new sqsSdk.SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  const commands = sqsSdk as unknown as Record<string, SdkCommandClass | undefined>;
  return {
    label: '@aws-sdk/client-sqs',
    protocol: 'json',
    async call(action, input) {
      const Command = commands[`${action}Command`];
      assert.ok(Command, `the SDK has no ${action}Command`);
      try {
        const { $metadata: _metadata, ...output } = await client.send(new Command(input));
        return { output: output as Record<string, unknown> };
      } catch (error) {
        if (!(error instanceof sqsSdk.SQSServiceException)) throw error;
        const { Code } = error as sqsSdk.SQSServiceException & { Code?: string };
        return {
          error: { code: Code ?? error.name, message: error.message, status: error.$metadata.httpStatusCode },
        };
      }
    },
    async close() {
      client.destroy();
    },
  };
}

const BRIDGE_PY = new URL('./sqs_bridge.py', import.meta.url).pathname;

/** A boto3 client (Debian's speaks Query) kept running for the whole test file; see sqs_bridge.py. */
export async function boto3Caller(python: string, endpoint: string): Promise<SqsCaller> {
  const child: ChildProcessWithoutNullStreams = spawn(python, [BRIDGE_PY, endpoint], { env: clientEnv() });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`sqs_bridge.py ended:\n${stderr}`);
    return value;
  };
  const first = await next();
  const protocol = /^PROTOCOL=(json|query)$/.exec(first)?.[1] as Protocol | undefined;
  assert.ok(protocol, `sqs_bridge.py: ${first}\n${stderr}`);
  // One call at a time: each answer is the next line.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    label: `boto3 (${python})`,
    protocol,
    call(action, input) {
      const answer = queue.then(async () => {
        child.stdin.write(`${JSON.stringify({ action, input })}\n`);
        return JSON.parse(await next()) as Outcome;
      });
      queue = answer.catch(() => {});
      return answer;
    },
    async close() {
      child.stdin.end();
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
