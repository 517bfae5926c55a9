import { randomBytes } from 'node:crypto';
import type { Clock } from 'sluice-client/clock';
import type { AccessKey } from './access.ts';

/** The console's session cookie. */
export const SESSION_COOKIE = 'sluice_session';
/** A session lasts this long from its sign-in, used or not. */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/** Sessions kept at most (each took a right key and secret); past it, the oldest ends. */
const MAX_SESSIONS = 10_000;

/**
 * Console sessions, in memory only: a restart signs everyone out. The token is 32 random bytes; it stands
 * for the key that signed in, whose own `queues` and `actions` limits apply to every request it makes.
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, { key: AccessKey; expiresAt: number }>();

  constructor(private readonly clock: Clock) {}

  start(key: AccessKey): { token: string; expiresAt: number } {
    const now = this.clock.now();
    if (this.sessions.size >= MAX_SESSIONS) {
      for (const [token, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(token);
      // Still full: the oldest sign-in goes (a Map iterates in insertion order).
      const oldest = this.sessions.keys().next();
      if (this.sessions.size >= MAX_SESSIONS && !oldest.done) this.sessions.delete(oldest.value);
    }
    const token = randomBytes(32).toString('base64url');
    const expiresAt = now + SESSION_TTL_MS;
    this.sessions.set(token, { key, expiresAt });
    return { token, expiresAt };
  }

  /** The key of a live session; undefined for an unknown, ended or expired token. */
  keyOf(token: string): AccessKey | undefined {
    const session = this.sessions.get(token);
    if (!session) return undefined;
    if (session.expiresAt > this.clock.now()) return session.key;
    this.sessions.delete(token);
    return undefined;
  }

  end(token: string): void {
    this.sessions.delete(token);
  }
}

/** Failed sign-ins one address may make within LOGIN_WINDOW_MS before it must wait. */
export const LOGIN_FAILURES_PER_ADDRESS = 5;
/** Failed sign-ins from all addresses together within the window, against attempts spread over many. */
export const LOGIN_FAILURES_IN_TOTAL = 100;
export const LOGIN_WINDOW_MS = 60_000;
/** Addresses remembered at most; past it, the one that failed longest ago is forgotten. */
const MAX_ADDRESSES = 10_000;

/**
 * Bounds guessing secrets through the sign-in form: an address that failed LOGIN_FAILURES_PER_ADDRESS times
 * within a minute waits until the oldest of those failures is a minute old, and so does everyone once
 * LOGIN_FAILURES_IN_TOTAL failures happened within a minute. IPv6 addresses count by their /64, which one
 * client usually holds whole.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();
  private readonly allFailures: number[] = [];

  constructor(private readonly clock: Clock) {}

  /** Milliseconds before `address` may try again; 0 when it may now. */
  retryAfterMs(address: string): number {
    const now = this.clock.now();
    const waitFor = (times: number[], limit: number) => {
      dropBefore(times, now - LOGIN_WINDOW_MS);
      return times.length >= limit ? (times[times.length - limit] as number) + LOGIN_WINDOW_MS - now : 0;
    };
    const mine = this.failures.get(addressGroup(address)) ?? [];
    return Math.max(
      waitFor(mine, LOGIN_FAILURES_PER_ADDRESS),
      waitFor(this.allFailures, LOGIN_FAILURES_IN_TOTAL),
    );
  }

  failed(address: string): void {
    const now = this.clock.now();
    const group = addressGroup(address);
    const times = this.failures.get(group) ?? [];
    // Re-inserted, so the Map's first entry is the address that failed longest ago.
    this.failures.delete(group);
    this.failures.set(group, [...times, now].slice(-LOGIN_FAILURES_PER_ADDRESS));
    if (this.failures.size > MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value as string);
    this.allFailures.push(now);
    if (this.allFailures.length > LOGIN_FAILURES_IN_TOTAL) this.allFailures.shift();
  }

  succeeded(address: string): void {
    this.failures.delete(addressGroup(address));
  }
}

function dropBefore(times: number[], time: number): void {
  while (times.length > 0 && (times[0] as number) <= time) times.shift();
}

/** An IPv4 address as it is; an IPv6 one by its first four groups (its /64). */
export function addressGroup(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('::');
  const groups = head === '' ? [] : head.split(':');
  // A "::" inside the first four groups stands for zeros up to them.
  const missing = 8 - groups.length - (tail === '' ? 0 : tail.split(':').length);
  const full = address.includes('::')
    ? [...groups, ...Array(missing).fill('0'), ...(tail === '' ? [] : tail.split(':'))]
    : groups;
  return `${full
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
