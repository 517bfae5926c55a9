import pino from 'pino';

export type Logger = pino.Logger;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Structured JSON logs on stderr, so stdout stays for what a person reads (the startup banner). */
export function createLogger(level: LogLevel = 'info'): Logger {
  return pino({ level, base: { service: 'sluice' } }, pino.destination(2));
}
