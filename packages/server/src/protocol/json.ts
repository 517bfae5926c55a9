import { errors, type SqsError } from '../core/errors.ts';
import type { Input } from '../core/input.ts';

/** AWS JSON 1.0: `X-Amz-Target: AmazonSQS.<Action>`, the input as a JSON object. */
export const JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';
const TARGET_PREFIX = 'AmazonSQS.';

export function isJsonRequest(headers: Record<string, string | string[] | undefined>): boolean {
  return typeof headers['x-amz-target'] === 'string';
}

export function decodeJsonRequest(target: string, body: string): { action: string; input: Input } {
  if (!target.startsWith(TARGET_PREFIX)) {
    throw errors.unknownOperation(target);
  }
  const action = target.slice(TARGET_PREFIX.length);
  if (body.trim() === '') return { action, input: {} };
  if (nestedDeeperThan(body, MAX_JSON_DEPTH)) {
    throw errors.serialization(`The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw errors.serialization('The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw errors.serialization('The request body must be a JSON object.');
  }
  return { action, input: parsed as Input };
}

/**
 * Far deeper than any SQS input (a batch entry's attribute's list of strings is six levels down), and checked
 * before parsing: a few megabytes of brackets would otherwise become millions of nested arrays first.
 */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests brackets deeper than `limit`, found without parsing it: brackets are counted
 * outside strings, and strings are skipped with indexOf (a quote after an odd run of backslashes is
 * escaped). Stops as soon as the limit is passed; malformed text is left for JSON.parse to refuse.
 */
export function nestedDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) i = closingQuote(text, i);
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return false;
}

/** The index of the quote that ends the string opened at `opening`, or the text's length if none does. */
function closingQuote(text: string, opening: number): number {
  for (let quote = text.indexOf('"', opening + 1); quote >= 0; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return text.length;
}

export function renderJsonResponse(output: Record<string, unknown>): string {
  return JSON.stringify(output);
}

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * SQS is query-compatible: besides `__type`, it sends the legacy Query code in `x-amzn-query-error`,
 * which SDKs expose as the error code (e.g. AWS.SimpleQueueService.NonExistentQueue).
 */
export function renderJsonError(error: SqsError): RenderedError {
  const { spec } = error;
  return {
    status: spec.status,
    headers: {
      'content-type': JSON_CONTENT_TYPE,
      'x-amzn-query-error': `${spec.queryCode};${spec.sender ? 'Sender' : 'Receiver'}`,
    },
    body: JSON.stringify({ __type: spec.jsonType, message: error.message }),
  };
}
