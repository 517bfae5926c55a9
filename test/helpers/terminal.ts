import { spawn } from 'node:child_process';

/** A command running on a pseudo-terminal, as a person runs it in a terminal window. */
export interface TerminalRun {
  /** Types `text` at the keyboard (Enter is `\r`). */
  type(text: string): void;
  /** Resolves once the output (every `\r\n` read as `\n`) matches `pattern`. */
  waitFor(pattern: RegExp): Promise<void>;
  /** Everything the command wrote to the terminal so far, `\r\n` read as `\n`. */
  output(): string;
  /** The command's exit status, once it ended. */
  readonly exited: Promise<number | null>;
}

/** A hang guard only: the slowest step of a test waits this long before it fails with the output so far. */
const WAIT_MS = 60_000;

/**
 * Runs `argv` on a pseudo-terminal made by util-linux's `script` (on every Debian system: bsdutils), with its
 * stdin, stdout and stderr the terminal, `columns` wide: what `isTTY` and a prompt see is a real terminal.
 */
export function runInTerminal(
  argv: readonly string[],
  options: { env?: Record<string, string>; columns?: number } = {},
): TerminalRun {
  const command = `stty cols ${options.columns ?? 120} rows 40 && exec ${argv.map(quote).join(' ')}`;
  const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    env: { ...process.env, SHELL: '/bin/sh', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let text = '';
  const waiters = new Set<() => void>();
  const take = (chunk: Buffer) => {
    text += chunk.toString().replaceAll('\r\n', '\n');
    for (const check of waiters) check();
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      child.stdin.end();
      for (const check of waiters) check();
      resolve(code);
    }),
  );
  return {
    type: (keys) => child.stdin.write(keys),
    output: () => text,
    exited,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${pattern} in ${WAIT_MS / 1000} s; the terminal shows:\n${text}`));
        }, WAIT_MS);
        const check = () => {
          if (pattern.test(text)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          } else if (child.exitCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`the command ended without ${pattern}; the terminal shows:\n${text}`));
          }
        };
        waiters.add(check);
        check();
      }),
  };
}

function quote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}
