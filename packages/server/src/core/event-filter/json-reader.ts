/**
 * A JSON tokenizer that reads pattern text as Jackson's ReaderBasedJsonParser does: AWS compiles SNS filter
 * policies and EventBridge/Lambda patterns with event-ruler over Jackson, and its error messages carry Jackson's
 * wording and the line and column where Jackson stood. To give the same column, this reader keeps Jackson's
 * position rules: a string value is read only when its text is asked for (until then the position is just past
 * the opening quote), and after a field name the name, the colon and the start of the value are consumed together.
 */

export type TokenKind =
  | 'START_OBJECT'
  | 'END_OBJECT'
  | 'START_ARRAY'
  | 'END_ARRAY'
  | 'FIELD_NAME'
  | 'VALUE_STRING'
  | 'VALUE_NUMBER_INT'
  | 'VALUE_NUMBER_FLOAT'
  | 'VALUE_TRUE'
  | 'VALUE_FALSE'
  | 'VALUE_NULL';

export interface TextLocation {
  readonly line: number;
  readonly column: number;
}

/** A refused pattern: the reason as AWS words it and, when AWS gives one, where in the text it stood. */
export class PatternError extends Error {
  constructor(
    readonly reason: string,
    readonly location?: TextLocation,
    /** How many times AWS repeats the location (a reason rethrown inside a list carries it twice). */
    readonly locationRepeats = 1,
  ) {
    super(reason);
  }

  /** The reason with Jackson's location lines, the source described as `source`. */
  describe(source: string): string {
    if (!this.location) return this.reason;
    const where = `\n at [Source: ${source}; line: ${this.location.line}, column: ${this.location.column}]`;
    return this.reason + where.repeat(this.locationRepeats);
  }
}

/** Jackson's description of inline source text: the first 500 characters, and how many it left out. */
export function inlineSource(text: string): string {
  const limit = 500;
  if (text.length <= limit) return `(String)"${text}"`;
  return `(String)"${text.slice(0, limit)}"[truncated ${text.length - limit} chars]`;
}

/** Jackson's description of a source it was told not to include (SNS parses policies that way). */
export const REDACTED_SOURCE = 'REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled)';

const VALID_VALUES = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')";
/** Jackson's StreamReadConstraints default. */
const MAX_NESTING_DEPTH = 1000;
const MAX_ERROR_TOKEN_LENGTH = 256;

interface Context {
  readonly type: 'Object' | 'Array';
  readonly start: TextLocation;
  entries: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class JsonReader {
  private position = 0;
  private line = 1;
  private lineStart = 0;
  private readonly contexts: Context[] = [];
  private current: TokenKind | undefined;
  /** The value token Jackson reads together with a field name, handed out by the next call. */
  private afterName: TokenKind | undefined;
  private afterNameStart: TextLocation = { line: 1, column: 1 };
  private afterNameText = '';
  private stringPending = false;
  private tokenText = '';
  private fieldName = '';

  /** `source` is how Jackson describes the text in locations (inlineSource or REDACTED_SOURCE). */
  constructor(
    private readonly text: string,
    private readonly source: string,
  ) {}

  nextToken(): TokenKind | undefined {
    if (this.current === 'FIELD_NAME') {
      const token = this.afterName;
      this.afterName = undefined;
      this.tokenText = this.afterNameText;
      if (token === 'START_OBJECT' || token === 'START_ARRAY') this.enter(token, this.afterNameStart);
      this.current = token;
      return token;
    }
    if (this.stringPending) this.readString(false);
    let char = this.skipWhitespaceOrEnd();
    if (char < 0) {
      const context = this.contexts.at(-1);
      if (context) {
        this.fail(
          `Unexpected end-of-input: expected close marker for ${context.type} (start marker at [Source: ${this.source}; line: ${context.start.line}, column: ${context.start.column}])`,
        );
      }
      this.current = undefined;
      return undefined;
    }
    if (char === 0x5d || char === 0x7d) return this.closeScope(char);
    const context = this.contexts.at(-1);
    if (context && context.entries++ > 0) {
      if (char !== 0x2c) this.unexpectedChar(char, `was expecting comma to separate ${context.type} entries`);
      char = this.skipWhitespace(` within/between ${context.type} entries`);
    }
    const inObject = context?.type === 'Object';
    if (inObject) {
      if (char !== QUOTE) this.unexpectedChar(char, 'was expecting double-quote to start field name');
      this.fieldName = this.readName();
      char = this.skipColon();
    }
    const start = this.here(-1);
    const token = this.readValueStart(char);
    if (inObject) {
      this.afterName = token;
      this.afterNameStart = start;
      this.afterNameText = this.tokenText;
      this.current = 'FIELD_NAME';
      this.tokenText = this.fieldName;
      return 'FIELD_NAME';
    }
    if (token === 'START_OBJECT' || token === 'START_ARRAY') this.enter(token, start);
    this.current = token;
    return token;
  }

  /** The current token's text: a field name, a string's value, a number as written, or the token's characters. */
  getText(): string {
    if (this.current === 'FIELD_NAME') return this.fieldName;
    if (this.stringPending) this.readString(true);
    switch (this.current) {
      case 'START_OBJECT':
        return '{';
      case 'END_OBJECT':
        return '}';
      case 'START_ARRAY':
        return '[';
      case 'END_ARRAY':
        return ']';
      case undefined:
        return '';
      default:
        return this.tokenText;
    }
  }

  currentName(): string {
    return this.fieldName;
  }

  /** Where Jackson stands: the column of the next character it has not consumed. */
  location(): TextLocation {
    return this.here(0);
  }

  /** An error at the current location, as event-ruler raises them. */
  fail(reason: string, locationRepeats = 1): never {
    throw new PatternError(reason, this.location(), locationRepeats);
  }

  private here(offset: number): TextLocation {
    return { line: this.line, column: this.position + offset - this.lineStart + 1 };
  }

  private enter(token: 'START_OBJECT' | 'START_ARRAY', start: TextLocation): void {
    if (this.contexts.length >= MAX_NESTING_DEPTH) {
      // A constraint error: Jackson gives it no location.
      throw new PatternError(
        `Document nesting depth (${this.contexts.length + 1}) exceeds the maximum allowed (${MAX_NESTING_DEPTH}, from \`StreamReadConstraints.getMaxNestingDepth()\`)`,
      );
    }
    this.contexts.push({ type: token === 'START_OBJECT' ? 'Object' : 'Array', start, entries: 0 });
  }

  private closeScope(char: number): TokenKind {
    const context = this.contexts.at(-1);
    const closing = char === 0x7d ? 'Object' : 'Array';
    if (context?.type !== closing) {
      const expected = context?.type === 'Object' ? '}' : ']';
      const where = context
        ? `${context.type} starting at [Source: ${this.source}; line: ${context.start.line}, column: ${context.start.column}]`
        : `root starting at [Source: ${this.source}; line: 1, column: 0]`;
      this.fail(
        `Unexpected close marker '${String.fromCharCode(char)}': expected '${expected}' (for ${where})`,
      );
    }
    this.contexts.pop();
    this.current = closing === 'Object' ? 'END_OBJECT' : 'END_ARRAY';
    return this.current;
  }

  private readValueStart(char: number): TokenKind {
    switch (char) {
      case QUOTE:
        this.stringPending = true;
        return 'VALUE_STRING';
      case 0x5b:
        return 'START_ARRAY';
      case 0x7b:
        return 'START_OBJECT';
      case 0x7d:
        return this.unexpectedChar(char, 'expected a value');
      case 0x74:
        return this.readLiteral('true', 'VALUE_TRUE');
      case 0x66:
        return this.readLiteral('false', 'VALUE_FALSE');
      case 0x6e:
        return this.readLiteral('null', 'VALUE_NULL');
      default:
        if (char === 0x2d || (char >= 0x30 && char <= 0x39)) return this.readNumber(char);
        if (isJavaIdentifierStart(char)) this.invalidToken(String.fromCharCode(char));
        return this.unexpectedChar(char, `expected a valid value ${VALID_VALUES}`);
    }
  }

  private readLiteral(word: string, token: TokenKind): TokenKind {
    for (let index = 1; index < word.length; index++) {
      if (
        this.position >= this.text.length ||
        this.text.charCodeAt(this.position) !== word.charCodeAt(index)
      ) {
        this.invalidToken(word.slice(0, index));
      }
      this.position++;
    }
    if (this.position < this.text.length && isJavaIdentifierPart(this.text.charCodeAt(this.position))) {
      this.invalidToken(word);
    }
    this.tokenText = word;
    return token;
  }

  private readNumber(first: number): TokenKind {
    const start = this.position - 1;
    let char = first;
    if (char === 0x2d) {
      char = this.peek();
      if (!(char >= 0x30 && char <= 0x39)) {
        if (char < 0) this.fail('Unexpected end-of-input in a Number value');
        this.position++;
        this.numberChar(char, 'expected digit (0-9) to follow minus sign, for valid numeric value');
      }
      this.position++;
    }
    if (char === 0x30 && isDigit(this.peek())) this.fail('Invalid numeric value: Leading zeroes not allowed');
    this.skipDigits();
    let integer = true;
    if (this.peek() === 0x2e) {
      integer = false;
      this.position++;
      if (!isDigit(this.peek())) this.numberCharAt('Decimal point not followed by a digit');
      this.skipDigits();
    }
    const exponent = this.peek();
    if (exponent === 0x65 || exponent === 0x45) {
      integer = false;
      this.position++;
      const sign = this.peek();
      if (sign === 0x2b || sign === 0x2d) this.position++;
      if (!isDigit(this.peek())) this.numberCharAt('Exponent indicator not followed by a digit');
      this.skipDigits();
    }
    this.tokenText = this.text.slice(start, this.position);
    return integer ? 'VALUE_NUMBER_INT' : 'VALUE_NUMBER_FLOAT';
  }

  private skipDigits(): void {
    while (isDigit(this.peek())) this.position++;
  }

  private numberCharAt(comment: string): never {
    const char = this.peek();
    if (char < 0) this.fail('Unexpected end-of-input in a Number value');
    this.position++;
    return this.numberChar(char, comment);
  }

  private numberChar(char: number, comment: string): never {
    return this.fail(`Unexpected character (${describeChar(char)}) in numeric value: ${comment}`);
  }

  private readName(): string {
    return this.readStringBody('name');
  }

  /** Reads (or, when Jackson would only skip it, passes over) the rest of the pending string value. */
  private readString(keep: boolean): void {
    this.stringPending = false;
    const value = this.readStringBody('string value');
    if (keep) this.tokenText = value;
  }

  private readStringBody(what: 'name' | 'string value'): string {
    let value = '';
    let runStart = this.position;
    while (true) {
      if (this.position >= this.text.length) {
        this.fail(
          what === 'name'
            ? 'Unexpected end-of-input in field name'
            : 'Unexpected end-of-input: was expecting closing quote for a string value',
        );
      }
      const char = this.text.charCodeAt(this.position++);
      if (char === QUOTE) return value + this.text.slice(runStart, this.position - 1);
      if (char === BACKSLASH) {
        value += this.text.slice(runStart, this.position - 1) + this.readEscape();
        runStart = this.position;
      } else if (char < 0x20) {
        this.fail(
          `Illegal unquoted character (${describeChar(char)}): has to be escaped using backslash to be included in ${what}`,
        );
      }
    }
  }

  private readEscape(): string {
    if (this.position >= this.text.length) this.fail('Unexpected end-of-input in character escape sequence');
    const char = this.text.charCodeAt(this.position++);
    switch (char) {
      case 0x62:
        return '\b';
      case 0x74:
        return '\t';
      case 0x6e:
        return '\n';
      case 0x66:
        return '\f';
      case 0x72:
        return '\r';
      case QUOTE:
      case BACKSLASH:
      case 0x2f:
        return String.fromCharCode(char);
      case 0x75: {
        let code = 0;
        for (let index = 0; index < 4; index++) {
          if (this.position >= this.text.length)
            this.fail('Unexpected end-of-input in character escape sequence');
          const digit = this.text.charCodeAt(this.position++);
          const value = hexValue(digit);
          if (value < 0) this.unexpectedChar(digit, 'expected a hex-digit for character escape sequence');
          code = code * 16 + value;
        }
        return String.fromCharCode(code);
      }
      default:
        return this.fail(`Unrecognized character escape ${describeChar(char)}`);
    }
  }

  private skipColon(): number {
    let char = this.skipWhitespace(' within/between Object entries');
    if (char !== 0x3a) this.unexpectedChar(char, 'was expecting a colon to separate field name and value');
    char = this.skipWhitespace(' within/between Object entries');
    return char;
  }

  private peek(): number {
    return this.position < this.text.length ? this.text.charCodeAt(this.position) : -1;
  }

  /** The next character after white space, consumed; -1 at the end of the text. */
  private skipWhitespaceOrEnd(): number {
    while (this.position < this.text.length) {
      const char = this.text.charCodeAt(this.position++);
      if (char > 0x20) {
        if (char === 0x2f) {
          this.unexpectedChar(
            char,
            "maybe a (non-standard) comment? (not recognized as one since Feature 'ALLOW_COMMENTS' not enabled for parser)",
          );
        }
        return char;
      }
      if (char === 0x0a) {
        this.line++;
        this.lineStart = this.position;
      } else if (char === 0x0d) {
        if (this.peek() === 0x0a) this.position++;
        this.line++;
        this.lineStart = this.position;
      } else if (char !== 0x20 && char !== 0x09) {
        this.fail(
          `Illegal character (${describeChar(char)}): only regular white space (\\r, \\n, \\t) is allowed between tokens`,
        );
      }
    }
    return -1;
  }

  private skipWhitespace(atEnd: string): number {
    const char = this.skipWhitespaceOrEnd();
    if (char < 0) this.fail(`Unexpected end-of-input${atEnd}`);
    return char;
  }

  /** Jackson points these at the offending character itself. */
  private unexpectedChar(char: number, comment: string): never {
    throw new PatternError(`Unexpected character (${describeChar(char)}): ${comment}`, this.here(-1));
  }

  private invalidToken(matched: string): never {
    let token = matched;
    while (this.position < this.text.length) {
      const char = this.text.charCodeAt(this.position);
      if (!isJavaIdentifierPart(char)) break;
      this.position++;
      token += String.fromCharCode(char);
      if (token.length >= MAX_ERROR_TOKEN_LENGTH) {
        token += '...';
        break;
      }
    }
    return this.fail(`Unrecognized token '${token}': was expecting ${VALID_VALUES}`);
  }
}

function isDigit(char: number): boolean {
  return char >= 0x30 && char <= 0x39;
}

function hexValue(char: number): number {
  if (char >= 0x30 && char <= 0x39) return char - 0x30;
  if (char >= 0x41 && char <= 0x46) return char - 0x37;
  if (char >= 0x61 && char <= 0x66) return char - 0x57;
  return -1;
}

/** Jackson's `_getCharDesc`. */
function describeChar(char: number): string {
  if (char < 0x20 || (char >= 0x7f && char <= 0x9f)) return `(CTRL-CHAR, code ${char})`;
  const shown = String.fromCharCode(char);
  if (char > 255) return `'${shown}' (code ${char} / 0x${char.toString(16)})`;
  return `'${shown}' (code ${char})`;
}

const JAVA_IDENTIFIER_START = /[\p{L}\p{Nl}\p{Sc}\p{Pc}]/u;
const JAVA_IDENTIFIER_PART = /[\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Sc}\p{Pc}\p{Cf}]/u;

/** Java's Character.isJavaIdentifierStart for one UTF-16 unit, as Jackson applies it. */
function isJavaIdentifierStart(char: number): boolean {
  return JAVA_IDENTIFIER_START.test(String.fromCharCode(char));
}

function isJavaIdentifierPart(char: number): boolean {
  // Java also counts the ignorable control characters as identifier parts.
  if ((char <= 0x08 || (char >= 0x0e && char <= 0x1b) || (char >= 0x7f && char <= 0x9f)) && char >= 0)
    return true;
  return JAVA_IDENTIFIER_PART.test(String.fromCharCode(char));
}
