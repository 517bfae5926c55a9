/**
 * What the CLI prints of a message (its body, its attributes, an id someone typed) is anybody's text. Written
 * as it is, an escape sequence in a body could move the cursor, retitle or clear the window, or hide lines;
 * a newline could forge a line of output; bidirectional overrides could show text in another order than it
 * is. These characters are printed escaped instead: C0 and C1 controls, DEL, line and paragraph separators,
 * bidirectional marks and overrides, invisible format characters, lone surrogates.
 */
const BEYOND_C0 =
  '\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb';
const UNSAFE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]|\\p{Cs}`, 'gu');
/** What JSON.stringify leaves unescaped of them: C0 controls and lone surrogates it escapes itself. */
const UNSAFE_IN_JSON = new RegExp(`[${BEYOND_C0}]`, 'g');
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` safe to print on a terminal, on one line: newline, carriage return and tab as `\n`, `\r`, `\t`, other
 * unsafe characters as `\xHH` or `\u{HHHH}`, and a backslash doubled, so that the escapes cannot be mistaken
 * for the same characters typed in the text.
 */
export function safeText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(UNSAFE, (character) => {
    const named = NAMED[character];
    if (named !== undefined) return named;
    const code = character.codePointAt(0)!;
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u{${code.toString(16).padStart(4, '0')}}`;
  });
}

/**
 * `value` as indented JSON that is safe on a terminal too: JSON.stringify escapes C0 controls and lone
 * surrogates but leaves DEL, C1 controls and the format characters above as they are; these become `\uHHHH`,
 * which any JSON reader reads back as the same character.
 */
export function safeJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    UNSAFE_IN_JSON,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
