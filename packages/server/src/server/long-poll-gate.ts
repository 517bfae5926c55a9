import type { Socket } from 'node:net';
import { errors } from '../core/errors.ts';

export interface LongPollCaps {
  /** Long polls one connection may hold at once (only pipelining clients can exceed 1). */
  perConnection: number;
  /** Long polls one client address may hold at once, over all its connections. */
  perAddress: number;
  /** Long polls the whole server holds at once; each is an open request and a waiter. */
  total: number;
}

export const LONG_POLL_CAP_DEFAULTS: LongPollCaps = { perConnection: 2, perAddress: 200, total: 10_000 };

/**
 * Counts long polls per connection, per client address and in total, so that one client opening
 * connection after connection cannot hold every waiter. Past a cap the receive is answered 503
 * ServiceUnavailable at once, which every SDK retries with back-off, instead of being left to pile up.
 */
export function longPollGate(caps: LongPollCaps): (socket: Socket) => () => void {
  const perSocket = new WeakMap<Socket, number>();
  const perAddress = new Map<string, number>();
  let total = 0;
  return (socket) => {
    const mine = perSocket.get(socket) ?? 0;
    const address = socket.remoteAddress ?? '';
    const ours = perAddress.get(address) ?? 0;
    if (mine >= caps.perConnection) {
      throw errors.unavailable(
        `Too many concurrent long polls on this connection (${caps.perConnection} at most); retry later.`,
      );
    }
    if (ours >= caps.perAddress) {
      throw errors.unavailable(
        `Too many concurrent long polls from this address (${caps.perAddress} at most); retry later.`,
      );
    }
    if (total >= caps.total) {
      throw errors.unavailable(
        `Too many concurrent long polls on this server (${caps.total} at most); retry later.`,
      );
    }
    perSocket.set(socket, mine + 1);
    perAddress.set(address, ours + 1);
    total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      perSocket.set(socket, (perSocket.get(socket) ?? 1) - 1);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
      total--;
    };
  };
}
