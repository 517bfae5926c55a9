/**
 * The characters XML 1.0 can carry (#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF): the
 * characters SQS allows in message bodies and string attribute values, and all an XML answer can hold. In a
 * JavaScript string that is no lone surrogate (`isWellFormed`, native) and none of the code units below; the
 * two checks together take about half the time of one Unicode-aware regular expression over the code points.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the excluded set is defined by code units, controls included.
const NOT_XML_CODE_UNIT = /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/;
const NOT_XML_CODE_UNITS = new RegExp(NOT_XML_CODE_UNIT.source, 'g');

export function isXmlText(text: string): boolean {
  return text.isWellFormed() && !NOT_XML_CODE_UNIT.test(text);
}

/** `text` with each character XML cannot carry (a lone surrogate, a control) replaced by U+FFFD. */
export function toXmlText(text: string): string {
  return isXmlText(text) ? text : text.toWellFormed().replace(NOT_XML_CODE_UNITS, '\uFFFD');
}
