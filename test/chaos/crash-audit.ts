/**
 * The crash audit: producers (SendMessage and SendMessageBatch), consumers and move tasks run against a real
 * `sluice serve` while it is killed with SIGKILL at random moments and restarted on the same data; every
 * request's outcome is logged on the client side (which is never killed), and the log is audited at the end:
 *
 *  - every acknowledged send was received at least once (retention is days, so nothing expires here);
 *  - a message without any delete attempt is still there when the queues are drained at the end;
 *  - no two receives of one message overlap its visibility timeout;
 *  - FIFO: each group's messages are first delivered in send order, and a retried send (same
 *    deduplication id) is never delivered as a second message;
 *  - DLQ: every poison message ends up in exactly one queue — the dead-letter queue once it was received
 *    maxReceiveCount times — with the same MessageId, never twice;
 *  - move tasks: messages bounce between a queue and its DLQ (received once, moved to the DLQ, redriven
 *    back by a move task) while the server is killed; at the end each is in exactly one of the two queues,
 *    once: a move neither loses nor copies a message.
 *
 * A request cut off by a kill has an unknown outcome; it is logged as attempted, not acknowledged, and
 * the checks only rely on acknowledged ones. Producers retry unacknowledged sends (FIFO with the same
 * deduplication id), as real producers do; a standard send retried after a cut may be stored twice.
 *
 * One producer sends large bodies (checked intact on receipt), so that SQLite checkpoints its WAL into the
 * database file several times a run and crashes land inside checkpoints too.
 *
 * The crash is SIGKILL by default. A `CrashMode` can take more away after each kill (the power-cut audit
 * drops every write not yet fsynced), and then says which of the rules the durability mode promises: what
 * a mode does not promise is counted as a finding instead of a violation.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningServer, startServer } from '../helpers/server.ts';

/** How to start the server on a given store; the PostgreSQL backend plugs in here with its own args. */
export interface StoreUnderTest {
  readonly label: string;
  /** `sluice serve` arguments after `--port` and `--data`. */
  readonly args: readonly string[];
}

export const sqliteStore = (durability: 'full' | 'durable' | 'normal' | 'off'): StoreUnderTest => ({
  label: `SQLite, durability ${durability}`,
  args: ['--durability', durability],
});

/** What a crash takes away besides the process; the default is a plain SIGKILL. */
export interface CrashMode {
  /** The data directory to run on; a fresh temp directory when absent. */
  dataDir?: string;
  /** Environment of the server process. */
  env?: Record<string, string>;
  /**
   * Called once the queues exist and the server has stopped cleanly: what is on disk then counts as
   * durable (the queues were made long before the crashes).
   */
  settled?(): Promise<void>;
  /** Called after each SIGKILL (or clean stop), before the restart. */
  afterCrash?(): Promise<void>;
  /** Every this many crashes, stop the server with SIGTERM first (a power cut after a clean shutdown). */
  cleanStopEvery?: number;
  /** What the durability mode promises against this crash; both by default. */
  promises?: {
    /** No acknowledged send is lost. */
    sends: boolean;
    /** No acknowledged receive is undone (so no delivery inside a visibility timeout). */
    receives: boolean;
  };
}

export interface AuditOptions {
  store: StoreUnderTest;
  kills: number;
  /** Random pause between a restart and the next kill. */
  minUptimeMs: number;
  maxUptimeMs: number;
  /** Producers per queue kind, each of single sends and of batches. */
  producers?: number;
  /**
   * What the load must have acknowledged before it stops: after the last kill it runs on until it has, so that
   * a slow machine still gives the audit enough to check rather than failing (or passing) on too little.
   */
  minimum?: Partial<Acknowledged>;
  crash?: CrashMode;
  log?: (line: string) => void;
}

export interface Acknowledged {
  /** Messages acknowledged, by SendMessage and by SendMessageBatch entries together. */
  sends: number;
  /** Of those, entries of SendMessageBatch. */
  batchEntries: number;
  receives: number;
  deletes: number;
  moveTasks: number;
  /** Messages move tasks moved, as the tasks last reported. */
  moved: number;
}

export interface AuditReport {
  kills: number;
  acknowledged: Acknowledged;
  attempted: { unknownOutcome: number };
  /** Broken rules that the store promises to keep against this crash. */
  violations: string[];
  /** Losses the store does not promise to avoid against this crash (power cut in `durable` or `normal`). */
  findings: { lostSends: number; undoneReceives: number; examples: string[] };
}

const STANDARD = 'audit-std';
const FIFO = 'audit.fifo';
const SOURCE = 'audit-src';
const DLQ = 'audit-dlq';
const BOUNCING = 'audit-move-src';
const BOUNCED = 'audit-move-dlq';
const VISIBILITY_S = 2;
const POISON_VISIBILITY_S = 1;
const MAX_RECEIVE_COUNT = 2;
const BATCH_SIZE = 10;
const MOVE_RATE = 100;
/**
 * One producer sends bodies this large (after the key and a space), so that the WAL grows fast enough for
 * SQLite to checkpoint it into the database several times a run, and crashes land in checkpoints too.
 */
const LARGE_BODY_BYTES = 900_000;
const LARGE_PADDING = 'x'.repeat(LARGE_BODY_BYTES);
const ARN = 'arn:aws:sqs:us-east-1:000000000000:';

interface Received {
  body: string;
  messageId: string;
  receiptHandle: string;
  queue: string;
  started: number;
  ended: number;
  visibilityS: number;
}

interface SendEntry {
  body: string;
  group?: string;
}

class UnknownOutcome extends Error {}
/** The connection was refused (the server was down): the request was not sent, so it cannot have been stored. */
class NotSent extends UnknownOutcome {}

/** One JSON-protocol call; throws UnknownOutcome when the connection broke (the server may have acted). */
class Client {
  constructor(private endpoint: () => string) {}
  async call<T>(action: string, input: object): Promise<T> {
    let response: Response;
    try {
      response = await fetch(this.endpoint(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
        body: JSON.stringify(input),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (error) {
      const code = (error as { cause?: { code?: unknown } }).cause?.code;
      throw code === 'ECONNREFUSED' ? new NotSent(String(error)) : new UnknownOutcome(String(error));
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new UnknownOutcome(String(error));
    }
    if (response.status !== 200) throw new Error(`${action}: HTTP ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }
}

export async function runCrashAudit(options: AuditOptions): Promise<AuditReport> {
  const log = options.log ?? (() => {});
  const crash = options.crash ?? {};
  const promises = crash.promises ?? { sends: true, receives: true };
  const start = (dataDir?: string, port?: number) =>
    startServer({ dataDir, port, args: [...options.store.args], env: crash.env });
  let server: RunningServer = await start(crash.dataDir);
  const port = server.port;
  const dataDir = server.dataDir;
  const client = new Client(() => server.endpoint);
  const url = (name: string) => `${server.endpoint}/000000000000/${name}`;
  const acked: Acknowledged = { sends: 0, batchEntries: 0, receives: 0, deletes: 0, moveTasks: 0, moved: 0 };
  let unknown = 0;
  const violations: string[] = [];
  const findings = { lostSends: 0, undoneReceives: 0, examples: [] as string[] };
  /** A broken rule: a violation if the store promises it, else a finding. */
  const broken = (promised: boolean, kind: 'lostSends' | 'undoneReceives', detail: string) => {
    if (promised) violations.push(detail);
    else {
      findings[kind]++;
      if (findings.examples.length < 10) findings.examples.push(detail);
    }
  };

  await client.call('CreateQueue', {
    QueueName: STANDARD,
    Attributes: { VisibilityTimeout: String(VISIBILITY_S) },
  });
  await client.call('CreateQueue', {
    QueueName: FIFO,
    Attributes: { FifoQueue: 'true', VisibilityTimeout: String(VISIBILITY_S) },
  });
  for (const [queue, dlq, maxReceiveCount] of [
    [SOURCE, DLQ, MAX_RECEIVE_COUNT],
    [BOUNCING, BOUNCED, 1],
  ] as const) {
    await client.call('CreateQueue', { QueueName: dlq });
    await client.call('CreateQueue', {
      QueueName: queue,
      Attributes: {
        VisibilityTimeout: String(POISON_VISIBILITY_S),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `${ARN}${dlq}`, maxReceiveCount }),
      },
    });
  }
  if (crash.settled) {
    await server.stop();
    await crash.settled();
    server = await start(dataDir, port);
  }

  const sent = new Map<string, { queue: string; messageIds: Set<string> }>();
  /**
   * How many times each body's send was cut off before it was acknowledged: each cut-off attempt may have been
   * stored, so a body cut off k times may be stored k + 1 times.
   */
  const cutOffs = new Map<string, number>();
  const noteCutOff = (body: string) => cutOffs.set(body, (cutOffs.get(body) ?? 0) + 1);
  const received: Received[] = [];
  const deleteAttempted = new Set<string>();
  /** Move tasks seen, by start time: the most messages each reported moved. */
  const movedByTask = new Map<number, number>();
  let running = true;

  /** Retries a call until it is acknowledged (through kills); `onCutOff` for each attempt the server may have stored. */
  async function untilAcked<T>(action: string, input: object, onCutOff = () => {}): Promise<T> {
    for (;;) {
      try {
        return await client.call<T>(action, input);
      } catch (error) {
        if (error instanceof UnknownOutcome) {
          unknown++;
          if (!(error instanceof NotSent)) onCutOff();
        } else if (!/HTTP 5\d\d/.test(String(error))) throw error;
        await sleep(50);
      }
    }
  }

  const noteSent = (queue: string, body: string, messageId: string) => {
    acked.sends++;
    const entry = sent.get(body) ?? { queue, messageIds: new Set<string>() };
    entry.messageIds.add(messageId);
    sent.set(body, entry);
  };

  const sendInput = ({ body, group }: SendEntry) => ({
    MessageBody: body,
    ...(group ? { MessageGroupId: group, MessageDeduplicationId: body } : {}),
  });

  async function produce(queue: string, prefix: string, group?: string, pauseMs = 5, large = false) {
    for (let i = 0; running; i++) {
      const body = `${prefix}:${i}`;
      const { MessageId } = await untilAcked<{ MessageId: string }>(
        'SendMessage',
        { QueueUrl: url(queue), ...sendInput({ body: large ? `${body} ${LARGE_PADDING}` : body, group }) },
        () => noteCutOff(body),
      );
      noteSent(queue, body, MessageId);
      await sleep(pauseMs);
    }
  }

  /** SendMessageBatch of BATCH_SIZE entries; entries that fail or are cut off are sent again. */
  async function produceBatches(queue: string, prefix: string, group?: string, pauseMs = 20): Promise<void> {
    for (let i = 0; running; i++) {
      let entries = Array.from({ length: BATCH_SIZE }, (_, j) => ({
        body: `${prefix}:${i * BATCH_SIZE + j}`,
        group,
      }));
      while (entries.length > 0) {
        const output = await untilAcked<{
          Successful?: Array<{ Id: string; MessageId: string }>;
          Failed?: Array<{ Id: string }>;
        }>(
          'SendMessageBatch',
          {
            QueueUrl: url(queue),
            Entries: entries.map((entry, index) => ({ Id: String(index), ...sendInput(entry) })),
          },
          () => {
            for (const entry of entries) noteCutOff(entry.body);
          },
        );
        for (const { Id, MessageId } of output.Successful ?? []) {
          noteSent(queue, entries[Number(Id)]!.body, MessageId);
          acked.batchEntries++;
        }
        const failed = new Set((output.Failed ?? []).map((entry) => Number(entry.Id)));
        entries = entries.filter((_, index) => failed.has(index));
      }
      await sleep(pauseMs);
    }
  }

  async function receiveOnce(queue: string, visibilityS: number, waitS: number): Promise<Received[]> {
    const started = Date.now();
    const output = await client.call<{
      Messages?: Array<{ Body: string; MessageId: string; ReceiptHandle: string }>;
    }>('ReceiveMessage', {
      QueueUrl: url(queue),
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitS,
      VisibilityTimeout: visibilityS,
    });
    const ended = Date.now();
    const batch = (output.Messages ?? []).map((m) => ({
      body: keyOf(m.Body),
      messageId: m.MessageId,
      receiptHandle: m.ReceiptHandle,
      queue,
      started,
      ended,
      visibilityS,
    }));
    acked.receives += batch.length;
    received.push(...batch);
    return batch;
  }

  /** A message's key: its body, or a large body's part before the padding, which must be intact. */
  function keyOf(body: string): string {
    const space = body.indexOf(' ');
    if (space < 0) return body;
    if (body.slice(space + 1) !== LARGE_PADDING) violations.push(`${body.slice(0, space)}: body damaged`);
    return body.slice(0, space);
  }

  async function consume(queue: string, deleteThem: boolean): Promise<void> {
    const visibilityS = queue === SOURCE || queue === BOUNCING ? POISON_VISIBILITY_S : VISIBILITY_S;
    while (running) {
      let batch: Received[];
      try {
        batch = await receiveOnce(queue, visibilityS, 1);
      } catch (error) {
        if (error instanceof UnknownOutcome) unknown++;
        await sleep(50);
        continue;
      }
      for (const message of batch) {
        // One in ten is left undeleted, to be redelivered after its visibility timeout.
        if (!deleteThem || Math.random() < 0.1) continue;
        deleteAttempted.add(message.body);
        try {
          await client.call('DeleteMessage', { QueueUrl: url(queue), ReceiptHandle: message.receiptHandle });
          acked.deletes++;
        } catch (error) {
          if (error instanceof UnknownOutcome) unknown++;
        }
      }
    }
  }

  interface MoveTask {
    Status: string;
    StartedTimestamp: number;
    ApproximateNumberOfMessagesMoved: number;
  }

  /** The DLQ's latest move task, noting how many messages it has moved. */
  async function latestMoveTask(): Promise<MoveTask | undefined> {
    const { Results = [] } = await client.call<{ Results?: MoveTask[] }>('ListMessageMoveTasks', {
      SourceArn: `${ARN}${BOUNCED}`,
      MaxResults: 1,
    });
    const task = Results[0];
    if (task) {
      const moved = movedByTask.get(task.StartedTimestamp) ?? 0;
      movedByTask.set(task.StartedTimestamp, Math.max(moved, task.ApproximateNumberOfMessagesMoved));
      acked.moved = [...movedByTask.values()].reduce((sum, count) => sum + count, 0);
    }
    return task;
  }

  /** Redrives the bounce DLQ back to its source whenever no move task is running, through the kills. */
  async function redrive(): Promise<void> {
    while (running) {
      try {
        const task = await latestMoveTask();
        const { Attributes } = await client.call<{ Attributes: { ApproximateNumberOfMessages: string } }>(
          'GetQueueAttributes',
          { QueueUrl: url(BOUNCED), AttributeNames: ['ApproximateNumberOfMessages'] },
        );
        const waiting = Number(Attributes.ApproximateNumberOfMessages) > 0;
        if (waiting && task?.Status !== 'RUNNING' && task?.Status !== 'CANCELLING') {
          await client.call('StartMessageMoveTask', {
            SourceArn: `${ARN}${BOUNCED}`,
            MaxNumberOfMessagesPerSecond: MOVE_RATE,
          });
          acked.moveTasks++;
        }
      } catch (error) {
        if (error instanceof UnknownOutcome) unknown++;
        else if (!/HTTP (5\d\d|400 .*already a task running)/.test(String(error))) throw error;
      }
      await sleep(200);
    }
  }

  const producers = options.producers ?? 2;
  const workers = [
    ...Array.from({ length: producers }, (_, p) => produce(STANDARD, `std${p}`)),
    ...Array.from({ length: producers }, (_, p) => produceBatches(STANDARD, `stdb${p}`)),
    ...Array.from({ length: producers }, (_, p) => produce(FIFO, `fifo${p}`, `g${p}`)),
    ...Array.from({ length: producers }, (_, p) => produceBatches(FIFO, `fifob${p}`, `gb${p}`)),
    produce(STANDARD, 'large', undefined, 20, true),
    produce(SOURCE, 'poison', undefined, 50),
    produceBatches(BOUNCING, 'bounce', undefined, 200),
    consume(STANDARD, true),
    consume(STANDARD, true),
    consume(FIFO, true),
    consume(SOURCE, false),
    consume(BOUNCING, false),
    redrive(),
  ];

  for (let kill = 1; kill <= options.kills; kill++) {
    await sleep(options.minUptimeMs + Math.random() * (options.maxUptimeMs - options.minUptimeMs));
    const clean = crash.cleanStopEvery !== undefined && kill % crash.cleanStopEvery === 0;
    await (clean ? server.stop() : server.kill());
    await crash.afterCrash?.();
    const restarting = Date.now();
    server = await start(dataDir, port);
    log(
      `kill ${kill}/${options.kills}: restarted in ${Date.now() - restarting} ms (${acked.sends} sends acknowledged so far)`,
    );
  }
  const short = () =>
    Object.entries(options.minimum ?? {}).some(
      ([key, least]) => acked[key as keyof Acknowledged] < (least ?? 0),
    );
  // Bounded, so that a load that cannot get there fails on the minimum's assertion, saying which.
  for (const until = Date.now() + 120_000; short() && Date.now() < until; ) await sleep(100);
  running = false;
  await Promise.all(workers);
  // The last move task runs to its end, so that no message is between the two queues' drains.
  for (let task = await latestMoveTask(); task?.Status === 'RUNNING'; task = await latestMoveTask())
    await sleep(200);

  // Drain: receive everything left, until nothing has come for longer than any visibility timeout. Poison
  // messages keep cycling until each has been received maxReceiveCount times and moved to the DLQ; bounced
  // ones until each is in the bounce DLQ or was received from its source again.
  const drainStarted = Date.now();
  const remaining = new Map<string, string[]>();
  let quietSince = Date.now();
  while (Date.now() - quietSince < (VISIBILITY_S + 1) * 1000) {
    let got = 0;
    for (const queue of [STANDARD, FIFO, SOURCE, DLQ, BOUNCING, BOUNCED]) {
      const batch = await receiveOnce(queue, queue === DLQ || queue === BOUNCED ? 3600 : 1, 0);
      got += batch.length;
      for (const message of batch) {
        if (queue === SOURCE) continue; // still on its way to the DLQ
        const where = remaining.get(message.body) ?? [];
        where.push(`${queue}:${message.messageId}`);
        remaining.set(message.body, where);
        if (queue !== DLQ)
          await client.call('DeleteMessage', { QueueUrl: url(queue), ReceiptHandle: message.receiptHandle });
      }
    }
    if (got > 0) quietSince = Date.now();
    else await sleep(100);
  }
  log(`drained in ${Date.now() - drainStarted} ms`);
  await server.stop();

  // 1 and 2: received at least once; still present unless a delete was attempted.
  const receivedBodies = new Set(received.map((r) => r.body));
  for (const [body, { queue, messageIds }] of sent) {
    if (!receivedBodies.has(body))
      broken(promises.sends, 'lostSends', `${queue} ${body}: acknowledged send never received`);
    else if (queue !== SOURCE && queue !== BOUNCING && !deleteAttempted.has(body) && !remaining.has(body))
      broken(promises.sends, 'lostSends', `${queue} ${body}: gone without any delete`);
    if (queue === FIFO && messageIds.size > 1)
      violations.push(`${body}: one deduplication id acknowledged as ${messageIds.size} messages`);
  }
  // 3: no overlapping deliveries (a later receive ending before an earlier one's start + timeout).
  const byMessage = new Map<string, Received[]>();
  for (const r of received) {
    if (r.queue === DLQ || r.queue === BOUNCED) continue;
    const list = byMessage.get(`${r.queue}:${r.messageId}`) ?? [];
    list.push(r);
    byMessage.set(`${r.queue}:${r.messageId}`, list);
  }
  for (const [key, list] of byMessage) {
    list.sort((a, b) => a.ended - b.ended);
    for (let i = 1; i < list.length; i++) {
      const previous = list[i - 1]!;
      if (list[i]!.ended < previous.started + previous.visibilityS * 1000)
        broken(
          promises.receives,
          'undoneReceives',
          `${key}: delivered again ${previous.started + previous.visibilityS * 1000 - list[i]!.ended} ms inside its visibility timeout`,
        );
    }
  }
  // 4: FIFO first deliveries in send order per group (one group per producer); one message per deduplication id.
  const firstSeen = new Map<string, number>();
  for (const r of [...received].sort((a, b) => a.ended - b.ended)) {
    if (r.queue === FIFO && !firstSeen.has(r.body)) firstSeen.set(r.body, firstSeen.size);
  }
  const fifoProducers = Array.from({ length: producers }, (_, p) => [`fifo${p}`, `fifob${p}`]).flat();
  for (const prefix of fifoProducers) {
    const order = [...firstSeen.entries()]
      .filter(([body]) => body.startsWith(`${prefix}:`))
      .sort((a, b) => a[1] - b[1])
      .map(([body]) => Number(body.split(':')[1]));
    for (let i = 1; i < order.length; i++) {
      if (order[i]! < order[i - 1]!)
        violations.push(`FIFO producer ${prefix}: message ${order[i]} first delivered after ${order[i - 1]}`);
    }
  }
  const fifoIds = new Map<string, Set<string>>();
  for (const r of received) {
    if (r.queue !== FIFO) continue;
    const ids = fifoIds.get(r.body) ?? new Set<string>();
    ids.add(r.messageId);
    fifoIds.set(r.body, ids);
  }
  for (const [body, ids] of fifoIds) {
    if (ids.size > 1) violations.push(`FIFO ${body}: delivered as ${ids.size} different messages`);
  }
  // 5: every acknowledged poison message is in the DLQ exactly once, under the MessageId it was sent as.
  // (A send retried after a kill may have been stored twice, as two messages: each is checked on its own.)
  // 6: every bounced message is in exactly one of its two queues, once (k + 1 times at most if its send was
  // cut off k times and sent again); a move task's new MessageIds make the body the message's identity.
  for (const [body, { queue, messageIds }] of sent) {
    const where = remaining.get(body) ?? [];
    if (queue === SOURCE) {
      for (const id of messageIds) {
        const copies = where.filter((w) => w === `${DLQ}:${id}`).length;
        if (copies === 0)
          broken(promises.sends, 'lostSends', `${body} (${id}): in the DLQ 0 times (${where.join(', ')})`);
        else if (copies > 1)
          violations.push(`${body} (${id}): in the DLQ ${copies} times (${where.join(', ')})`);
      }
      if (where.some((w) => !w.startsWith(`${DLQ}:`)))
        violations.push(`${body}: outside the DLQ (${where.join(', ')})`);
    }
    if (queue === BOUNCING) {
      const copies = new Set(where).size;
      const cutOff = cutOffs.get(body) ?? 0;
      if (copies === 0) broken(promises.sends, 'lostSends', `${body}: moved back and forth, then lost`);
      else if (copies > 1 + cutOff)
        violations.push(
          `${body}: in ${copies} copies after its moves, its send cut off ${cutOff} times (${where.join(', ')})`,
        );
    }
  }
  return {
    kills: options.kills,
    acknowledged: acked,
    attempted: { unknownOutcome: unknown },
    violations,
    findings,
  };
}

/** One line of figures, for the command-line runners. */
export function describeReport(report: AuditReport): string {
  const { acknowledged: a, findings: f } = report;
  return (
    `acknowledged ${a.sends} sends (${a.batchEntries} in batches), ${a.receives} receives, ${a.deletes} deletes, ` +
    `${a.moveTasks} move tasks moving ${a.moved} messages; ${report.attempted.unknownOutcome} requests cut off; ` +
    `${report.violations.length} violations; findings: ${f.lostSends} acknowledged sends lost, ` +
    `${f.undoneReceives} receives undone`
  );
}
