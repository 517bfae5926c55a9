import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AlarmNotification, DlqAlarms } from '../../packages/server/src/core/dlq-alarms.ts';
import { MAX_TASK_MS } from '../../packages/server/src/core/move-tasks.ts';
import {
  context,
  type StoreFactory,
  type SuiteOptions,
  skipsRestart,
  useContractService,
} from './harness.ts';

type TaskEntry = {
  TaskHandle?: string;
  Status: string;
  ApproximateNumberOfMessagesMoved: number;
  ApproximateNumberOfMessagesToMove: number;
  FailureReason?: string;
  DestinationArn?: string;
  MaxNumberOfMessagesPerSecond?: number;
  StartedTimestamp: number;
};

/** Redrive policies, dead-letter moves, move tasks and DLQ alarms, for one store backend. */
export function dlqSemanticsSuite(
  backend: string,
  factory: () => StoreFactory,
  options: SuiteOptions = {},
): void {
  describe(`Dead-letter queues on ${backend}`, () => {
    const warnings: string[] = [];
    const h = useContractService(factory, {
      moveTasks: { defaultRate: 100, backlogLimit: 50 },
      warn: (_details, message) => warnings.push(message),
    });

    /** A DLQ and a source queue (visibility 10 s) that sends there after `maxReceiveCount` receives. */
    async function dlqPair(
      maxReceiveCount = 1,
      extra: { fifo?: boolean; dlq?: Record<string, string> } = {},
    ) {
      const fifo: Record<string, string> = extra.fifo
        ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' }
        : {};
      const dlq = await h.newQueue({ MessageRetentionPeriod: '1209600', ...fifo, ...extra.dlq });
      const source = await h.newQueue({
        ...fifo,
        VisibilityTimeout: '10',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: h.arn(dlq), maxReceiveCount }),
      });
      return { dlq, source };
    }

    /** Sends `count` messages to `source` and receives each until it lands in the DLQ. */
    async function poison(source: string, count: number, maxReceiveCount = 1, extra = {}) {
      for (let i = 0; i < count; i += 10) {
        const entries = Array.from({ length: Math.min(10, count - i) }, (_, j) => ({
          Id: `m${j}`,
          MessageBody: `poison ${i + j}`,
          MessageAttributes: { n: { DataType: 'Number', StringValue: String(i + j) } },
          ...extra,
        }));
        await h.service.actions.SendMessageBatch({ QueueUrl: source, Entries: entries }, context);
      }
      for (let round = 0; round <= maxReceiveCount; round++) {
        while ((await h.receive(source)).length > 0) {
          // receive everything once per round
        }
        await h.clock.advance(10_000);
      }
      await h.receive(source); // the receive that moves what is left
    }

    const start = (input: Record<string, unknown>) => h.service.actions.StartMessageMoveTask(input);
    async function tasks(dlq: string, max = 10): Promise<TaskEntry[]> {
      return (await h.service.actions.ListMessageMoveTasks({ SourceArn: h.arn(dlq), MaxResults: max }))
        .Results as TaskEntry[];
    }

    describe('redrive policy', () => {
      it('checks the target type and its RedriveAllowPolicy, and removes the policy with an empty value', async () => {
        const fifoDlq = await h.newQueue({ FifoQueue: 'true' });
        await h.rejects(
          h.newQueue({
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: h.arn(fifoDlq), maxReceiveCount: 3 }),
          }),
          'InvalidParameterValue',
          /same type/,
        );
        const closed = await h.newQueue({
          RedriveAllowPolicy: JSON.stringify({ redrivePermission: 'denyAll' }),
        });
        await h.rejects(
          h.newQueue({
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: h.arn(closed), maxReceiveCount: 3 }),
          }),
          'InvalidParameterValue',
          /RedriveAllowPolicy/,
        );
        const allowed = await h.newQueue();
        const picky = await h.newQueue({
          RedriveAllowPolicy: JSON.stringify({
            redrivePermission: 'byQueue',
            sourceQueueArns: [h.arn(allowed)],
          }),
        });
        const policy = JSON.stringify({ deadLetterTargetArn: h.arn(picky), maxReceiveCount: '4' });
        await h.service.actions.SetQueueAttributes({
          QueueUrl: allowed,
          Attributes: { RedrivePolicy: policy },
        });
        await h.rejects(h.newQueue({ RedrivePolicy: policy }), 'InvalidParameterValue', /does not allow/);
        const { Attributes } = (await h.service.actions.GetQueueAttributes({
          QueueUrl: allowed,
          AttributeNames: ['RedrivePolicy'],
        })) as { Attributes: Record<string, string> };
        assert.deepEqual(JSON.parse(Attributes.RedrivePolicy!), {
          deadLetterTargetArn: h.arn(picky),
          maxReceiveCount: 4,
        });
        await h.service.actions.SetQueueAttributes({ QueueUrl: allowed, Attributes: { RedrivePolicy: '' } });
        assert.deepEqual(
          await h.service.actions.GetQueueAttributes({
            QueueUrl: allowed,
            AttributeNames: ['RedrivePolicy'],
          }),
          {},
        );
      });

      it('validates RedriveAllowPolicy as SQS does', async () => {
        for (const bad of [
          '{"redrivePermission":"sometimes"}',
          '{"redrivePermission":"byQueue"}',
          '{"redrivePermission":"allowAll","sourceQueueArns":["arn:aws:sqs:us-east-1:000000000000:a"]}',
          JSON.stringify({
            redrivePermission: 'byQueue',
            sourceQueueArns: Array.from({ length: 11 }, (_, i) => `arn:aws:sqs:us-east-1:000000000000:q${i}`),
          }),
          'not json',
        ]) {
          await h.rejects(h.newQueue({ RedriveAllowPolicy: bad }), 'InvalidAttributeValue');
        }
      });

      it('accepts a DLQ that keeps messages no longer than its source, with a warning naming both periods', async () => {
        warnings.length = 0;
        const dlq = await h.newQueue({ MessageRetentionPeriod: '345600' });
        await h.newQueue({
          MessageRetentionPeriod: '604800',
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: h.arn(dlq), maxReceiveCount: 3 }),
        });
        assert.equal(warnings.length, 1);
        assert.match(warnings[0]!, /345600 s.*604800 s/);
        await dlqPair(); // 14 days for the DLQ, 4 for the source: no warning
        assert.equal(warnings.length, 1);
      });

      it('says nothing of a DLQ retention someone chose, however short', async () => {
        warnings.length = 0;
        const chosen = await h.newQueue({ MessageRetentionPeriod: '86400' });
        await h.newQueue({
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: h.arn(chosen), maxReceiveCount: 3 }),
        });
        assert.deepEqual(warnings, []);
        // Both left at the default: nobody chose, and the DLQ keeps messages no longer than the source.
        const unchosen = await h.newQueue();
        await h.newQueue({
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: h.arn(unchosen), maxReceiveCount: 3 }),
        });
        assert.equal(warnings.length, 1);
        assert.match(warnings[0]!, /345600 s, not longer than .*'s 345600 s/);
      });

      it('lists dead-letter source queues with pagination', async () => {
        const dlq = await h.newQueue();
        const policy = JSON.stringify({ deadLetterTargetArn: h.arn(dlq), maxReceiveCount: 2 });
        const sources = [];
        for (let i = 0; i < 3; i++) sources.push(await h.newQueue({ RedrivePolicy: policy }));
        const first = await h.service.actions.ListDeadLetterSourceQueues(
          { QueueUrl: dlq, MaxResults: 2 },
          context,
        );
        assert.deepEqual(first.queueUrls, sources.slice(0, 2));
        const second = await h.service.actions.ListDeadLetterSourceQueues(
          { QueueUrl: dlq, MaxResults: 2, NextToken: first.NextToken },
          context,
        );
        assert.deepEqual(second.queueUrls, sources.slice(2));
        assert.equal(second.NextToken, undefined);
      });

      it('serves a message dead-lettered without a group in a fair DLQ, as the tenant of messages without one', async () => {
        const { dlq, source } = await dlqPair(1);
        const plain = await h.newQueue({
          VisibilityTimeout: '10',
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: h.arn(dlq), maxReceiveCount: 1 }),
        });
        await poison(source, 1, 1, { MessageGroupId: 'tenant-a' });
        await poison(plain, 1, 1);
        const bodies = (await h.receive(dlq)).map((m) => [m.Body, m.Attributes?.MessageGroupId]);
        assert.deepEqual(
          bodies.sort(),
          [
            ['poison 0', 'tenant-a'],
            ['poison 0', undefined],
          ].sort(),
        );
      });

      it('keeps the original send time of a standard message in the DLQ, and restarts it on FIFO', async () => {
        const standard = await dlqPair();
        const sentAt = h.clock.now();
        await poison(standard.source, 1);
        const [dead] = await h.receive(standard.dlq);
        assert.equal(dead?.Attributes?.SentTimestamp, String(sentAt));
        const fifo = await dlqPair(1, { fifo: true });
        const fifoSentAt = h.clock.now();
        await poison(fifo.source, 1, 1, { MessageGroupId: 'g' });
        const [deadFifo] = await h.receive(fifo.dlq);
        assert.ok(Number(deadFifo?.Attributes?.SentTimestamp) > fifoSentAt);
        assert.equal(deadFifo?.Attributes?.DeadLetterQueueSourceArn, h.arn(fifo.source));
      });
    });

    describe('move tasks', () => {
      // 250 messages, 5 s of the clock: it moved 1,000 in 20 s until the suite's wall time was cut (the 200 steps
      // took half a minute on PostgreSQL); 45 one-second windows still check the rate in every second.
      it('moves 250 messages at 50 per second in 5 seconds, never more than 50 in any second', async () => {
        const { dlq, source } = await dlqPair();
        const target = await h.newQueue();
        await poison(source, 250);
        assert.equal((await h.counts(dlq)).visible, 250);
        const started = h.clock.now();
        await start({
          SourceArn: h.arn(dlq),
          DestinationArn: h.arn(target),
          MaxNumberOfMessagesPerSecond: 50,
        });
        // Sample the destination every 100 ms (the task's own step): moved[i] is the total at started + i*100 ms.
        // moved[i] is the total once the clock reaches started + i*100 ms, so moved[i] - moved[i-10] is what
        // moved in a one-second window (started + (i-10)*100, started + i*100].
        await h.clock.advance(0);
        const moved: number[] = [];
        while ((await tasks(dlq, 1))[0]!.Status === 'RUNNING') {
          moved.push((await h.counts(target)).visible);
          assert.ok(moved.length < 100, 'the task should have ended by 10 s');
          await h.clock.advance(100);
        }
        moved.push((await h.counts(target)).visible);
        const took = h.clock.now() - started;
        assert.ok(took >= 4_800 && took <= 5_100, `took ${took} ms`);
        for (let i = 10; i < moved.length; i++) {
          assert.ok(
            moved[i]! - moved[i - 10]! <= 50,
            `${moved[i]! - moved[i - 10]!} moved in the second ending at ${i * 100} ms`,
          );
        }
        assert.ok(moved[0]! <= 50);
        const [task] = await tasks(dlq);
        assert.equal(task?.Status, 'COMPLETED');
        assert.equal(task?.ApproximateNumberOfMessagesMoved, 250);
        assert.equal(task?.ApproximateNumberOfMessagesToMove, 250);
        assert.equal(task?.TaskHandle, undefined, 'only a running task shows its handle');
        assert.deepEqual(await h.counts(dlq), { visible: 0, notVisible: 0, delayed: 0 });
        assert.equal((await h.counts(target)).visible, 250);
      });

      it('returns each message to its own source queue as a new message, oldest first', async () => {
        const { dlq, source } = await dlqPair(2);
        const sentAt = h.clock.now();
        await poison(source, 3, 2);
        const [first] = await h.receive(dlq, { VisibilityTimeout: 0, MaxNumberOfMessages: 1 });
        await h.clock.advance(60_000);
        await start({ SourceArn: h.arn(dlq), MaxNumberOfMessagesPerSecond: 10 });
        await h.clock.advance(1000);
        const back = await h.receive(source);
        assert.deepEqual(
          back.map((m) => m.Body),
          ['poison 0', 'poison 1', 'poison 2'],
        );
        const again = back[0]!;
        assert.notEqual(again.MessageId, first?.MessageId, 'a redriven message has a new id');
        assert.equal(again.Attributes?.ApproximateReceiveCount, '1');
        assert.equal(again.Attributes?.DeadLetterQueueSourceArn, undefined);
        assert.ok(Number(again.Attributes?.SentTimestamp) > sentAt + 60_000, 'fresh retention');
        assert.deepEqual(again.MessageAttributes, { n: { DataType: 'Number', StringValue: '0' } });
        assert.equal((await tasks(dlq))[0]?.Status, 'COMPLETED');
      });

      it('returns the messages of a fair queue to their tenants there', async () => {
        const { dlq, source } = await dlqPair(1);
        await poison(source, 3, 1, { MessageGroupId: 'tenant-a' });
        await start({ SourceArn: h.arn(dlq), MaxNumberOfMessagesPerSecond: 10 });
        await h.clock.advance(1000);
        const back = await h.receive(source);
        assert.deepEqual(
          back.map((m) => [m.Body, m.Attributes?.MessageGroupId]),
          [
            ['poison 0', 'tenant-a'],
            ['poison 1', 'tenant-a'],
            ['poison 2', 'tenant-a'],
          ],
        );
      });

      it('refuses what SQS refuses', async () => {
        const { dlq, source } = await dlqPair();
        await h.rejects(start({ SourceArn: h.arn(source) }), 'InvalidParameterValue', /Dead Letter Queue/);
        await h.rejects(
          start({ SourceArn: 'arn:aws:sqs:us-east-1:000000000000:missing' }),
          'ResourceNotFound',
        );
        await h.rejects(
          start({ SourceArn: h.arn(dlq), DestinationArn: 'arn:aws:sqs:us-east-1:000000000000:missing' }),
          'ResourceNotFound',
        );
        const fifo = await h.newQueue({ FifoQueue: 'true' });
        await h.rejects(
          start({ SourceArn: h.arn(dlq), DestinationArn: h.arn(fifo) }),
          'InvalidParameterValue',
        );
        for (const rate of [0, 501]) {
          await h.rejects(
            start({ SourceArn: h.arn(dlq), MaxNumberOfMessagesPerSecond: rate }),
            'InvalidParameterValue',
          );
        }
        await poison(source, 20);
        const { TaskHandle } = await start({ SourceArn: h.arn(dlq), MaxNumberOfMessagesPerSecond: 1 });
        await h.rejects(start({ SourceArn: h.arn(dlq) }), 'InvalidParameterValue', /already a task running/);
        await h.rejects(
          h.service.actions.CancelMessageMoveTask({ TaskHandle: 'bm9wZQ==' }),
          'InvalidParameterValue',
        );
        const unknownTask = Buffer.from(JSON.stringify({ taskId: 'nope', sourceArn: h.arn(dlq) })).toString(
          'base64',
        );
        await h.rejects(
          h.service.actions.CancelMessageMoveTask({ TaskHandle: unknownTask }),
          'ResourceNotFound',
        );
        await h.clock.advance(2500);
        const cancelled = await h.service.actions.CancelMessageMoveTask({ TaskHandle });
        assert.equal(cancelled.ApproximateNumberOfMessagesMoved, 3);
        await h.clock.advance(10);
        const [task] = await tasks(dlq);
        assert.equal(task?.Status, 'CANCELLED');
        assert.equal(task?.ApproximateNumberOfMessagesMoved, 3);
        await h.clock.advance(5000);
        assert.equal((await h.counts(dlq)).visible, 17, 'a cancelled task moves nothing more');
        await h.rejects(h.service.actions.CancelMessageMoveTask({ TaskHandle }), 'UnsupportedOperation');
      });

      it('without a rate, uses the default and pauses while the destination backlog is at its limit', async () => {
        const { dlq, source } = await dlqPair();
        await poison(source, 120);
        await start({ SourceArn: h.arn(dlq) });
        // Default 100/s in batches of 10 every 100 ms; the backlog limit (50) pauses it at 50.
        await h.clock.advance(450);
        assert.equal((await h.counts(source)).visible, 50);
        await h.clock.advance(5000);
        assert.equal((await h.counts(source)).visible, 50, 'paused while the backlog is at the limit');
        assert.equal((await tasks(dlq))[0]?.Status, 'RUNNING');
        // Consumers drain the source: the task resumes and finishes.
        for (let drained = 0; drained < 120; ) {
          const got = await h.receive(source);
          for (const m of got)
            await h.service.actions.DeleteMessage({ QueueUrl: source, ReceiptHandle: m.ReceiptHandle });
          drained += got.length;
          await h.clock.advance(1000);
        }
        await h.clock.advance(1000);
        const [task] = await tasks(dlq);
        assert.equal(task?.Status, 'COMPLETED');
        assert.equal(task?.ApproximateNumberOfMessagesMoved, 120);
      });

      it('resumes after a restart where it was, moving no message twice', async (t) => {
        if (skipsRestart(t, options)) return;
        const { dlq, source } = await dlqPair();
        const target = await h.newQueue();
        await poison(source, 40);
        await start({
          SourceArn: h.arn(dlq),
          DestinationArn: h.arn(target),
          MaxNumberOfMessagesPerSecond: 10,
        });
        await h.clock.advance(1500);
        await h.restart();
        const [paused] = await tasks(dlq);
        assert.equal(paused?.Status, 'RUNNING');
        // 10/s is one message every 100 ms: at 0, 100, ..., 1500 ms.
        assert.equal(paused?.ApproximateNumberOfMessagesMoved, 16);
        await h.clock.advance(5000);
        const [task] = await tasks(dlq);
        assert.equal(task?.Status, 'COMPLETED');
        assert.equal(task?.ApproximateNumberOfMessagesMoved, 40);
        const bodies = [];
        for (let got = await h.receive(target); got.length > 0; got = await h.receive(target))
          bodies.push(...got.map((m) => m.Body));
        assert.equal(new Set(bodies).size, 40);
        assert.equal(bodies.length, 40);
        assert.equal((await h.counts(dlq)).visible, 0);
      });

      it('fails a task whose destination is deleted, and one still running after 36 hours', async (t) => {
        if (skipsRestart(t, options)) return;
        const { dlq, source } = await dlqPair();
        const target = await h.newQueue();
        await poison(source, 30);
        await start({
          SourceArn: h.arn(dlq),
          DestinationArn: h.arn(target),
          MaxNumberOfMessagesPerSecond: 5,
        });
        await h.clock.advance(1000);
        await h.service.actions.DeleteQueue({ QueueUrl: target });
        await h.clock.advance(1000);
        const [failed] = await tasks(dlq);
        assert.equal(failed?.Status, 'FAILED');
        assert.equal(failed?.FailureReason, 'AWS.SimpleQueueService.NonExistentQueue');
        const moved = failed!.ApproximateNumberOfMessagesMoved;
        assert.equal((await h.counts(dlq)).visible, 30 - moved, 'what was not moved stays in the DLQ');

        await start({ SourceArn: h.arn(dlq), MaxNumberOfMessagesPerSecond: 1 });
        await h.clock.advance(1500);
        await h.service.moveTasks.stop();
        await h.clock.advance(MAX_TASK_MS);
        await h.restart();
        await h.clock.advance(10);
        const [expired] = await tasks(dlq);
        assert.equal(expired?.Status, 'FAILED');
        assert.match(expired?.FailureReason ?? '', /36 hours/);
      });

      it('redrives a FIFO DLQ in group order, with new sequence numbers', async () => {
        const { dlq, source } = await dlqPair(1, { fifo: true });
        for (let i = 0; i < 6; i++)
          await h.send(source, `g${i % 2}-${i}`, {
            MessageGroupId: `g${i % 2}`,
            MessageDeduplicationId: `d${i}`,
          });
        for (let round = 0; round < 2; round++) {
          while ((await h.receive(source)).length > 0) {
            // everything once
          }
          await h.clock.advance(10_000);
        }
        await h.receive(source);
        assert.equal((await h.counts(dlq)).visible, 6);
        await start({ SourceArn: h.arn(dlq), MaxNumberOfMessagesPerSecond: 100 });
        await h.clock.advance(200);
        const back = await h.receive(source);
        const byGroup = (g: string) =>
          back.filter((m) => m.Attributes?.MessageGroupId === g).map((m) => m.Body);
        assert.deepEqual(byGroup('g0'), ['g0-0', 'g0-2', 'g0-4']);
        assert.deepEqual(byGroup('g1'), ['g1-1', 'g1-3', 'g1-5']);
        for (const group of ['g0', 'g1']) {
          const sequence = back
            .filter((m) => m.Attributes?.MessageGroupId === group)
            .map((m) => BigInt(m.Attributes!.SequenceNumber!));
          assert.ok(
            sequence.every((n, i) => i === 0 || n > sequence[i - 1]!),
            `${group}: ${sequence.join(' ')}`,
          );
        }
      });

      it("moves a FIFO DLQ's group up to its first message in flight, never past it", async () => {
        const { dlq, source } = await dlqPair(1, { fifo: true });
        for (let i = 0; i < 6; i++) await h.send(source, `g${i % 2}-${i}`, { MessageGroupId: `g${i % 2}` });
        for (let round = 0; round < 2; round++) {
          while ((await h.receive(source)).length > 0) {
            // everything once
          }
          await h.clock.advance(10_000);
        }
        await h.receive(source);
        assert.equal((await h.counts(dlq)).visible, 6);
        // Someone inspects g0 in the DLQ and puts its first message back, keeping the second in flight.
        const inspected = await h.receive(dlq, { MaxNumberOfMessages: 2, VisibilityTimeout: 600 });
        assert.deepEqual(
          inspected.map((m) => m.Body),
          ['g0-0', 'g0-2'],
        );
        await h.service.actions.ChangeMessageVisibility({
          QueueUrl: dlq,
          ReceiptHandle: inspected[0]!.ReceiptHandle,
          VisibilityTimeout: 0,
        });
        await start({ SourceArn: h.arn(dlq), MaxNumberOfMessagesPerSecond: 100 });
        await h.clock.advance(200);
        assert.equal((await tasks(dlq))[0]?.Status, 'COMPLETED');
        const back = await h.receive(source);
        assert.deepEqual(back.map((m) => m.Body).sort(), ['g0-0', 'g1-1', 'g1-3', 'g1-5']);
        // g0-4 stays behind g0-2, which is still in flight: moving it would put it before g0-2.
        assert.deepEqual(await h.counts(dlq), { visible: 1, notVisible: 1, delayed: 0 });
      });
    });

    describe('alarms', () => {
      /** Checkers on the default settings, each noting what it says of `queue` as "LABEL EVENT". */
      const checkers = (queue: string, said: string[]) => (label: string) =>
        new DlqAlarms(h.reads, { threshold: 0, periodSeconds: 10, queues: {} }, (n) => {
          if (n.queue === queue) said.push(`${label} ${n.event}`);
        });

      it('raises an alarm when a poison message arrives, repeats it at each doubling and as expiry nears, and resolves it', async () => {
        const { dlq, source } = await dlqPair(1, { dlq: { MessageRetentionPeriod: String(2 * 24 * 3600) } });
        const said: AlarmNotification[] = [];
        const alarms = new DlqAlarms(h.reads, { threshold: 0, periodSeconds: 10, queues: {} }, (n) => {
          if (n.queue === dlq.split('/').at(-1)) said.push(n);
        });
        await alarms.check();
        assert.equal(said.length, 0);
        await poison(source, 1);
        await alarms.check();
        assert.deepEqual(
          said.map((n) => [n.event, n.visible]),
          [['raised', 1]],
        );
        assert.deepEqual(said[0]?.sourceQueues, [source.split('/').at(-1)]);
        await poison(source, 1);
        await alarms.check();
        await poison(source, 1);
        await alarms.check(); // 3 < 2 * 2: no news
        await poison(source, 1);
        await alarms.check();
        assert.deepEqual(
          said.map((n) => [n.event, n.visible]),
          [
            ['raised', 1],
            ['growing', 2],
            ['growing', 4],
          ],
        );
        // The standard DLQ keeps the send time: two days of retention, so within 24 h of expiring after one day.
        await h.clock.advance(25 * 3600 * 1000);
        await alarms.check();
        assert.equal(said.at(-1)?.event, 'expiring', JSON.stringify(said.map((n) => [n.event, n.visible])));
        await h.service.actions.PurgeQueue({ QueueUrl: dlq });
        await alarms.check();
        assert.deepEqual(said.at(-1)?.event, 'resolved');
        const state = alarms.states().find((s) => s.queue === dlq.split('/').at(-1));
        assert.equal(state?.state, 'OK');
        assert.equal(state?.history.length, said.length);
      });

      it('keeps the states in the store: read by any node, resumed by the next checker without raising again', async () => {
        const { dlq, source } = await dlqPair();
        const name = dlq.split('/').at(-1)!;
        const said: string[] = [];
        const watcher = checkers(name, said);
        const holder = watcher('holder');
        await poison(source, 1);
        await holder.check();
        // A node that never checked answers with what the checker stored.
        const reader = watcher('reader');
        assert.deepEqual(reader.states(), []);
        const stored = (await reader.clusterStates()).find((s) => s.queue === name);
        assert.deepEqual([stored?.state, stored?.visible, stored?.history.length], ['ALARM', 1, 1]);
        assert.deepEqual(
          (await reader.clusterStates()).find((s) => s.queue === name),
          holder.states().find((s) => s.queue === name),
        );
        // The reader takes over the checks: the alarm is not raised again, and it resolves from there.
        await reader.check();
        await h.service.actions.PurgeQueue({ QueueUrl: dlq });
        await reader.check();
        assert.deepEqual(said, ['holder raised', 'reader resolved']);
        const after = (await holder.clusterStates()).find((s) => s.queue === name);
        assert.deepEqual([after?.state, after?.history.map((n) => n.event)], ['OK', ['raised', 'resolved']]);
      });

      it('keeps the states across a restart: the restarted checker does not raise again', async (t) => {
        if (skipsRestart(t, options)) return;
        const { dlq, source } = await dlqPair();
        const name = dlq.split('/').at(-1)!;
        const said: string[] = [];
        const checker = checkers(name, said);
        await poison(source, 1);
        const before = checker('before');
        await before.check();
        const raised = before.states().find((s) => s.queue === name);
        await h.restart();
        const after = checker('after');
        assert.deepEqual(
          (await after.clusterStates()).find((s) => s.queue === name),
          raised,
        );
        await after.check();
        await poison(source, 1);
        await after.check();
        assert.deepEqual(said, ['before raised', 'after growing']);
        const resumed = after.states().find((s) => s.queue === name);
        assert.deepEqual([resumed?.visible, resumed?.since], [2, raised?.since]);
      });

      it('can be silenced per queue: the state is kept, nobody is notified', async () => {
        const { dlq, source } = await dlqPair();
        const name = dlq.split('/').at(-1)!;
        const said: AlarmNotification[] = [];
        const alarms = new DlqAlarms(
          h.reads,
          { threshold: 0, periodSeconds: 10, queues: { [name]: { silenced: true } } },
          (n) => {
            if (n.queue === name) said.push(n);
          },
        );
        await poison(source, 2);
        await alarms.check();
        assert.equal(said.length, 0);
        const state = alarms.states().find((s) => s.queue === name);
        assert.deepEqual([state?.state, state?.silenced, state?.visible], ['ALARM', true, 2]);
      });
    });
  });
}
