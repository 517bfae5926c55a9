import { errors, type SqsError } from '../core/errors.ts';
import { isJsonObject, readJsonObject } from '../shared/json-object.ts';
import type { DecodedRequest, ProtocolAdapter, WireAnswer } from './adapter.ts';
import { membersOf, operation, type Shape, type StructureShape, setEntry } from './model.ts';

/** AWS JSON 1.0: `X-Amz-Target: AmazonSQS.<Action>`, the input as a JSON object. */
export const JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';
const TARGET_PREFIX = 'AmazonSQS.';

export function isJsonRequest(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return typeof headers['x-amz-target'] === 'string';
}

/** The action a target names and the body's members, type-checked against the model. */
export function decodeJsonRequest(target: string, body: string): DecodedRequest {
  if (!target.startsWith(TARGET_PREFIX)) {
    throw errors.unknownOperation(target);
  }
  const action = target.slice(TARGET_PREFIX.length);
  if (body.trim() === '') return { action, input: {} };
  if (nestedDeeperThan(body, MAX_JSON_DEPTH)) {
    throw errors.serialization(`The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  const reading = readJsonObject(body);
  if ('problem' in reading) {
    throw errors.serialization(
      reading.problem === 'not JSON'
        ? 'The request body is not valid JSON.'
        : 'The request body must be a JSON object.',
    );
  }
  return { action, input: checkJsonInput(action, reading.object) };
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

/**
 * SQS is query-compatible: besides `__type`, it sends the legacy Query code in `x-amzn-query-error`,
 * which SDKs expose as the error code (e.g. AWS.SimpleQueueService.NonExistentQueue).
 */
export function renderJsonError(error: SqsError): WireAnswer {
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

/** AWS JSON 1.0, chosen by the request's X-Amz-Target header. */
export const jsonProtocol: ProtocolAdapter = {
  name: 'json',
  checkGet() {
    // POST only; SQS answers a GET as one that names no operation.
    throw errors.noOperation();
  },
  decode: (request) => decodeJsonRequest(String(request.headers['x-amz-target']), request.body),
  render: (_action, output) => ({
    status: 200,
    headers: { 'content-type': JSON_CONTENT_TYPE },
    body: JSON.stringify(output),
  }),
  renderError: (error) => renderJsonError(error),
};

// ---------------------------------------------------------------------------------------------------------
// JSON-protocol input checking.
//
// Decisions, matching what real SQS (JSON 1.0) does where we know it:
// - Types are strict. Real SQS answers `"MaxNumberOfMessages": "10"` with SerializationException
//   "STRING_VALUE can not be converted to an Integer"; every AWS SDK and the CLI send JSON numbers, so no
//   client needs leniency. Our message keeps that wording and adds the member path.
// - Integers must be whole numbers in the 32-bit range (64-bit safe range for longs); 1.5 is refused.
// - Blobs are base64 strings, checked for base64 syntax and left encoded (the core decodes them).
// - Unknown members are dropped, at every level, as AWS services ignore members they do not know
//   (forward compatibility with newer clients). Map keys are data, never dropped.
// - A JSON null member counts as absent (dropped). A null inside a list or as a map value is refused.
// - Required members are not checked here: the core reports MissingParameter in SQS's words.
// - An unknown action's input is returned as given (an object), for the core to answer the action.
// ---------------------------------------------------------------------------------------------------------

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The JSON token name real SQS puts in its SerializationException messages. */
const tokenOf = (value: unknown): string => {
  if (value === null) return 'NULL_VALUE';
  if (Array.isArray(value)) return 'START_ARRAY';
  switch (typeof value) {
    case 'string':
      return 'STRING_VALUE';
    case 'number':
      return 'NUMBER_VALUE';
    case 'boolean':
      return 'BOOLEAN_VALUE';
    default:
      return 'START_OBJECT';
  }
};

const TYPE_NAMES: Record<Shape['type'], string> = {
  string: 'a String',
  integer: 'an Integer',
  long: 'a Long',
  boolean: 'a Boolean',
  blob: 'a Blob',
  list: 'a List',
  map: 'a Map',
  structure: 'a Structure',
};

/**
 * A member whose value does not match the model. It is thrown up through the lists, maps and structures holding
 * it, each adding its step to `steps` (innermost first), so a path is built only for a request that fails.
 */
class MemberMismatch {
  readonly steps: string[] = [];
  constructor(readonly toError: (path: string) => SqsError) {}
}

const mismatch = (shape: Shape, value: unknown) =>
  new MemberMismatch((path) =>
    errors.serialization(`${tokenOf(value)} can not be converted to ${TYPE_NAMES[shape.type]} (at ${path})`),
  );

/** `error` with the step into the member that threw it, when it is a MemberMismatch. */
const within = (error: unknown, step: string): unknown => {
  if (error instanceof MemberMismatch) error.steps.push(step);
  return error;
};

const checkValue = (shape: Shape, value: unknown): unknown => {
  switch (shape.type) {
    case 'string':
      if (typeof value !== 'string') throw mismatch(shape, value);
      return value;
    case 'integer':
    case 'long': {
      if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch(shape, value);
      const inRange =
        shape.type === 'integer' ? value >= INT32_MIN && value <= INT32_MAX : Number.isSafeInteger(value);
      if (!inRange)
        throw new MemberMismatch((path) =>
          errors.serialization(`Numeric value ${value} out of range (at ${path})`),
        );
      return value;
    }
    case 'boolean':
      if (typeof value !== 'boolean') throw mismatch(shape, value);
      return value;
    case 'blob':
      if (typeof value !== 'string') throw mismatch(shape, value);
      if (!BASE64.test(value))
        throw new MemberMismatch((path) => errors.serialization(`Invalid base64 value (at ${path})`));
      return value;
    case 'list': {
      if (!Array.isArray(value)) throw mismatch(shape, value);
      const out = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        try {
          out[i] = checkValue(shape.member, value[i]);
        } catch (error) {
          throw within(error, `[${i}]`);
        }
      }
      return out;
    }
    case 'map': {
      if (!isJsonObject(value)) throw mismatch(shape, value);
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        try {
          setEntry(out, key, checkValue(shape.value, item));
        } catch (error) {
          throw within(error, `.${key}`);
        }
      }
      return out;
    }
    case 'structure':
      if (!isJsonObject(value)) throw mismatch(shape, value);
      return checkStructure(shape, value);
  }
};

const checkStructure = (shape: StructureShape, value: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [name, member] of membersOf(shape)) {
    const item = value[name];
    if (item === undefined || item === null) continue;
    try {
      out[name] = checkValue(member.shape, item);
    } catch (error) {
      throw within(error, `.${name}`);
    }
  }
  return out;
};

/**
 * Checks a JSON-protocol input against the model's member types and returns a copy holding only the
 * members the model knows. Throws SqsError SerializationException naming the member on a mismatch.
 */
export function checkJsonInput(action: string, input: unknown): Record<string, unknown> {
  if (input === undefined) return {};
  if (!isJsonObject(input)) {
    throw errors.serialization(`${tokenOf(input)} can not be converted to a Structure (at the request body)`);
  }
  const found = operation(action);
  if (found === undefined) return input;
  try {
    return checkStructure(found.input, input);
  } catch (error) {
    if (!(error instanceof MemberMismatch)) throw error;
    // Steps run innermost first; the path starts at a top-level member, without the structure's dot.
    throw error.toError(error.steps.reverse().join('').slice(1));
  }
}
