import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChangeMessageVisibilityCommand, type Message, SendMessageCommand } from '@aws-sdk/client-sqs';
import { Consumer, type ConsumerOptions, type FailureHandling, POISON_ATTRIBUTES } from 'sluice-client';
import { eventually, gate, startToolkitServer, type ToolkitServer } from '../helpers/client-toolkit.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * The consumer against a really started Sluice (in-process, on a FakeClock shared with the consumer) through
 * the real SDK: heartbeats, backoff and the 12-hour limit are reached by moving the clock, never by sleeping.
 */
describe('client consumer', { concurrency: false, timeout: 120_000 }, () => {
  let t: ToolkitServer;
  const running: Consumer[] = [];
  before(async () => {
    t = await startToolkitServer();
  });
  after(async () => {
    for (const consumer of running) await stopSoon(consumer);
    await t?.close();
  });

  function consumer(options: Omit<ConsumerOptions, 'sqs' | 'clock'>): Consumer {
    const made = new Consumer({ sqs: t.sqs, clock: t.clock, stopOnSignals: [], ...options });
    running.push(made);
    return made;
  }

  /** Stops a consumer whose handlers have ended, moving the clock past any shutdown deadline. */
  async function stopSoon(c: Consumer) {
    const stopped = c.stop();
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    for (let i = 0; i < 100 && !done; i++) {
      await t.clock.advance(1000);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await stopped;
  }

  function count(name: string): number {
    return t.commands.filter((c) => c === name).length;
  }

  test('handles every message with at most `concurrency` handlers at once, deleting in batches', async () => {
    const queue = await t.createQueue('many');
    let runningNow = 0;
    let peak = 0;
    const seen: string[] = [];
    const release = gate();
    const c = consumer({
      queueUrl: queue,
      concurrency: 5,
      handler: async (message) => {
        runningNow++;
        peak = Math.max(peak, runningNow);
        await release.promise;
        seen.push(message.Body!);
        runningNow--;
      },
    });
    await c.start();
    const deletesBefore = count('DeleteMessageBatchCommand');
    for (let i = 0; i < 25; i++) await t.send(queue, `m${i}`);
    await eventually(() => runningNow === 5, '5 handlers running');
    assert.equal(c.inFlight, 5);
    release.open();
    await eventually(() => seen.length === 25, 'all 25 handled');
    await eventually(async () => {
      const n = await t.countMessages(queue);
      return n.visible + n.inFlight === 0;
    }, 'queue empty');
    assert.equal(peak, 5);
    assert.deepEqual(new Set(seen).size, 25);
    const deletes = count('DeleteMessageBatchCommand') - deletesBefore;
    assert.ok(deletes >= 3 && deletes < 25, `25 deletes went in ${deletes} batch requests`);
    assert.equal(count('DeleteMessageCommand'), 0);
    await stopSoon(c);
  });

  test('heartbeat keeps a slow message invisible every visibilityTimeout/3, and stops when the handler ends', async () => {
    const queue = await t.createQueue('heartbeat', { VisibilityTimeout: '30' });
    const finish = gate();
    let calls = 0;
    const c = consumer({
      queueUrl: queue,
      handler: async () => {
        calls++;
        await finish.promise;
      },
    });
    const heartbeatFailures: string[] = [];
    c.on('heartbeatFailed', (_m, code) => heartbeatFailures.push(code));
    await c.start();
    assert.equal(c.visibilityTimeoutSeconds, 30);
    await t.send(queue, 'slow');
    await eventually(() => calls === 1, 'handler started');
    const before = count('ChangeMessageVisibilityBatchCommand');
    // Five minutes: ten times the queue's 30-second timeout.
    for (let s = 0; s < 300; s += 5) await t.clock.advance(5000);
    const heartbeats = count('ChangeMessageVisibilityBatchCommand') - before;
    assert.ok(heartbeats >= 29 && heartbeats <= 31, `one heartbeat per 10 s over 300 s, got ${heartbeats}`);
    assert.deepEqual(await t.receiveNow(queue), [], 'still invisible to other consumers');
    assert.equal(calls, 1, 'never redelivered');
    assert.deepEqual(heartbeatFailures, []);
    finish.open();
    await eventually(async () => (await t.countMessages(queue)).inFlight === 0, 'deleted');
    const afterEnd = count('ChangeMessageVisibilityBatchCommand');
    for (let s = 0; s < 60; s += 5) await t.clock.advance(5000);
    assert.equal(
      count('ChangeMessageVisibilityBatchCommand'),
      afterEnd,
      'no heartbeat after the handler ended',
    );
    await stopSoon(c);
  });

  test('a heartbeat never asks past the 12-hour limit; at it the handler is aborted and the message reappears', async () => {
    const queue = await t.createQueue('twelve-hours', { VisibilityTimeout: '3600' });
    const signals: AbortSignal[] = [];
    const deliveries: Array<{ at: number; receiveCount: string | undefined }> = [];
    const failures: FailureHandling[] = [];
    const timeouts: string[] = [];
    const heartbeatFailures: string[] = [];
    const c = consumer({
      queueUrl: queue,
      heartbeatIntervalSeconds: 1000,
      handler: async (message, context) => {
        deliveries.push({ at: t.clock.now(), receiveCount: message.Attributes?.ApproximateReceiveCount });
        signals.push(context.signal);
        if (deliveries.length > 1) return;
        await new Promise((_resolve, reject) =>
          context.signal.addEventListener('abort', () => reject(context.signal.reason)),
        );
      },
    });
    c.on('failed', (_m, _e, handling) => failures.push(handling));
    c.on('handlerTimeout', (_m, reason) => timeouts.push(reason));
    c.on('heartbeatFailed', (_m, code, text) => heartbeatFailures.push(`${code} ${text}`));
    await c.start();
    await t.send(queue, 'endless');
    await eventually(() => signals.length === 1, 'handler started');
    const started = t.clock.now();
    for (let h = 0; h < 11; h++) await t.clock.advance(3600_000);
    assert.equal(signals[0]!.aborted, false, 'not aborted before 12 hours');
    assert.deepEqual(await t.receiveNow(queue), []);
    await t.clock.advance(3600_000);
    assert.equal(signals[0]!.aborted, true);
    await eventually(() => failures.length === 1, 'failure reported');
    assert.deepEqual(timeouts, ['visibility-limit']);
    assert.deepEqual(failures, [{ kind: 'timeout' }]);
    assert.deepEqual(heartbeatFailures, [], 'every heartbeat stayed within the limit');
    // SQS makes it visible at the limit, and it is delivered again.
    await eventually(() => deliveries.length === 2, 'redelivered');
    assert.equal(deliveries[1]!.receiveCount, '2');
    assert.equal(deliveries[1]!.at - started, 12 * 3600_000);
    await stopSoon(c);
  });

  test('a failed message comes back after an exponential backoff with jitter, not after the full timeout', async () => {
    const queue = await t.createQueue('backoff', { VisibilityTimeout: '600' });
    const attempts: number[] = [];
    const c = consumer({
      queueUrl: queue,
      backoff: { initialSeconds: 4, maxSeconds: 60 },
      random: () => 0.5,
      handler: async (message) => {
        attempts.push(t.clock.now());
        if (attempts.length < 4)
          throw new Error(`attempt ${message.Attributes?.ApproximateReceiveCount} failed`);
      },
    });
    const visibleIn: number[] = [];
    c.on('failed', (_m, _e, handling) => {
      if (handling.kind === 'backoff') visibleIn.push(handling.visibleInSeconds);
    });
    await c.start();
    await t.send(queue, 'flaky');
    for (let s = 0; attempts.length < 4 && s < 120; s++) {
      await eventually(() => visibleIn.length >= attempts.length || attempts.length === 4, 'failure handled');
      await t.clock.advance(1000);
    }
    // Steps 4, 8, 16 s; equal jitter at 0.5 gives 3/4 of each.
    assert.deepEqual(visibleIn, [3, 6, 12]);
    const gaps = attempts.slice(1).map((at, i) => (at - attempts[i]!) / 1000);
    for (const [i, gap] of gaps.entries()) {
      assert.ok(gap >= visibleIn[i]! && gap <= visibleIn[i]! + 2, `retry ${i + 1} after ${gap} s`);
    }
    await eventually(
      async () => (await t.countMessages(queue)).inFlight === 0,
      'deleted after the 4th attempt',
    );
    await stopSoon(c);
  });

  test('on the last attempt a poison message goes to the DLQ with the error beside it, then is deleted', async () => {
    const dlq = await t.createQueue('poison-dlq');
    const dlqArn = `arn:aws:sqs:us-east-1:000000000000:${dlq.split('/').pop()}`;
    const queue = await t.createQueue('poison', {
      VisibilityTimeout: '30',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
    });
    let attempts = 0;
    let lastFailureAt = '';
    const handlings: FailureHandling[] = [];
    const c = consumer({
      queueUrl: queue,
      random: () => 0,
      handler: async () => {
        attempts++;
        lastFailureAt = new Date(t.clock.now()).toISOString();
        throw new TypeError('card declined');
      },
    });
    c.on('failed', (_m, _e, handling) => handlings.push(handling));
    await c.start();
    await t.sqs.send(
      new SendMessageCommand({
        QueueUrl: queue,
        MessageBody: '{"order":1001}',
        MessageAttributes: { tenant: { DataType: 'String', StringValue: 'acme' } },
      }),
    );
    for (let s = 0; handlings.length < 3 && s < 60; s++) {
      await eventually(() => handlings.length >= attempts, 'failure handled');
      await t.clock.advance(1000);
    }
    assert.equal(attempts, 3);
    assert.deepEqual(
      handlings.map((h) => h.kind),
      ['backoff', 'backoff', 'dead-lettered'],
    );
    await eventually(async () => {
      const n = await t.countMessages(queue);
      return n.visible + n.inFlight === 0;
    }, 'source queue empty');
    const [dead] = await t.receiveNow(dlq);
    assert.ok(dead, 'message in the DLQ');
    assert.equal(dead.Body, '{"order":1001}');
    const attributes = dead.MessageAttributes ?? {};
    assert.equal(attributes.tenant?.StringValue, 'acme', 'original attributes kept');
    assert.equal(attributes[POISON_ATTRIBUTES.error]?.StringValue, 'TypeError: card declined');
    assert.match(
      attributes[POISON_ATTRIBUTES.stack]?.StringValue ?? '',
      /card declined[\s\S]*client-consumer\.test/,
    );
    assert.equal(
      attributes[POISON_ATTRIBUTES.failedAt]?.StringValue,
      lastFailureAt,
      'time of the last failure',
    );
    await stopSoon(c);
  });

  test('a batch handler reports partial failures: only the failed messages come back', async () => {
    const queue = await t.createQueue('batch');
    const calls: string[][] = [];
    let failOnce = new Set(['b', 'd']);
    const c = consumer({
      queueUrl: queue,
      random: () => 0,
      backoff: { initialSeconds: 2 },
      batchHandler: async (messages: Message[]) => {
        calls.push(messages.map((m) => m.Body!).sort());
        const failed = messages.filter((m) => failOnce.has(m.Body!)).map((m) => m.MessageId!);
        failOnce = new Set();
        return { failed };
      },
    });
    // Sent before start, so the first receive takes all five in one batch.
    for (const body of ['a', 'b', 'c', 'd', 'e']) await t.send(queue, body);
    await c.start();
    await eventually(() => calls.length === 1, 'first batch');
    await eventually(async () => (await t.countMessages(queue)).inFlight === 2, 'three deleted');
    await t.clock.advance(2000);
    await eventually(() => calls.length === 2, 'second batch');
    assert.deepEqual(calls, [
      ['a', 'b', 'c', 'd', 'e'],
      ['b', 'd'],
    ]);
    await eventually(async () => (await t.countMessages(queue)).inFlight === 0, 'all deleted');
    await stopSoon(c);
  });

  test('deletes with the latest receipt handle when the message was redelivered during processing', async () => {
    const queue = await t.createQueue('latest-handle', { VisibilityTimeout: '30' });
    const handles: string[] = [];
    const finishes = [gate(), gate()];
    const c = consumer({
      queueUrl: queue,
      handler: async (message) => {
        handles.push(message.ReceiptHandle!);
        await finishes[handles.length - 1]!.promise;
      },
    });
    await c.start();
    await t.send(queue, 'twice');
    await eventually(() => handles.length === 1, 'first delivery');
    // As if the visibility ran out: the queue hands the message out again, with a new receipt handle.
    await t.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queue,
        ReceiptHandle: handles[0],
        VisibilityTimeout: 0,
      }),
    );
    await eventually(() => handles.length === 2, 'second delivery');
    assert.notEqual(handles[0], handles[1]);
    finishes[0]!.open();
    // Deleting with the first handle would succeed without effect; the message is gone only if the latest was used.
    await eventually(async () => {
      const n = await t.countMessages(queue);
      return n.visible + n.inFlight === 0;
    }, 'message deleted by the first copy to finish');
    finishes[1]!.open();
    await stopSoon(c);
  });

  test('stop() lets a running handler finish, then deletes its message', async () => {
    const queue = await t.createQueue('graceful');
    const finish = gate();
    let started = false;
    const c = consumer({
      queueUrl: queue,
      handler: async () => {
        started = true;
        await finish.promise;
      },
    });
    await c.start();
    await t.send(queue, 'in progress');
    await eventually(() => started, 'handler started');
    let stopped = false;
    const stopping = c.stop().then(() => {
      stopped = true;
    });
    await t.clock.advance(5000);
    assert.equal(stopped, false, 'waits for the handler');
    finish.open();
    await stopping;
    const n = await t.countMessages(queue);
    assert.equal(n.visible + n.inFlight, 0);
    await t.send(queue, 'after stop');
    await t.clock.advance(1000);
    assert.equal((await t.receiveNow(queue)).length, 1, 'a stopped consumer receives nothing more');
  });

  test('stop() aborts handlers still running at its deadline and leaves their messages to reappear', async () => {
    const queue = await t.createQueue('deadline', { VisibilityTimeout: '60' });
    let signal: AbortSignal | undefined;
    const timeouts: string[] = [];
    const c = consumer({
      queueUrl: queue,
      shutdownTimeoutSeconds: 10,
      handler: (_message, context) => {
        signal = context.signal;
        return new Promise(() => {});
      },
    });
    c.on('handlerTimeout', (_m, reason) => timeouts.push(reason));
    await c.start();
    await t.send(queue, 'stuck');
    await eventually(() => signal !== undefined, 'handler started');
    const stopping = c.stop();
    await t.clock.advance(9000);
    assert.equal(signal!.aborted, false);
    await t.clock.advance(1000);
    await stopping;
    assert.equal(signal!.aborted, true);
    assert.deepEqual(timeouts, ['shutdown']);
    assert.deepEqual(await t.receiveNow(queue), [], 'still invisible: its handler may still be working');
    await t.clock.advance(60_000);
    assert.equal((await t.receiveNow(queue)).length, 1, 'back once its visibility ran out');
  });

  test('messages that arrive after stop() began are released at visibility 0 at once', async () => {
    const queue = await t.createQueue('release', { VisibilityTimeout: '300' });
    const held = gate();
    let receiveAnswered = false;
    // Hold the consumer's receive answer until stop() has begun, as when a long poll returns mid-shutdown.
    const sqs = sqsClient(t.sluice.endpoint);
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'ReceiveMessageCommand') {
          receiveAnswered = true;
          await held.promise;
        }
        return result;
      },
      { step: 'initialize', name: 'holdReceive' },
    );
    let handled = 0;
    const c = new Consumer({
      sqs,
      clock: t.clock,
      stopOnSignals: [],
      queueUrl: queue,
      handler: async () => {
        handled++;
      },
    });
    await c.start();
    await t.send(queue, 'late');
    await eventually(() => receiveAnswered, 'receive answered');
    const stopping = c.stop();
    held.open();
    await stopping;
    sqs.destroy();
    assert.equal(handled, 0);
    const [message] = await t.receiveNow(queue);
    assert.ok(message, 'visible again without waiting 300 s');
    assert.equal(message.Attributes?.ApproximateReceiveCount, '2');
  });

  test('SIGTERM stops a consumer that listens for it', async () => {
    const queue = await t.createQueue('sigterm');
    const c = new Consumer({ sqs: t.sqs, clock: t.clock, queueUrl: queue, handler: async () => {} });
    let stopped = false;
    c.on('stopped', () => {
      stopped = true;
    });
    await c.start();
    assert.ok(process.listenerCount('SIGTERM') >= 1);
    process.emit('SIGTERM', 'SIGTERM');
    await eventually(() => stopped, 'stopped on SIGTERM');
    assert.equal(process.listeners('SIGTERM').length, 0, 'its listener is removed');
  });

  test('options outside what SQS accepts are refused up front', () => {
    const base = { sqs: t.sqs, queueUrl: 'x', handler: async () => {} };
    assert.throws(() => new Consumer({ ...base, batchSize: 11 }), RangeError);
    assert.throws(() => new Consumer({ ...base, waitTimeSeconds: 21 }), RangeError);
    assert.throws(() => new Consumer({ ...base, concurrency: 0 }), RangeError);
    assert.throws(() => new Consumer({ sqs: t.sqs, queueUrl: 'x' }), TypeError);
  });
});
