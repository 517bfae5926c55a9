import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isXmlText, toXmlText } from '../../packages/server/src/shared/xml-characters.ts';

/** The XML 1.0 Char production, by code point, as the specification writes it: the oracle. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the allowed set is defined by code points.
const NOT_XML_CHARACTER = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const NOT_XML_CHARACTERS = new RegExp(NOT_XML_CHARACTER.source, 'gu');

/** Code units near every edge of the production, lone and paired surrogates among them. */
const EDGES = [
  0x0, 0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0xe, 0x1f, 0x20, 0x7f, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000,
  0xfffd, 0xfffe, 0xffff,
];
const codeUnits = fc.array(fc.oneof(fc.constantFrom(...EDGES), fc.integer({ min: 0, max: 0xffff })), {
  maxLength: 12,
});

test('isXmlText and toXmlText agree with the XML 1.0 Char production on any string of code units', () => {
  fc.assert(
    fc.property(codeUnits, (units) => {
      const text = String.fromCharCode(...units);
      assert.equal(isXmlText(text), !NOT_XML_CHARACTER.test(text));
      assert.equal(toXmlText(text), text.replace(NOT_XML_CHARACTERS, '\uFFFD'));
    }),
    { numRuns: 20_000 },
  );
});

test('a pair of surrogates is one allowed character; either half alone is not', () => {
  assert.equal(isXmlText('\uD83D\uDE00'), true);
  assert.equal(isXmlText('a\uD83D'), false);
  assert.equal(isXmlText('\uDE00a'), false);
  assert.equal(toXmlText('\uDE00\uD83D'), '\uFFFD\uFFFD');
});
