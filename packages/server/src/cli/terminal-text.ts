/**
 * Characters a terminal acts on or hides rather than shows: C0 controls (escape sequences, carriage returns
 * and newlines that would start a forged line), DEL, C1 controls (U+009B starts an escape sequence too),
 * and the invisible ones that reorder or hide text (bidirectional marks, overrides and isolates, zero-width
 * characters, line and paragraph separators, the byte order mark).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this finds.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
/** The same, less what JSON.stringify escapes already (C0 controls). */
const UNPRINTABLE_IN_JSON = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Text from a server as a terminal may print it: every such character written as an escape (`\x1b`, `\u202e`). */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (character) => SHORT_ESCAPES[character] ?? escapeOf(character));
}

/** JSON of `value` that a terminal may print: the same characters as JSON escapes (`\u009b`), still valid JSON. */
export function printableJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(UNPRINTABLE_IN_JSON, unicodeEscape);
}

function escapeOf(character: string): string {
  const code = character.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : unicodeEscape(character);
}

function unicodeEscape(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
