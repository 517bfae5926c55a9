import type { Clock } from '#toolkit/clock';
import type { Logger } from './logger.ts';

/** Addresses remembered at most; past it the memory starts over, so many addresses cannot grow it. */
const REMEMBERED_ADDRESSES = 10_000;

/**
 * Notes a client that went away before its request was read (an upload cut off, a reset): one info line
 * per address per `intervalMs`, saying how many more there were since, instead of one error per request.
 */
export function clientAbortLog(logger: Logger, clock: Clock, intervalMs = 60_000): (address: string) => void {
  const seen = new Map<string, { loggedAt: number; since: number }>();
  return (address) => {
    const now = clock.now();
    const last = seen.get(address);
    if (last && now - last.loggedAt < intervalMs) {
      last.since++;
      return;
    }
    if (seen.size >= REMEMBERED_ADDRESSES) seen.clear();
    seen.set(address, { loggedAt: now, since: 0 });
    logger.info(
      { client: address, moreSinceLastLine: last?.since ?? 0 },
      'client went away before its request was read',
    );
  };
}
