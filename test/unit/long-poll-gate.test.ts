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

it('caps long polls per connection and in total, and frees a slot once on release', () => {
  const admit = longPollGate({ perConnection: 2, total: 3 });
  const [a, b] = [{} as Socket, {} as Socket];
  const first = admit(a);
  admit(a);
  refused(() => admit(a), 'on this connection (2 at most)');
  admit(b);
  refused(() => admit(b), 'on this server (3 at most)');
  first();
  first(); // a second release of the same slot frees nothing more
  admit(b);
  refused(() => admit({} as Socket), 'on this server (3 at most)');
});
