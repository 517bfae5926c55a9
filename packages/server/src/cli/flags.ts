/** A command-line mistake: the command prints it with its help and exits 2. */
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
