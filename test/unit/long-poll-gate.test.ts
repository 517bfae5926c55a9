import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { it } from 'node:test';
import { SqsError } from '../../packages/server/src/core/errors.ts';
import { longPollGate } from '../../packages/server/src/server/long-poll-gate.ts';

const refused = (fn: () => unknown, part: string) =>
  assert.throws(
    fn,
    (error: unknown) =>
      error instanceof SqsError && error.code === 'ServiceUnavailable' && error.message.includes(part),
  );

/** A connection from `remoteAddress`, as far as the gate looks at one. */
const connection = (remoteAddress: string) => ({ remoteAddress }) as Socket;

it('caps long polls per connection and in total, and frees a slot once on release', () => {
  const admit = longPollGate({ perConnection: 2, perAddress: 10, total: 3 });
  const [a, b] = [connection('10.0.0.1'), connection('10.0.0.2')];
  const first = admit(a);
  admit(a);
  refused(() => admit(a), 'on this connection (2 at most)');
  admit(b);
  refused(() => admit(b), 'on this server (3 at most)');
  first();
  first(); // a second release of the same slot frees nothing more
  admit(b);
  refused(() => admit(connection('10.0.0.3')), 'on this server (3 at most)');
});

it('caps long polls per client address over all its connections', () => {
  const admit = longPollGate({ perConnection: 2, perAddress: 3, total: 100 });
  const releases = [1, 2, 3].map(() => admit(connection('10.0.0.1')));
  // A fourth connection from the same address is refused; another address is not.
  refused(() => admit(connection('10.0.0.1')), 'from this address (3 at most)');
  admit(connection('10.0.0.2'));
  releases[0]?.();
  admit(connection('10.0.0.1'));
  refused(() => admit(connection('10.0.0.1')), 'from this address (3 at most)');
});
