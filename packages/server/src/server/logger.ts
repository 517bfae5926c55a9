import pino from 'pino';

export type Logger = pino.Logger;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** `text`: a line a person reads; `json`: one JSON object a line, for a log collector. */
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';
/** Text by default: the first reader is a person at a terminal; a collector asks for `json`. */
export const DEFAULT_LOG_FORMAT: LogFormat = 'text';

/** pino's level numbers, as a text line names them. */
const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields every entry has, which a text line shows in its own places (or, `service`, not at all). */
const OWN_FIELDS = new Set(['level', 'time', 'msg', 'service']);

/** A field's value in a text line: bare when it is one word, else as JSON (quoted, escaped, on one line). */
function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * One pino entry (a JSON line) as a text line: `2026-12-07T05:43:52.123Z INFO  message key=value ...`, an
 * error's stack on the indented lines after it.
 */
export function textLine(json: string): string {
  const entry = JSON.parse(json) as Record<string, unknown>;
  const level = (LEVEL_NAMES[entry.level as number] ?? String(entry.level)).padEnd(5);
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString() : String(entry.time);
  let line = `${time} ${level} ${typeof entry.msg === 'string' ? entry.msg : ''}`;
  let stack = '';
  for (const [key, value] of Object.entries(entry)) {
    if (OWN_FIELDS.has(key)) continue;
    const error = value as { message?: unknown; stack?: unknown } | null;
    if (key === 'err' && error && typeof error === 'object') {
      line += ` err=${fieldValue(error.message)}`;
      if (typeof error.stack === 'string')
        stack = error.stack
          .split('\n')
          .slice(1)
          .map((frame) => `    ${frame.trim()}\n`)
          .join('');
      continue;
    }
    line += ` ${key}=${fieldValue(value)}`;
  }
  return `${line}\n${stack}`;
}

/**
 * The server's log: every line on stderr, in one format (docs/decisions/log-format.md). Written synchronously,
 * so that the line of a fatal error is out before the process exits.
 */
export function createLogger(
  level: LogLevel = DEFAULT_LOG_LEVEL,
  format: LogFormat = DEFAULT_LOG_FORMAT,
): Logger {
  const stderr = pino.destination({ fd: 2, sync: true });
  const stream = format === 'json' ? stderr : { write: (json: string) => stderr.write(textLine(json)) };
  return pino({ level, base: { service: 'sluice' } }, stream);
}
