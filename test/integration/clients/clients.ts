import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The real SQS clients on this machine. Debian's (apt `awscli python3-boto3`) are old enough to
 * speak the Query protocol; the pyenv ones speak AWS JSON 1.0. Between them they cover both wire
 * formats Sluice must serve.
 */
export type Protocol = 'json' | 'query';

export interface RealClient {
  /** e.g. 'debian boto3' */
  readonly label: string;
  /** Absolute path of the python or aws executable, or undefined when it is not installed. */
  readonly bin: string | undefined;
  readonly protocol: Protocol;
  /** Debian's clients are installed by CI, so their absence fails the run there. */
  readonly requiredInCi: boolean;
  /** What installs it, named in the skip message; Debian's Python clients when not given. */
  readonly install?: string;
}

/** The pyenv python on PATH (a shim), resolved once to the real interpreter. */
function pyenvPython(): string | undefined {
  try {
    const exe = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], {
      encoding: 'utf8',
      timeout: 10_000,
    }).trim();
    return exe && !exe.startsWith('/usr/bin/') ? exe : undefined;
  } catch {
    return undefined;
  }
}

const found = (path: string | undefined): string | undefined => (path && existsSync(path) ? path : undefined);

const pyenv = pyenvPython();

export const PYTHONS: readonly RealClient[] = [
  { label: 'pyenv boto3', bin: pyenv, protocol: 'json', requiredInCi: false },
  { label: 'debian boto3', bin: found('/usr/bin/python3'), protocol: 'query', requiredInCi: true },
];

export const CLIS: readonly RealClient[] = [
  {
    label: 'pyenv aws cli v1',
    bin: found(pyenv && join(dirname(pyenv), 'aws')),
    protocol: 'json',
    requiredInCi: false,
  },
  { label: 'debian aws cli v2', bin: found('/usr/bin/aws'), protocol: 'query', requiredInCi: true },
];

/** Debian's boto3 must also be importable, not just its python. */
export function hasBoto3(python: string): boolean {
  try {
    execFileSync(python, ['-c', 'import boto3'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a client's tests can run. A missing client skips with a message, except a Debian one
 * under CI: there `missing` is set and the test must fail with it, so the Query protocol is never
 * silently left untested.
 */
export interface Availability {
  readonly skip: string | false;
  readonly missing: string | undefined;
}

export function availability(client: RealClient, usable: boolean): Availability {
  if (usable) return { skip: false, missing: undefined };
  const reason = `${client.label} is not installed (${client.install ?? 'apt-get install awscli python3-boto3'})`;
  if (client.requiredInCi && process.env.CI) return { skip: false, missing: `${reason}; CI requires it` };
  return { skip: reason, missing: undefined };
}

/** Environment for client subprocesses: dummy credentials, and no user config that could interfere. */
export function clientEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('AWS_') && !key.startsWith('BOTO')) env[key] = value;
  }
  return {
    ...env,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_PAGER: '',
    AWS_DEFAULT_OUTPUT: 'json',
    AWS_MAX_ATTEMPTS: '1',
    PYTHONIOENCODING: 'utf-8',
  };
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Runs a client to completion (no shell, so arguments pass through byte for byte); `env` overrides clientEnv(). */
export function run(
  bin: string,
  args: readonly string[],
  timeoutMs = 60_000,
  env: Readonly<Record<string, string>> = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(bin, args, { env: { ...clientEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}
