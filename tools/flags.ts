import { type ParseArgsConfig, parseArgs as parseFlags } from 'node:util';

/**
 * A flag's positive number (an integer unless `decimals`), or `fallback` when the flag is not given. The
 * commands run by hand (the benches, the chaos runs, the scripts) read their flags with node:util's parseArgs
 * and their numbers with this.
 */
export function positive(flag: string, raw: string | undefined, fallback: number, decimals = false): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (!decimals && !Number.isInteger(value)))
    throw new Error(`--${flag} needs a positive ${decimals ? 'number' : 'integer'}, got ${raw}`);
  return value;
}

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/**
 * A command's options, as `parse` reads them, or its exit code once there is nothing to run: `--help` printed
 * `usage` (0), or a flag was unknown or had a bad value (2, the reason and `usage` on stderr).
 */
export function flagsOf<T>(usage: string, parse: () => T | 'help'): { options: T } | { exitCode: 0 | 2 } {
  let parsed: T | 'help';
  try {
    parsed = parse();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    return { exitCode: 2 };
  }
  if (parsed === 'help') {
    process.stdout.write(`${usage}\n`);
    return { exitCode: 0 };
  }
  return { options: parsed };
}

/**
 * The flags of a command run by hand (`npm run test:chaos -- …`) as `flagsOf` reads them, exiting at once when
 * there is nothing to run, before any work.
 */
export function commandFlags<const O extends FlagOptions, R>(
  usage: string,
  options: O,
  check: (values: ReturnType<typeof parseFlags<{ options: O; strict: true }>>['values']) => R,
  argv: readonly string[] = process.argv.slice(2),
): R {
  const flags = flagsOf(usage, () =>
    argv.includes('--help') || argv.includes('-h')
      ? 'help'
      : check(parseFlags({ args: [...argv], options, strict: true }).values),
  );
  if ('exitCode' in flags) process.exit(flags.exitCode);
  return flags.options;
}

/** A comma-separated list of modes, each one of `known`. */
export function modesOf<const M extends string>(list: string, known: readonly M[]): M[] {
  const modes = list.split(',');
  for (const mode of modes) if (!known.includes(mode as M)) throw new Error(`unknown mode ${mode}`);
  return modes as M[];
}
