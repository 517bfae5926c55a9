import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { LabelledHistogram, PairCounter } from '../../packages/server/src/server/metric-families.ts';

/** Label values a scraper must get back escaped: quotes, backslashes, newlines, and plain ones. */
const labelValues = fc.oneof(
  fc.constantFrom('SendMessage', 'ReceiveMessage', 'q"uote', 'back\\slash', 'new\nline', ''),
  fc.string({ maxLength: 6 }),
);
const BOUNDS = [0.001, 0.0025, 0.005, 1, 20];
const observed = fc.oneof(
  fc.constantFrom(0, ...BOUNDS, 25),
  fc.double({ min: 0, max: 40, noNaN: true }),
  fc.integer({ min: 0, max: 2_000_000 }),
);

test('a LabelledHistogram writes what a prom-client Histogram writes for the same observations', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(labelValues, observed), { maxLength: 40 }), async (observations) => {
      const registry = new Registry();
      const reference = new Histogram({
        name: 'h',
        help: 'a help text',
        labelNames: ['queue'],
        buckets: BOUNDS,
        registers: [registry],
      });
      const kept = new LabelledHistogram('h', 'a help text', 'queue', BOUNDS);
      for (const [queue, value] of observations) {
        reference.observe({ queue }, value);
        kept.observe(queue, value);
      }
      assert.equal(kept.text(), await registry.getSingleMetricAsString('h'));
    }),
    { numRuns: 2_000 },
  );
});

test('a PairCounter writes what a prom-client Counter with two labels writes for the same increments', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(labelValues, labelValues), { maxLength: 40 }), async (increments) => {
      const registry = new Registry();
      const reference = new Counter({
        name: 'c_total',
        help: 'a help text',
        labelNames: ['action', 'status'],
        registers: [registry],
      });
      const kept = new PairCounter('c_total', 'a help text', ['action', 'status']);
      for (const [action, status] of increments) {
        reference.inc({ action, status });
        kept.inc(action, status);
      }
      assert.equal(kept.text(), await registry.getSingleMetricAsString('c_total'));
    }),
    { numRuns: 2_000 },
  );
});

test('a histogram counts an observation on a bound in that bound, and one past the last only in +Inf', () => {
  const histogram = new LabelledHistogram('size', 'sizes', 'queue', [64, 256]);
  for (const size of [64, 65, 300]) histogram.observe('q', size);
  assert.deepEqual(histogram.text().split('\n').slice(2), [
    'size_bucket{le="64",queue="q"} 1',
    'size_bucket{le="256",queue="q"} 2',
    'size_bucket{le="+Inf",queue="q"} 3',
    'size_sum{queue="q"} 429',
    'size_count{queue="q"} 3',
  ]);
});
