import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DeleteEventSourceMappingCommand,
  GetEventSourceMappingCommand,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import { DeleteQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { eventually } from '../helpers/client-toolkit.ts';
import { describeMappings } from '../helpers/event-source-mappings.ts';

/**
 * Lambda event source mappings against a really started server (test mode, so time rules move with the
 * clock) and a real HTTP function served over the Invoke API: FIFO order, filters, the Enabled/Disabled
 * states, and how many pollers run at once, with ScalingConfig and without.
 */

describeMappings((m) => {
  const { queue, counts, bodiesOf, isEmpty, advanceUntil, create, sendAll, failures } = m;

  describe('event source mappings: FIFO, filters, states, concurrency', () => {
    it('keeps FIFO order: after a failure in a group, its later records come back with it', async () => {
      const q = await queue({ VisibilityTimeout: '30' }, true);
      let calls = 0;
      m.fn.behave('fifo-fn', ({ event }) =>
        ++calls === 1
          ? failures(event.Records.filter((record) => record.body === 'a2').map((record) => record.messageId))
          : undefined,
      );
      await sendAll(q.url, ['a1', 'a2', 'a3', 'a4'], 'A');
      await sendAll(q.url, ['b1', 'b2'], 'B');
      await create({
        EventSourceArn: q.arn,
        FunctionName: 'fifo-fn',
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      await eventually(() => bodiesOf('fifo-fn').length === 1, 'the first batch');
      assert.deepEqual(bodiesOf('fifo-fn')[0], ['a1', 'a2', 'a3', 'a4', 'b1', 'b2']);
      const first = m.fn.invocations.find((invocation) => invocation.functionName === 'fifo-fn')!.event
        .Records[0]!;
      assert.equal(first.attributes.MessageGroupId, 'A');
      // A message without attributes: null, as a real Lambda event has it (not left out).
      assert.ok('md5OfMessageAttributes' in first);
      assert.equal(first.md5OfMessageAttributes, null);
      assert.match(first.attributes.SequenceNumber ?? '', /^\d{20}$/);
      assert.ok(first.attributes.MessageDeduplicationId);
      await eventually(async () => (await counts(q.url)).inFlight === 3, 'a1, b1 and b2 deleted');
      await advanceUntil(31, () => bodiesOf('fifo-fn').length === 2, 'the group again');
      assert.deepEqual(bodiesOf('fifo-fn')[1], ['a2', 'a3', 'a4']);
      await advanceUntil(31, () => isEmpty(q.url), 'the group deleted');
    });

    it('keeps one batch of a FIFO group in flight at a time, however many pollers', async () => {
      const q = await queue({ VisibilityTimeout: '60' }, true);
      let open!: () => void;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const inFlight = new Map<string, number>();
      let mostOfOneGroup = 0;
      m.fn.behave('fifo-lock-fn', async ({ event }) => {
        const group = event.Records[0]!.attributes.MessageGroupId!;
        const now = (inFlight.get(group) ?? 0) + 1;
        inFlight.set(group, now);
        mostOfOneGroup = Math.max(mostOfOneGroup, now);
        await gate;
        inFlight.set(group, (inFlight.get(group) ?? 1) - 1);
        return undefined;
      });
      await sendAll(q.url, ['a1', 'a2', 'a3'], 'A');
      await sendAll(q.url, ['b1', 'b2', 'b3'], 'B');
      // A batch of one record is full, so each one received brings another poller, up to five.
      await create({
        EventSourceArn: q.arn,
        FunctionName: 'fifo-lock-fn',
        BatchSize: 1,
        ScalingConfig: { MaximumConcurrency: 5 },
      });
      await eventually(() => m.fn.runningOf('fifo-lock-fn') === 2, 'one batch of each group in flight');
      const { inFlight: received } = await counts(q.url);
      assert.equal(received, 2, "the group's later records wait for its batch");
      open();
      await eventually(() => isEmpty(q.url), 'both groups processed');
      assert.equal(mostOfOneGroup, 1);
      const order = bodiesOf('fifo-lock-fn').flat();
      assert.deepEqual(
        order.filter((body) => body.startsWith('a')),
        ['a1', 'a2', 'a3'],
      );
      assert.deepEqual(
        order.filter((body) => body.startsWith('b')),
        ['b1', 'b2', 'b3'],
      );
    });

    it('deletes the records no filter matches without invoking the function', async () => {
      const q = await queue();
      await create({
        EventSourceArn: q.arn,
        FunctionName: 'filter-fn',
        FilterCriteria: { Filters: [{ Pattern: '{"body": {"kind": ["keep"]}}' }] },
      });
      await sendAll(q.url, ['{"kind": "drop"}', '{"kind": "keep"}', 'not json']);
      await eventually(() => isEmpty(q.url), 'every record gone');
      assert.deepEqual(bodiesOf('filter-fn').flat(), ['{"kind": "keep"}']);
    });

    it('stops polling when disabled or deleted, and starts again when enabled', async () => {
      const q = await queue();
      const { UUID } = await create({ EventSourceArn: q.arn, FunctionName: 'state-fn' });
      await sendAll(q.url, ['s1']);
      await eventually(() => bodiesOf('state-fn').length === 1, 'the first invocation');
      const disabled = await m.lambda.send(new UpdateEventSourceMappingCommand({ UUID, Enabled: false }));
      assert.equal(disabled.State, 'Updating');
      assert.equal((await m.lambda.send(new GetEventSourceMappingCommand({ UUID }))).State, 'Disabled');
      await sendAll(q.url, ['s2']);
      // The mapping no longer consumes: an ordinary consumer gets the message, and gives it back.
      const { Messages } = await m.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: q.url, WaitTimeSeconds: 5, VisibilityTimeout: 0 }),
      );
      assert.equal(Messages?.[0]?.Body, 's2');
      assert.equal(bodiesOf('state-fn').length, 1);
      await m.lambda.send(new UpdateEventSourceMappingCommand({ UUID, Enabled: true }));
      await eventually(
        () => bodiesOf('state-fn').flat().includes('s2'),
        'the enabled mapping invoking again',
      );
      await m.lambda.send(new DeleteEventSourceMappingCommand({ UUID }));
      await sendAll(q.url, ['s3']);
      const again = await m.sqs.send(new ReceiveMessageCommand({ QueueUrl: q.url, WaitTimeSeconds: 5 }));
      assert.equal(again.Messages?.[0]?.Body, 's3');
      assert.ok(!bodiesOf('state-fn').flat().includes('s3'));
    });

    it('disables the mappings of a deleted queue, saying why', async () => {
      const q = await queue();
      const { UUID } = await create({ EventSourceArn: q.arn, FunctionName: 'gone-fn' });
      await m.sqs.send(new DeleteQueueCommand({ QueueUrl: q.url }));
      await advanceUntil(
        21,
        async () => (await m.lambda.send(new GetEventSourceMappingCommand({ UUID }))).State === 'Disabled',
        'the mapping disabled',
      );
      const mapping = await m.lambda.send(new GetEventSourceMappingCommand({ UUID }));
      assert.equal(mapping.StateTransitionReason, 'PROBLEM: The event source queue does not exist.');
    });

    it('scales pollers with the backlog up to ScalingConfig.MaximumConcurrency', async () => {
      const q = await queue();
      let open!: () => void;
      const gate = new Promise<undefined>((resolve) => {
        open = () => resolve(undefined);
      });
      m.fn.behave('scale-fn', () => gate);
      await sendAll(
        q.url,
        Array.from({ length: 12 }, (_, index) => `c${index}`),
      );
      await create({
        EventSourceArn: q.arn,
        FunctionName: 'scale-fn',
        BatchSize: 1,
        ScalingConfig: { MaximumConcurrency: 2 },
      });
      await eventually(() => m.fn.runningOf('scale-fn') === 2, 'two invocations at once');
      m.fn.behave('scale-fn', () => undefined);
      open();
      await eventually(() => isEmpty(q.url), 'the backlog processed');
      assert.equal(m.fn.mostRunningOf('scale-fn'), 2);
      // And back down: a poller beyond the first whose long poll (20 s) comes back empty ends.
      const pollers = async () => {
        const answer = (await (await fetch(`${m.server.endpoint}/api/event-source-mappings`)).json()) as {
          mappings: { FunctionArn: string; Pollers: number }[];
        };
        return answer.mappings.find((mapping) => mapping.FunctionArn.endsWith(':function:scale-fn'))?.Pollers;
      };
      await advanceUntil(21, async () => (await pollers()) === 1, 'one poller left');
    });
  });

  describe('event source mappings: the concurrency bound without ScalingConfig', () => {
    it("runs at most five pollers, Sluice's documented bound", async () => {
      const q = await queue();
      let open!: () => void;
      const gate = new Promise<undefined>((resolve) => {
        open = () => resolve(undefined);
      });
      m.fn.behave('default-bound-fn', () => gate);
      await sendAll(
        q.url,
        Array.from({ length: 12 }, (_, index) => `d${index}`),
      );
      await create({ EventSourceArn: q.arn, FunctionName: 'default-bound-fn', BatchSize: 1 });
      await eventually(() => m.fn.runningOf('default-bound-fn') === 5, 'five invocations at once');
      // Seven records wait: no sixth poller took one.
      assert.deepEqual(await counts(q.url), { visible: 7, inFlight: 5 });
      m.fn.behave('default-bound-fn', () => undefined);
      open();
      await eventually(() => isEmpty(q.url), 'the backlog processed');
      assert.equal(m.fn.mostRunningOf('default-bound-fn'), 5);
    });
  });
});
