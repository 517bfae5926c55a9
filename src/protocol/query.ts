/**
 * SQS Query protocol, request side: a form-encoded request (`Action=SendMessage&QueueUrl=...`) becomes the
 * action name and its input in the JSON protocol's shape, so the core sees one input format. Pure
 * translation: only syntax is checked here (integers, booleans); what the values mean is the core's job.
 */
import { errors } from '../core/errors.ts';
import { operation, type Shape, type StructureShape } from './model.ts';

export interface QueryRequest {
  readonly action: string;
  readonly input: Record<string, unknown>;
}

const INTEGER = /^[+-]?\d+$/;

/** The params below one prefix, indexed by the N of `<prefix>.N...`, in numeric order. */
const indices = (keys: readonly string[], base: string): number[] => {
  const found = new Set<number>();
  const start = `${base}.`;
  for (const key of keys) {
    if (!key.startsWith(start)) continue;
    const end = key.indexOf('.', start.length);
    const segment = key.slice(start.length, end < 0 ? undefined : end);
    // Only positive decimal indices, as clients number from 1; anything else is not a list item.
    if (/^[1-9]\d{0,8}$/.test(segment)) found.add(Number(segment));
  }
  return [...found].sort((a, b) => a - b);
};

class Decoder {
  readonly #params: URLSearchParams;
  readonly #keys: readonly string[];

  constructor(params: URLSearchParams) {
    this.#params = params;
    this.#keys = [...new Set(params.keys())];
  }

  structure(shape: StructureShape, prefix: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(shape.members)) {
      const value = this.value(member.shape, prefix + member.queryName);
      if (value !== undefined) out[name] = value;
    }
    return out;
  }

  /** The value at `key` (a param name, or the prefix of nested ones), or undefined if absent. */
  value(shape: Shape, key: string): unknown {
    switch (shape.type) {
      case 'string':
      case 'blob':
        // Blobs stay base64, as in the JSON shape; the core decodes them.
        return this.#params.get(key) ?? undefined;
      case 'integer':
      case 'long': {
        const raw = this.#params.get(key);
        if (raw === null) return undefined;
        const value = Number(raw.trim());
        if (!INTEGER.test(raw.trim()) || !Number.isSafeInteger(value)) {
          throw errors.invalidParameter(key, raw, 'Must be an integer.');
        }
        return value;
      }
      case 'boolean': {
        const raw = this.#params.get(key);
        if (raw === null) return undefined;
        const lower = raw.trim().toLowerCase();
        if (lower === 'true') return true;
        if (lower === 'false') return false;
        throw errors.invalidParameter(key, raw, 'Must be true or false.');
      }
      case 'structure': {
        if (!this.#keys.some((k) => k.startsWith(`${key}.`))) return undefined;
        return this.structure(shape, `${key}.`);
      }
      case 'list': {
        // botocore's flattened list: items at `<item name>.N`, the item name replacing the member's.
        const base = shape.flattened
          ? `${key.slice(0, key.lastIndexOf('.') + 1)}${shape.memberName ?? key.slice(key.lastIndexOf('.') + 1)}`
          : `${key}.${shape.memberName ?? 'member'}`;
        const found = indices(this.#keys, base);
        // botocore sends an empty list as the bare member name with an empty value (`AttributeNames=`).
        if (found.length === 0) return this.#params.get(key) === '' ? [] : undefined;
        const items: unknown[] = [];
        for (const n of found) {
          const item = this.value(shape.member, `${base}.${n}`);
          if (item !== undefined) items.push(item);
        }
        return items;
      }
      case 'map': {
        const base = shape.flattened ? key : `${key}.entry`;
        const found = indices(this.#keys, base);
        if (found.length === 0) return undefined;
        const out: Record<string, unknown> = {};
        for (const n of found) {
          const keyParam = `${base}.${n}.${shape.keyName}`;
          const valueParam = `${base}.${n}.${shape.valueName}`;
          const name = this.#params.get(keyParam);
          if (name === null) throw errors.missingParameter(keyParam);
          const value = this.value(shape.value, valueParam);
          if (value === undefined) throw errors.missingParameter(valueParam);
          out[name] = value;
        }
        return out;
      }
    }
  }
}

/** Decodes params against any structure shape; decodeQueryRequest's engine, exported for tests. */
export function decodeStructure(shape: StructureShape, params: URLSearchParams): Record<string, unknown> {
  return new Decoder(params).structure(shape, '');
}

/**
 * Decodes a Query request's params (the form body, or the URL's query string for GET) into the action and
 * its JSON-shaped input. `path` is the request path: a request posted to a queue's URL
 * (`/000000000000/myqueue`) without a QueueUrl param gets the path as QueueUrl, which the core resolves.
 * An unknown action is returned as is, with an empty input, for the core to answer.
 */
export function decodeQueryRequest(params: URLSearchParams, path: string): QueryRequest {
  const action = params.get('Action')?.trim();
  if (action === undefined || action === '') throw errors.missingParameter('Action');
  const found = operation(action);
  if (found === undefined) return { action, input: {} };
  const input = decodeStructure(found.input, params);
  if (input.QueueUrl === undefined && 'QueueUrl' in found.input.members && path !== '' && path !== '/') {
    input.QueueUrl = path;
  }
  return { action, input };
}
