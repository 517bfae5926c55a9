import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listeningUrl } from '../tools/listening.ts';

export type TargetName = 'full' | 'durable' | 'normal' | 'memory' | 'moto' | 'null';
/** How a Sluice target keeps its data: a durability level, or `--in-memory`. */
export type SluiceMode = 'full' | 'durable' | 'normal' | 'memory';

/** Run order; 'null' (bench/null-server.ts) last: the harness ceiling on this machine, in the same run. */
export const ALL_TARGETS: readonly TargetName[] = ['moto', 'full', 'durable', 'normal', 'memory', 'null'];
export const DEFAULT_TARGETS: readonly TargetName[] = ['moto', 'full', 'durable', 'normal', 'null'];
export const BASELINE: TargetName = 'moto';

export const TARGET_LABELS: Record<TargetName, string> = {
  moto: 'moto (baseline)',
  full: 'sluice full',
  durable: 'sluice durable',
  normal: 'sluice normal',
  memory: 'sluice --in-memory',
  null: 'null server',
};

export interface RunningTarget {
  /** A TargetName, or a peer system's name (bench/peers). */
  readonly name: string;
  readonly endpoint: string;
  /** PID of the server process itself (RSS is sampled from it). */
  readonly pid: number;
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited after graceMs (default 10 s). */
  stop(graceMs?: number): Promise<void>;
}

const ROOT = new URL('..', import.meta.url).pathname;
export const SLUICE_BIN = new URL('../packages/server/bin/sluice.js', import.meta.url).pathname;
const NULL_SERVER = new URL('./null-server.ts', import.meta.url).pathname;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** Connect over 127.0.0.1 whatever host name the server printed. */
function loopback(endpoint: string): string {
  const url = new URL(endpoint);
  url.hostname = '127.0.0.1';
  return url.origin;
}

/**
 * Sluice is spawned exactly like test/helpers/server.ts does (`node packages/server/bin/sluice.js serve --port 0
 * --data DIR ...`), but here, so the child is known from the first moment and can be stopped even
 * if the run is interrupted while the server is still starting.
 */
function startSluice(
  name: SluiceMode,
  bin: string,
  { nodeArgs = [], serverArgs = [], dataDir: keptDir }: SluiceStartOptions,
): Promise<RunningTarget> {
  if (!existsSync(bin)) {
    return Promise.reject(new Error(`${bin} not found; server not built yet`));
  }
  if (name === 'memory') {
    return spawnListening(
      name,
      process.execPath,
      [...nodeArgs, bin, 'serve', '--host', '127.0.0.1', '--port', '0', '--in-memory', ...serverArgs],
      /listening on (http:\/\/[^\s]+)/,
    );
  }
  const dataDir = keptDir ?? mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  return spawnListening(
    name,
    process.execPath,
    [
      ...nodeArgs,
      bin,
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--data',
      dataDir,
      '--durability',
      name,
      ...serverArgs,
    ],
    /listening on (http:\/\/[^\s]+)/,
    () => {
      if (keptDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  );
}

/** The real moto_server script, so the spawned PID is the Python server and not a pyenv shim. */
export function motoCommand(): string {
  try {
    const path = execFileSync('pyenv', ['which', 'moto_server'], {
      encoding: 'utf8',
      timeout: 10_000,
    }).trim();
    if (path && existsSync(path)) return path;
  } catch {
    // no pyenv: fall back to PATH
  }
  return 'moto_server';
}

/** Every server child this process spawned and that has not exited yet. */
const live = new Map<ChildProcess, (graceMs?: number) => Promise<void>>();

/** Stops every server still running (Ctrl-C, or a crash of the harness). */
export async function stopAllTargets(): Promise<void> {
  await Promise.allSettled([...live.values()].map((stop) => stop()));
}

/** Spawns a server that prints its URL; `pattern` captures it. The child's PID is the server. */
export async function spawnListening(
  name: string,
  command: string,
  args: string[],
  pattern: RegExp,
  cleanup: () => void = () => {},
): Promise<RunningTarget> {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping: Promise<void> | null = null;
  const stop = (graceMs = 10_000): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      try {
        await withTimeout(exited, graceMs, `${name} SIGTERM`);
      } catch {
        child.kill('SIGKILL');
        await withTimeout(exited, 5_000, `${name} SIGKILL`);
      } finally {
        live.delete(child);
        cleanup();
      }
    })();
    return stopping;
  };
  live.set(child, stop);
  try {
    // A server may log every request; keep draining the pipe but only remember the start.
    const remember = (chunk: Buffer): void => {
      if (output.length < 65_536) output += chunk.toString();
    };
    child.stdout?.on('data', remember);
    child.stderr?.on('data', remember);
    const endpoint = await listeningUrl(child, { name, pattern, timeoutMs: 30_000, output: () => output });
    if (child.pid === undefined) throw new Error(`${name} has no pid`);
    return { name, endpoint: loopback(endpoint), pid: child.pid, output: () => output, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface SluiceStartOptions {
  /** Flags for Sluice's node process only (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeArgs?: readonly string[];
  /** Extra `sluice serve` flags (e.g. --no-metrics). */
  serverArgs?: readonly string[];
  /** Data directory to use and keep (a restart on the same data); default a fresh one, removed at stop. */
  dataDir?: string;
}

/** Starts a bench target; `sluice` applies to the Sluice targets only. */
export function startTarget(
  name: TargetName,
  sluiceBin = SLUICE_BIN,
  sluice: SluiceStartOptions = {},
): Promise<RunningTarget> {
  switch (name) {
    case 'moto':
      return spawnListening(
        name,
        motoCommand(),
        ['-H', '127.0.0.1', '-p', '0'],
        /Running on (http:\/\/[^\s]+)/,
      );
    case 'null':
      return spawnListening(
        name,
        process.execPath,
        ['--import', 'tsx', NULL_SERVER, '--port', '0'],
        /listening on (http:\/\/[^\s]+)/,
      );
    default:
      return startSluice(name, sluiceBin, sluice);
  }
}

/**
 * Runs a bench entry point: its servers are stopped on Ctrl-C or SIGTERM (exit 130), after a crash (exit 1)
 * and at the end (exit with main's code).
 */
export function runMain(
  what: string,
  main: () => Promise<number>,
  onSignal: (signal: string) => void = () => {},
): void {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      onSignal(signal);
      void stopAllTargets().finally(() => process.exit(130));
    });
  }
  main().then(
    async (code) => {
      await stopAllTargets();
      process.exit(code);
    },
    async (err: unknown) => {
      process.stderr.write(
        `${what} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      await stopAllTargets();
      process.exit(1);
    },
  );
}
