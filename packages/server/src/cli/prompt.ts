import { createInterface } from 'node:readline';

/** Whether someone can answer a question: stdin is a terminal (not a pipe, a file or /dev/null). */
export function canAsk(): boolean {
  return process.stdin.isTTY === true;
}

/**
 * Asks on stderr (stdout may be a pipe or a file) and reads one line of stdin. Resolves undefined when the
 * input ends (Ctrl-D) or on Ctrl-C, which the caller takes as "no".
 */
export function ask(question: string): Promise<string | undefined> {
  const lines = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve) => {
    const giveUp = () => {
      process.stderr.write('\n');
      resolve(undefined);
      lines.close();
    };
    lines.once('SIGINT', giveUp);
    lines.once('close', () => resolve(undefined));
    lines.question(question, (answer) => {
      resolve(answer);
      lines.close();
    });
  });
}

/** Asks a yes/no question whose default is no; only "y" or "yes" (any case) is a yes. */
export async function confirmed(question: string): Promise<boolean> {
  const answer = await ask(`${question} [y/N] `);
  return /^\s*y(es)?\s*$/i.test(answer ?? '');
}
