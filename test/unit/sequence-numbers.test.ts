import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { sequenceNumberOf } from '../../packages/server/src/core/fifo.ts';

test('a sequence number is 10^19 + seq: 20 digits, in the order of the seqs', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (seq) => {
      assert.equal(sequenceNumberOf(seq), (10n ** 19n + BigInt(seq)).toString());
    }),
    { examples: [[0], [1], [9], [10], [Number.MAX_SAFE_INTEGER]] },
  );
});
