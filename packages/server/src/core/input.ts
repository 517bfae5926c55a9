import { errors } from './errors.ts';

/**
 * Reading action inputs. The protocol adapters have already checked member types against the API model;
 * these helpers apply SQS's presence and range rules, once for both protocols.
 */
export type Input = Record<string, unknown>;

export function requiredString(input: Input, name: string): string {
  const value = input[name];
  if (value === undefined || value === null || value === '') throw errors.missingParameter(name);
  if (typeof value !== 'string') throw errors.invalidParameter(name, value, 'Must be a string.');
  return value;
}

export function optionalString(input: Input, name: string): string | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw errors.invalidParameter(name, value, 'Must be a string.');
  return value;
}

/** An optional integer within [min, max]; `reason` is SQS's wording for the range. */
export function optionalInteger(
  input: Input,
  name: string,
  min: number,
  max: number,
  reason = `Must be between ${min} and ${max}, if provided.`,
): number | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw errors.invalidParameter(name, value, 'Must be an integer.');
  }
  if (value < min || value > max) throw errors.invalidParameter(name, value, reason);
  return value;
}

export function optionalStringList(input: Input, name: string): string[] | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw errors.invalidParameter(name, JSON.stringify(value), 'Must be a list of strings.');
  }
  return value as string[];
}

export function optionalStringMap(input: Input, name: string): Record<string, string> | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw errors.invalidParameter(name, JSON.stringify(value), 'Must be a map of strings.');
  }
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw errors.invalidParameter(`${name}.${key}`, item, 'Must be a string.');
    result[key] = item;
  }
  return result;
}

/**
 * The entries of a batch action, checked as SQS does before any entry runs. No entries at all is an empty
 * batch (in the Query protocol an empty list is simply absent).
 */
export function batchEntries<Entry extends { Id?: string }>(
  entries: readonly Entry[] | undefined,
  entryName: string,
): (Entry & { Id: string })[] {
  const value: readonly unknown[] = entries ?? [];
  if (!Array.isArray(value) || value.some((entry) => entry === null || typeof entry !== 'object')) {
    throw errors.invalidParameter('Entries', JSON.stringify(value), 'Must be a list of entries.');
  }
  if (value.length === 0) throw errors.emptyBatch(entryName);
  if (value.length > 10) throw errors.tooManyEntries(value.length);
  const seen = new Set<string>();
  const checked: (Entry & { Id: string })[] = [];
  for (const entry of entries ?? []) {
    const id = entry.Id;
    if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,80}$/.test(id)) throw errors.invalidBatchEntryId();
    if (seen.has(id)) throw errors.batchIdsNotDistinct(id);
    seen.add(id);
    checked.push({ ...entry, Id: id });
  }
  return checked;
}
