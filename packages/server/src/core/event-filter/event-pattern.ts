/**
 * EventBridge event patterns, and Lambda's filter criteria that use them (an event source mapping's
 * `FilterCriteria.Filters[].Pattern`): validation with EventBridge's errors (Lambda answers every refusal with
 * one text), and matching against an event or an SQS record. Evidence: docs/decisions/event-filter.md.
 */
import {
  type CompiledPattern,
  compilePattern,
  exactNumber,
  type PatternBranch,
  type RuleDialect,
} from './compiler.ts';
import { inlineSource, PatternError } from './json-reader.ts';
import { isJsonObjectValue, type JsonObjectValue, type JsonValue, parseJsonValue } from './json-value.ts';
import { matchesBranch, matchesPattern } from './matcher.ts';
import { MessageIndex } from './message-index.ts';
import { type WildcardPattern, worstCaseActiveStates } from './wildcard.ts';

/** A refused pattern, with EventBridge's message ("Event pattern is not valid. Reason: ..."). */
export class EventPatternError extends Error {
  constructor(readonly reason: string) {
    super(`Event pattern is not valid. Reason: ${reason}`);
  }
}

/**
 * How many wildcard states a worst-case value may keep alive at once in one field before EventBridge finds a
 * rule too complex. event-ruler leaves the figure to its user; 10 is its README's example, and it separates
 * the patterns AWS was recorded accepting from the one it refused (docs/decisions/event-filter.md).
 */
export const WILDCARD_COMPLEXITY_LIMIT = 10;

const EVENTBRIDGE_DIALECT: RuleDialect = {
  anythingButOperators: new Set(['equals-ignore-case', 'prefix', 'suffix', 'wildcard']),
  anythingButOperatorTakesOnlyAString: false,
  caseInsensitiveAffixes: true,
  exactly: true,
  exactNumbersOnly: true,
  numberKey: exactNumber,
};

export class EventPattern {
  constructor(readonly compiled: CompiledPattern) {}

  matches(event: JsonObjectValue): boolean {
    return matchesPattern(this.compiled, new MessageIndex(event));
  }
}

/** Compiles an event pattern, or throws EventPatternError. */
export function compileEventPattern(text: string): EventPattern {
  let compiled: CompiledPattern;
  try {
    compiled = compilePattern(text, inlineSource(text), EVENTBRIDGE_DIALECT);
  } catch (error) {
    if (error instanceof PatternError) throw new EventPatternError(error.describe(inlineSource(text)));
    throw error;
  }
  if (wildcardComplexity(compiled) > WILDCARD_COMPLEXITY_LIMIT) {
    throw new EventPatternError(
      'Rule is too complex - try using fewer wildcard characters or fewer repeating character sequences after a wildcard character',
    );
  }
  return new EventPattern(compiled);
}

/** The wildcard values of one field share one automaton in event-ruler: the worst field counts. */
function wildcardComplexity(compiled: CompiledPattern): number {
  const byPath = new Map<string, WildcardPattern[]>();
  for (const branch of compiled.branches) {
    for (const field of branch.fields) {
      const patterns = field.wildcards;
      if (patterns.length > 0) byPath.set(field.path, [...(byPath.get(field.path) ?? []), ...patterns]);
    }
  }
  let worst = 0;
  for (const patterns of byPath.values()) {
    worst = Math.max(worst, worstCaseActiveStates(patterns, WILDCARD_COMPLEXITY_LIMIT));
  }
  return worst;
}

/** Lambda's one answer to any refused filter pattern (InvalidParameterValueException). */
export const INVALID_FILTER_PATTERN = 'Invalid filter pattern definition.';

/** Lambda's default quota of filters per event source mapping (up to 10 on request). */
export const LAMBDA_FILTERS_PER_EVENT_SOURCE = 5;

/** A refused filter: `message` is Lambda's; `detail` says what EventBridge would have said. */
export class FilterCriteriaError extends Error {
  constructor(readonly detail: string) {
    super(INVALID_FILTER_PATTERN);
  }
}

/**
 * An event source mapping's filter criteria for an SQS queue: a record passes when any filter matches it.
 * A filter on `body` fields needs a JSON body, one on `body` itself a plain one; a record whose body is the
 * other kind does not match that filter, as Lambda documents.
 */
export class SqsFilterCriteria {
  private constructor(private readonly filters: readonly CompiledPattern[]) {}

  static compile(patterns: readonly string[]): SqsFilterCriteria {
    return new SqsFilterCriteria(
      patterns.map((pattern) => {
        try {
          return compileEventPattern(pattern).compiled;
        } catch (error) {
          if (error instanceof EventPatternError) throw new FilterCriteriaError(error.message);
          throw error;
        }
      }),
    );
  }

  /** `record` is the record Lambda would send, with `body` as the message body's text. */
  matches(record: JsonObjectValue): boolean {
    const body = record.body;
    const parsed = typeof body === 'string' ? parseJsonValue(body) : undefined;
    const jsonBody = isJsonObjectValue(parsed) || Array.isArray(parsed);
    const event: { [key: string]: JsonValue } = { ...record };
    if (jsonBody && parsed !== undefined) event.body = parsed;
    const index = new MessageIndex(event);
    return this.filters.some((filter) =>
      filter.branches.some((branch) => bodyKindFits(branch, jsonBody) && matchesBranch(branch, index)),
    );
  }
}

function bodyKindFits(branch: PatternBranch, jsonBody: boolean): boolean {
  for (const { path } of branch.fields) {
    if (path === 'body' && jsonBody) return false;
    if (path.startsWith('body.') && !jsonBody) return false;
  }
  return true;
}
