/**
 * Compiles pattern text into branches of fields, reading it token by token as event-ruler's JsonRuleCompiler
 * does, so that a refused pattern gets event-ruler's reason at event-ruler's position. A pattern is a set of
 * branches (`$or` multiplies them out); a branch matches when every one of its fields does; a field is a
 * dot-joined path (`{"a": {"b": [...]}}` and `{"a.b": [...]}` are the same field) with the values it accepts.
 * A later field with the same path replaces an earlier one, as event-ruler's compiler does.
 */
import { parseCidr, singleAddress } from './ip-address.ts';
import { JsonReader, PatternError, type TokenKind } from './json-reader.ts';
import type { JsonPrimitive } from './json-value.ts';
import { foldCase, matchesValue, type NumericRange, type ValueMatcher } from './value-matchers.ts';
import { parseWildcard, type WildcardPattern } from './wildcard.ts';

/** Where the dialects of the one grammar differ. */
export interface RuleDialect {
  /** The operators anything-but may hold (`{"anything-but": {"prefix": ...}}`). */
  readonly anythingButOperators: ReadonlySet<string>;
  /** SNS takes only a string after such an operator, and names the operator when it is not one. */
  readonly anythingButOperatorTakesOnlyAString: boolean;
  /** `prefix` and `suffix` may hold `{"equals-ignore-case": ...}`. */
  readonly caseInsensitiveAffixes: boolean;
  /** event-ruler's `exactly` operator. */
  readonly exactly: boolean;
  /** Numbers in numeric and anything-but matches must be exactly representable as doubles. */
  readonly exactNumbersOnly: boolean;
  /**
   * What a number compares as, in the pattern and in the message alike: the double itself (EventBridge), or
   * SNS's five digits after the decimal point. Must keep order (a <= b implies key(a) <= key(b)).
   */
  readonly numberKey: (value: number) => number;
}

export class FieldRule {
  private readonly strings = new Set<string>();
  private readonly numbers = new Set<number>();
  private readonly others: ValueMatcher[] = [];

  constructor(
    readonly path: string,
    /** How deep in the pattern's objects the field sits (1 at the top); SNS counts combinations with it. */
    readonly depth: number,
    readonly matchers: readonly ValueMatcher[],
    /** `{"exists": false}` is among the values: the field also matches where the message has no such leaf. */
    readonly absenceAllowed: boolean,
    /** The dialect's numberKey: the matchers' numbers are already keys, a message's number becomes one. */
    private readonly numberKey: (value: number) => number = exactNumber,
  ) {
    for (const matcher of matchers) {
      if (matcher.kind === 'equals') this.strings.add(matcher.value);
      else if (matcher.kind === 'number') this.numbers.add(matcher.value);
      else this.others.push(matcher);
    }
  }

  /** How many values the field's array holds (`{"exists": false}` included). */
  get valueCount(): number {
    return this.matchers.length + (this.absenceAllowed ? 1 : 0);
  }

  /** The field's wildcard values, plain and anything-but (their cost is what AWS limits). */
  get wildcards(): WildcardPattern[] {
    return this.matchers.flatMap((matcher) =>
      matcher.kind === 'wildcard'
        ? [matcher.pattern]
        : matcher.kind === 'anything-but-wildcard'
          ? matcher.patterns
          : [],
    );
  }

  accepts(leaf: JsonPrimitive): boolean {
    if (typeof leaf === 'string' && this.strings.has(leaf)) return true;
    if (typeof leaf === 'number') {
      const key = this.numberKey(leaf);
      return this.numbers.has(key) || this.others.some((matcher) => matchesValue(matcher, key));
    }
    return this.others.some((matcher) => matchesValue(matcher, leaf));
  }
}

export interface PatternBranch {
  /** In event-ruler's order: sorted by path. */
  readonly fields: readonly FieldRule[];
}

export interface CompiledPattern {
  readonly branches: readonly PatternBranch[];
  /** Some field's value is an object (a nested pattern); `$or` alone does not nest. */
  readonly nested: boolean;
}

const OR = '$or';
const RESERVED_IN_OR = new Set([
  'exactly',
  'equals-ignore-case',
  'prefix',
  'suffix',
  'anything-but',
  'exists',
  'wildcard',
  'numeric',
  'cidr',
  '=',
  '<',
  '<=',
  '>',
  '>=',
  'regex',
  'not-wildcard',
  'not-equals-ignore-case',
  'date-after',
  'date-on-or-after',
  'date-before',
  'date-on-or-before',
  'in-date-range',
  'ip-address-in-range',
  'ip-address-not-in-range',
]);

type BranchDraft = Map<string, FieldRule>;
type AnythingButOperator = 'equals-ignore-case' | 'prefix' | 'suffix' | 'wildcard';

/** Compiles `text` (described as `source` in error locations), or throws a PatternError. */
export function compilePattern(text: string, source: string, dialect: RuleDialect): CompiledPattern {
  return new Compiler(new JsonReader(text, source), dialect).compile();
}

class Compiler {
  private nested = false;

  constructor(
    private readonly reader: JsonReader,
    private readonly dialect: RuleDialect,
  ) {}

  compile(): CompiledPattern {
    if (this.reader.nextToken() !== 'START_OBJECT') this.reader.fail('Filter is not an object');
    const drafts: BranchDraft[] = [];
    this.parseObject(drafts, [], false);
    const branches = drafts.map((draft) => ({
      fields: [...draft.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    }));
    return { branches, nested: this.nested };
  }

  private parseObject(drafts: BranchDraft[], path: string[], insideOr: boolean): void {
    const reader: JsonReader = this.reader;
    let fieldsPresent = false;
    while (reader.nextToken() !== 'END_OBJECT') {
      fieldsPresent = true;
      const step = reader.currentName();
      if (step === OR) {
        this.parseOr(drafts, path);
        continue;
      }
      if (insideOr && RESERVED_IN_OR.has(step)) {
        reader.fail(`${step} is Ruler reserved fieldName which cannot be used inside ${OR}.`);
      }
      switch (reader.nextToken()) {
        case 'START_OBJECT':
          this.nested = true;
          path.push(step);
          this.parseObject(drafts, path, insideOr);
          path.pop();
          break;
        case 'START_ARRAY':
          this.writeField(drafts, [...path, step].join('.'), path.length + 1);
          break;
        default:
          reader.fail(`"${step}" must be an object or an array`);
      }
    }
    if (!fieldsPresent) reader.fail('Empty objects are not allowed');
  }

  private parseOr(drafts: BranchDraft[], path: string[]): void {
    const reader: JsonReader = this.reader;
    const before = drafts.map((draft) => new Map(draft));
    drafts.length = 0;
    if (reader.nextToken() !== 'START_ARRAY') reader.fail(`It must be an Array followed with ${OR}.`);
    let alternatives = 0;
    for (let token = reader.nextToken(); token !== 'END_ARRAY'; token = reader.nextToken()) {
      alternatives++;
      if (token !== 'START_OBJECT')
        reader.fail(`Only JSON object is allowed in array of ${OR} relationship.`);
      const branch = before.length === 0 ? [new Map()] : before.map((draft) => new Map(draft));
      this.parseObject(branch, path, true);
      drafts.push(...branch);
    }
    if (alternatives < 2) reader.fail(`There must have at least 2 Objects in ${OR} relationship.`);
  }

  private writeField(drafts: BranchDraft[], path: string, depth: number): void {
    const reader: JsonReader = this.reader;
    const matchers: ValueMatcher[] = [];
    let absenceAllowed = false;
    let values = 0;
    for (let token = reader.nextToken(); token !== 'END_ARRAY'; token = reader.nextToken()) {
      values++;
      switch (token) {
        case 'START_OBJECT': {
          const matcher = this.matchExpression();
          if (matcher === 'absent') absenceAllowed = true;
          else matchers.push(matcher);
          break;
        }
        case 'VALUE_STRING': {
          const text = reader.getText();
          const range = singleAddress(text);
          matchers.push(range ? { kind: 'address', text, range } : { kind: 'equals', value: text });
          break;
        }
        case 'VALUE_NUMBER_INT':
        case 'VALUE_NUMBER_FLOAT':
          matchers.push({ kind: 'number', value: this.dialect.numberKey(Number(reader.getText())) });
          break;
        case 'VALUE_TRUE':
        case 'VALUE_FALSE':
        case 'VALUE_NULL':
          matchers.push({ kind: 'literal', value: token === 'VALUE_NULL' ? null : token === 'VALUE_TRUE' });
          break;
        default:
          reader.fail('Match value must be String, number, true, false, or null');
      }
    }
    if (values === 0) reader.fail('Empty arrays are not allowed');
    if (drafts.length === 0) drafts.push(new Map());
    const field = new FieldRule(path, depth, matchers, absenceAllowed, this.dialect.numberKey);
    for (const draft of drafts) draft.set(path, field);
  }

  private matchExpression(): ValueMatcher | 'absent' {
    const reader: JsonReader = this.reader;
    if (reader.nextToken() !== 'FIELD_NAME') reader.fail('Match expression name not found');
    const operator = reader.currentName();
    switch (operator) {
      case 'prefix':
      case 'suffix':
        return this.affix(operator);
      case 'equals-ignore-case':
        return { kind: 'equals-ignore-case', value: foldCase(this.onlyString('equals-ignore-case')) };
      case 'numeric': {
        if (reader.nextToken() !== 'START_ARRAY') reader.fail('Value of numeric must be an array.');
        const range = this.numericRange();
        if (reader.nextToken() !== 'END_OBJECT') this.tooManyElements();
        return { kind: 'numeric', range };
      }
      case 'anything-but':
        return this.anythingBut();
      case 'exists': {
        const token = reader.nextToken();
        if (token !== 'VALUE_TRUE' && token !== 'VALUE_FALSE') {
          reader.fail('exists match pattern must be either true or false.');
        }
        this.endOfExpression();
        return token === 'VALUE_TRUE' ? { kind: 'exists' } : 'absent';
      }
      case 'cidr': {
        if (reader.nextToken() !== 'VALUE_STRING') reader.fail('prefix match pattern must be a string');
        const range = parseCidr(reader.getText());
        this.endOfExpression();
        return { kind: 'cidr', range };
      }
      case 'wildcard': {
        const text = this.expect('VALUE_STRING', 'wildcard match pattern must be a string');
        const pattern = this.wildcard(text);
        this.endOfExpression();
        return { kind: 'wildcard', pattern };
      }
      case 'exactly':
        if (this.dialect.exactly) return { kind: 'equals', value: this.onlyString('exact') };
        break;
    }
    return reader.fail(`Unrecognized match type ${operator}`);
  }

  /** `{"<operator>": "<string>"}`, the string returned. */
  private onlyString(operator: string): string {
    const text = this.expect('VALUE_STRING', `${operator} match pattern must be a string`);
    this.endOfExpression();
    return text;
  }

  private affix(operator: 'prefix' | 'suffix'): ValueMatcher {
    const reader: JsonReader = this.reader;
    const token = reader.nextToken();
    if (token === 'START_OBJECT' && this.dialect.caseInsensitiveAffixes) {
      const subject = operator === 'prefix' ? 'Prefix' : 'Suffix';
      if (reader.nextToken() !== 'FIELD_NAME') reader.fail(`${subject} expression name not found`);
      const inner = reader.currentName();
      if (inner !== 'equals-ignore-case') reader.fail(`Unsupported ${operator} pattern: ${inner}`);
      const value = this.expect('VALUE_STRING', 'equals-ignore-case match pattern must be a string');
      this.endOfExpression();
      this.endOfExpression();
      return { kind: operator, value: foldCase(value), ignoreCase: true };
    }
    if (token !== 'VALUE_STRING') reader.fail(`${operator} match pattern must be a string`);
    const value = reader.getText();
    this.endOfExpression();
    return { kind: operator, value, ignoreCase: false };
  }

  private anythingBut(): ValueMatcher {
    const reader: JsonReader = this.reader;
    let operator: AnythingButOperator | undefined;
    let token = reader.nextToken();
    if (token === 'START_OBJECT') {
      if (reader.nextToken() !== 'FIELD_NAME') reader.fail('Anything-But expression name not found');
      const name = reader.currentName();
      if (!this.dialect.anythingButOperators.has(name))
        reader.fail(`Unsupported anything-but pattern: ${name}`);
      operator = name as AnythingButOperator;
      token = reader.nextToken();
      if (this.dialect.anythingButOperatorTakesOnlyAString && token !== 'VALUE_STRING') {
        reader.fail(`${operator} match pattern must be a string`);
      }
    }
    if (
      token !== 'START_ARRAY' &&
      token !== 'VALUE_STRING' &&
      token !== 'VALUE_NUMBER_INT' &&
      token !== 'VALUE_NUMBER_FLOAT'
    ) {
      reader.fail('Value of anything-but must be an array or single string/number value.');
    }
    const matcher =
      operator === undefined
        ? token === 'START_ARRAY'
          ? this.anythingButList()
          : this.anythingButValue(token)
        : this.anythingButOperatorValues(operator, token);
    if (reader.nextToken() !== 'END_OBJECT') this.tooManyElements();
    if (operator !== undefined && reader.nextToken() !== 'END_OBJECT') this.tooManyElements();
    return matcher;
  }

  private anythingButValue(token: TokenKind): ValueMatcher {
    const text = this.reader.getText();
    if (token === 'VALUE_STRING')
      return { kind: 'anything-but', strings: new Set([text]), numbers: new Set() };
    // event-ruler converts without catching here: the refusal carries no location.
    return {
      kind: 'anything-but',
      strings: new Set(),
      numbers: new Set([this.dialect.numberKey(this.number(text))]),
    };
  }

  private anythingButList(): ValueMatcher {
    const reader: JsonReader = this.reader;
    const strings = new Set<string>();
    const numbers = new Set<number>();
    for (let token = reader.nextToken(); token !== 'END_ARRAY'; token = reader.nextToken()) {
      if (token === 'VALUE_STRING') strings.add(reader.getText());
      else if (token === 'VALUE_NUMBER_INT' || token === 'VALUE_NUMBER_FLOAT') {
        numbers.add(this.dialect.numberKey(this.withLocation(() => this.number(reader.getText()))));
      } else {
        // Raised inside event-ruler's list loop and raised again by its handler: the location twice.
        reader.fail('Inside anything but list, start|null|boolean is not supported.', 2);
      }
    }
    if (strings.size > 0 === numbers.size > 0) {
      reader.fail(
        'Inside anything but list, either all values are number or string, mixed type is not supported',
      );
    }
    return { kind: 'anything-but', strings, numbers };
  }

  private anythingButOperatorValues(operator: AnythingButOperator, first: TokenKind): ValueMatcher {
    const reader: JsonReader = this.reader;
    const values: string[] = [];
    const list = first === 'START_ARRAY';
    // Raised inside event-ruler's list loop and raised again by its handler, a refusal carries the location twice.
    const repeats = list ? 2 : 1;
    const take = (token: TokenKind | undefined): void => {
      if (token === 'VALUE_STRING') {
        const text = reader.getText();
        if ((operator === 'prefix' || operator === 'suffix') && text === '') {
          reader.fail('Null prefix/suffix not allowed', repeats);
        }
        values.push(text);
      } else if (operator === 'equals-ignore-case') {
        reader.fail(
          'Inside anything-but/equals-ignore-case list, number|start|null|boolean is not supported.',
          repeats,
        );
      } else if (operator === 'wildcard') {
        reader.fail('wildcard match pattern must be a string', repeats);
      } else {
        reader.fail('prefix/suffix match pattern must be a string', repeats);
      }
    };
    if (list)
      for (let token = reader.nextToken(); token !== 'END_ARRAY'; token = reader.nextToken()) take(token);
    else take(first);
    switch (operator) {
      case 'equals-ignore-case':
        return { kind: 'anything-but-ignore-case', values: new Set(values.map(foldCase)) };
      case 'prefix':
        return { kind: 'anything-but-prefix', values };
      case 'suffix':
        return { kind: 'anything-but-suffix', values };
      case 'wildcard':
        return { kind: 'anything-but-wildcard', patterns: values.map((value) => this.wildcard(value)) };
    }
  }

  private numericRange(): NumericRange {
    const reader: JsonReader = this.reader;
    if (reader.nextToken() !== 'VALUE_STRING')
      reader.fail(`Invalid member in numeric match: ${reader.getText()}`);
    const operator = reader.getText();
    const token = reader.nextToken();
    const numeric = token === 'VALUE_NUMBER_INT' || token === 'VALUE_NUMBER_FLOAT';
    switch (operator) {
      case '=': {
        if (!numeric) reader.fail('Value of equals must be numeric');
        const text = reader.getText();
        if (reader.nextToken() !== 'END_ARRAY') this.tooManyElements();
        const value = this.dialect.numberKey(this.withLocation(() => this.number(text)));
        return { bottom: value, openBottom: false, top: value, openTop: false };
      }
      case '>=':
      case '>': {
        if (!numeric) reader.fail(`Value of ${operator} must be numeric`);
        const bottom = reader.getText();
        const next = reader.nextToken();
        if (next === 'END_ARRAY') return this.range(bottom, operator === '>', undefined, false);
        return this.rangeTop(next, bottom, operator === '>');
      }
      case '<=':
      case '<': {
        if (!numeric) reader.fail(`Value of ${operator} must be numeric`);
        const top = reader.getText();
        if (reader.nextToken() !== 'END_ARRAY') this.tooManyElements();
        return this.range(undefined, false, top, operator === '<');
      }
      default:
        return reader.fail(`Unrecognized numeric range operator: ${operator}`);
    }
  }

  private rangeTop(token: TokenKind | undefined, bottom: string, openBottom: boolean): NumericRange {
    const reader: JsonReader = this.reader;
    if (token !== 'VALUE_STRING') reader.fail(`Bad value in numeric range: ${reader.getText()}`);
    const operator = reader.getText();
    if (operator !== '<' && operator !== '<=') reader.fail(`Bad numeric range operator: ${operator}`);
    const next = reader.nextToken();
    if (next !== 'VALUE_NUMBER_INT' && next !== 'VALUE_NUMBER_FLOAT')
      reader.fail(`Value of ${operator} must be numeric`);
    const top = reader.getText();
    if (reader.nextToken() !== 'END_ARRAY') reader.fail('Too many terms in numeric range expression');
    return this.range(bottom, openBottom, top, operator === '<');
  }

  /**
   * An open end is the largest double; event-ruler refuses an empty range (judged on the numbers as written,
   * before the dialect's numberKey makes the ends comparable with a message's number).
   */
  private range(
    bottomText: string | undefined,
    openBottom: boolean,
    topText: string | undefined,
    openTop: boolean,
  ): NumericRange {
    return this.withLocation(() => {
      const bottom = bottomText === undefined ? -Number.MAX_VALUE : this.number(bottomText);
      const top = topText === undefined ? Number.MAX_VALUE : this.number(topText);
      if (bottom >= top) throw new PatternError('Bottom must be less than top');
      const key = this.dialect.numberKey;
      return { bottom: key(bottom), openBottom, top: key(top), openTop };
    });
  }

  private number(text: string): number {
    const value = Number(text);
    if (this.dialect.exactNumbersOnly && !isExactDouble(text, value)) {
      throw new PatternError(`Cannot compare number : ${text}`);
    }
    return value;
  }

  private wildcard(text: string): WildcardPattern {
    return this.withLocation(() => parseWildcard(text));
  }

  /** event-ruler rethrows a value's own refusal at the parser's location. */
  private withLocation<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (error instanceof PatternError && !error.location) this.reader.fail(error.reason);
      throw error;
    }
  }

  private expect(token: TokenKind, refusal: string): string {
    if (this.reader.nextToken() !== token) this.reader.fail(refusal);
    return this.reader.getText();
  }

  private endOfExpression(): void {
    if (this.reader.nextToken() !== 'END_OBJECT')
      this.reader.fail('Only one key allowed in match expression');
  }

  private tooManyElements(): never {
    return this.reader.fail('Too many elements in numeric expression');
  }
}

/** EventBridge's numberKey: a number compares as the double it is. */
export function exactNumber(value: number): number {
  return value;
}

/** Whether the decimal `text` is exactly the double it reads as (Java: BigDecimal equals BigDecimal.valueOf). */
function isExactDouble(text: string, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  return sameDecimal(text, String(value));
}

function sameDecimal(left: string, right: string): boolean {
  const a = decimalParts(left);
  const b = decimalParts(right);
  return a.negative === b.negative && a.digits === b.digits && (a.digits === '' || a.exponent === b.exponent);
}

/** A decimal as sign, significant digits and the exponent of its first digit. */
function decimalParts(text: string): { negative: boolean; digits: string; exponent: number } {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  const negative = match?.[1] === '-';
  const whole = match?.[2] ?? '';
  const fraction = match?.[3] ?? '';
  const exponent = Number(match?.[4] ?? '0');
  const all = whole + fraction;
  const leading = all.length - all.replace(/^0+/, '').length;
  const digits = all.slice(leading).replace(/0+$/, '');
  return { negative: negative && digits !== '', digits, exponent: whole.length - leading + exponent };
}
