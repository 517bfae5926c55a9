/** A command-line mistake: the command prints it with a pointer to its help and exits 2. */
export class UsageError extends Error {}

/** An optional integer flag within [min, max]. */
export function integerFlag(
  name: string,
  value: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < min || number > max)
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return number;
}

/**
 * The one line to print for a command-line mistake (a UsageError or one of node:util parseArgs' errors), or
 * undefined for any other error. parseArgs adds advice on positionals after the first sentence
 * ("Unknown option '--bogus'. To specify a positional argument ..."), which only confuses a typo.
 */
export function usageMessage(error: unknown): string | undefined {
  if (error instanceof UsageError) return error.message;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS') || typeof message !== 'string')
    return undefined;
  const first = message.split('. ')[0]!;
  return first.charAt(0).toLowerCase() + first.slice(1);
}
