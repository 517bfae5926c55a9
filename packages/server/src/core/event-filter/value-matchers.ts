/**
 * The tests one value of a pattern makes of one leaf of the message, as event-ruler makes them: string operators
 * see only strings; numbers compare as doubles; an anything-but passes every leaf it does not name, whatever
 * its type (null and numbers included).
 */
import { type AddressRange, inRange, parseIpAddress } from './ip-address.ts';
import type { JsonPrimitive } from './json-value.ts';
import { matchesWildcard, type WildcardPattern } from './wildcard.ts';

export type ValueMatcher =
  | { readonly kind: 'equals'; readonly value: string }
  /** A string value that is an IP address: event-ruler matches any spelling of the same address. */
  | { readonly kind: 'address'; readonly text: string; readonly range: AddressRange }
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'literal'; readonly value: boolean | null }
  | { readonly kind: 'prefix'; readonly value: string; readonly ignoreCase: boolean }
  | { readonly kind: 'suffix'; readonly value: string; readonly ignoreCase: boolean }
  | { readonly kind: 'equals-ignore-case'; readonly value: string }
  | { readonly kind: 'wildcard'; readonly pattern: WildcardPattern }
  | { readonly kind: 'numeric'; readonly range: NumericRange }
  | { readonly kind: 'cidr'; readonly range: AddressRange }
  | { readonly kind: 'exists' }
  | {
      readonly kind: 'anything-but';
      readonly strings: ReadonlySet<string>;
      readonly numbers: ReadonlySet<number>;
    }
  | { readonly kind: 'anything-but-ignore-case'; readonly values: ReadonlySet<string> }
  | { readonly kind: 'anything-but-prefix'; readonly values: readonly string[] }
  | { readonly kind: 'anything-but-suffix'; readonly values: readonly string[] }
  | { readonly kind: 'anything-but-wildcard'; readonly patterns: readonly WildcardPattern[] };

export interface NumericRange {
  readonly bottom: number;
  readonly openBottom: boolean;
  readonly top: number;
  readonly openTop: boolean;
}

export function matchesValue(matcher: ValueMatcher, leaf: JsonPrimitive): boolean {
  switch (matcher.kind) {
    case 'exists':
      return true;
    case 'literal':
      return leaf === matcher.value;
    case 'number':
      return typeof leaf === 'number' && leaf === matcher.value;
    case 'numeric':
      return typeof leaf === 'number' && inNumericRange(matcher.range, leaf);
    case 'anything-but':
      return typeof leaf === 'string'
        ? !matcher.strings.has(leaf)
        : typeof leaf !== 'number' || !matcher.numbers.has(leaf);
    case 'anything-but-ignore-case':
      return typeof leaf !== 'string' || !matcher.values.has(foldCase(leaf));
    case 'anything-but-prefix':
      return typeof leaf !== 'string' || !matcher.values.some((value) => leaf.startsWith(value));
    case 'anything-but-suffix':
      return typeof leaf !== 'string' || !matcher.values.some((value) => leaf.endsWith(value));
    case 'anything-but-wildcard':
      return typeof leaf !== 'string' || !matcher.patterns.some((pattern) => matchesWildcard(pattern, leaf));
    default:
      return typeof leaf === 'string' && matchesString(matcher, leaf);
  }
}

function matchesString(
  matcher: Extract<
    ValueMatcher,
    { kind: 'equals' | 'address' | 'prefix' | 'suffix' | 'equals-ignore-case' | 'wildcard' | 'cidr' }
  >,
  leaf: string,
): boolean {
  switch (matcher.kind) {
    case 'equals':
      return leaf === matcher.value;
    case 'address': {
      if (leaf === matcher.text) return true;
      const address = parseIpAddress(leaf);
      return address !== undefined && inRange(matcher.range, address);
    }
    case 'prefix':
      return matcher.ignoreCase ? foldCase(leaf).startsWith(matcher.value) : leaf.startsWith(matcher.value);
    case 'suffix':
      return matcher.ignoreCase ? foldCase(leaf).endsWith(matcher.value) : leaf.endsWith(matcher.value);
    case 'equals-ignore-case':
      return foldCase(leaf) === matcher.value;
    case 'wildcard':
      return matchesWildcard(matcher.pattern, leaf);
    case 'cidr': {
      const address = parseIpAddress(leaf);
      return address !== undefined && inRange(matcher.range, address);
    }
  }
}

function inNumericRange(range: NumericRange, value: number): boolean {
  const aboveBottom = range.openBottom ? value > range.bottom : value >= range.bottom;
  const belowTop = range.openTop ? value < range.top : value <= range.top;
  return aboveBottom && belowTop;
}

/**
 * The text with each character put in one case, so that two texts equal ignoring case fold to the same string
 * (event-ruler compares character by character, each either in lower or upper case). A character whose case
 * mapping is not a single character is kept as it is, so folding never shifts characters.
 */
export function foldCase(text: string): string {
  if (isAscii(text)) return text.toLowerCase();
  let folded = '';
  for (const char of text) {
    const mapped = char.toUpperCase().toLowerCase();
    folded += [...mapped].length === 1 ? mapped : char;
  }
  return folded;
}

function isAscii(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) > 0x7f) return false;
  return true;
}
