// @ts-check
/** How the console writes counts, ages, times and message bodies. */

/**
 * "1 message", "3 messages".
 * @param {number} count
 * @param {string} noun
 */
export function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** @param {number} seconds */
export function formatAge(seconds) {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

/** @param {number} ms */
export function formatTime(ms) {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/**
 * A JSON object or array indented, any other body as it is.
 * @param {string} body
 */
export function prettyBody(body) {
  try {
    const parsed = JSON.parse(body);
    if (parsed !== null && typeof parsed === 'object') return JSON.stringify(parsed, null, 2);
  } catch {}
  return body;
}
