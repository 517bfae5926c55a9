import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bucketSamples } from '../../packages/server/src/core/queue-history.ts';
import type { QueueSample } from '../../packages/server/src/store/contract.ts';

describe('bucketSamples', () => {
  const sample = (at: number, visible: number, sent: number): QueueSample => ({
    queue: 'q',
    at,
    periodMs: 10_000,
    visible,
    notVisible: 0,
    delayed: 0,
    oldestAgeSeconds: 0,
    sent,
    received: 0,
    deleted: 0,
    emptyReceives: 0,
    sentBytes: sent * 10,
  });

  it('keeps the last counts of a bucket and sums its activity', () => {
    const buckets = bucketSamples(
      [sample(0, 1, 1), sample(10_000, 5, 2), sample(60_000, 2, 4), sample(70_000, 0, 8)],
      60_000,
    );
    assert.deepEqual(
      buckets.map((b) => [b.at, b.visible, b.sent, b.sentBytes, b.periodMs]),
      [
        [10_000, 5, 3, 30, 20_000],
        [70_000, 0, 12, 120, 20_000],
      ],
    );
  });
});
