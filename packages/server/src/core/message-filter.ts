import { RE2JS } from 're2js';

/**
 * Which messages `sluice redrive --filter` moves, and which the console's and API's message search finds. A
 * filter is `SUBJECT=VALUE` (equal) or `SUBJECT~PATTERN` (matches), where SUBJECT is
 *   id               the message id
 *   attr.NAME        a message attribute's string value (String, Number and their custom types)
 *   body.PATH        a field of a JSON body, PATH in dots (`body.customer.tier`, `body.items.0.sku`)
 *   body             the whole body as text
 * Several filters must all match. A message whose body is not JSON matches no `body.PATH` filter.
 *
 * A PATTERN is an RE2 regular expression, run by re2js in time linear in the value, whatever the pattern
 * (docs/decisions/linear-time-search.md): JavaScript's own backtracking RegExp took 25 s over 32 characters
 * with `^(a+)+$`. Linear is not yet cheap: a pattern that defeats RE2's DFA costs about a few tens of
 * nanoseconds per character per instruction of its program, so one message's matching work is capped too.
 */
export interface MessageFilter {
  text: string;
  subject: { kind: 'id' } | { kind: 'attribute'; name: string } | { kind: 'body'; path: string[] };
  test: (value: string) => boolean;
  /** Matching work per character of the value: the pattern's RE2 program size; 0 for = and contains. */
  workPerCharacter: number;
}

export interface FilterableMessage {
  MessageId?: string;
  Body?: string;
  MessageAttributes?: Record<string, { StringValue?: string; DataType?: string }>;
}

/**
 * A search's patterns together compile to at most this many RE2 instructions: compiling takes time in the
 * program's size (about 10 µs an instruction on a small machine), which counted repeats multiply (`x{1000}` is
 * 7 characters and 1,000 instructions). Literal text costs one a character: fifty message ids in one
 * alternation are 2,000.
 */
export const PATTERN_INSTRUCTIONS_MAX = 10_000;
/** Most filters one search takes. */
export const FILTERS_MAX = 20;
/**
 * Most matching work one message may take, in program instructions times characters: at worst (a pattern
 * that defeats the DFA) under a second on a small machine, and a pattern of 16 instructions over a 1 MiB
 * body, 256 over 64 KiB.
 */
export const MESSAGE_WORK_MAX = 2 ** 24;

/** Matching a message would take more than MESSAGE_WORK_MAX: the search is refused rather than run. */
export class FilterWorkError extends Error {}

/**
 * Several filters, all of which must match: at most FILTERS_MAX, their patterns PATTERN_INSTRUCTIONS_MAX
 * instructions together, refused from an upper bound read off their text before any is compiled.
 */
export function parseFilters(texts: readonly string[]): MessageFilter[] {
  if (texts.length > FILTERS_MAX) throw new Error(`at most ${FILTERS_MAX} filters can be given at once`);
  const parts = texts.map(splitFilter);
  const patterns = parts.filter((part) => part.operator === '~');
  const bound = patterns.reduce((sum, part) => sum + instructionsBound(part.value), 0);
  if (bound > PATTERN_INSTRUCTIONS_MAX) throw tooLarge(bound);
  const filters = parts.map(toFilter);
  const size = filters.reduce((sum, filter) => sum + filter.workPerCharacter, 0);
  if (size > PATTERN_INSTRUCTIONS_MAX) throw tooLarge(size);
  return filters;
}

function tooLarge(instructions: number): Error {
  return new Error(
    `the filters' patterns come to ${instructions} instructions together, over the ${PATTERN_INSTRUCTIONS_MAX} one search may use: fewer counted repeats ({n}), or shorter patterns`,
  );
}

/**
 * At least the instructions RE2 compiles `pattern` to, read off the text: each character, class or escape one,
 * a group its content, and a counted repeat its operand that many times, nested repeats multiplying.
 */
export function instructionsBound(pattern: string): number {
  /** The size of each open group's content so far, the outermost first. */
  const open = [0];
  /** The size of the last atom or group: what a repeat after it repeats. */
  let last = 0;
  const add = (size: number) => {
    open[open.length - 1]! += size;
    last = size;
  };
  for (let at = 0; at < pattern.length; at++) {
    const char = pattern[at];
    const repeat = char === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at, at + 24)) : null;
    if (repeat) {
      const least = Number(repeat[1]);
      const most = repeat[2] === undefined ? least : repeat[3] === '' ? least + 1 : Number(repeat[3]);
      open[open.length - 1]! += last * Math.max(0, most - 1) + Math.max(0, most - least);
      last *= Math.max(1, most);
      at += repeat[0].length - 1;
    } else if (char === '(') {
      open.push(0);
      last = 0;
    } else if (char === ')' && open.length > 1) add(open.pop()! + 2);
    else if (char === '\\') {
      const next = pattern[at + 1];
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', at + 2);
        const stop = end < 0 ? pattern.length : end;
        add(stop - at - 2);
        at = end < 0 ? pattern.length : end + 1;
      } else {
        const braced = /^.[pPx]\{[^}]*\}/.exec(pattern.slice(at, at + 64));
        at += braced ? braced[0].length - 1 : next === 'p' || next === 'P' ? 2 : 1;
        add(1);
      }
    } else if (char === '[') {
      // A class is one instruction; its end is the first ] after an opening ] or ^ (escapes skipped).
      let end = at + 1;
      if (pattern[end] === '^') end++;
      if (pattern[end] === ']') end++;
      while (end < pattern.length && pattern[end] !== ']') end += pattern[end] === '\\' ? 2 : 1;
      at = end;
      add(1);
    } else add(1);
  }
  // Every program also has its match and fail instructions.
  return 2 + open.reduce((sum, size) => sum + size, 0);
}

export function parseFilter(text: string): MessageFilter {
  return parseFilters([text])[0]!;
}

interface FilterParts {
  text: string;
  subjectText: string;
  operator: '=' | '~';
  value: string;
}

function splitFilter(text: string): FilterParts {
  const match = /^([^=~]+)([=~])(.*)$/s.exec(text);
  if (!match)
    throw new Error(`filter "${text}" must look like id=ID, attr.NAME=VALUE, body.PATH=VALUE or body~REGEX`);
  const [, subjectText = '', operator, value = ''] = match;
  return { text, subjectText, operator: operator === '~' ? '~' : '=', value };
}

function toFilter({ text, subjectText, operator, value }: FilterParts): MessageFilter {
  let test: (candidate: string) => boolean;
  let workPerCharacter = 0;
  if (operator === '=') test = (candidate) => candidate === value;
  else {
    const pattern = compilePattern(text, value);
    workPerCharacter = pattern.programSize();
    test = (candidate) => pattern.test(candidate);
  }
  const filter = (subject: MessageFilter['subject']) => ({ text, subject, test, workPerCharacter });
  if (subjectText === 'id') return filter({ kind: 'id' });
  if (subjectText.startsWith('attr.') && subjectText.length > 5)
    return filter({ kind: 'attribute', name: subjectText.slice(5) });
  if (subjectText === 'body') return filter({ kind: 'body', path: [] });
  if (subjectText.startsWith('body.') && subjectText.length > 5)
    return filter({ kind: 'body', path: subjectText.slice(5).split('.') });
  throw new Error(`filter "${text}": the subject must be id, attr.NAME, body or body.PATH`);
}

function compilePattern(text: string, pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (error) {
    throw new Error(`filter "${text}": ${(error as Error).message} (patterns are RE2 syntax)`);
  }
}

/** The search box's plain text: the body contains it, as typed (no pattern). */
export function bodyContains(text: string): MessageFilter {
  return {
    text: `body contains ${JSON.stringify(text)}`,
    subject: { kind: 'body', path: [] },
    test: (body) => body.includes(text),
    workPerCharacter: 0,
  };
}

/** Matching work done, added up across messages by whoever scans them (to pause between turns of the loop). */
export interface WorkMeter {
  work: number;
}

/**
 * Whether every filter matches the message. Throws FilterWorkError, before matching, when the patterns'
 * work on this message would exceed MESSAGE_WORK_MAX; `meter` adds up the work done.
 */
export function matchesAll(
  filters: readonly MessageFilter[],
  message: FilterableMessage,
  meter: WorkMeter = { work: 0 },
): boolean {
  let json: unknown;
  let parsed = false;
  let work = 0;
  const run = (filter: MessageFilter, value: string) => {
    work += filter.workPerCharacter * value.length;
    if (work > MESSAGE_WORK_MAX)
      throw new FilterWorkError(
        `filter "${filter.text}" would take ${filter.workPerCharacter} × ${value.length} steps on message ${message.MessageId ?? ''}, over the ${MESSAGE_WORK_MAX} one message may take: use a shorter pattern, or search for plain text`,
      );
    meter.work += filter.workPerCharacter * value.length;
    return filter.test(value);
  };
  return filters.every((filter) => {
    const { subject } = filter;
    if (subject.kind === 'id') return message.MessageId !== undefined && run(filter, message.MessageId);
    if (subject.kind === 'attribute') {
      const value = message.MessageAttributes?.[subject.name]?.StringValue;
      return value !== undefined && run(filter, value);
    }
    const body = message.Body ?? '';
    if (subject.path.length === 0) return run(filter, body);
    if (!parsed) {
      parsed = true;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
    }
    let value: unknown = json;
    for (const key of subject.path) {
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return false;
      value = (value as Record<string, unknown>)[key];
    }
    if (value === null || value === undefined) return false;
    return run(filter, typeof value === 'object' ? JSON.stringify(value) : String(value));
  });
}
