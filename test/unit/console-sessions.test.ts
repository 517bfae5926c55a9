import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from 'sluice-client/clock';
import {
  addressGroup,
  ConsoleSessions,
  LOGIN_FAILURES_PER_ACCOUNT,
  LOGIN_FAILURES_PER_ADDRESS,
  LOGIN_WINDOW_MS,
  LoginThrottle,
  SESSION_TTL_MS,
} from '../../packages/server/src/server/auth/console-sessions.ts';

const KEY = { accessKeyId: 'AKIDADMIN', secretAccessKey: 'secret' };

describe('console sessions', () => {
  it('stand for their key until they expire or end', async () => {
    const clock = new FakeClock();
    const sessions = new ConsoleSessions(clock);
    const { token, expiresAt } = sessions.start(KEY);
    assert.equal(expiresAt, clock.now() + SESSION_TTL_MS);
    assert.notEqual(sessions.start(KEY).token, token, 'a fresh random token each time');
    assert.equal(sessions.keyOf(token), KEY);
    assert.equal(sessions.keyOf('guessed'), undefined);
    await clock.advance(SESSION_TTL_MS - 1);
    assert.equal(sessions.keyOf(token), KEY);
    await clock.advance(1);
    assert.equal(sessions.keyOf(token), undefined, 'expired');

    const other = sessions.start(KEY).token;
    sessions.end(other);
    assert.equal(sessions.keyOf(other), undefined, 'signed out');
  });
});

describe('sign-in throttle', () => {
  const ADMIN = 'AKIDADMIN';

  it('makes an address wait a minute from its fifth failure; a success forgets its failures', async () => {
    const clock = new FakeClock();
    const throttle = new LoginThrottle(clock);
    for (let i = 0; i < LOGIN_FAILURES_PER_ADDRESS; i++) {
      assert.equal(throttle.retryAfterMs('192.0.2.1', ADMIN), 0);
      throttle.failed('192.0.2.1', ADMIN);
      await clock.advance(1000);
    }
    // The first failure was 5 s ago: it leaves the window in 55 s.
    assert.equal(throttle.retryAfterMs('192.0.2.1', ADMIN), LOGIN_WINDOW_MS - 5000);
    assert.equal(throttle.retryAfterMs('192.0.2.1', 'AKIDOTHER'), LOGIN_WINDOW_MS - 5000, 'whatever key');
    assert.equal(throttle.retryAfterMs('192.0.2.2', ADMIN), 0, 'other addresses are not held up');
    await clock.advance(LOGIN_WINDOW_MS - 5000);
    assert.equal(throttle.retryAfterMs('192.0.2.1', ADMIN), 0);
    throttle.failed('192.0.2.1', ADMIN);
    assert.ok(throttle.retryAfterMs('192.0.2.1', ADMIN) > 0, 'four recent failures and this one');
    throttle.succeeded('192.0.2.1');
    assert.equal(throttle.retryAfterMs('192.0.2.1', ADMIN), 0);
  });

  it('lets a client with many addresses hold up neither other addresses nor other keys', async () => {
    const clock = new FakeClock();
    const throttle = new LoginThrottle(clock);
    // 5 failures from each of 20 addresses, each a guess at a key id of its own.
    for (let address = 1; address <= 20; address++)
      for (let i = 0; i < LOGIN_FAILURES_PER_ADDRESS; i++)
        throttle.failed(`127.0.0.${address}`, `AKIDGUESS${address}`);
    assert.ok(throttle.retryAfterMs('127.0.0.1', ADMIN) > 0, 'each guessing address waits');
    assert.equal(throttle.retryAfterMs('127.0.0.21', ADMIN), 0, 'a 21st address signs in');
    assert.equal(throttle.retryAfterMs('127.0.0.21', 'AKIDGUESS1'), 0, 'five failures are not twenty');
  });

  it('slows guessing one key from many addresses: past 20 failures in a minute, its sign-ins wait', async () => {
    const clock = new FakeClock();
    const throttle = new LoginThrottle(clock);
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) {
      assert.equal(throttle.retryAfterMs(`198.51.100.${i}`, ADMIN), 0);
      // One failure from each address: no address is throttled on its own.
      throttle.failed(`198.51.100.${i}`, ADMIN);
    }
    assert.equal(
      throttle.retryAfterMs('203.0.113.7', ADMIN),
      LOGIN_WINDOW_MS,
      'a fresh address waits for this key',
    );
    assert.equal(throttle.retryAfterMs('203.0.113.7', 'AKIDORDERS'), 0, 'and signs in with another');
    throttle.succeeded('198.51.100.1');
    assert.ok(
      throttle.retryAfterMs('203.0.113.7', ADMIN) > 0,
      'a success does not forgive the key its failures',
    );
    await clock.advance(LOGIN_WINDOW_MS);
    assert.equal(throttle.retryAfterMs('203.0.113.7', ADMIN), 0);
  });

  it('counts an IPv6 /64 as one address', () => {
    const clock = new FakeClock();
    const throttle = new LoginThrottle(clock);
    for (let i = 1; i <= LOGIN_FAILURES_PER_ADDRESS; i++) throttle.failed(`2001:db8:1:2::${i}`, `AKID${i}`);
    assert.ok(throttle.retryAfterMs('2001:db8:1:2:ffff::9', ADMIN) > 0);
    assert.equal(throttle.retryAfterMs('2001:db8:1:3::1', ADMIN), 0);
  });

  it('groups addresses as written by Node', () => {
    assert.equal(addressGroup('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(addressGroup('2001:0db8:0001:0002:0:0:0:1'), '2001:db8:1:2::/64');
    assert.equal(addressGroup('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressGroup('::1'), '0:0:0:0::/64');
  });
});
