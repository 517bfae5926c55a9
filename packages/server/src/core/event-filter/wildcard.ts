/**
 * Wildcard values (`*` for any run of characters, `\*` and `\\` for the characters themselves), matched in time
 * linear in the value and the pattern: the literal pieces between stars are found left to right with KMP, which
 * is exact for star-only patterns and never backtracks.
 */
import { PatternError } from './json-reader.ts';

export interface WildcardPattern {
  /** The value as written in the pattern. */
  readonly source: string;
  readonly starCount: number;
  /** The literal pieces around the stars: one more than starCount. */
  readonly pieces: readonly string[];
  readonly failures: readonly (readonly number[])[];
}

/** Reads a wildcard value, with event-ruler's errors (positions are UTF-8 bytes in the quoted value). */
export function parseWildcard(source: string): WildcardPattern {
  const pieces: string[] = [];
  let piece = '';
  let bytePosition = 1; // event-ruler reads the value with its opening quote
  for (let index = 0; index < source.length; index++) {
    const char = source.charCodeAt(index);
    if (char === 0x2a) {
      if (source.charCodeAt(index + 1) === 0x2a) {
        throw new PatternError(`Consecutive wildcard characters at pos ${bytePosition}`);
      }
      pieces.push(piece);
      piece = '';
    } else if (char === 0x5c) {
      const next = source.charCodeAt(index + 1);
      if (next !== 0x2a && next !== 0x5c)
        throw new PatternError(`Invalid escape character at pos ${bytePosition}`);
      piece += source[index + 1];
      index++;
      bytePosition++;
    } else {
      piece += source[index];
      bytePosition += utf8Length(char, source.charCodeAt(index + 1));
      if (char >= 0xd800 && char <= 0xdbff && index + 1 < source.length) {
        piece += source[index + 1];
        index++;
      }
      continue;
    }
    bytePosition++;
  }
  pieces.push(piece);
  return { source, starCount: pieces.length - 1, pieces, failures: pieces.map(failureTable) };
}

export function matchesWildcard(pattern: WildcardPattern, value: string): boolean {
  const { pieces } = pattern;
  const first = pieces[0] ?? '';
  if (pieces.length === 1) return value === first;
  const last = pieces[pieces.length - 1] ?? '';
  if (value.length < first.length + last.length || !value.startsWith(first) || !value.endsWith(last))
    return false;
  let from = first.length;
  const end = value.length - last.length;
  for (let index = 1; index < pieces.length - 1; index++) {
    const found = findPiece(pieces[index] ?? '', pattern.failures[index] ?? [], value, from, end);
    if (found < 0) return false;
    from = found + (pieces[index] ?? '').length;
  }
  return true;
}

/**
 * The most wildcard-pattern states an input can keep alive at once (event-ruler's measure of a rule's cost: how
 * many wildcard prefixes a worst-case value matches together), over the patterns given, or Infinity past `cap`.
 */
export function worstCaseActiveStates(patterns: readonly WildcardPattern[], cap: number): number {
  const programs = patterns.map(program);
  const alphabet = new Set<string>(['\u0000']);
  for (const steps of programs) for (const step of steps) if (step !== STAR) alphabet.add(step);
  const start = closure(
    programs,
    programs.map(() => [0]),
  );
  const seen = new Set<string>([key(start)]);
  const queue = [start];
  let worst = 0;
  for (let head = 0; head < queue.length; head++) {
    const states = queue[head] ?? [];
    const active = states.reduce(
      (sum, positions, index) => sum + positions.filter((p) => p < (programs[index]?.length ?? 0)).length,
      0,
    );
    worst = Math.max(worst, active);
    if (worst > cap || seen.size > MAX_EXPLORED_STATE_SETS) return Number.POSITIVE_INFINITY;
    for (const char of alphabet) {
      const next = closure(
        programs,
        states.map((positions, index) => advance(programs[index] ?? [], positions, char)),
      );
      if (next.every((positions) => positions.length === 0)) continue;
      const nextKey = key(next);
      if (!seen.has(nextKey)) {
        seen.add(nextKey);
        queue.push(next);
      }
    }
  }
  return worst;
}

const MAX_EXPLORED_STATE_SETS = 20_000;
const STAR = Symbol('star');
type Step = string | typeof STAR;

function program(pattern: WildcardPattern): Step[] {
  const steps: Step[] = [];
  pattern.pieces.forEach((piece, index) => {
    if (index > 0) steps.push(STAR);
    for (const char of piece) steps.push(char);
  });
  return steps;
}

function advance(steps: readonly Step[], positions: readonly number[], char: string): number[] {
  const next: number[] = [];
  for (const position of positions) {
    const step = steps[position];
    if (step === STAR) next.push(position);
    else if (step === char) next.push(position + 1);
  }
  return next;
}

function closure(programs: readonly (readonly Step[])[], sets: readonly number[][]): number[][] {
  return sets.map((positions, index) => {
    const steps = programs[index] ?? [];
    const reached = new Set(positions);
    for (const position of reached) if (steps[position] === STAR) reached.add(position + 1);
    return [...reached].sort((a, b) => a - b);
  });
}

function key(sets: readonly number[][]): string {
  return sets.map((positions) => positions.join(',')).join('|');
}

function failureTable(piece: string): number[] {
  const table = new Array<number>(piece.length).fill(0);
  let matched = 0;
  for (let index = 1; index < piece.length; index++) {
    while (matched > 0 && piece[index] !== piece[matched]) matched = table[matched - 1] ?? 0;
    if (piece[index] === piece[matched]) matched++;
    table[index] = matched;
  }
  return table;
}

/** The first index at or after `from` where `piece` occurs wholly before `end`, or -1 (KMP). */
function findPiece(
  piece: string,
  failures: readonly number[],
  value: string,
  from: number,
  end: number,
): number {
  if (piece.length === 0) return from;
  let matched = 0;
  for (let index = from; index < end; index++) {
    while (matched > 0 && value[index] !== piece[matched]) matched = failures[matched - 1] ?? 0;
    if (value[index] === piece[matched]) matched++;
    if (matched === piece.length) return index - piece.length + 1;
  }
  return -1;
}

function utf8Length(char: number, next: number): number {
  if (char < 0x80) return 1;
  if (char < 0x800) return 2;
  if (char >= 0xd800 && char <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) return 4;
  return 3;
}
