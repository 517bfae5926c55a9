import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  HISTORY_RETENTION_MS,
  QueueSampler,
  queueHistory,
  SAMPLE_KEEPALIVE_MS,
  SAMPLE_PERIOD_MS,
} from '../../packages/server/src/core/queue-history.ts';
import {
  context,
  type StoreFactory,
  type SuiteOptions,
  skipsRestart,
  useContractService,
} from './harness.ts';

/** The activity counters, the 10 s history samples and their 24 h retention, for one store backend. */
export function historySemanticsSuite(
  backend: string,
  factory: () => StoreFactory,
  options: SuiteOptions = {},
): void {
  describe(`Queue history on ${backend}`, () => {
    const h = useContractService(factory);
    const nameOf = (url: string) => url.split('/').at(-1)!;
    const sampler = () => new QueueSampler(h.reads);

    it('samples counts, the oldest message age, and what was sent, received and deleted since the last sample', async () => {
      const url = await h.newQueue({ VisibilityTimeout: '60' });
      const s = sampler();
      const start = h.clock.now();
      await s.sample();
      await h.send(url, 'abc');
      await h.send(url, 'de', { DelaySeconds: 30 });
      await h.service.actions.SendMessageBatch(
        {
          QueueUrl: url,
          Entries: [
            { Id: 'a', MessageBody: 'fghij' },
            { Id: 'b', MessageBody: 'k', MessageAttributes: { n: { DataType: 'Number', StringValue: '7' } } },
          ],
        },
        context,
      );
      await h.clock.advance(4000);
      const [first] = await h.receive(url, { MaxNumberOfMessages: 1 });
      await h.service.actions.DeleteMessage({ QueueUrl: url, ReceiptHandle: first!.ReceiptHandle });
      await h.receive(url, { MaxNumberOfMessages: 10, VisibilityTimeout: 60 });
      await h.receive(url);
      await h.clock.advance(SAMPLE_PERIOD_MS - 4000);
      await s.sample();

      const samples = await h.store.queueSamples(nameOf(url), start);
      assert.equal(samples.length, 2);
      assert.deepEqual(samples[1], {
        queue: nameOf(url),
        at: start + SAMPLE_PERIOD_MS,
        periodMs: SAMPLE_PERIOD_MS,
        visible: 0,
        notVisible: 2,
        delayed: 1,
        oldestAgeSeconds: 10,
        sent: 4,
        received: 3,
        deleted: 1,
        // The last receive found only the delayed message and in-flight ones.
        emptyReceives: 1,
        // Bodies and message attributes (name, type and value), as SQS counts a message's size.
        sentBytes: 3 + 2 + 5 + 1 + ('n'.length + 'Number'.length + '7'.length),
      });
      assert.equal(samples[0]!.sent, 0);

      // The next sample counts only what happened after this one.
      await h.clock.advance(2 * SAMPLE_PERIOD_MS);
      await s.sample();
      const third = (await h.store.queueSamples(nameOf(url), start + 2 * SAMPLE_PERIOD_MS))[0]!;
      assert.equal(third.periodMs, 2 * SAMPLE_PERIOD_MS);
      assert.deepEqual([third.sent, third.received, third.deleted, third.emptyReceives], [0, 0, 0, 0]);
      assert.equal(third.delayed, 0, 'the 30 s delay has run out');
      assert.equal(third.visible, 1);
      assert.equal(third.oldestAgeSeconds, 30);
    });

    it('adds up activity from several nodes until taken, and a take resets it', async () => {
      const none = { sent: 0, received: 0, deleted: 0, emptyReceives: 0, sentBytes: 0 };
      await h.store.addQueueActivity([
        { ...none, queue: 'a', sent: 2, sentBytes: 10 },
        { ...none, queue: 'b', received: 1 },
      ]);
      await h.store.addQueueActivity([
        { ...none, queue: 'a', sent: 1, sentBytes: 3, deleted: 4, emptyReceives: 5 },
      ]);
      await h.store.addQueueActivity([]);
      const taken = (await h.store.takeQueueActivity()).sort((x, y) => x.queue.localeCompare(y.queue));
      assert.deepEqual(taken, [
        { queue: 'a', sent: 3, received: 0, deleted: 4, emptyReceives: 5, sentBytes: 13 },
        { ...none, queue: 'b', received: 1 },
      ]);
      assert.deepEqual(await h.store.takeQueueActivity(), []);
    });

    it("counts other nodes' activity in the sample, with this node's", async () => {
      const url = await h.newQueue();
      const s = sampler();
      await s.sample();
      await h.send(url, 'mine');
      // What another node on the same store flushed meanwhile.
      await h.store.addQueueActivity([
        { queue: nameOf(url), sent: 5, received: 2, deleted: 1, emptyReceives: 3, sentBytes: 50 },
      ]);
      await h.clock.advance(SAMPLE_PERIOD_MS);
      await s.sample();
      const [, sample] = await h.store.queueSamples(nameOf(url), 0);
      assert.deepEqual(
        [sample!.sent, sample!.received, sample!.deleted, sample!.emptyReceives, sample!.sentBytes],
        [6, 2, 1, 3, 54],
      );
      // Activity of a queue that no longer exists is dropped with the next take.
      await h.store.addQueueActivity([
        { queue: 'no-such-queue', sent: 1, received: 0, deleted: 0, emptyReceives: 0, sentBytes: 1 },
      ]);
      await s.sample();
      assert.deepEqual(await h.store.takeQueueActivity(), []);
    });

    it('drops samples older than 24 hours (and the keepalive), and keeps the rest across a restart', async (t) => {
      if (skipsRestart(t, options)) return;
      const url = await h.newQueue();
      const s = sampler();
      const start = h.clock.now();
      await s.sample();
      await h.clock.advance(HISTORY_RETENTION_MS / 2);
      await s.sample();
      await h.restart();
      assert.equal((await h.store.queueSamples(nameOf(url), start)).length, 2);
      // Kept past 24 h by the keepalive, so that a 24 h chart has the sample its first gap carries on from.
      await h.clock.advance(HISTORY_RETENTION_MS / 2 + SAMPLE_KEEPALIVE_MS + 1);
      await new QueueSampler(h.reads).sample();
      const left = await h.store.queueSamples(nameOf(url), 0);
      assert.deepEqual(
        left.map((x) => x.at - start),
        [HISTORY_RETENTION_MS / 2, HISTORY_RETENTION_MS + SAMPLE_KEEPALIVE_MS + 1],
      );
      // Every queue's samples go, not only this one's.
      assert.ok((await h.store.deleteQueueSamplesBefore(h.clock.now() + 1)) >= left.length);
      assert.deepEqual(await h.store.queueSamples(nameOf(url), 0), []);
      assert.equal(await h.store.deleteQueueSamplesBefore(h.clock.now() + 1), 0);
    });

    it('adds no row for an idle queue whose counts did not change, but one per keepalive; readers fill the gaps', async () => {
      const waiting = await h.newQueue();
      const busy = await h.newQueue();
      await h.send(waiting, 'parked');
      const s = sampler();
      const start = h.clock.now();
      await s.sample();
      for (let i = 1; i <= 6; i++) {
        await h.clock.advance(SAMPLE_PERIOD_MS);
        if (i === 3) await h.send(busy, 'once');
        await s.sample();
      }
      const rows = async (url: string) =>
        (await h.store.queueSamples(nameOf(url), 0)).map((x) => (x.at - start) / SAMPLE_PERIOD_MS);
      assert.deepEqual(await rows(waiting), [0], 'idle and unchanged: only the first sample');
      assert.deepEqual(await rows(busy), [0, 3], 'only the sample that saw the send');

      // Readers see every 10 s point: the counts carried forward, no activity, the parked message aging.
      const waitingHour = await queueHistory(h.reads, nameOf(waiting), '1h');
      assert.deepEqual(
        waitingHour.map((x) => [(x.at - start) / 1000, x.visible, x.oldestAgeSeconds, x.sent]),
        [0, 10, 20, 30, 40, 50, 60].map((t) => [t, 1, t, t === 0 ? 1 : 0]),
      );
      const busyHour = await queueHistory(h.reads, nameOf(busy), '1h');
      assert.deepEqual(
        busyHour.map((x) => [x.visible, x.sent, x.periodMs]),
        [0, 0, 0, 1, 1, 1, 1].map((visible, i) => [visible, i === 3 ? 1 : 0, SAMPLE_PERIOD_MS]),
      );
      const day = await queueHistory(h.reads, nameOf(busy), '24h');
      assert.equal(day.at(-1)!.visible, 1);
      assert.equal(
        day.reduce((sum, b) => sum + b.sent, 0),
        1,
      );

      // Still idle ten minutes on: the keepalive sample.
      await h.clock.advance(SAMPLE_KEEPALIVE_MS - 6 * SAMPLE_PERIOD_MS);
      await s.sample();
      assert.deepEqual(await rows(waiting), [0, SAMPLE_KEEPALIVE_MS / SAMPLE_PERIOD_MS]);
      // A change in the counts alone (the message received, so in flight) is recorded at once.
      await h.clock.advance(SAMPLE_PERIOD_MS);
      await s.sample();
      assert.equal((await rows(waiting)).length, 2);
      await h.receive(waiting);
      await s.sample();
      const [, , received] = await h.store.queueSamples(nameOf(waiting), 0);
      assert.deepEqual([received?.visible, received?.notVisible, received?.received], [0, 1, 1]);
    });

    it('a deleted queue starts from zero when its name is used again', async () => {
      const url = await h.newQueue();
      await h.send(url, 'x');
      await h.service.actions.DeleteQueue({ QueueUrl: url });
      assert.equal(h.service.activity.totals(nameOf(url)).sent, 0);
    });

    it('serves 24 hours as 4-minute buckets: last counts, summed activity', async () => {
      const url = await h.newQueue();
      const s = sampler();
      for (let i = 0; i < 30; i++) {
        await h.send(url, 'm');
        await h.clock.advance(SAMPLE_PERIOD_MS);
        await s.sample();
      }
      const hour = await queueHistory(h.reads, nameOf(url), '1h');
      assert.equal(hour.length, 30);
      const day = await queueHistory(h.reads, nameOf(url), '24h');
      assert.ok(day.length >= 2 && day.length <= 3, `${day.length} buckets for 5 minutes`);
      assert.equal(
        day.reduce((sum, b) => sum + b.sent, 0),
        30,
      );
      assert.equal(day.at(-1)!.visible, 30);
    });
  });
}
