import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { messageTable } from '../../packages/server/src/cli/message-view.ts';
import { safeJson, safeText } from '../../packages/server/src/cli/terminal-text.ts';
import type { BrowsedMessage } from '../../packages/server/src/core/triage.ts';

/** Whether `text` holds a character a terminal may act on or draw misleadingly: controls, bidi, invisibles. */
function dangerous(text: string): boolean {
  return Array.from(text).some((character) => {
    const code = character.codePointAt(0)!;
    const ranges = [
      [0x00, 0x1f],
      [0x7f, 0x9f],
      [0x200b, 0x200f],
      [0x2028, 0x202e],
      [0x2060, 0x2069],
      [0xfeff, 0xfeff],
    ];
    return ranges.some(([low, high]) => code >= low! && code <= high!);
  });
}

describe('what the CLI prints of a message', () => {
  it('escapes line breaks, controls, bidi overrides and invisible characters, and doubles a backslash', () => {
    assert.equal(safeText('a\nb\rc\td'), 'a\\nb\\rc\\td');
    assert.equal(safeText('\u001b]0;title\u0007\u001b[2J'), '\\x1b]0;title\\x07\\x1b[2J');
    assert.equal(safeText('\u009b2J \u007f \u0085'), '\\x9b2J \\x7f \\x85');
    assert.equal(
      safeText('\u202eevil\u2066 \u200b \u2028 \ufeff'),
      '\\u{202e}evil\\u{2066} \\u{200b} \\u{2028} \\u{feff}',
    );
    assert.equal(safeText('C:\\new'), 'C:\\\\new');
    assert.equal(safeText('lone \ud800 surrogate'), 'lone \\u{d800} surrogate');
    // What every terminal draws plainly stays as it is.
    assert.equal(
      safeText('{"to":"bø@example.com","note":"日本 🚀"}'),
      '{"to":"bø@example.com","note":"日本 🚀"}',
    );
    for (let code = 0; code <= 0x3000; code++) {
      const character = String.fromCharCode(code);
      if (code >= 0xd800 && code <= 0xdfff) continue;
      assert.equal(dangerous(safeText(character)), false, `U+${code.toString(16)}`);
    }
  });

  it('keeps JSON exact and valid while escaping what JSON.stringify leaves raw', () => {
    const value = { body: 'x\u009b\u202e\u2028\r\n\u0000\ud800"\\', n: 1 };
    const text = safeJson(value);
    assert.equal(dangerous(text.replaceAll('\n', '')), false);
    assert.match(text, /\\u009b\\u202e\\u2028\\r\\n\\u0000\\ud800\\"\\\\/);
    assert.deepEqual(JSON.parse(text), value);
  });

  it('cuts a long body to the terminal’s width, by characters, never in the middle of an emoji', () => {
    const message: BrowsedMessage = {
      messageId: 'm-1',
      body: `${'🚀'.repeat(100)}`,
      messageAttributes: undefined,
      groupId: undefined,
      sentAt: Date.UTC(2026, 11, 1),
      receiveCount: 2,
      firstReceivedAt: undefined,
      state: 'inFlight',
      origin: undefined,
      failureReason: undefined,
    };
    const [header, row] = messageTable([message], 100).split('\n');
    assert.equal(header, 'message id  state      receives  sent (UTC)           origin  body');
    const body = row!.slice(header!.indexOf('body'));
    assert.equal(Array.from(body).length, 100 - header!.indexOf('body'));
    assert.ok(body.endsWith('🚀…'));
    assert.match(row!, /^m-1 {9}in flight {9}2 {2}2026-12-01 00:00:00 {10}🚀/);
  });
});
