/**
 * The crash audit's publishes (issue 40): publishers (Publish and PublishBatch through @aws-sdk/client-sns) to a
 * standard topic with several SQS subscriptions, some with filter policies in attribute and body scope so that
 * each message's matching set differs, and to a FIFO topic with two FIFO queues, while the server is killed with
 * SIGKILL at random moments and restarted on the same data. Every publish's outcome is logged on the client
 * side; at the end every subscribed queue is drained and the log is audited:
 *
 *  - every acknowledged publish is in every queue whose filter matches it, once, under the MessageId its
 *    acknowledgement gave (the envelope carries it), and in no queue whose filter does not match it;
 *  - no publish, acknowledged or not, is partially delivered: it is in all its matching queues or in none
 *    (a publish commits into every subscribed queue in one transaction of the store);
 *  - a PublishBatch entry answered as failed is in no queue;
 *  - each FIFO group's messages are in publish order in every FIFO queue;
 *  - nothing is in a queue that no publisher sent.
 *
 * Publishes cut off by a kill are not retried: each attempt carries its own id, so an attempt that the server
 * committed before dying is simply an unacknowledged publish that must be whole. The matching set is computed
 * here, by a predicate written for these few policies, independently of the server's matcher.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateTopicCommand,
  PublishBatchCommand,
  PublishCommand,
  SNSClient,
  SubscribeCommand,
} from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import type { StoreUnderTest } from './crash-audit.ts';

export interface SnsAuditOptions {
  store: StoreUnderTest;
  kills: number;
  /**
   * Random pause before each kill, counted from the load's first acknowledged publish after the (re)start: a
   * slow restart or a slow machine then still gets its load, and a fast one is not kept waiting.
   */
  minUptimeMs: number;
  maxUptimeMs: number;
  /**
   * What the load must have acknowledged before it stops: after the last kill it runs on until it has, so a slow
   * machine still gives the audit enough to check.
   */
  minimum?: Partial<Acknowledged>;
  log?: (line: string) => void;
}

export interface Acknowledged {
  /** Publishes acknowledged: Publish calls and PublishBatch entries together, standard and FIFO. */
  acknowledged: number;
  /** Of those, PublishBatch entries. */
  batchEntries: number;
  /** Of those, to the FIFO topic. */
  fifo: number;
}

export interface SnsAuditReport extends Acknowledged {
  kills: number;
  /** Publishes whose outcome is unknown (cut off by a kill), and of those, found delivered (whole). */
  unknownOutcome: number;
  unknownDelivered: number;
  /** Publishes refused at the connection (the server was down) or answered as failed: they must be in no queue. */
  notSent: number;
  /** Deliveries the acknowledged publishes should have made (publishes x matching queues), and found. */
  deliveriesExpected: number;
  deliveriesFound: number;
  /** Acknowledged publishes missing from at least one matching queue. */
  lost: number;
  /** Publishes (acknowledged or not) in some but not all of their matching queues. */
  partial: number;
  violations: string[];
}

interface Attributes {
  color: 'red' | 'blue' | 'green';
  size: number;
}
interface Body {
  id: string;
  region: string;
}

/** A subscribed queue: its filter policy (as sent) and the predicate the audit checks it by. */
interface Subscription {
  queue: string;
  fifo: boolean;
  attributes?: Record<string, string>;
  matches(attributes: Attributes, body: Body): boolean;
}

const ACCOUNT_ARN = 'arn:aws:sqs:us-east-1:000000000000:';
const STANDARD_SUBSCRIPTIONS: Subscription[] = [
  { queue: 'sns-all', fifo: false, matches: () => true },
  {
    queue: 'sns-red',
    fifo: false,
    attributes: { FilterPolicy: JSON.stringify({ color: ['red'] }) },
    matches: (a) => a.color === 'red',
  },
  {
    queue: 'sns-big-not-blue',
    fifo: false,
    attributes: {
      FilterPolicy: JSON.stringify({ size: [{ numeric: ['>=', 50] }], color: [{ 'anything-but': 'blue' }] }),
    },
    matches: (a) => a.size >= 50 && a.color !== 'blue',
  },
  {
    queue: 'sns-body-eu',
    fifo: false,
    attributes: {
      FilterPolicyScope: 'MessageBody',
      FilterPolicy: JSON.stringify({ region: [{ prefix: 'eu-' }] }),
    },
    matches: (_, b) => b.region.startsWith('eu-'),
  },
  {
    queue: 'sns-raw-small',
    fifo: false,
    attributes: {
      RawMessageDelivery: 'true',
      FilterPolicy: JSON.stringify({ size: [{ numeric: ['<', 30] }] }),
    },
    matches: (a) => a.size < 30,
  },
];
const FIFO_SUBSCRIPTIONS: Subscription[] = [
  { queue: 'sns-all.fifo', fifo: true, matches: () => true },
  {
    queue: 'sns-red.fifo',
    fifo: true,
    attributes: { FilterPolicy: JSON.stringify({ color: ['red', 'green'] }) },
    matches: (a) => a.color !== 'blue',
  },
];
const REGIONS = ['eu-west-1', 'eu-central-1', 'us-east-1', 'ap-south-1'];
const COLORS = ['red', 'blue', 'green'] as const;
const BATCH_SIZE = 10;

export interface Publish {
  id: string;
  fifo: boolean;
  group?: string;
  seq: number;
  attributes: Attributes;
  body: Body;
  /** `refused`: the connection was refused (the server was down), so the request was never sent. */
  outcome: 'acked' | 'unknown' | 'failed' | 'refused';
  messageId?: string;
  batch: boolean;
}

export interface Found {
  queue: string;
  /** The SNS MessageId, from the envelope (or the raw delivery's attribute-free body: then absent). */
  messageId?: string;
  seq: number;
  group?: string;
}

/** The connection was refused: the server was down, so the request was never sent. */
const refused = (error: unknown): boolean =>
  (error as { code?: unknown }).code === 'ECONNREFUSED' ||
  (error as { cause?: { code?: unknown } }).cause?.code === 'ECONNREFUSED';

/** An error the server answered (not a broken connection): the audit's own mistake, so it stops the run. */
const answered = (error: unknown): boolean => {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status !== undefined && status < 500;
};

export async function runSnsCrashAudit(options: SnsAuditOptions): Promise<SnsAuditReport> {
  const log = options.log ?? (() => {});
  const start = (dataDir?: string, port?: number) =>
    startServer({ dataDir, port, args: [...options.store.args, '--log-level', 'error'] });
  let server: RunningServer = await start();
  const port = server.port;
  const dataDir = server.dataDir;
  // The port stays the same across restarts, so the clients' endpoint does too.
  const sns = new SNSClient({
    endpoint: server.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  const sqs = sqsClient(server.endpoint);
  const violations: string[] = [];
  const publishes = new Map<string, Publish>();
  /** Counted as the load goes, for the uptimes and the minimum; the report counts again from the log. */
  const acked: Acknowledged = { acknowledged: 0, batchEntries: 0, fifo: 0 };
  const ack = (p: Publish, messageId: string | undefined) => {
    p.outcome = 'acked';
    p.messageId = messageId;
    acked.acknowledged++;
    if (p.batch) acked.batchEntries++;
    if (p.fifo) acked.fifo++;
  };
  let running = true;
  try {
    const topics: Record<'standard' | 'fifo', string> = { standard: '', fifo: '' };
    for (const [kind, subscriptions] of [
      ['standard', STANDARD_SUBSCRIPTIONS],
      ['fifo', FIFO_SUBSCRIPTIONS],
    ] as const) {
      const { TopicArn } = await sns.send(
        new CreateTopicCommand(
          kind === 'fifo' ? { Name: 'audit.fifo', Attributes: { FifoTopic: 'true' } } : { Name: 'audit' },
        ),
      );
      topics[kind] = TopicArn!;
      for (const subscription of subscriptions) {
        await sqs.send(
          new CreateQueueCommand({
            QueueName: subscription.queue,
            Attributes: subscription.fifo ? { FifoQueue: 'true' } : {},
          }),
        );
        await sns.send(
          new SubscribeCommand({
            TopicArn,
            Protocol: 'sqs',
            Endpoint: `${ACCOUNT_ARN}${subscription.queue}`,
            Attributes: subscription.attributes,
          }),
        );
      }
    }

    const random = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)]!;
    const make = (prefix: string, seq: number, fifo: boolean, batch: boolean, group?: string): Publish => {
      const id = `${prefix}:${seq}`;
      return {
        id,
        fifo,
        group,
        seq,
        batch,
        attributes: { color: random(COLORS), size: Math.floor(Math.random() * 100) },
        body: { id, region: random(REGIONS) },
        outcome: 'unknown',
      };
    };
    const entryOf = (p: Publish) => ({
      TopicArn: p.fifo ? topics.fifo : topics.standard,
      Message: JSON.stringify(p.body),
      MessageAttributes: {
        color: { DataType: 'String', StringValue: p.attributes.color },
        size: { DataType: 'Number', StringValue: String(p.attributes.size) },
        // The raw deliveries carry the id and sequence as attributes too, beside the body.
        seq: { DataType: 'Number', StringValue: String(p.seq) },
      },
      ...(p.group ? { MessageGroupId: p.group, MessageDeduplicationId: p.id } : {}),
    });

    async function publishOnes(prefix: string, fifo: boolean) {
      for (let seq = 0; running; seq++) {
        const p = make(prefix, seq, fifo, false, fifo ? prefix : undefined);
        publishes.set(p.id, p);
        try {
          const { MessageId } = await sns.send(new PublishCommand(entryOf(p)));
          ack(p, MessageId);
        } catch (error) {
          if (answered(error)) throw error;
          if (refused(error)) p.outcome = 'refused';
          await sleep(50); // the server is down or coming back
        }
        await sleep(2);
      }
    }

    async function publishBatches(prefix: string, fifo: boolean) {
      for (let b = 0; running; b++) {
        const batch = Array.from({ length: BATCH_SIZE }, (_, j) =>
          make(prefix, b * BATCH_SIZE + j, fifo, true, fifo ? prefix : undefined),
        );
        for (const p of batch) publishes.set(p.id, p);
        try {
          const output = await sns.send(
            new PublishBatchCommand({
              TopicArn: fifo ? topics.fifo : topics.standard,
              PublishBatchRequestEntries: batch.map((p, index) => {
                const { TopicArn: _, ...entry } = entryOf(p);
                return { Id: String(index), ...entry };
              }),
            }),
          );
          for (const { Id, MessageId } of output.Successful ?? []) ack(batch[Number(Id)]!, MessageId);
          for (const { Id } of output.Failed ?? []) batch[Number(Id)]!.outcome = 'failed';
        } catch (error) {
          if (answered(error)) throw error;
          if (refused(error)) for (const p of batch) p.outcome = 'refused';
          await sleep(50);
        }
        await sleep(10);
      }
    }

    const workers = [
      publishOnes('one0', false),
      publishOnes('one1', false),
      publishBatches('batch0', false),
      publishOnes('fone0', true),
      publishBatches('fbatch0', true),
    ];
    // A publisher's failure ends the run at once rather than after the kills.
    let failedWith: { error: unknown } | undefined;
    const failure = Promise.all(workers).then(
      () => undefined,
      (error: unknown) => {
        failedWith = { error };
        return error;
      },
    );
    /** Waits until `done` holds; throws a publisher's failure, or after two minutes. */
    const until = async (done: () => boolean, what: () => string) => {
      for (const deadline = Date.now() + 120_000; !done(); ) {
        if (failedWith) throw failedWith.error;
        if (Date.now() > deadline) throw new Error(`${what()}: not within 120 s`);
        await sleep(10);
      }
    };
    for (let kill = 1; kill <= options.kills; kill++) {
      const before = acked.acknowledged;
      await until(
        () => acked.acknowledged > before,
        () => `a publish acknowledged after restart ${kill - 1}`,
      );
      const upUntil =
        Date.now() + options.minUptimeMs + Math.random() * (options.maxUptimeMs - options.minUptimeMs);
      await until(
        () => Date.now() >= upUntil,
        () => 'the uptime',
      );
      await server.kill();
      const restarting = Date.now();
      server = await start(dataDir, port);
      log(
        `kill ${kill}/${options.kills}: restarted in ${Date.now() - restarting} ms (${acked.acknowledged} publishes acknowledged)`,
      );
    }
    await until(
      () =>
        Object.entries(options.minimum ?? {}).every(
          ([key, least]) => acked[key as keyof Acknowledged] >= (least ?? 0),
        ),
      () => `the minimum acknowledged (${JSON.stringify(acked)} of ${JSON.stringify(options.minimum)})`,
    );
    running = false;
    const failed = await failure;
    if (failed) throw failed;

    // Drain every queue: receive with a visibility timeout longer than the drain, delete, until empty.
    const found = new Map<string, Found[]>();
    /** Each FIFO queue's group's sequence numbers, in the order the drain received them. */
    const fifoOrder = new Map<string, number[]>();
    for (const subscription of [...STANDARD_SUBSCRIPTIONS, ...FIFO_SUBSCRIPTIONS]) {
      const QueueUrl = `${server.endpoint}/000000000000/${subscription.queue}`;
      for (;;) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl,
            MaxNumberOfMessages: 10,
            VisibilityTimeout: 3600,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0) {
          // Drained only if the queue agrees that nothing is left (visible, delayed or otherwise).
          const { Attributes = {} } = await sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl,
              AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
            }),
          );
          const left =
            Number(Attributes.ApproximateNumberOfMessages) +
            Number(Attributes.ApproximateNumberOfMessagesDelayed);
          if (left > 0)
            violations.push(`${subscription.queue}: ${left} messages left that the drain could not receive`);
          break;
        }
        for (const message of Messages) {
          const raw = subscription.attributes?.RawMessageDelivery === 'true';
          const envelope = raw
            ? undefined
            : (JSON.parse(message.Body!) as { MessageId: string; Message: string });
          const body = JSON.parse(envelope ? envelope.Message : message.Body!) as Body;
          const p = publishes.get(body.id);
          if (!p) {
            violations.push(`${subscription.queue}: ${body.id} was never published`);
            continue;
          }
          const where = found.get(body.id) ?? [];
          where.push({
            queue: subscription.queue,
            messageId: envelope?.MessageId,
            seq: raw ? Number(message.MessageAttributes?.seq?.StringValue) : p.seq,
            group: message.Attributes?.MessageGroupId,
          });
          found.set(body.id, where);
          if (subscription.fifo) {
            const order = fifoOrder.get(`${subscription.queue} ${p.group}`) ?? [];
            order.push(p.seq);
            fifoOrder.set(`${subscription.queue} ${p.group}`, order);
          }
        }
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl,
            Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
      }
    }

    return auditPublishes(options.kills, publishes.values(), found, fifoOrder, violations);
  } finally {
    running = false;
    sns.destroy();
    sqs.destroy();
    await server.stop();
    removeDataDir(dataDir);
  }
}

/**
 * The audit proper, on the client's log of publishes and what the drain found in each queue (by publish id);
 * `violations` already holds what the drain saw that no publisher sent.
 */
export function auditPublishes(
  kills: number,
  publishes: Iterable<Publish>,
  found: ReadonlyMap<string, readonly Found[]>,
  fifoOrder: ReadonlyMap<string, readonly number[]>,
  violations: string[] = [],
): SnsAuditReport {
  const report: SnsAuditReport = {
    kills,
    acknowledged: 0,
    batchEntries: 0,
    fifo: 0,
    unknownOutcome: 0,
    unknownDelivered: 0,
    notSent: 0,
    deliveriesExpected: 0,
    deliveriesFound: 0,
    lost: 0,
    partial: 0,
    violations,
  };
  for (const p of publishes) {
    const subscriptions = p.fifo ? FIFO_SUBSCRIPTIONS : STANDARD_SUBSCRIPTIONS;
    const expected = subscriptions.filter((s) => s.matches(p.attributes, p.body)).map((s) => s.queue);
    const where = found.get(p.id) ?? [];
    const queues = where.map((f) => f.queue);
    for (const queue of new Set(queues)) {
      if (!expected.includes(queue)) violations.push(`${p.id}: in ${queue}, whose filter does not match it`);
      const copies = queues.filter((q) => q === queue).length;
      if (copies > 1) violations.push(`${p.id}: in ${queue} ${copies} times`);
    }
    const present = expected.filter((queue) => queues.includes(queue));
    if (present.length > 0 && present.length < expected.length) {
      report.partial++;
      violations.push(
        `${p.id} (${p.outcome}): partial, in ${present.join(', ')} but not in all of ${expected.join(', ')}`,
      );
    }
    if (p.outcome === 'acked') {
      report.acknowledged++;
      if (p.batch) report.batchEntries++;
      if (p.fifo) report.fifo++;
      report.deliveriesExpected += expected.length;
      report.deliveriesFound += present.length;
      if (present.length < expected.length) {
        report.lost++;
        if (present.length === 0)
          violations.push(`${p.id}: acknowledged as ${p.messageId}, in none of ${expected.join(', ')}`);
      }
      for (const f of where) {
        if (f.messageId !== undefined && f.messageId !== p.messageId)
          violations.push(
            `${p.id}: acknowledged as ${p.messageId}, delivered to ${f.queue} as ${f.messageId}`,
          );
        if (p.fifo && f.group !== p.group) violations.push(`${p.id}: in ${f.queue} in group ${f.group}`);
      }
    } else if (p.outcome === 'failed' || p.outcome === 'refused') {
      report.notSent++;
      if (where.length > 0) violations.push(`${p.id}: ${p.outcome}, yet in ${queues.join(', ')}`);
    } else {
      report.unknownOutcome++;
      if (present.length > 0) report.unknownDelivered++;
    }
  }
  for (const [key, order] of fifoOrder) {
    for (let i = 1; i < order.length; i++) {
      if (order[i]! <= order[i - 1]!) {
        violations.push(`FIFO ${key}: ${order[i]} received after ${order[i - 1]}`);
        break;
      }
    }
  }
  return report;
}

/** One line of figures, for the command-line runner and the test's log. */
export function describeSnsReport(report: SnsAuditReport): string {
  return (
    `${report.kills} kills; ${report.acknowledged} publishes acknowledged (${report.batchEntries} in batches, ` +
    `${report.fifo} FIFO); deliveries expected ${report.deliveriesExpected}, found ${report.deliveriesFound}; ` +
    `lost ${report.lost}, partial ${report.partial}; ${report.unknownOutcome} publishes cut off ` +
    `(${report.unknownDelivered} of them delivered whole), ${report.notSent} refused or failed; ${report.violations.length} violations`
  );
}
