import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventSourceMapping } from '../../packages/server/src/core/event-source/mapping-config.ts';
import { storedMappings } from '../../packages/server/src/core/event-source/mapping-store.ts';
import { type StoreFactory, type SuiteOptions, skipsRestart, useContractService } from './harness.ts';

/**
 * The Lambda event source mappings' store (EventSourceMappingStore, read through the core's storedMappings):
 * documents kept as written, oldest first, replaced in place, deleted, kept across a restart, and forgotten by
 * test mode's reset where the backend has one.
 */
export function mappingStoreSuite(backend: string, factory: () => StoreFactory, options: SuiteOptions = {}) {
  describe(`Event source mapping store on ${backend}`, { concurrency: false }, () => {
    const h = useContractService(factory);
    const mappings = () => storedMappings(h.store);
    let made = 0;
    const mapping = (changes: Partial<EventSourceMapping> = {}): EventSourceMapping => ({
      uuid: `00000000-0000-4000-8000-${String(++made).padStart(12, '0')}`,
      eventSourceArn: 'arn:aws:sqs:us-east-1:000000000000:orders',
      functionName: `fn-${made}`,
      batchSize: 10,
      maximumBatchingWindowInSeconds: 0,
      reportBatchItemFailures: false,
      enabled: true,
      stateTransitionReason: 'USER_INITIATED',
      lastModified: 1_796_000_000_000 + made,
      functionTimeoutSeconds: 3,
      ...changes,
    });
    /** Empties the store's mappings, so each test starts from none whatever the earlier ones left. */
    const clear = async () => {
      for (const { uuid } of await mappings().loadMappings()) await mappings().deleteMapping(uuid);
    };

    it('keeps each document as written, oldest first; a save of a known UUID replaces it in its place', async () => {
      await clear();
      assert.deepEqual(await mappings().loadMappings(), []);
      const first = mapping({ qualifier: 'live', filterPatterns: ['{"body": {"kind": ["a"]}}'] });
      const second = mapping({ maximumConcurrency: 7, reportBatchItemFailures: true });
      const third = mapping({ enabled: false, functionName: 'ünïcode-fn' });
      for (const m of [first, second, third]) await mappings().saveMapping(m);
      assert.deepEqual(await mappings().loadMappings(), [first, second, third]);

      const changed = { ...first, batchSize: 500, maximumBatchingWindowInSeconds: 5, lastModified: 2 };
      await mappings().saveMapping(changed);
      assert.deepEqual(await mappings().loadMappings(), [changed, second, third]);

      await mappings().deleteMapping(second.uuid);
      // A deletion of a UUID the store does not hold changes nothing.
      await mappings().deleteMapping(second.uuid);
      assert.deepEqual(await mappings().loadMappings(), [changed, third]);
      const fourth = mapping();
      await mappings().saveMapping(fourth);
      assert.deepEqual(
        (await mappings().loadMappings()).map((m) => m.uuid),
        [changed.uuid, third.uuid, fourth.uuid],
      );
    });

    it('adds a mapping unless one of the same queue and function is kept, one of several added at once', async () => {
      await clear();
      const kept = mapping({ functionName: 'once-fn' });
      assert.equal(await mappings().addMapping(kept), undefined);
      assert.equal(await mappings().addMapping(mapping({ functionName: 'once-fn' })), kept.uuid);
      // Another function, or another queue: no conflict.
      const other = mapping({ functionName: 'other-fn' });
      assert.equal(await mappings().addMapping(other), undefined);
      const elsewhere = mapping({ functionName: 'once-fn', eventSourceArn: `${kept.eventSourceArn}-2` });
      assert.equal(await mappings().addMapping(elsewhere), undefined);
      // Added at once: exactly one is taken, the others answer its UUID.
      const racing = [1, 2, 3].map(() => mapping({ functionName: 'race-fn' }));
      const answers = await Promise.all(racing.map((candidate) => mappings().addMapping(candidate)));
      const taken = racing.filter((_, index) => answers[index] === undefined);
      assert.equal(taken.length, 1);
      assert.deepEqual(
        answers.filter((answer) => answer !== undefined),
        [taken[0]!.uuid, taken[0]!.uuid],
      );
      assert.deepEqual(
        (await mappings().loadMappings()).map((candidate) => candidate.uuid),
        [kept.uuid, other.uuid, elsewhere.uuid, taken[0]!.uuid],
      );
    });

    it('changes a mapping as one step: changes at once each see the others; undefined leaves it', async () => {
      await clear();
      const kept = mapping();
      await mappings().saveMapping(kept);
      const written = await Promise.all(
        ['a', 'b', 'c'].map((key) =>
          mappings().changeMapping(kept.uuid, (current) => ({
            ...current,
            tags: { ...current.tags, [key]: key },
          })),
        ),
      );
      assert.ok(written.every((mapping) => mapping !== undefined));
      assert.deepEqual((await mappings().loadMappings())[0]?.tags, { a: 'a', b: 'b', c: 'c' });
      assert.equal(await mappings().changeMapping(kept.uuid, () => undefined), undefined);
      assert.deepEqual((await mappings().loadMappings())[0]?.tags, { a: 'a', b: 'b', c: 'c' });
      // A mapping deleted meanwhile is not brought back.
      await mappings().deleteMapping(kept.uuid);
      assert.equal(await mappings().changeMapping(kept.uuid, (current) => current), undefined);
      assert.deepEqual(await mappings().loadMappings(), []);
    });

    it('keeps the mappings across a restart', async (t) => {
      if (skipsRestart(t, options)) return;
      await clear();
      const kept = [mapping(), mapping({ enabled: false, stateTransitionReason: 'PROBLEM: x' })];
      for (const m of kept) await mappings().saveMapping(m);
      await h.restart();
      assert.deepEqual(await mappings().loadMappings(), kept);
    });

    it("forgets every mapping at test mode's reset (on a backend that has one)", async (t) => {
      if (!h.store.reset) {
        t.skip('a store shared by several nodes has no reset');
        return;
      }
      await mappings().saveMapping(mapping());
      await h.store.reset();
      assert.deepEqual(await mappings().loadMappings(), []);
    });
  });
}
