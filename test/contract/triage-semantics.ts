import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  AUDIT_RETENTION_DEFAULTS,
  type AuditRetention,
  AuditTrail,
} from '../../packages/server/src/core/audit-trail.ts';
import { bodyContains, parseFilter } from '../../packages/server/src/core/message-filter.ts';
import { MessageTriage } from '../../packages/server/src/core/triage.ts';
import type { QueueRecord, Store } from '../../packages/server/src/store/contract.ts';
import type { ReplayRequest, TriageStore } from '../../packages/server/src/store/triage.ts';
import { newMessage } from '../helpers/new-message.ts';
import { context, type StoreFactory, useContractService } from './harness.ts';

/** The console's key, allowed to replay anywhere. */
const console = {
  actor: 'AKIDOPS',
  via: 'console-session',
  senderId: 'AKIDOPS',
  authorizeDestination: async () => {},
} as const;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** DLQ triage: browse and search without receiving, replay and delete each message atomically, the audit trail. */
export function triageSemanticsSuite(backend: string, factory: () => StoreFactory): void {
  describe(`DLQ triage on ${backend}`, () => {
    const h = useContractService(factory);
    const trail = (retention: AuditRetention = AUDIT_RETENTION_DEFAULTS) =>
      new AuditTrail(h.clock, h.store as Store & TriageStore, retention);
    const triage = () => new MessageTriage(h.service, h.store as Store & TriageStore, trail());
    const queue = async (url: string): Promise<QueueRecord> =>
      (await h.store.getQueue(url.split('/').at(-1)!))!;

    /** `count` messages in the queue, bodies `order 0`, `order 1`… */
    async function filled(url: string, count: number) {
      for (let start = 0; start < count; start += 10)
        await h.service.actions.SendMessageBatch(
          {
            QueueUrl: url,
            Entries: Array.from({ length: Math.min(10, count - start) }, (_, i) => ({
              Id: String(i),
              MessageBody: `order ${start + i}`,
            })),
          },
          context,
        );
      return queue(url);
    }

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
      assert.deepEqual(report.done, [
        {
          messageId: first!.messageId,
          destination: source.split('/').at(-1),
          newMessageId: report.done[0]!.newMessageId,
        },
      ]);
      assert.deepEqual(report.skipped, []);
      const back = await h.receive(source);
      assert.equal(back[0]!.MessageId, report.done[0]!.newMessageId, 'the report names the new message');
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
      const [entry] = await triage().audit.list({ limit: 1 });
      assert.equal(entry!.action, 'replay');
      assert.equal(entry!.actor, 'AKIDOPS');
      assert.equal(entry!.via, 'console-session');
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
        { actor: 'AKIDCLI', via: 'signature' },
      );
      assert.equal(report.done.length, 3);
      assert.deepEqual(report.skipped, [{ messageId: held!.MessageId, reason: 'inFlight' }]);
      assert.deepEqual(await h.counts(dlq), { visible: 0, notVisible: 1, delayed: 0 });
      assert.equal((await triage().audit.list({ limit: 1 }))[0]!.skipped, 1);
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

    it("sends a replay as the replaying key, once every destination, each message's origin included, allows it", async () => {
      const { dlq, source } = await deadLettered(2);
      const q = await queue(dlq);
      const asked: string[] = [];
      const refused = triage().replay(
        q,
        { filters: [parseFilter('body~order')] },
        {
          ...console,
          authorizeDestination: async (destination) => {
            asked.push(destination.name);
            throw new Error(`may not send to ${destination.name}`);
          },
        },
      );
      await assert.rejects(refused, /may not send to/);
      assert.deepEqual(asked, [source.split('/').at(-1)], 'the origin, asked once for both messages');
      assert.equal((await h.counts(dlq)).visible, 2, 'nothing moved');
      const done = await triage().replay(
        q,
        { filters: [parseFilter('body~order')] },
        { ...console, senderId: 'AKIDTRIAGE' },
      );
      assert.equal(done.done.length, 2);
      const back = await h.receive(source);
      assert.deepEqual(
        back.map((message) => message.Attributes!.SenderId),
        ['AKIDTRIAGE', 'AKIDTRIAGE'],
      );
    });

    it('scans a big queue a page at a time, letting the event loop run between pages, and moves each message once', async () => {
      const dlq = await filled(await h.newQueue(), 1_200);
      const target = await queue(await h.newQueue());
      const store = h.store as Store & TriageStore;
      // Counts the turns of the event loop; each page read notes how many had passed.
      let turns = 0;
      let counting = true;
      const turn = () => {
        turns++;
        if (counting) setImmediate(turn);
      };
      setImmediate(turn);
      let pages: number[] = [];
      const watched = new MessageTriage(
        h.service,
        {
          browseMessages: (queueId, options) => {
            pages.push(turns);
            return store.browseMessages(queueId, options);
          },
          replayMessages: (request) => store.replayMessages(request),
          deleteMessagesBySeq: (queueId, seqs, now) => store.deleteMessagesBySeq(queueId, seqs, now),
          appendAudit: (entry, keep) => store.appendAudit(entry, keep),
          pruneAudit: (keep) => store.pruneAudit(keep),
          listAudit: (options) => store.listAudit(options),
        },
        trail(),
      );
      const turnsBetweenPages = () => pages.slice(1).map((at, index) => at - pages[index]!);
      try {
        const none = await watched.browse(dlq, { limit: 100, filters: [parseFilter('body~^nothing')] });
        assert.deepEqual(none, { messages: [], next: undefined });
        assert.equal(pages.length, 3);
        assert.ok(
          turnsBetweenPages().every((between) => between > 0),
          `turns ${turnsBetweenPages()}`,
        );
        pages = [];
        const absent = await watched.delete(dlq, { messageIds: ['not-there'] }, console);
        assert.deepEqual(absent.skipped, [{ messageId: 'not-there', reason: 'missing' }]);
        assert.equal(pages.length, 3);
        assert.ok(
          turnsBetweenPages().every((between) => between > 0),
          `turns ${turnsBetweenPages()}`,
        );
      } finally {
        counting = false;
      }
      const report = await watched.replay(
        dlq,
        { filters: [parseFilter('body~^order')] },
        { ...console, destination: target },
      );
      assert.equal(report.done.length, 1_000);
      assert.equal(report.truncated, true);
      const bodies = async (q: QueueRecord) => {
        const found: string[] = [];
        for (let after: string | undefined; ; ) {
          const page = await triage().browse(q, { after, limit: 100, filters: [] });
          found.push(...page.messages.map((message) => message.body));
          after = page.next;
          if (after === undefined) return found;
        }
      };
      const orders = (from: number, count: number) =>
        Array.from({ length: count }, (_, i) => `order ${from + i}`);
      assert.deepEqual(await bodies(target), orders(0, 1_000));
      assert.deepEqual(await bodies(dlq), orders(1_000, 200));
    });

    it('replays a big selection in several writes: a small replay started after it is done first', async () => {
      const store = h.store as Store & TriageStore;
      const big = await filled(await h.newQueue(), 300);
      const small = await filled(await h.newQueue(), 1);
      const target = await queue(await h.newQueue());
      const now = h.clock.now();
      const seqsOf = async (q: QueueRecord) =>
        (await store.browseMessages(q.id, { afterSeq: 0, limit: 500, now })).map((row) => row.seq);
      const replay = (q: QueueRecord, seqs: number[]): ReplayRequest => ({
        queueId: q.id,
        seqs,
        now,
        copy: (original) => ({
          queueId: target.id,
          message: { ...newMessage(`copy of ${original.messageId}`, original.body), expiresAt: now + 60_000 },
        }),
      });
      const finished: string[] = [];
      const bigSeqs = await seqsOf(big);
      const smallSeqs = await seqsOf(small);
      const outcomes = await Promise.all([
        store.replayMessages(replay(big, bigSeqs)).finally(() => finished.push('big')),
        store.replayMessages(replay(small, smallSeqs)).finally(() => finished.push('small')),
      ]);
      assert.deepEqual(finished, ['small', 'big']);
      assert.deepEqual(
        outcomes.map((list) => list.filter((outcome) => outcome.outcome === 'done').length),
        [300, 1],
      );
    });

    it('keeps the audit trail newest first, a page at a time', async () => {
      const base = (await triage().audit.list({ limit: 1 }))[0]?.id ?? 0;
      for (const action of ['purge', 'move-task', 'cancel-move-task'] as const)
        await triage().audit.record({
          actor: 'AKIDOPS',
          via: 'signature',
          action,
          source: 'orders-dlq',
          destination: action === 'move-task' ? 'orders' : undefined,
          count: 7,
          skipped: 0,
          detail: undefined,
        });
      const newest = await triage().audit.list({ limit: 2 });
      assert.deepEqual(
        newest.map((entry) => entry.action),
        ['cancel-move-task', 'move-task'],
      );
      assert.ok(newest[0]!.id > base);
      assert.equal(newest[0]!.at, h.clock.now());
      const older = await triage().audit.list({ beforeId: newest[1]!.id, limit: 1 });
      assert.deepEqual(older[0], {
        id: older[0]!.id,
        at: h.clock.now(),
        actor: 'AKIDOPS',
        via: 'signature',
        action: 'purge',
        source: 'orders-dlq',
        destination: undefined,
        count: 7,
        skipped: 0,
        detail: undefined,
      });
    });

    it('records what a replay changed, as digests and sizes, and the new message ids', async () => {
      const { dlq, source } = await deadLettered(3);
      const q = await queue(dlq);
      const [first, ...rest] = (await triage().browse(q, { limit: 10, filters: [] })).messages;
      const body = '{"order":0,"fixed":true}';
      const attributes = { kind: { DataType: 'String', StringValue: 'fixed' } };
      const edited = await triage().replay(
        q,
        { messageIds: [first!.messageId] },
        { ...console, body, messageAttributes: attributes },
      );
      const newId = edited.done[0]!.newMessageId!;
      assert.deepEqual(edited.audit.edit, {
        body: { bytes: Buffer.byteLength(body), sha256: sha256(body) },
        // kind (4) + String (6) + fixed (5), as SQS counts attributes.
        messageAttributes: { bytes: 15, sha256: edited.audit.edit!.messageAttributes!.sha256 },
      });
      assert.match(edited.audit.edit!.messageAttributes!.sha256, /^[0-9a-f]{64}$/);
      assert.deepEqual(edited.audit.messages, [{ messageId: first!.messageId, newMessageId: newId }]);
      const [back] = await h.receive(source);
      assert.equal(back!.MessageId, newId);
      assert.equal(back!.Body, body);

      const plain = await triage().replay(q, { messageIds: rest.map((m) => m.messageId) }, console);
      assert.equal(plain.audit.edit, undefined, 'a replay that edits nothing records no edit');
      assert.deepEqual(
        plain.audit.messages,
        plain.done.map((done) => ({ messageId: done.messageId, newMessageId: done.newMessageId })),
      );
      const [stored] = await triage().audit.list({ limit: 1 });
      assert.deepEqual(stored, plain.audit, 'as stored, so as listed');
    });

    it('keeps every entry within its bound, whatever the selection held', async () => {
      const { dlq } = await deadLettered(12);
      const q = await queue(dlq);
      const huge = 'x'.repeat(4 * 1024 * 1024);
      const hostile = await triage().delete(q, { filters: [bodyContains(huge)] }, console);
      assert.equal(hostile.done.length, 0);
      const entry = hostile.audit;
      assert.ok(
        Buffer.byteLength(JSON.stringify(entry)) < 2048,
        `${JSON.stringify(entry).length} characters`,
      );
      assert.ok(
        /^body contains "x+… \(selection sha256 [0-9a-f]{64}\)$/.test(entry.detail!),
        entry.detail!.slice(0, 600),
      );
      assert.ok(Buffer.byteLength(entry.detail!) <= 512);

      const ids = (await triage().browse(q, { limit: 100, filters: [] })).messages.map((m) => m.messageId);
      const many = await triage().delete(
        q,
        { messageIds: [...ids, ...Array(500).fill('z'.repeat(5000))] },
        console,
      );
      assert.equal(many.done.length, 12);
      assert.equal(many.audit.count, 12);
      assert.equal(many.audit.messages!.length, 10, 'the first ten messages, the count says how many');
      assert.deepEqual(
        many.audit.messages!.map((m) => m.messageId),
        ids.slice(0, 10),
      );
      assert.match(many.audit.detail!, /^ids [^ ]+ \(\+\d+ more\) \(selection sha256 [0-9a-f]{64}\)$/);
      assert.ok(Buffer.byteLength(JSON.stringify(many.audit)) < 2048);

      const named = await trail().record({
        actor: `AKID${'é'.repeat(1000)}`,
        via: 'signature',
        action: 'purge',
        source: 'q'.repeat(1000),
        destination: undefined,
        count: 0,
        skipped: 0,
        detail: '€'.repeat(1000),
      });
      assert.ok(Buffer.byteLength(named.actor) <= 200 && named.actor.endsWith('é…'));
      assert.ok(Buffer.byteLength(named.source) <= 200);
      assert.ok(Buffer.byteLength(named.detail!) <= 512 && named.detail!.endsWith('€…'));
    });

    it('keeps entries for the retention period and only the newest ones, pruned hourly too', async () => {
      const short = trail({ days: 1, maxEntries: 3 });
      const write = (count: number) =>
        short.record({
          actor: 'AKIDOPS',
          via: 'signature',
          action: 'purge',
          source: 'retained',
          destination: undefined,
          count,
          skipped: 0,
          detail: undefined,
        });
      for (let count = 1; count <= 5; count++) await write(count);
      const counts = async () =>
        (await short.list({ limit: 100 })).filter((e) => e.source === 'retained').map((e) => e.count);
      assert.deepEqual(await counts(), [5, 4, 3], 'only the newest three');
      await h.clock.advance(24 * 60 * 60 * 1000 - 1);
      await write(6);
      assert.deepEqual(await counts(), [6, 5, 4]);
      await h.clock.advance(2);
      await write(7);
      assert.deepEqual(await counts(), [7, 6], 'a day on, the entries of that day are gone');

      const pruning = short.startPruning((error) => assert.fail(String(error)));
      try {
        await h.clock.advance(24 * 60 * 60 * 1000 + 60 * 60 * 1000);
        assert.deepEqual(await counts(), [], 'pruned without a new entry');
      } finally {
        pruning.stop();
      }
    });
  });
}
