import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { SeqList } from '../../packages/server/src/store/memory/seq-list.ts';

/** Inserts (mostly at the end, as sends do) and removals (mostly at the head, as receives do) on the list and on a sorted array. */
it('holds the seqs in order through inserts and removals anywhere, compactions included (property)', () => {
  const operation = fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('append' as const) }), weight: 6 },
    { arbitrary: fc.record({ kind: fc.constant('insertOlder' as const), pick: fc.nat() }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant('removeHead' as const) }), weight: 5 },
    { arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant('removeAbsent' as const), pick: fc.nat() }), weight: 1 },
  );
  fc.assert(
    fc.property(fc.array(operation, { maxLength: 5000, size: 'max' }), (operations) => {
      const list = new SeqList();
      let model: number[] = [];
      let next = 0;
      for (const op of operations) {
        if (op.kind === 'append') {
          next += 2;
          list.insert(next);
          model.push(next);
        } else if (op.kind === 'insertOlder') {
          // Appended seqs are even; an older one takes an odd seq between them.
          const older = 2 * (op.pick % (next / 2 + 1)) - 1;
          if (older > 0 && !model.includes(older)) {
            list.insert(older);
            model = [...model, older].sort((a, b) => a - b);
          }
        } else if (op.kind === 'removeHead') {
          if (model.length > 0) list.remove(model.shift()!);
        } else if (op.kind === 'remove') {
          if (model.length > 0) {
            const [seq] = model.splice(op.pick % model.length, 1);
            list.remove(seq!);
          }
        } else {
          list.remove(-1 - op.pick);
        }
        assert.equal(list.size, model.length);
        assert.equal(list.head(), model[0]);
        assert.deepEqual(list.first(4), model.slice(0, 4));
      }
      assert.deepEqual(list.first(model.length), model);
    }),
    { numRuns: 40 },
  );
});
