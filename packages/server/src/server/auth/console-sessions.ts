import { randomBytes } from 'node:crypto';
import type { Clock } from '#toolkit/clock';
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
/**
 * Failed sign-ins to one access key id, from all addresses together, within the window before sign-ins to it
 * wait: guessing one key's secret from many addresses is slowed, and other keys are not held up.
 */
export const LOGIN_FAILURES_PER_ACCOUNT = 20;
export const LOGIN_WINDOW_MS = 60_000;
/** Addresses, and access key ids, remembered at most; past it, the one that failed longest ago is forgotten. */
const MAX_REMEMBERED = 10_000;
/** Characters of an access key id the throttle keys by (ids are at most 128); a longer one is cut. */
const ACCOUNT_KEY_LENGTH = 128;

/**
 * Bounds guessing secrets through the sign-in form. An address that failed LOGIN_FAILURES_PER_ADDRESS times
 * within a minute waits until the oldest of those failures is a minute old; so do sign-ins to an access key
 * id that failed LOGIN_FAILURES_PER_ACCOUNT times within a minute, from any addresses. Nothing holds up
 * everyone: a client with many addresses delays the keys it guesses at, never another key's sign-in from
 * another address. IPv6 addresses count by their /64, which one client usually holds whole.
 */
export class LoginThrottle {
  private readonly byAddress = new FailureLog();
  private readonly byAccount = new FailureLog();

  constructor(private readonly clock: Clock) {}

  /** Milliseconds before `address` may try to sign in as `accessKeyId` again; 0 when it may now. */
  retryAfterMs(address: string, accessKeyId: string): number {
    const now = this.clock.now();
    return Math.max(
      this.byAddress.waitMs(addressGroup(address), LOGIN_FAILURES_PER_ADDRESS, now),
      this.byAccount.waitMs(accountKey(accessKeyId), LOGIN_FAILURES_PER_ACCOUNT, now),
    );
  }

  failed(address: string, accessKeyId: string): void {
    const now = this.clock.now();
    this.byAddress.add(addressGroup(address), LOGIN_FAILURES_PER_ADDRESS, now);
    this.byAccount.add(accountKey(accessKeyId), LOGIN_FAILURES_PER_ACCOUNT, now);
  }

  /** The address's failures are forgiven; the key's stay, or a guesser's own sign-in would reset them. */
  succeeded(address: string): void {
    this.byAddress.forget(addressGroup(address));
  }
}

/** The recent failures of each name (an address, an access key id), at most the last `limit` of each. */
class FailureLog {
  private readonly failures = new Map<string, number[]>();

  /** Milliseconds until `name` has fewer than `limit` failures within the window. */
  waitMs(name: string, limit: number, now: number): number {
    const times = this.failures.get(name);
    if (!times) return 0;
    dropBefore(times, now - LOGIN_WINDOW_MS);
    return times.length >= limit ? (times[times.length - limit] as number) + LOGIN_WINDOW_MS - now : 0;
  }

  add(name: string, limit: number, now: number): void {
    const times = this.failures.get(name) ?? [];
    // Re-inserted, so the Map's first entry is the name that failed longest ago.
    this.failures.delete(name);
    this.failures.set(name, [...times, now].slice(-limit));
    if (this.failures.size > MAX_REMEMBERED)
      this.failures.delete(this.failures.keys().next().value as string);
  }

  forget(name: string): void {
    this.failures.delete(name);
  }
}

function accountKey(accessKeyId: string): string {
  return accessKeyId.slice(0, ACCOUNT_KEY_LENGTH);
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
