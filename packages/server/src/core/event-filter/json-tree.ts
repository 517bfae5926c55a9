/**
 * SNS reads a filter policy twice, as its errors show: once into a JSON tree (a syntax error there reads
 * "failed to parse JSON. ..." with the source redacted), then the tree written back compactly is compiled by
 * event-ruler (whose errors quote that compact text). This file is the first read and the compact writing,
 * both as Jackson does them: a repeated key keeps its first position and its last value, integers print as
 * written, and other numbers print as Java's Double.toString.
 */
import { JsonReader, PatternError, type TokenKind } from './json-reader.ts';

export type JsonTree =
  | { readonly kind: 'object'; readonly entries: Map<string, JsonTree> }
  | { readonly kind: 'array'; readonly items: JsonTree[] }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'number'; readonly text: string; readonly integer: boolean }
  | { readonly kind: 'literal'; readonly text: 'true' | 'false' | 'null' };

/** The first JSON value in `text`, or undefined when the text holds only white space. */
export function readJsonTree(text: string, source: string): JsonTree | undefined {
  const reader = new JsonReader(text, source);
  const token = reader.nextToken();
  return token === undefined ? undefined : readValue(reader, token);
}

function readValue(reader: JsonReader, token: TokenKind): JsonTree {
  switch (token) {
    case 'START_OBJECT': {
      const entries = new Map<string, JsonTree>();
      for (let next = reader.nextToken(); next !== 'END_OBJECT'; next = reader.nextToken()) {
        const name = reader.currentName();
        entries.set(name, readValue(reader, expectToken(reader.nextToken())));
      }
      return { kind: 'object', entries };
    }
    case 'START_ARRAY': {
      const items: JsonTree[] = [];
      for (let next = reader.nextToken(); next !== 'END_ARRAY'; next = reader.nextToken()) {
        items.push(readValue(reader, expectToken(next)));
      }
      return { kind: 'array', items };
    }
    case 'VALUE_STRING':
      return { kind: 'string', value: reader.getText() };
    case 'VALUE_NUMBER_INT':
    case 'VALUE_NUMBER_FLOAT':
      return { kind: 'number', text: reader.getText(), integer: token === 'VALUE_NUMBER_INT' };
    case 'VALUE_TRUE':
      return { kind: 'literal', text: 'true' };
    case 'VALUE_FALSE':
      return { kind: 'literal', text: 'false' };
    case 'VALUE_NULL':
      return { kind: 'literal', text: 'null' };
    default:
      // The reader only hands out END_* where a container closes, which the loops above consume.
      throw new PatternError(`Unexpected token ${token}`);
  }
}

function expectToken(token: TokenKind | undefined): TokenKind {
  // Inside a container the reader reports the end of the text itself, so a token is always there.
  if (token === undefined) throw new PatternError('Unexpected end-of-input');
  return token;
}

/** The tree as Jackson's ObjectMapper writes it, without white space. */
export function writeCompactJson(tree: JsonTree): string {
  switch (tree.kind) {
    case 'object':
      return `{${[...tree.entries].map(([key, value]) => `${quoteJson(key)}:${writeCompactJson(value)}`).join(',')}}`;
    case 'array':
      return `[${tree.items.map(writeCompactJson).join(',')}]`;
    case 'string':
      return quoteJson(tree.value);
    case 'number':
      return tree.integer ? writeJavaInteger(tree.text) : javaDoubleToString(Number(tree.text));
    case 'literal':
      return tree.text;
  }
}

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  8: '\\b',
  9: '\\t',
  10: '\\n',
  12: '\\f',
  13: '\\r',
  34: '\\"',
  92: '\\\\',
};

/** Jackson's string escaping: quotes, backslashes and control characters only, upper-case hex. */
function quoteJson(value: string): string {
  let out = '"';
  let runStart = 0;
  for (let index = 0; index < value.length; index++) {
    const char = value.charCodeAt(index);
    if (char >= 0x20 && char !== 0x22 && char !== 0x5c) continue;
    out += value.slice(runStart, index);
    out += SHORT_ESCAPES[char] ?? `\\u00${char.toString(16).toUpperCase().padStart(2, '0')}`;
    runStart = index + 1;
  }
  return `${out + value.slice(runStart)}"`;
}

/** An integer as Jackson's IntNode, LongNode or BigIntegerNode prints it: "-0" reads as 0. */
function writeJavaInteger(text: string): string {
  return /^-0+$/.test(text) ? '0' : text;
}

/** Java's Double.toString: shortest digits, plain between 10^-3 and 10^7, else d.dddE±n. */
function javaDoubleToString(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const sign = value < 0 ? '-' : '';
  const magnitude = Math.abs(value);
  const [mantissa = '0', exponentText = '0'] = magnitude.toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    if (exponent >= 0) {
      const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
      return `${sign}${whole}.${digits.slice(exponent + 1) || '0'}`;
    }
    return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  }
  return `${sign}${digits[0]}.${digits.slice(1) || '0'}E${exponent}`;
}
