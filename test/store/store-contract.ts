import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type {
  NewMessage,
  QueueRecord,
  ReceiveRequest,
  Store,
} from '../../packages/server/src/store/contract.ts';
import { GROUPS_PER_RECEIVE } from '../../packages/server/src/store/planner.ts';
import type { StoreFactory } from '../contract/harness.ts';
import { newMessage } from '../helpers/new-message.ts';

/**
 * The store contract (packages/server/src/store/contract.ts), operation by operation, called directly: what
 * each part (QueueStore, MessageStore, MoveTaskStore, HistoryStore, ClusterStore) promises, whichever
 * backend carries it out. test/contract checks SQS semantics through the core on top of this.
 */
export function storeContractSuite(backend: string, factory: () => StoreFactory): void {
  describe(`store contract: ${backend}`, () => {
    let made: StoreFactory;
    let store: Store;
    let queues = 0;
    const NOW = 1_000;

    before(async () => {
      made = factory();
      store = await made.open();
    });
    after(async () => {
      await store?.close();
      await made?.destroy();
    });

    const createQueue = (fifo = false, name = `q${++queues}${fifo ? '.fifo' : ''}`): Promise<QueueRecord> =>
      store.createQueue({
        name,
        fifo,
        attributes: { VisibilityTimeout: '30' },
        tags: { team: 'a' },
        now: NOW,
      });
    const message = (id: string, extra: Partial<NewMessage> = {}): NewMessage => ({
      ...newMessage(id, `body of ${id}`),
      ...extra,
    });
    let tokens = 0;
    const receive = (queueId: number, extra: Partial<ReceiveRequest> = {}) =>
      store.receiveMessages({
        queueId,
        now: NOW,
        max: 10,
        visibleUntil: NOW + 30_000,
        newReceiptToken: () => `token${++tokens}`,
        maxInFlight: 120_000,
        ...extra,
      });

    describe('QueueStore', () => {
      it('creates, finds, lists by prefix and page, updates and deletes queues', async () => {
        const a = await createQueue(false, 'list-a');
        await createQueue(true, 'list-b.fifo');
        await createQueue(false, 'other');
        assert.deepEqual(await store.getQueue('list-a'), a);
        assert.equal(a.fifo, false);
        assert.deepEqual(a.tags, { team: 'a' });
        assert.equal((await store.getQueue('list-b.fifo'))?.fifo, true);
        assert.equal(await store.getQueue('missing'), undefined);
        const names = async (options: { prefix?: string; afterName?: string; limit: number }) =>
          (await store.listQueues(options)).map((queue) => queue.name);
        assert.deepEqual(await names({ prefix: 'list-', limit: 10 }), ['list-a', 'list-b.fifo']);
        assert.deepEqual(await names({ prefix: 'list-', afterName: 'list-a', limit: 10 }), ['list-b.fifo']);
        assert.deepEqual(await names({ prefix: 'list-', limit: 1 }), ['list-a']);

        const updated = await store.updateQueue(a.id, {
          attributes: { VisibilityTimeout: '5' },
          now: NOW + 1,
        });
        assert.deepEqual(updated?.attributes, { VisibilityTimeout: '5' });
        assert.deepEqual(updated?.tags, { team: 'a' }, 'what the change leaves out is kept');
        assert.equal(updated?.lastModifiedAt, NOW + 1);
        assert.equal(await store.updateQueue(999_999, { now: NOW }), undefined);

        await store.sendMessages(a.id, [message('in-deleted')]);
        await store.deleteQueue(a.id, NOW + 2);
        assert.equal(await store.getQueue('list-a'), undefined);
        assert.equal(await store.queueDeletedAt('list-a'), NOW + 2);
        assert.equal((await store.countMessages(a.id, NOW)).visible, 0, 'its messages went with it');
        const again = await createQueue(false, 'list-a');
        assert.notEqual(again.id, a.id, 'ids are never reused');
        assert.equal(await store.queueDeletedAt('list-a'), undefined);
      });

      it('keeps the deduplication scope a FIFO queue was created with through updates', async () => {
        const created = await store.createQueue({
          name: 'per-group.fifo',
          fifo: true,
          deduplicatesPerGroup: true,
          attributes: { DeduplicationScope: 'messageGroup' },
          tags: {},
          now: NOW,
        });
        assert.equal(created.deduplicatesPerGroup, true);
        await store.updateQueue(created.id, { attributes: { DeduplicationScope: 'queue' }, now: NOW + 1 });
        assert.equal((await store.getQueue('per-group.fifo'))?.deduplicatesPerGroup, true);
        assert.equal((await createQueue(true)).deduplicatesPerGroup, false, 'false when left out');
      });
    });

    describe('MessageStore', () => {
      it('sends in order with increasing seqs, and answers a duplicate with the original', async () => {
        const queue = await createQueue(true);
        const dedup = (id: string) => ({ scope: 'queue', id, expiresAt: NOW + 300_000 });
        const sent = await store.sendMessages(queue.id, [
          message('m1', { groupId: 'g', deduplication: dedup('d1') }),
          message('m2', { groupId: 'g', deduplication: dedup('d2') }),
        ]);
        assert.deepEqual(
          sent.map((result) => [result.messageId, result.duplicate]),
          [
            ['m1', false],
            ['m2', false],
          ],
        );
        assert.ok(sent[0]!.seq < sent[1]!.seq);
        const [duplicate] = await store.sendMessages(queue.id, [
          message('m3', { groupId: 'g', deduplication: dedup('d1'), sentAt: NOW }),
        ]);
        assert.deepEqual(duplicate, { ...sent[0], duplicate: true });
        assert.equal(await store.lastSeq(queue.id), sent[1]!.seq);
      });

      it('claims visible messages, keeps a message’s token across receives, and counts them', async () => {
        const queue = await createQueue();
        await store.sendMessages(queue.id, [
          message('a'),
          message('b'),
          message('late', { visibleAt: NOW + 50 }),
        ]);
        const first = await receive(queue.id, { max: 1, visibleUntil: NOW + 10 });
        assert.deepEqual(
          first.messages.map((m) => [m.messageId, m.receiveCount, m.firstReceivedAt, m.deliveryStartedAt]),
          [['a', 1, NOW, NOW]],
        );
        assert.deepEqual(await store.countMessages(queue.id, NOW), {
          visible: 1,
          notVisible: 1,
          delayed: 1,
          oldestSentAt: 1,
        });
        assert.equal(await store.nextVisibleAt(queue.id, NOW), NOW + 10);
        const again = await receive(queue.id, { now: NOW + 10, visibleUntil: NOW + 20 });
        const a = again.messages.find((m) => m.messageId === 'a');
        assert.equal(a?.receiveCount, 2);
        assert.equal(a?.receiptToken, first.messages[0]!.receiptToken, 'the token of its first receive');
        assert.equal(a?.firstReceivedAt, NOW);
      });

      it('takes a FIFO receive from at most GROUPS_PER_RECEIVE groups, the longest available first', async () => {
        const queue = await createQueue(true);
        const groups = Array.from(
          { length: GROUPS_PER_RECEIVE + 8 },
          (_, i) => `g${String(i).padStart(2, '0')}`,
        );
        await store.sendMessages(
          queue.id,
          groups.map((groupId) => message(`m-${groupId}`, { groupId })),
        );
        const { messages } = await receive(queue.id, { max: groups.length });
        assert.deepEqual(
          messages.map((m) => m.groupId),
          groups.slice(0, GROUPS_PER_RECEIVE),
        );
      });

      it('gives two FIFO receives made at once a group each', async () => {
        // A store that locks the groups it reads (PostgreSQL) must lock only those it takes from, or the other
        // receive, skipping the held groups, finds nothing. Whether the two overlap is up to timing: five tries.
        const empty = await createQueue();
        for (let round = 0; round < 5; round++) {
          const queue = await createQueue(true);
          await store.sendMessages(
            queue.id,
            ['a', 'b'].flatMap((groupId) =>
              Array.from({ length: 10 }, (_, i) => message(`${groupId}${i}`, { groupId })),
            ),
          );
          // Twice at once first, so a pooled store has a connection ready for each: neither waits for one.
          await Promise.all([receive(empty.id), receive(empty.id)]);
          const received = await Promise.all([receive(queue.id), receive(queue.id)]);
          assert.deepEqual(received.map(({ messages }) => messages.map((m) => m.groupId).join('')).sort(), [
            'a'.repeat(10),
            'b'.repeat(10),
          ]);
        }
      });

      it('refuses a receive at the in-flight limit, and moves exhausted messages to the DLQ', async () => {
        const queue = await createQueue();
        const dlq = await createQueue();
        await store.sendMessages(queue.id, [message('x'), message('y')]);
        await receive(queue.id, { max: 1 });
        assert.deepEqual(await receive(queue.id, { maxInFlight: 1 }), {
          messages: [],
          overLimit: true,
          movedToDeadLetter: 0,
        });
        const deadLetter = {
          queueId: dlq.id,
          maxReceiveCount: 1,
          sourceArn: 'arn:aws:sqs:us-east-1:000000000000:source',
          resetSentAt: false,
          retentionMs: 60_000,
        };
        const result = await receive(queue.id, { now: NOW + 40_000, deadLetter });
        assert.equal(result.movedToDeadLetter, 1);
        assert.deepEqual(
          result.messages.map((m) => m.messageId),
          ['y'],
        );
        const [moved] = (await receive(dlq.id, { now: NOW + 40_000 })).messages;
        assert.equal(moved?.messageId, 'x');
        assert.equal(moved?.deadLetterSourceArn, deadLetter.sourceArn);
        assert.equal(moved?.expiresAt, 1 + 60_000, 'a standard DLQ keeps the original send time');
      });

      it('deletes by receipt under each rule, once for several receipts of one message', async () => {
        const queue = await createQueue();
        await store.sendMessages(queue.id, [message('d1'), message('d2')]);
        const [m1, m2] = (await receive(queue.id, { visibleUntil: NOW + 10 })).messages;
        const receipt = (m: typeof m1, receiveCount = m!.receiveCount) => ({
          seq: m!.seq,
          receiveCount,
          receiptToken: m!.receiptToken!,
        });
        const check = { rule: 'inFlight' as const, now: NOW };
        assert.equal(
          await store.deleteMessage(queue.id, { ...receipt(m1), receiptToken: 'forged' }, check),
          'invalid',
        );
        assert.equal(
          await store.deleteMessage(queue.id, receipt(m1), { ...check, now: NOW + 10 }),
          'expired',
        );
        assert.equal(await store.deleteMessage(queue.id, receipt(m1), check), 'deleted');
        assert.equal(await store.deleteMessage(queue.id, receipt(m1), check), 'missing');
        await receive(queue.id, { now: NOW + 10, visibleUntil: NOW + 20 });
        assert.equal(
          await store.deleteMessage(queue.id, receipt(m2), { rule: 'latest', now: NOW + 10 }),
          'stale',
        );
        assert.deepEqual(
          await store.deleteMessages(queue.id, [receipt(m2), receipt(m2)], {
            rule: 'anyIssued',
            now: NOW + 10,
          }),
          ['deleted', 'missing'],
        );
      });

      it('changes visibility through the latest receipt only, within the delivery limit', async () => {
        const queue = await createQueue();
        await store.sendMessages(queue.id, [message('v')]);
        const [m] = (await receive(queue.id)).messages;
        const request = {
          queueId: queue.id,
          receipt: { seq: m!.seq, receiveCount: m!.receiveCount, receiptToken: m!.receiptToken! },
          rule: 'latest' as const,
          now: NOW,
          visibleAt: NOW,
          maxDeliveryMs: 43_200_000,
        };
        assert.equal(await store.changeVisibility({ ...request, maxDeliveryMs: -1 }), 'beyondLimit');
        assert.equal(await store.changeVisibility(request), 'changed');
        assert.equal(await store.changeVisibility(request), 'notInFlight');
        assert.equal(
          await store.changeVisibility({ ...request, receipt: { ...request.receipt, seq: 999_999_999 } }),
          'missing',
        );
        assert.equal((await receive(queue.id)).messages.length, 1, 'visible again at once');
      });

      it('purges at most once per window, and sweeps expired messages', async () => {
        const queue = await createQueue();
        await store.sendMessages(queue.id, [message('p1'), message('e1', { expiresAt: NOW + 5 })]);
        assert.equal(await store.nextExpiryAt(queue.id, NOW), NOW + 5);
        assert.equal(await store.deleteExpired(NOW + 5, 100), 1);
        assert.equal(await store.nextExpiryAt(queue.id, NOW + 5), 1_000_000);
        assert.equal(await store.purgeQueue(queue.id, NOW + 6, 60_000), true);
        assert.equal((await store.countMessages(queue.id, NOW + 6)).visible, 0);
        assert.equal(await store.purgeQueue(queue.id, NOW + 7, 60_000), false);
      });
    });

    describe('MoveTaskStore', () => {
      it('runs one task per source at a time and moves its messages in batches', async () => {
        const dlq = await createQueue();
        const target = await createQueue();
        await store.sendMessages(dlq.id, [message('t1'), message('t2'), message('t3')]);
        const task = {
          handle: `task-${backend}`,
          sourceArn: `arn:dlq:${dlq.id}`,
          sourceQueueId: dlq.id,
          destinationArn: undefined,
          maxPerSecond: undefined,
          toMove: 3,
          upToSeq: await store.lastSeq(dlq.id),
          startedAt: NOW,
        };
        assert.equal((await store.createMoveTask(task))?.status, 'RUNNING');
        assert.equal(await store.createMoveTask({ ...task, handle: 'second' }), undefined);
        assert.deepEqual(
          (await store.activeMoveTasks()).map((t) => t.handle),
          [task.handle],
        );
        let ids = 0;
        const move = () =>
          store.moveMessages({
            handle: task.handle,
            now: NOW,
            max: 2,
            route: () => ({ queueId: target.id, fifo: false, visibleAt: NOW, expiresAt: NOW + 60_000 }),
            newMessageId: () => `moved-${++ids}`,
          });
        const first = await move();
        assert.deepEqual([first.moved, first.more, first.destinations], [2, true, [target.id]]);
        const second = await move();
        assert.deepEqual([second.moved, second.more, second.task?.moved], [1, false, 3]);
        assert.deepEqual(
          (await receive(target.id)).messages.map((m) => [m.messageId, m.body]),
          [
            ['moved-1', 'body of t1'],
            ['moved-2', 'body of t2'],
            ['moved-3', 'body of t3'],
          ],
        );
        const done = await store.setMoveTaskStatus(task.handle, { status: 'COMPLETED', now: NOW + 1 });
        assert.deepEqual([done?.status, done?.endedAt], ['COMPLETED', NOW + 1]);
        assert.equal(
          await store.setMoveTaskStatus(task.handle, { status: 'CANCELLED', now: NOW + 2 }),
          undefined,
        );
        assert.equal((await store.getMoveTask(task.handle))?.status, 'COMPLETED');
        assert.deepEqual(
          (await store.listMoveTasks(task.sourceArn, 10)).map((t) => t.handle),
          [task.handle],
        );
        assert.deepEqual(await store.activeMoveTasks(), []);
      });
    });

    describe('HistoryStore', () => {
      it('keeps samples by queue and time, and hands activity out once', async () => {
        const sample = (at: number, sent: number) => ({
          queue: 'history',
          at,
          periodMs: 10_000,
          visible: 1,
          notVisible: 0,
          delayed: 0,
          oldestAgeSeconds: 0,
          sent,
          received: 0,
          deleted: 0,
          emptyReceives: 0,
          sentBytes: 0,
        });
        await store.recordQueueSamples([sample(10, 1), sample(20, 2)]);
        assert.deepEqual(await store.queueSamples('history', 15), [sample(20, 2)]);
        assert.equal(await store.deleteQueueSamplesBefore(15), 1);
        assert.deepEqual(await store.queueSamples('history', 0), [sample(20, 2)]);

        const counts = { sent: 2, received: 1, deleted: 1, emptyReceives: 0, sentBytes: 10 };
        await store.addQueueActivity([{ queue: 'history', ...counts }]);
        await store.addQueueActivity([{ queue: 'history', ...counts }]);
        assert.deepEqual(await store.takeQueueActivity(), [
          { queue: 'history', sent: 4, received: 2, deleted: 2, emptyReceives: 0, sentBytes: 20 },
        ]);
        assert.deepEqual(await store.takeQueueActivity(), []);
      });
    });

    describe('TopicStore', () => {
      const receiveAll = async (queueId: number) =>
        (await store.receiveMessages({ ...receiveFrom(queueId), max: 10 })).messages.map((m) => m.body);
      const receiveFrom = (queueId: number): ReceiveRequest => ({
        queueId,
        max: 10,
        now: NOW,
        visibleUntil: NOW + 60_000,
        newReceiptToken: () => 'token',
        maxInFlight: 120_000,
      });

      it('creates a topic once, lists by name, updates and deletes it with its subscriptions', async () => {
        const created = await store.createTopic({
          name: 't-a',
          fifo: false,
          attributes: { DisplayName: 'A' },
          tags: {},
          now: NOW,
        });
        assert.deepEqual(created, {
          name: 't-a',
          fifo: false,
          attributes: { DisplayName: 'A' },
          tags: {},
          createdAt: NOW,
        });
        const again = await store.createTopic({
          name: 't-a',
          fifo: false,
          attributes: { DisplayName: 'B' },
          tags: {},
          now: NOW + 1,
        });
        assert.deepEqual(again, created, 'the existing topic, as it is');
        await store.createTopic({ name: 't-b.fifo', fifo: true, attributes: {}, tags: {}, now: NOW });
        assert.deepEqual(
          (await store.listTopics({ limit: 10 })).map((t) => t.name),
          ['t-a', 't-b.fifo'],
        );
        assert.deepEqual(
          (await store.listTopics({ afterName: 't-a', limit: 10 })).map((t) => t.name),
          ['t-b.fifo'],
        );
        const updated = await store.updateTopic('t-a', { tags: { team: 'x' } });
        assert.deepEqual(updated?.tags, { team: 'x' });
        assert.deepEqual(updated?.attributes, { DisplayName: 'A' });
        const subscription = {
          topicName: 't-a',
          protocol: 'sqs',
          endpoint: 'arn:q',
          owner: '1',
          attributes: {},
          now: NOW,
        };
        const first = await store.createSubscription({ ...subscription, arn: 'arn:t-a:1' });
        const same = await store.createSubscription({ ...subscription, arn: 'arn:t-a:2' });
        assert.equal(same?.arn, first?.arn, 'one subscription per topic, protocol and endpoint');
        assert.equal(
          await store.createSubscription({ ...subscription, topicName: 'none', arn: 'arn:x' }),
          undefined,
        );
        assert.deepEqual(
          (await store.updateSubscription('arn:t-a:1', { RawMessageDelivery: 'true' }))?.attributes,
          {
            RawMessageDelivery: 'true',
          },
        );
        assert.equal((await store.listSubscriptions({ topicName: 't-a', limit: 10 })).length, 1);
        assert.equal(await store.deleteTopic('t-a'), true);
        assert.equal(await store.getSubscription('arn:t-a:1'), undefined);
        assert.equal(await store.deleteTopic('t-a'), false);
        assert.equal(await store.getTopic('t-a'), undefined);
      });

      it('stores every delivery of a publication, in one transaction, into every queue', async () => {
        await store.createTopic({ name: 't-fan', fifo: false, attributes: {}, tags: {}, now: NOW });
        const a = await createQueue();
        const b = await createQueue();
        const outcomes = await store.publish('t-fan', [
          {
            messageId: 'p1',
            sequenced: false,
            deduplication: undefined,
            deliveries: () => [
              { queueId: a.id, message: newMessage('m1', 'one') },
              { queueId: b.id, message: newMessage('m2', 'one') },
            ],
          },
          {
            messageId: 'p2',
            sequenced: false,
            deduplication: undefined,
            deliveries: () => [{ queueId: b.id, message: newMessage('m3', 'two') }],
          },
        ]);
        assert.deepEqual(outcomes, [
          { messageId: 'p1', sequenceNumber: 0, duplicate: false },
          { messageId: 'p2', sequenceNumber: 0, duplicate: false },
        ]);
        assert.deepEqual(await receiveAll(a.id), ['one']);
        assert.deepEqual(await receiveAll(b.id), ['one', 'two']);
        assert.equal(await store.publish('no-such-topic', []), undefined);
      });

      it('numbers a FIFO topic publications and delivers a duplicate within the window once', async () => {
        await store.createTopic({ name: 't-seq.fifo', fifo: true, attributes: {}, tags: {}, now: NOW });
        const queue = await createQueue();
        const publication = (messageId: string, id: string, now: number) => ({
          messageId,
          sequenced: true,
          deduplication: { id, now, expiresAt: now + 300_000 },
          deliveries: (sequence: number) => [
            { queueId: queue.id, message: newMessage(`${messageId}-m`, `${messageId}#${sequence}`) },
          ],
        });
        const first = await store.publish('t-seq.fifo', [
          publication('p1', 'd1', NOW),
          publication('p2', 'd1', NOW),
        ]);
        assert.deepEqual(first, [
          { messageId: 'p1', sequenceNumber: 1, duplicate: false },
          { messageId: 'p1', sequenceNumber: 1, duplicate: true },
        ]);
        const later = await store.publish('t-seq.fifo', [publication('p3', 'd1', NOW + 300_000)]);
        assert.deepEqual(
          later,
          [{ messageId: 'p3', sequenceNumber: 2, duplicate: false }],
          'the window has passed',
        );
        assert.deepEqual(await receiveAll(queue.id), ['p1#1', 'p3#2']);
      });
    });

    describe('ClusterStore', () => {
      it('keeps the last saved document of each name', async () => {
        assert.equal(await store.clusterState('alarms'), undefined);
        await store.saveClusterState('alarms', '{"a":1}');
        await store.saveClusterState('alarms', '{"a":2}');
        assert.equal(await store.clusterState('alarms'), '{"a":2}');
      });
    });
  });
}
