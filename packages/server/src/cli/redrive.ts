import { parseArgs } from 'node:util';
import {
  CancelMessageMoveTaskCommand,
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListMessageMoveTasksCommand,
  type ListMessageMoveTasksResultEntry,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { type MessageFilter, matchesAll, parseFilters } from '../core/message-filter.ts';
import { MOVE_TASK_DEFAULTS } from '../core/move-tasks.ts';
import { countOf } from '../core/plural.ts';
import { integerFlag, UsageError } from '../shared/command-flags.ts';
import { DEFAULT_ENDPOINT, explainRefused, queueReference } from './endpoint.ts';
import { onInterrupt } from './interrupt.ts';
import { ProgressLine } from './progress.ts';
import { CLI_USER_AGENT } from './sluice-api.ts';
import { changeSelection } from './triage-selection.ts';

export const REDRIVE_HELP = `sluice redrive — move messages out of a dead-letter queue, at a rate, with a progress bar

Usage:
  sluice redrive --source DLQ [--destination QUEUE] [--rate N] [--filter EXPR ...] [options]
  sluice redrive --source DLQ [--id ID ...] [--search TEXT] [--filter EXPR ...] [options]

Queues are given by name, URL or ARN. Only the public SQS API is used, so this works against AWS SQS too.

Options:
  --source Q          the dead-letter queue to move messages from (required)
  --destination Q     where to move them (default: each message back to the queue it was dead-lettered from)
  --rate N            messages per second, 1-500 (default: the server's default for move tasks; with
                      --filter, ${MOVE_TASK_DEFAULTS.defaultRate})
  --filter EXPR       move only matching messages; repeat to require several. EXPR is
                        attr.NAME=VALUE     a message attribute equals VALUE
                        body.PATH=VALUE     a field of a JSON body equals VALUE (PATH in dots: body.customer.id)
                        body=VALUE          the whole body equals VALUE
                        id=VALUE            the message id is VALUE
                      and with ~ instead of =, VALUE is a regular expression the value must match
                      (RE2 syntax, linear time; at most 20 filters, 10,000 instructions)
  --id ID             Sluice only: replay the message with this id; repeat for several
  --search TEXT       Sluice only: replay the messages whose body contains TEXT
  --dry-run           with --id or --search: list the messages it would replay, and replay none
  --yes, -y           with --id or --search: replay more than one message without asking first
  --hold SECONDS      with --filter: how long each non-matching message is hidden while the scan runs,
                      renewed while it runs (default 300); they are made visible again at the end
  --endpoint URL      the SQS endpoint (default ${DEFAULT_ENDPOINT}; "aws" for the AWS regional endpoint)
  --region NAME       region (default $AWS_REGION, else us-east-1)
  -h, --help          this text

Without --filter the server runs an SQS move task (StartMessageMoveTask): the progress bar follows
ListMessageMoveTasks, and Ctrl-C cancels the task (CancelMessageMoveTask). With --filter the messages are
received, matched here, sent to their destination and deleted from the DLQ, one at a time at the rate; a
crash between the send and the delete can leave one message in both queues (at-least-once, as SQS).
With --id or --search (and any --filter with them) the CLI uses a Sluice server's triage API instead: it
finds the messages without receiving them and replays them at the rate, each moved atomically on the server;
a message a consumer holds is skipped and listed. Before replaying more than one message it lists them and
asks; with no terminal to ask on, it refuses unless given --yes. The server records the replays in its
audit trail (sluice audit).
Exit status: 0 when everything was moved, 1 on failure, when messages were skipped or the replay was not
confirmed, 130 when stopped with Ctrl-C.`;

interface QueueRef {
  url: string;
  arn: string;
  fifo: boolean;
}

const TERMINAL = new Set(['COMPLETED', 'CANCELLED', 'FAILED']);
const POLL_MS = 500;

export async function redrive(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      source: { type: 'string' },
      destination: { type: 'string' },
      rate: { type: 'string' },
      filter: { type: 'string', multiple: true },
      id: { type: 'string', multiple: true },
      search: { type: 'string' },
      'dry-run': { type: 'boolean' },
      yes: { type: 'boolean', short: 'y' },
      hold: { type: 'string' },
      endpoint: { type: 'string' },
      region: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${REDRIVE_HELP}\n`);
    return 0;
  }
  if (!values.source) throw new UsageError('--source is required');
  const rate = integerFlag('rate', values.rate, 1, 500);
  const hold = integerFlag('hold', values.hold, 10, 43_200) ?? 300;
  let filters: MessageFilter[];
  try {
    filters = parseFilters(values.filter ?? []);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const endpoint = values.endpoint ?? DEFAULT_ENDPOINT;
  const local = endpoint !== 'aws';
  const selected = values.id !== undefined || values.search !== undefined;
  if (!selected && (values['dry-run'] || values.yes))
    throw new UsageError('--dry-run and --yes go with --id or --search');
  if (selected) {
    if (!local) throw new UsageError('--id and --search need a Sluice server; against AWS, use --filter');
    let stopping = false;
    const release = onInterrupt(() => {
      stopping = true;
    });
    try {
      return await changeSelection({
        endpoint: endpoint.replace(/\/+$/, ''),
        queue: queueReference(values.source).name,
        action: 'replay',
        criteria: {
          ids: values.id ?? [],
          text: values.search,
          filters: filters.map((filter) => filter.text),
        },
        destination: values.destination && queueReference(values.destination).name,
        rate: rate ?? MOVE_TASK_DEFAULTS.defaultRate,
        dryRun: values['dry-run'] ?? false,
        yes: values.yes ?? false,
        json: false,
        stopping: () => stopping,
      });
    } catch (error) {
      throw explainRefused(error, endpoint);
    } finally {
      release();
    }
  }
  const sqs = new SQSClient({
    region: values.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...(local ? { endpoint } : {}),
    // Names the CLI, as SDKs name themselves; the audit trail goes by how a request was authenticated.
    customUserAgent: CLI_USER_AGENT,
    // Sluice takes any credentials unless it was configured with keys; the SDK insists on some.
    ...(local && !process.env.AWS_ACCESS_KEY_ID
      ? { credentials: { accessKeyId: 'sluice', secretAccessKey: 'sluice' } }
      : {}),
  });
  const queues = new QueueLookup(sqs);
  try {
    const source = await queues.resolve(values.source);
    const destination = values.destination ? await queues.resolve(values.destination) : undefined;
    if (filters.length === 0) return await runMoveTask(sqs, source, destination, rate);
    return await runFilteredMove(sqs, queues, {
      source,
      destination,
      filters,
      hold,
      rate: rate ?? MOVE_TASK_DEFAULTS.defaultRate,
    });
  } catch (error) {
    throw local ? explainRefused(error, endpoint) : error;
  }
}

async function runMoveTask(
  sqs: SQSClient,
  source: QueueRef,
  destination: QueueRef | undefined,
  rate: number | undefined,
): Promise<number> {
  const { TaskHandle } = await sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: source.arn,
      DestinationArn: destination?.arn,
      MaxNumberOfMessagesPerSecond: rate,
    }),
  );
  const where = destination ? `to ${destination.arn}` : 'back to their source queues';
  process.stderr.write(`move task started: ${source.arn} ${where}${rate ? ` at ${rate} msg/s` : ''}\n`);
  const progress = new ProgressLine(process.stderr, 'moved');
  // The loop below keeps following the task until the server reports it CANCELLED.
  const release = onInterrupt(() => {
    sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle })).catch((error: unknown) => {
      process.stderr.write(`cancel failed: ${(error as Error).message}\n`);
    });
  });
  try {
    for (;;) {
      const { Results } = await sqs.send(
        new ListMessageMoveTasksCommand({ SourceArn: source.arn, MaxResults: 1 }),
      );
      const task: ListMessageMoveTasksResultEntry | undefined = Results?.[0];
      if (!task) throw new Error('the move task is not listed');
      const moved = task.ApproximateNumberOfMessagesMoved ?? 0;
      const toMove = task.ApproximateNumberOfMessagesToMove ?? moved;
      progress.update(moved, toMove, task.Status === 'RUNNING' ? '' : (task.Status ?? ''));
      if (task.Status && TERMINAL.has(task.Status)) {
        const summary = `${task.Status}: ${moved} of ${countOf(toMove, 'message')} moved`;
        progress.finish(task.FailureReason ? `${summary} (${task.FailureReason})` : summary);
        if (task.Status === 'COMPLETED') return 0;
        return task.Status === 'CANCELLED' ? 130 : 1;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    release();
  }
}

interface FilteredMove {
  source: QueueRef;
  destination: QueueRef | undefined;
  filters: MessageFilter[];
  hold: number;
  rate: number;
}

/** Receives every visible message once, moves the matching ones at the rate, and releases the others. */
async function runFilteredMove(sqs: SQSClient, queues: QueueLookup, move: FilteredMove): Promise<number> {
  const { source, filters, hold } = move;
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: source.url, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  const total = Number(attributes.Attributes?.ApproximateNumberOfMessages ?? 0);
  process.stderr.write(
    `scanning ${countOf(total, 'message')} of ${source.arn} for ${filters.map((f) => f.text).join(' and ')}\n`,
  );
  const progress = new ProgressLine(process.stderr, 'scanned');
  const held = new Map<string, string>(); // message id -> receipt handle of the messages left in the DLQ
  const seen = new Set<string>();
  let moved = 0;
  let skipped = 0;
  let stopping = false;
  const release = onInterrupt(() => {
    stopping = true;
  });
  // Non-matching messages stay hidden while the scan runs, so it sees each message once; renew them.
  const renewal = setInterval(
    () => void changeVisibility(sqs, source.url, [...held.values()], hold),
    (hold * 1000) / 2,
  );
  const interval = 1000 / move.rate;
  let nextMoveAt = Date.now();
  try {
    while (!stopping) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: source.url,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          VisibilityTimeout: hold,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const fresh = Messages.filter((message) => !seen.has(message.MessageId!));
      if (fresh.length === 0) break;
      for (const message of fresh) {
        seen.add(message.MessageId!);
        if (stopping || !matchesAll(filters, message)) {
          held.set(message.MessageId!, message.ReceiptHandle!);
          continue;
        }
        const target = move.destination ?? (await originOf(queues, message));
        if (!target) {
          skipped++;
          held.set(message.MessageId!, message.ReceiptHandle!);
          continue;
        }
        const wait = nextMoveAt - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        nextMoveAt = Math.max(Date.now(), nextMoveAt) + interval;
        await sendCopy(sqs, target, message);
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: source.url, ReceiptHandle: message.ReceiptHandle }),
        );
        moved++;
        progress.update(seen.size, Math.max(total, seen.size), `${moved} moved`);
      }
      progress.update(seen.size, Math.max(total, seen.size), `${moved} moved`);
    }
  } finally {
    clearInterval(renewal);
    release();
    await changeVisibility(sqs, source.url, [...held.values()], 0);
  }
  const note = skipped > 0 ? `; ${skipped} matching messages had no source queue (give --destination)` : '';
  progress.finish(
    `${stopping ? 'STOPPED' : 'DONE'}: ${moved} moved, ${seen.size - moved} left in the queue${note}`,
  );
  if (stopping) return 130;
  return skipped > 0 ? 1 : 0;
}

/** A redriven message is a new message with the same body and attributes, as a move task makes it. */
async function sendCopy(sqs: SQSClient, target: QueueRef, message: Message): Promise<void> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: target.url,
      MessageBody: message.Body,
      MessageAttributes: message.MessageAttributes,
      ...(target.fifo
        ? {
            MessageGroupId: message.Attributes?.MessageGroupId ?? 'redrive',
            // A resend after a crash within 5 minutes is then dropped as a duplicate.
            MessageDeduplicationId: message.MessageId,
          }
        : {}),
    }),
  );
}

async function originOf(queues: QueueLookup, message: Message): Promise<QueueRef | undefined> {
  const arn = message.Attributes?.DeadLetterQueueSourceArn;
  return arn ? queues.resolve(arn).catch(() => undefined) : undefined;
}

async function changeVisibility(sqs: SQSClient, queueUrl: string, handles: string[], seconds: number) {
  for (let i = 0; i < handles.length; i += 10) {
    await sqs
      .send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: handles.slice(i, i + 10).map((ReceiptHandle, j) => ({
            Id: String(j),
            ReceiptHandle,
            VisibilityTimeout: seconds,
          })),
        }),
      )
      .catch((error: unknown) =>
        process.stderr.write(`visibility change failed: ${(error as Error).message}\n`),
      );
  }
}

/** Queue names, URLs and ARNs to URL, ARN and type, looked up once each. */
class QueueLookup {
  private readonly known = new Map<string, Promise<QueueRef>>();

  constructor(private readonly sqs: SQSClient) {}

  resolve(reference: string): Promise<QueueRef> {
    let found = this.known.get(reference);
    if (!found) {
      found = this.lookUp(reference);
      this.known.set(reference, found);
    }
    return found;
  }

  private async lookUp(text: string): Promise<QueueRef> {
    const reference = queueReference(text);
    const url =
      reference.url ??
      (
        await this.sqs.send(
          new GetQueueUrlCommand({ QueueName: reference.name, QueueOwnerAWSAccountId: reference.accountId }),
        )
      ).QueueUrl!;
    const { Attributes = {} } = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn', 'FifoQueue'] }),
    );
    return { url, arn: Attributes.QueueArn!, fifo: Attributes.FifoQueue === 'true' };
  }
}
