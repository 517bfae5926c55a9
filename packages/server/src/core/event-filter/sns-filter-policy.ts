/**
 * SNS subscription filter policies: validation with SNS's limits and error texts, and matching against a
 * published message's attributes (FilterPolicyScope MessageAttributes) or its JSON body (MessageBody).
 * Evidence and the choices made where AWS is silent: docs/decisions/event-filter.md.
 */
import { type CompiledPattern, compilePattern, type FieldRule, type RuleDialect } from './compiler.ts';
import { inlineSource, PatternError, REDACTED_SOURCE } from './json-reader.ts';
import { readJsonTree, writeCompactJson } from './json-tree.ts';
import { isJsonObjectValue, type JsonValue, parseJsonValue } from './json-value.ts';
import { matchesPattern } from './matcher.ts';
import { MessageIndex } from './message-index.ts';

export type FilterPolicyScope = 'MessageAttributes' | 'MessageBody';

/** SNS's limits on one filter policy ("Filter policy constraints" in the SNS developer guide). */
export const SNS_FILTER_POLICY_LIMITS = {
  /** Distinct keys (leaf paths) in a policy. */
  keys: 5,
  /** The sum over `$or` alternatives of the product, over keys, of values x nesting depth. */
  combinations: 150,
  bytes: 256 * 1024,
  /** Wildcard characters in one wildcard value. */
  wildcardsPerValue: 3,
  /** The sum over keys of (wildcard points of the key's values) x (its wildcard values). */
  wildcardComplexity: 100,
} as const;

/** The SNS action that received the policy: Subscribe words its errors as a reason for `Attributes`. */
export type FilterPolicyAction = 'Subscribe' | 'SetSubscriptionAttributes';

/** A refused policy (an InvalidParameter error), worded per the action that received it. */
export class FilterPolicyError extends Error {
  /** `detail` is what follows "Invalid parameter: " in SetSubscriptionAttributes' message. */
  constructor(readonly detail: string) {
    super(`Invalid parameter: ${detail}`);
  }

  messageFor(action: FilterPolicyAction): string {
    return action === 'Subscribe' ? `Invalid parameter: Attributes Reason: ${this.detail}` : this.message;
  }
}

/** `FilterPolicyScope`'s value, or SNS's error for another one. */
export function parseFilterPolicyScope(value: string): FilterPolicyScope {
  if (value === 'MessageAttributes' || value === 'MessageBody') return value;
  throw new FilterPolicyError(
    `FilterPolicyScope: Invalid value [${value}]. Please use either MessageBody or MessageAttributes`,
  );
}

/** A message attribute as SNS publishes it; only the data type and the string value are filtered on. */
export interface SnsMessageAttribute {
  readonly DataType: string;
  readonly StringValue?: string;
}

/** A published message, read once for all of a topic's subscriptions. */
export class SnsPublication {
  private attributeIndex: MessageIndex | undefined;
  private bodyIndex: MessageIndex | null | undefined;

  constructor(
    readonly body: string,
    readonly attributes: ReadonlyMap<string, SnsMessageAttribute>,
  ) {}

  /** The attributes as event-ruler sees them; Binary attributes are not there (SNS ignores them). */
  attributesIndex(): MessageIndex {
    if (!this.attributeIndex) {
      const attributes = this.attributes;
      this.attributeIndex = new MessageIndex((name) => {
        const attribute = attributes.get(name);
        return attribute && attributeValue(attribute);
      });
    }
    return this.attributeIndex;
  }

  /** The body's leaves, or null when the body is not a JSON object (no body policy matches it then). */
  bodyLeaves(): MessageIndex | null {
    if (this.bodyIndex === undefined) {
      const parsed = parseJsonValue(this.body);
      this.bodyIndex = isJsonObjectValue(parsed) ? new MessageIndex(parsed) : null;
    }
    return this.bodyIndex;
  }
}

export class SnsFilterPolicy {
  constructor(
    readonly scope: FilterPolicyScope,
    private readonly pattern: CompiledPattern,
  ) {}

  matches(publication: SnsPublication): boolean {
    if (this.scope === 'MessageAttributes')
      return matchesPattern(this.pattern, publication.attributesIndex());
    const body = publication.bodyLeaves();
    return body !== null && matchesPattern(this.pattern, body);
  }
}

/**
 * SNS compiles with an event-ruler older than EventBridge's: fewer anything-but forms, no `exactly`, and numbers
 * compared to five digits after the decimal point.
 */
const SNS_DIALECT: RuleDialect = {
  anythingButOperators: new Set(['prefix', 'wildcard']),
  anythingButOperatorTakesOnlyAString: true,
  caseInsensitiveAffixes: false,
  exactly: false,
  exactNumbersOnly: false,
  numberKey: fiveDecimalDigits,
};

/**
 * A number as SNS compares it: "with five digits of accuracy after the decimal point" (SNS "Filter policy
 * constraints"): the digits after the fifth are dropped (truncated towards zero, which keeps order), so
 * 100.123456789 and 100.1234567 are both 10012345 hundred-thousandths, and -1.500009 is -1.5. The decimal point
 * is moved in the number's shortest text, not by multiplying the double, so 0.29 is 29000 hundred-thousandths
 * and not 28999.999...; infinities stay as they are. docs/decisions/sns-numeric-accuracy.md has the evidence.
 */
export function fiveDecimalDigits(value: number): number {
  if (!Number.isFinite(value)) return value;
  const [mantissa, exponent] = String(value).split('e');
  return Math.trunc(Number(`${mantissa}e${Number(exponent ?? 0) + 5}`));
}

/**
 * The policy `text` means for `scope`: undefined when it removes filtering (empty, or `{}`), else a policy;
 * throws FilterPolicyError with SNS's text when SNS refuses it.
 */
export function compileFilterPolicy(text: string, scope: FilterPolicyScope): SnsFilterPolicy | undefined {
  if (Buffer.byteLength(text) > SNS_FILTER_POLICY_LIMITS.bytes) {
    throw new FilterPolicyError('FilterPolicy: Filter policy is too large');
  }
  let tree: ReturnType<typeof readJsonTree>;
  try {
    tree = readJsonTree(text, REDACTED_SOURCE);
  } catch (error) {
    if (error instanceof PatternError) {
      throw new FilterPolicyError(`FilterPolicy: failed to parse JSON. ${error.describe(REDACTED_SOURCE)}`);
    }
    throw error;
  }
  if (tree === undefined || (tree.kind === 'object' && tree.entries.size === 0)) return undefined;
  const compact = writeCompactJson(tree);
  let pattern: CompiledPattern;
  try {
    pattern = compilePattern(compact, inlineSource(compact), SNS_DIALECT);
  } catch (error) {
    if (error instanceof PatternError)
      throw new FilterPolicyError(`FilterPolicy: ${error.describe(inlineSource(compact))}`);
    throw error;
  }
  if (scope === 'MessageAttributes' && pattern.nested) {
    throw new FilterPolicyError(
      'Filter policy scope MessageAttributes does not support nested filter policy',
    );
  }
  checkLimits(pattern);
  return new SnsFilterPolicy(scope, pattern);
}

function checkLimits(pattern: CompiledPattern): void {
  const fields = new Set<FieldRule>();
  const keys = new Set<string>();
  let combinations = 0;
  for (const branch of pattern.branches) {
    let product = 1;
    for (const field of branch.fields) {
      fields.add(field);
      keys.add(field.path);
      product *= field.valueCount * field.depth;
    }
    combinations += product;
  }
  if (keys.size > SNS_FILTER_POLICY_LIMITS.keys) {
    throw new FilterPolicyError(
      `FilterPolicy: Filter policy can not have more than ${SNS_FILTER_POLICY_LIMITS.keys} keys`,
    );
  }
  if (
    combinations > SNS_FILTER_POLICY_LIMITS.combinations ||
    wildcardComplexity(fields) > SNS_FILTER_POLICY_LIMITS.wildcardComplexity
  ) {
    throw new FilterPolicyError('FilterPolicy: Filter policy is too complex');
  }
}

/** SNS's wildcard points: one for a value with one `*`, three per `*` for more; more than three is too many. */
function wildcardComplexity(fields: Iterable<FieldRule>): number {
  let total = 0;
  for (const field of fields) {
    let points = 0;
    let values = 0;
    for (const { starCount } of field.wildcards) {
      if (starCount > SNS_FILTER_POLICY_LIMITS.wildcardsPerValue) return Number.POSITIVE_INFINITY;
      values++;
      points += starCount === 0 ? 0 : starCount === 1 ? 1 : 3 * starCount;
    }
    total += points * values;
  }
  return total;
}

/** An attribute as a message leaf: String values escaped as SNS compares them, Number as a number. */
function attributeValue(attribute: SnsMessageAttribute): JsonValue | undefined {
  const { DataType: dataType, StringValue: text } = attribute;
  if (text === undefined) return undefined;
  if (dataType === 'String.Array') {
    const parsed = parseJsonValue(text);
    return Array.isArray(parsed) ? parsed : undefined;
  }
  // SNS documents that a policy must double-escape `"` and `\` to match String attributes: it compares the
  // attribute's value with those two characters escaped.
  if (isType(dataType, 'String'))
    return text.includes('"') || text.includes('\\') ? text.replace(/[\\"]/g, '\\$&') : text;
  if (isType(dataType, 'Number')) return DECIMAL.test(text) ? Number(text) : Number.NaN;
  return undefined;
}

/** A Number attribute's value is decimal (JavaScript alone would also read hex, blanks and "Infinity"). */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** `String`, or `String.<custom label>`. */
function isType(dataType: string, base: string): boolean {
  return dataType.startsWith(base) && (dataType.length === base.length || dataType[base.length] === '.');
}
