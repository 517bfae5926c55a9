import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from 'sluice-client/clock';
import { QueueCounts } from '../../packages/server/src/core/queue-counts.ts';
import { QueueSampler, SAMPLE_PERIOD_MS } from '../../packages/server/src/core/queue-history.ts';
import { SqsService, serviceReads } from '../../packages/server/src/core/sqs-service.ts';
import { createServerMetrics, MIN_RENDER_INTERVAL_MS } from '../../packages/server/src/server/metrics.ts';
import type { Store } from '../../packages/server/src/store/contract.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';

const QUEUES = 100;
const context = { baseUrl: 'http://127.0.0.1:9324', senderId: 'AKIDTEST' };

/** A store that counts the calls a scrape could scan every queue with. */
function countingStore(store: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(property), (calls.get(String(property)) ?? 0) + 1);
        return value.apply(target, args);
      };
    },
  });
  return { store: counted, calls };
}

/**
 * /metrics serves queue gauges from counts kept up to date, not from a store read of every queue per scrape,
 * and concurrent scrapes share one render.
 */
describe('metrics scrape cost', () => {
  const clock = new FakeClock(Date.UTC(2026, 11, 1, 12));
  const { store, calls } = countingStore(new SqliteStore({ dataDir: ':memory:', durability: 'normal' }));
  const service = new SqsService({ store, clock });
  const counts = new QueueCounts(service);
  let monotonic = 0;
  let alarmReads = 0;
  const metrics = createServerMetrics(
    service,
    async () => {
      alarmReads++;
      return [];
    },
    counts,
    () => monotonic,
  );
  const urls: string[] = [];
  const countCalls = () => calls.get('countMessages') ?? 0;
  const visibleOf = (text: string, queue: string) => {
    const series = `sluice_ApproximateNumberOfMessagesVisible{queue="${queue}"} `;
    return Number(
      text
        .split('\n')
        .find((line) => line.startsWith(series))
        ?.slice(series.length),
    );
  };
  /** Time passes on both clocks, past the shared-render interval. */
  const later = async (ms = MIN_RENDER_INTERVAL_MS) => {
    monotonic += ms;
    await clock.advance(ms);
  };

  before(async () => {
    for (let i = 0; i < QUEUES; i++) {
      const name = `q${String(i).padStart(3, '0')}`;
      const { QueueUrl } = await service.actions.CreateQueue({ QueueName: name }, context);
      await service.actions.SendMessage({ QueueUrl, MessageBody: 'x' }, context);
      urls.push(QueueUrl);
    }
  });
  after(() => store.close());

  it('reads every queue once at the first scrape, then only the queues this node touched', async () => {
    calls.clear();
    const first = await metrics.render();
    assert.equal(countCalls(), QUEUES, 'the first render reads each queue once');
    assert.equal(visibleOf(first, 'q007'), 1);

    for (let scrape = 0; scrape < 5; scrape++) {
      await later();
      calls.clear();
      await metrics.render();
      assert.equal(countCalls(), 0, `scrape ${scrape}: no queue read, nothing changed`);
    }

    await service.actions.SendMessage({ QueueUrl: urls[7]!, MessageBody: 'y' }, context);
    await later();
    calls.clear();
    const touched = await metrics.render();
    assert.equal(countCalls(), 1, 'only the queue sent to is read again');
    assert.equal(visibleOf(touched, 'q007'), 2);
  });

  it('shares one render among concurrent scrapes, and serves it again within the minimum interval', async () => {
    await service.actions.SendMessage({ QueueUrl: urls[8]!, MessageBody: 'y' }, context);
    await later();
    alarmReads = 0;
    calls.clear();
    const texts = await Promise.all(Array.from({ length: 5 }, () => metrics.render()));
    // Each render reads the alarm states twice (two gauges): five scrapers, one render.
    assert.equal(alarmReads, 2);
    assert.equal(countCalls(), 1);
    assert.ok(texts.every((text) => text === texts[0]));
    assert.equal(visibleOf(texts[0]!, 'q008'), 2);

    await service.actions.SendMessage({ QueueUrl: urls[9]!, MessageBody: 'y' }, context);
    monotonic += MIN_RENDER_INTERVAL_MS - 1;
    calls.clear();
    assert.equal(await metrics.render(), texts[0], 'within the interval: the same render');
    assert.equal(countCalls(), 0);
    monotonic += 1;
    assert.equal(visibleOf(await metrics.render(), 'q009'), 2, 'past it: a new one');
  });

  it('takes the other counts from the history sampler, and reads them all itself only when it is not running', async () => {
    const sampler = new QueueSampler(serviceReads(service, store), undefined, counts);
    // A visibility timeout running out changes counts without any client action: the sampler's read sees it.
    await service.actions.ReceiveMessage({ QueueUrl: urls[3]!, VisibilityTimeout: 5 }, context);
    await later();
    assert.equal(visibleOf(await metrics.render(), 'q003'), 0);
    await later(2 * SAMPLE_PERIOD_MS);
    await sampler.sample();
    await later();
    calls.clear();
    const text = await metrics.render();
    assert.equal(countCalls(), 0, 'the sampler read them 1 s ago');
    assert.equal(visibleOf(text, 'q003'), 1);

    // No sampler (a node without the lease): past 20 s, the next render reads every queue, once.
    await later(2 * SAMPLE_PERIOD_MS);
    calls.clear();
    await Promise.all([metrics.render(), metrics.render()]);
    assert.equal(countCalls(), QUEUES);
  });
});
