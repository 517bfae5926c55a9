/**
 * Reading a JSON object from text: a request body, a policy or redrive policy, a console request. Every
 * reader that needs an object (not an array, a string or null) goes through here and words its own error.
 */
export type JsonObject = Record<string, unknown>;

/** The object, or why the text is not one: not JSON at all, or JSON of another kind. */
export type JsonObjectReading = { object: JsonObject } | { problem: 'not JSON' | 'not an object' };

export function readJsonObject(text: string): JsonObjectReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problem: 'not JSON' };
  }
  return isJsonObject(parsed) ? { object: parsed } : { problem: 'not an object' };
}

/** The object the text holds, or undefined when it holds none. */
export function parseJsonObject(text: string): JsonObject | undefined {
  const reading = readJsonObject(text);
  return 'object' in reading ? reading.object : undefined;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
