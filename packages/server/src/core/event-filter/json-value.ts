/** A JSON value as `JSON.parse` returns it, typed: what messages, bodies and event records are matched against. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObjectValue;

export interface JsonObjectValue {
  readonly [key: string]: JsonValue;
}

/** The leaves of a JSON document that a pattern compares values with. */
export type JsonPrimitive = null | boolean | number | string;

/** The value of `text`, or undefined when it is not JSON. */
export function parseJsonValue(text: string): JsonValue | undefined {
  try {
    // JSON.parse only ever builds JSON values, so its untyped result is exactly a JsonValue.
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

export function isJsonObjectValue(value: JsonValue | undefined): value is JsonObjectValue {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
