import { errors } from './errors.ts';

/**
 * SQS's presence and range rules for action inputs, once for both protocols. The protocol adapters have
 * already checked every member's type against the API model, so these see typed values.
 */

/** A required string member: absent or empty is MissingParameter, as SQS answers. */
export function requiredString<Name extends string>(
  input: { readonly [K in Name]?: string },
  name: Name,
): string {
  const value = input[name];
  if (value === undefined || value === '') throw errors.missingParameter(name);
  return value;
}

/** An optional integer member within [min, max]; `reason` is SQS's wording for the range. */
export function optionalInteger<Name extends string>(
  input: { readonly [K in Name]?: number },
  name: Name,
  min: number,
  max: number,
  reason = `Must be between ${min} and ${max}, if provided.`,
): number | undefined {
  const value = input[name];
  if (value !== undefined && (value < min || value > max)) throw errors.invalidParameter(name, value, reason);
  return value;
}

/**
 * The entries of a batch action, checked as SQS does before any entry runs. No entries at all is an empty
 * batch (in the Query protocol an empty list is simply absent).
 */
export function batchEntries<Entry extends { Id?: string }>(
  entries: readonly Entry[] | undefined,
  entryName: string,
): (Entry & { Id: string })[] {
  if (entries === undefined || entries.length === 0) throw errors.emptyBatch(entryName);
  if (entries.length > 10) throw errors.tooManyEntries(entries.length);
  const seen = new Set<string>();
  const checked: (Entry & { Id: string })[] = [];
  for (const entry of entries) {
    const id = entry.Id;
    if (id === undefined || !/^[A-Za-z0-9_-]{1,80}$/.test(id)) throw errors.invalidBatchEntryId();
    if (seen.has(id)) throw errors.batchIdsNotDistinct(id);
    seen.add(id);
    checked.push({ ...entry, Id: id });
  }
  return checked;
}
