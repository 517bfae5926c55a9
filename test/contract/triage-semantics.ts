import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFilter } from '../../packages/server/src/core/message-filter.ts';
import { MessageTriage } from '../../packages/server/src/core/triage.ts';
import type { QueueRecord, Store } from '../../packages/server/src/store/contract.ts';
import type { TriageStore } from '../../packages/server/src/store/triage.ts';
import { type StoreFactory, useContractService } from './harness.ts';

const console = { actor: 'AKIDOPS', via: 'console' } as const;

/** DLQ triage: browse and search without receiving, replay and delete each message atomically, the audit trail. */
export function triageSemanticsSuite(backend: string, factory: () => StoreFactory): void {
  describe(`DLQ triage on ${backend}`, () => {
    const h = useContractService(factory);
    const triage = () => new MessageTriage(h.service, h.store as Store & TriageStore);
    const queue = async (url: string): Promise<QueueRecord> =>
      (await h.store.getQueue(url.split('/').at(-1)!))!;

    /** A DLQ holding `count` messages dead-lettered from `source` after 2 receives each. */
    async function deadLettered(count: number, fifo = false) {
      const kind: Record<string, string> = fifo
        ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' }
        : {};
      const dlq = await h.newQueue(kind);
      const source = await h.newQueue({
        ...kind,
        VisibilityTimeout: '10',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: h.arn(dlq), maxReceiveCount: 2 }),
      });
      for (let i = 0; i < count; i++)
        await h.send(source, JSON.stringify({ order: i, customer: { tier: i % 2 ? 'gold' : 'basic' } }), {
          MessageAttributes: { kind: { DataType: 'String', StringValue: i % 3 === 0 ? 'refund' : 'charge' } },
          ...(fifo ? { MessageGroupId: `g${i % 2}` } : {}),
        });
      for (let round = 0; round < 3; round++) {
        while ((await h.receive(source)).length > 0) {}
        await h.clock.advance(10_000);
      }
      await h.receive(source);
      assert.equal((await h.counts(dlq)).visible, count);
      return { dlq, source };
    }

    it('browses a queue page by page without receiving: no receive count or visibility changes', async () => {
      const { dlq, source } = await deadLettered(5);
      const q = await queue(dlq);
      const first = await triage().browse(q, { limit: 2, filters: [] });
      assert.equal(first.messages.length, 2);
      assert.ok(first.next);
      const second = await triage().browse(q, { after: first.next, limit: 2, filters: [] });
      const third = await triage().browse(q, { after: second.next, limit: 2, filters: [] });
      assert.equal(third.messages.length, 1);
      assert.equal(third.next, undefined);
      const all = [...first.messages, ...second.messages, ...third.messages];
      assert.deepEqual(
        all.map((m) => JSON.parse(m.body).order),
        [0, 1, 2, 3, 4],
      );
      const [message] = all;
      assert.equal(message!.receiveCount, 2);
      assert.equal(message!.state, 'visible');
      assert.deepEqual(message!.origin, { arn: h.arn(source), queue: source.split('/').at(-1) });
      assert.match(message!.failureReason!, /received 2 times .*maxReceiveCount 2/);
      assert.deepEqual(await h.counts(dlq), { visible: 5, notVisible: 0, delayed: 0 });
      const received = await h.receive(dlq, { MaxNumberOfMessages: 1 });
      assert.equal(received[0]!.Attributes!.ApproximateReceiveCount, '3', 'browsing counted no receive');
      const again = await triage().browse(q, { limit: 10, filters: [] });
      assert.equal(again.messages.filter((m) => m.state === 'inFlight').length, 1);
    });

    it('searches by body text, JSON field and attribute', async () => {
      const { dlq } = await deadLettered(6);
      const q = await queue(dlq);
      const orders = async (...filters: string[]) =>
        (await triage().browse(q, { limit: 100, filters: filters.map(parseFilter) })).messages.map(
          (m) => JSON.parse(m.body).order,
        );
      assert.deepEqual(await orders('attr.kind=refund'), [0, 3]);
      assert.deepEqual(await orders('body.customer.tier=gold'), [1, 3, 5]);
      assert.deepEqual(await orders('body~"order":4'), [4]);
      assert.deepEqual(await orders('attr.kind=refund', 'body.customer.tier=gold'), [3]);
    });

    it('replays selected messages to their origin, with an edited body, and audits it', async () => {
      const { dlq, source } = await deadLettered(3);
      const q = await queue(dlq);
      const page = await triage().browse(q, { limit: 10, filters: [] });
      const [first, second] = page.messages;
      const report = await triage().replay(
        q,
        { messageIds: [first!.messageId] },
        { ...console, body: '{"order":0,"fixed":true}' },
      );
      assert.deepEqual(report.done, [{ messageId: first!.messageId, destination: source.split('/').at(-1) }]);
      assert.deepEqual(report.skipped, []);
      const back = await h.receive(source);
      assert.equal(back.length, 1);
      assert.equal(back[0]!.Body, '{"order":0,"fixed":true}');
      assert.equal(back[0]!.Attributes!.ApproximateReceiveCount, '1', 'a replay is a new message');
      assert.equal(back[0]!.MessageAttributes!.kind!.StringValue, 'refund');
      assert.notEqual(back[0]!.MessageId, first!.messageId);
      const bySearch = await triage().replay(q, { filters: [parseFilter('body.order=1')] }, console);
      assert.deepEqual(
        bySearch.done.map((d) => d.messageId),
        [second!.messageId],
      );
      assert.equal((await h.counts(dlq)).visible, 1);
      const [entry] = await triage().listAudit({ limit: 1 });
      assert.equal(entry!.action, 'replay');
      assert.equal(entry!.actor, 'AKIDOPS');
      assert.equal(entry!.via, 'console');
      assert.equal(entry!.source, q.name);
      assert.equal(entry!.destination, 'origin');
      assert.equal(entry!.count, 1);
      assert.equal(entry!.detail, 'body.order=1');
    });

    it('skips and reports a message in flight elsewhere, one gone, and one with no origin', async () => {
      const { dlq } = await deadLettered(3);
      const q = await queue(dlq);
      const other = await h.newQueue();
      const [held] = await h.receive(dlq, { MaxNumberOfMessages: 1, VisibilityTimeout: 60 });
      const ids = (await triage().browse(q, { limit: 10, filters: [] })).messages.map((m) => m.messageId);
      const replay = await triage().replay(q, { messageIds: [...ids, 'no-such-id'] }, console);
      assert.equal(replay.done.length, 2);
      assert.deepEqual(
        replay.skipped.sort((a, b) => a.reason.localeCompare(b.reason)),
        [
          { messageId: held!.MessageId, reason: 'inFlight' },
          { messageId: 'no-such-id', reason: 'missing' },
        ],
      );
      // Sent straight to `other`, a message has no origin queue.
      await h.send(other, 'sent directly');
      const direct = await triage().browse(await queue(other), { limit: 1, filters: [] });
      assert.equal(direct.messages[0]!.origin, undefined);
      const refused = await triage().replay(
        await queue(other),
        { messageIds: [direct.messages[0]!.messageId] },
        console,
      );
      assert.match(refused.skipped[0]!.reason, /no origin queue: name a destination/);
      const toDlq = await triage().replay(
        await queue(other),
        { messageIds: [direct.messages[0]!.messageId] },
        { ...console, destination: q },
      );
      assert.equal(toDlq.done.length, 1);
    });

    it("refuses a replay over the destination's MaximumMessageSize, attributes counted as a send counts them", async () => {
      const other = await h.newQueue();
      const small = await queue(await h.newQueue({ MaximumMessageSize: '1024' }));
      // 1009 + 'b' + 'Binary' + 8 decoded bytes is exactly 1024.
      const binary = { b: { DataType: 'Binary', BinaryValue: Buffer.alloc(8, 1).toString('base64') } };
      await h.send(other, 'x'.repeat(1009), { MessageAttributes: binary });
      await h.send(other, 'y'.repeat(1010), { MessageAttributes: binary });
      const ids = (await triage().browse(await queue(other), { limit: 10, filters: [] })).messages.map(
        (m) => m.messageId,
      );
      const report = await triage().replay(
        await queue(other),
        { messageIds: ids },
        { ...console, destination: small },
      );
      assert.deepEqual(
        report.done.map((done) => done.messageId),
        [ids[0]],
      );
      assert.deepEqual(report.skipped, [
        {
          messageId: ids[1],
          reason: `it would be 1025 bytes, over ${small.name}'s MaximumMessageSize of 1024`,
        },
      ]);
    });

    it('deletes selected messages, skipping one in flight', async () => {
      const { dlq } = await deadLettered(4);
      const q = await queue(dlq);
      const [held] = await h.receive(dlq, { MaxNumberOfMessages: 1, VisibilityTimeout: 60 });
      const report = await triage().delete(
        q,
        { filters: [parseFilter('body~order')] },
        { actor: 'cli', via: 'cli' },
      );
      assert.equal(report.done.length, 3);
      assert.deepEqual(report.skipped, [{ messageId: held!.MessageId, reason: 'inFlight' }]);
      assert.deepEqual(await h.counts(dlq), { visible: 0, notVisible: 1, delayed: 0 });
      assert.equal((await triage().listAudit({ limit: 1 }))[0]!.skipped, 1);
    });

    it('replays FIFO messages in their group and frees the group a deleted message held', async () => {
      const { dlq, source } = await deadLettered(4, true);
      const q = await queue(dlq);
      const messages = (await triage().browse(q, { limit: 10, filters: [] })).messages;
      assert.deepEqual(
        messages.map((m) => m.groupId),
        ['g0', 'g1', 'g0', 'g1'],
      );
      const report = await triage().replay(q, { messageIds: [messages[0]!.messageId] }, console);
      assert.equal(report.done.length, 1);
      const back = await h.receive(source);
      assert.equal(back[0]!.Attributes!.MessageGroupId, 'g0');
      await triage().delete(q, { messageIds: [messages[1]!.messageId] }, console);
      const rest = await h.receive(dlq);
      assert.deepEqual(rest.map((m) => JSON.parse(m.Body).order).sort(), [2, 3]);
    });

    it('refuses a bad selection, cursor or body with SQS errors', async () => {
      const { dlq } = await deadLettered(2);
      const q = await queue(dlq);
      await h.rejects(triage().delete(q, {}, console), 'MissingParameter');
      await h.rejects(triage().browse(q, { after: 'x', limit: 1, filters: [] }), 'InvalidParameterValue');
      const ids = (await triage().browse(q, { limit: 10, filters: [] })).messages.map((m) => m.messageId);
      await h.rejects(
        triage().replay(q, { messageIds: ids }, { ...console, body: 'one body for two' }),
        'InvalidParameterValue',
        /one message at a time/,
      );
      await h.rejects(
        triage().replay(q, { messageIds: ids }, { ...console, destination: q }),
        'InvalidParameterValue',
      );
      await h.rejects(
        triage().replay(q, { messageIds: ids }, { ...console, body: '\u0000' }),
        'InvalidMessageContents',
      );
    });

    it('keeps the audit trail newest first, a page at a time', async () => {
      const base = (await triage().listAudit({ limit: 1 }))[0]?.id ?? 0;
      for (const action of ['purge', 'move-task', 'cancel-move-task'] as const)
        await triage().record({
          actor: 'AKIDOPS',
          via: 'cli',
          action,
          source: 'orders-dlq',
          destination: action === 'move-task' ? 'orders' : undefined,
          count: 7,
          skipped: 0,
          detail: undefined,
        });
      const newest = await triage().listAudit({ limit: 2 });
      assert.deepEqual(
        newest.map((entry) => entry.action),
        ['cancel-move-task', 'move-task'],
      );
      assert.ok(newest[0]!.id > base);
      assert.equal(newest[0]!.at, h.clock.now());
      const older = await triage().listAudit({ beforeId: newest[1]!.id, limit: 1 });
      assert.deepEqual(older[0], {
        id: older[0]!.id,
        at: h.clock.now(),
        actor: 'AKIDOPS',
        via: 'cli',
        action: 'purge',
        source: 'orders-dlq',
        destination: undefined,
        count: 7,
        skipped: 0,
        detail: undefined,
      });
    });
  });
}
