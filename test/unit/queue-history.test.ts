import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bucketSamples,
  fillGaps,
  SAMPLE_KEEPALIVE_MS,
  SAMPLE_PERIOD_MS,
} from '../../packages/server/src/core/queue-history.ts';
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

describe('fillGaps', () => {
  const sample = (at: number, visible: number, oldestAgeSeconds: number, sent = 0): QueueSample => ({
    queue: 'q',
    at,
    periodMs: SAMPLE_PERIOD_MS,
    visible,
    notVisible: 0,
    delayed: 0,
    oldestAgeSeconds,
    sent,
    received: 0,
    deleted: 0,
    emptyReceives: 0,
    sentBytes: sent * 10,
  });
  const points = (samples: QueueSample[]) =>
    samples.map((s) => [s.at / 1000, s.visible, s.oldestAgeSeconds, s.sent, s.periodMs]);

  it('carries a sample forward every 10 s until the next one: same counts, older message, no activity', () => {
    const filled = fillGaps([sample(0, 2, 5, 2), sample(40_000, 3, 45, 1)], 40_000);
    assert.deepEqual(points(filled), [
      [0, 2, 5, 2, 10_000],
      [10, 2, 15, 0, 10_000],
      [20, 2, 25, 0, 10_000],
      [30, 2, 35, 0, 10_000],
      [40, 3, 45, 1, 10_000],
    ]);
  });

  it('fills after the last sample up to `until`; an empty queue stays at age 0', () => {
    assert.deepEqual(points(fillGaps([sample(0, 0, 0)], 25_000)), [
      [0, 0, 0, 0, 10_000],
      [10, 0, 0, 0, 10_000],
      [20, 0, 0, 0, 10_000],
    ]);
  });

  it('leaves a silence longer than the keepalive empty: no sampler was running then', () => {
    const late = SAMPLE_KEEPALIVE_MS + 3 * SAMPLE_PERIOD_MS;
    assert.deepEqual(
      fillGaps([sample(0, 1, 0), sample(late, 1, late / 1000)], late + 5000).map((s) => s.at),
      [0, late],
    );
    assert.deepEqual(
      fillGaps([sample(0, 1, 0)], late).map((s) => s.at),
      [0],
    );
    // Within the keepalive (the sampler's own longest silence), the gap is filled.
    assert.equal(fillGaps([sample(0, 1, 0)], SAMPLE_KEEPALIVE_MS).length, 61);
  });
});
