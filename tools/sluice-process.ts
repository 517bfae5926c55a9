/** Starting `sluice serve` from the TypeScript sources as a real child process: shared by the tests and the bench. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { listeningUrl } from './listening.ts';
import { alive } from './processes.ts';
import { sluiceBundle } from './sluice-bundle.ts';

/**
 * Node arguments that run the `sluice` command: a bundle of the TypeScript sources as they are now, so tests
 * check the working tree, never a stale build (sluice-bundle.ts).
 */
export const SLUICE_CLI: readonly string[] = [await sluiceBundle()];

export interface RunningServer {
  /** e.g. http://127.0.0.1:40123 */
  readonly endpoint: string;
  readonly port: number;
  readonly dataDir: string;
  readonly process: ChildProcess;
  /** Everything the server printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for exit (crash simulation). */
  kill(): Promise<void>;
}

export interface StartOptions {
  /**
   * Reuse a data directory (restart tests); a fresh temp directory otherwise. Given in `--data`, unless
   * `env` has SLUICE_DATA: then that is the directory and no `--data` is passed, so the variable is read.
   */
  dataDir?: string;
  /**
   * `--in-memory` instead of `--data`: the fresh temp directory (`dataDir`) is then the server's working
   * directory, where the default ./sluice-data would appear if the server wrote one.
   */
  inMemory?: boolean;
  /** Fixed port; 0 (default) lets the OS choose. */
  port?: number;
  args?: string[];
  env?: Record<string, string>;
  /**
   * The program and the arguments before `serve` (default: this Node running the sources, SLUICE_CLI). It runs
   * in a process group of its own, which stop() and kill() signal whole, as a terminal's Ctrl-C does: a wrapper
   * such as npx runs the server through a shell that dies of SIGTERM without passing it on.
   */
  command?: readonly [string, ...string[]];
  cwd?: string;
}

/** Starts `sluice serve` as a real child process and resolves once it prints its endpoint. */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const fromEnvironment = options.env?.SLUICE_DATA;
  const dataDir = fromEnvironment ?? options.dataDir ?? mkdtempSync(join(tmpdir(), 'sluice-test-'));
  const storage = options.inMemory
    ? ['--in-memory']
    : fromEnvironment === undefined
      ? ['--data', dataDir]
      : [];
  const [program, ...programArgs] = options.command ?? [process.execPath, ...SLUICE_CLI];
  const child = spawn(
    program,
    [...programArgs, 'serve', '--port', String(options.port ?? 0), ...storage, ...(options.args ?? [])],
    {
      cwd: options.cwd ?? (options.inMemory ? dataDir : undefined),
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.command !== undefined,
    },
  );
  let output = '';
  // 'close', not 'exit': by then everything the server printed has been read into output().
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const endpoint = await listeningUrl(child, {
    name: 'server',
    pattern: /listening on (https?:\/\/[^\s]+)/,
    timeoutMs: 20_000,
    output: () => output,
  });
  const port = Number(new URL(endpoint).port);
  const signal = async (name: NodeJS.Signals) => {
    if (options.command === undefined) {
      if (child.exitCode === null && child.signalCode === null) child.kill(name);
      await exited;
      return;
    }
    const group = -(child.pid ?? 0);
    if (alive(group)) process.kill(group, name);
    await exited;
    for (let waited = 0; alive(group); waited += 50) {
      if (waited >= 30_000) throw new Error(`process group ${-group} still runs 30 s after ${name}`);
      await sleep(50);
    }
  };
  return {
    endpoint,
    port,
    dataDir,
    process: child,
    output: () => output,
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
  };
}

/** Removes a temp data directory made by startServer. */
export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
