import type { ChildProcess } from 'node:child_process';

/** The most telling line of a failed start: the first one naming an error, else the last one. */
function errorLine(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => /error/i.test(l)) ?? lines[lines.length - 1] ?? '(no output)';
}

export interface ListeningWatch {
  /** Names the server in errors. */
  readonly name: string;
  /** Captures the URL the server prints once it listens. */
  readonly pattern: RegExp;
  readonly timeoutMs: number;
  /** Everything the child printed so far, as the caller keeps it. */
  readonly output: () => string;
}

/**
 * The URL a starting server prints (the pattern's first group), read from the output its caller collects; the
 * promise rejects if the child exits or fails to spawn first, or stays silent longer than `timeoutMs`. The
 * benchmark and the tests start servers this one way.
 */
export function listeningUrl(child: ChildProcess, watch: ListeningWatch): Promise<string> {
  const { name, pattern, timeoutMs, output } = watch;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start in ${timeoutMs / 1000} s:\n${output()}`)),
      timeoutMs,
    );
    const settle = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
    };
    // Runs after the caller's own listener has added the chunk to output().
    const onData = (): void => {
      const match = pattern.exec(output());
      if (match?.[1]) {
        settle();
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (err) => {
      settle();
      reject(err);
    });
    child.once('exit', (code) => {
      settle();
      reject(new Error(`${name} exited with ${code} before listening: ${errorLine(output())}\n${output()}`));
    });
  });
}
