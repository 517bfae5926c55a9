import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type RunningSluice, startSluice } from 'sluice';
import { FakeClock, type Timer, type TimerOptions } from 'sluice-client/clock';
import { sqsClient } from './sqs-client.ts';

interface PeriodicTimer {
  at: number;
  fn: () => unknown;
  cancelled: boolean;
}

/**
 * A FakeClock that runs the server's periodic work (sweeps, history samples, alarm checks) once at the end of
 * each advance, as `sluice serve --test-clock` does, instead of at every period it passes: the tests here move
 * the clock by hours, and each sample was a write to disk (12 hours took 4,320 of them, over a minute). Every
 * other timer (heartbeats, long polls, backoffs) still fires at its own time.
 */
export class StepClock extends FakeClock {
  private periodic: PeriodicTimer[] = [];

  override setTimer(ms: number, fn: () => unknown, options?: TimerOptions): Timer {
    if (!options?.periodic) return super.setTimer(ms, fn);
    const timer: PeriodicTimer = { at: this.now() + Math.max(0, ms), fn, cancelled: false };
    this.periodic.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  override async advance(ms: number): Promise<void> {
    await super.advance(ms);
    const due = this.periodic.filter((timer) => !timer.cancelled && timer.at <= this.now());
    this.periodic = this.periodic.filter((timer) => !timer.cancelled && timer.at > this.now());
    for (const timer of due) {
      const started = timer.fn();
      if (started instanceof Promise) await started.catch(() => {});
    }
    // What the periodic work started (and its next runs, due later) settles before the advance returns.
    await super.advance(0);
  }

  override pendingTimers(): number {
    return super.pendingTimers() + this.periodic.filter((timer) => !timer.cancelled).length;
  }
}

/**
 * A Sluice started in-process on a FakeClock (a real HTTP server; only time is injected), and an SDK client
 * that records the name of every command it sends, so tests can count heartbeats and batched deletes.
 */
export interface ToolkitServer {
  sluice: RunningSluice;
  clock: StepClock;
  sqs: SQSClient;
  /** Names of the commands sent through `sqs`, in order (e.g. 'ReceiveMessageCommand'). */
  commands: string[];
  /** A new queue with a unique name; returns its URL. */
  createQueue(prefix: string, attributes?: Record<string, string>): Promise<string>;
  send(queueUrl: string, body: string): Promise<string>;
  /** Visible + in flight + delayed messages. */
  countMessages(queueUrl: string): Promise<{ visible: number; inFlight: number }>;
  /** One short receive by a client other than the consumer (0 s wait). */
  receiveNow(queueUrl: string): Promise<import('@aws-sdk/client-sqs').Message[]>;
  close(): Promise<void>;
}

export async function startToolkitServer(start = Date.UTC(2026, 11, 1)): Promise<ToolkitServer> {
  const clock = new StepClock(start);
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-client-'));
  const sluice = await startSluice({ port: 0, dataDir, clock, logLevel: 'silent' });
  const sqs = sqsClient(sluice.endpoint);
  const commands: string[] = [];
  sqs.middlewareStack.add(
    (next, context) => (args) => {
      commands.push(context.commandName ?? 'unknown');
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  const probe = sqsClient(sluice.endpoint);
  let queues = 0;
  return {
    sluice,
    clock,
    sqs,
    commands,
    async createQueue(prefix, attributes) {
      const name = `${prefix}-${process.pid}-${++queues}`;
      const fifo = attributes?.FifoQueue === 'true';
      const { QueueUrl } = await probe.send(
        new CreateQueueCommand({ QueueName: fifo ? `${name}.fifo` : name, Attributes: attributes }),
      );
      return QueueUrl!;
    },
    async send(queueUrl, body) {
      const { MessageId } = await probe.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }),
      );
      return MessageId!;
    },
    async countMessages(queueUrl) {
      const { Attributes = {} } = await probe.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return {
        visible: Number(Attributes.ApproximateNumberOfMessages),
        inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible),
      };
    },
    async receiveNow(queueUrl) {
      const { Messages = [] } = await probe.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      return Messages;
    },
    async close() {
      sqs.destroy();
      probe.destroy();
      await sluice.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits (in real time, for I/O between the test, the consumer and the server) until `check` holds. Time
 * rules are never waited for here: tests move the FakeClock for those.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 10_000,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A promise with its resolve exposed: handlers in tests block on these. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
