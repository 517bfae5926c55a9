import { parseArgs } from 'node:util';
import { HISTORY_RANGES, type HistoryRange } from '../core/queue-history.ts';
import { integerFlag, UsageError } from '../shared/command-flags.ts';
import type { QueueSample } from '../store/contract.ts';
import { DEFAULT_ENDPOINT, explainRefused, queueReference, serverOf } from './endpoint.ts';
import { getJson } from './sluice-api.ts';

export const STATS_HELP = `sluice stats — a queue's recent history, one row per 10 s sample (newest last)

Usage:
  sluice stats QUEUE [--range 1h|24h] [--last N] [--endpoint URL] [--json]
  sluice stats --topic TOPIC [--endpoint URL] [--json]

QUEUE is a queue's name, URL or ARN; TOPIC an SNS topic's name or ARN.

With --topic: the topic's HTTP/HTTPS subscriptions (GET /api/sns/http-subscriptions), each with its state
(confirmed or pending confirmation), its deliveries waiting (pending: not tried yet; failing: tried and
failed) and, for each of those (the next 50), its failed attempts, last error and next attempt. Retry or drop
one from the console's topics page.

Reads the server's built-in history (GET /api/history), kept for 24 h, and lists the queue's Lambda event
source mappings (GET /api/event-source-mappings) and the SNS subscriptions delivering into it (GET
/api/sns/subscriptions, each marked when on AWS it would deliver nothing: the queue's policy does not allow
the topic) after the table. Over --range 24h, samples are merged
into 4-minute rows: counts are each row's last, sent/received/deleted/empty its sums.

Options:
  --range R        1h (default, every 10 s sample) or 24h (4-minute rows)
  --last N         show only the newest N rows, 1-10000 (default 30)
  --endpoint URL   the Sluice server (default: the queue URL's server, else ${DEFAULT_ENDPOINT})
  --json           print the rows as JSON instead of a table
  -h, --help       this text

With AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set (and AWS_REGION, default us-east-1), the requests are
signed with that key, as a server with credentials requires.

Exit status: 0 on success, 1 when no server answers at the endpoint or it has no such queue, 2 on a usage
error.`;

const COLUMNS: Array<{ title: string; value: (s: QueueSample) => string }> = [
  { title: 'time (UTC)', value: (s) => new Date(s.at).toISOString().slice(0, 19).replace('T', ' ') },
  { title: 'visible', value: (s) => String(s.visible) },
  { title: 'in flight', value: (s) => String(s.notVisible) },
  { title: 'delayed', value: (s) => String(s.delayed) },
  { title: 'oldest s', value: (s) => String(s.oldestAgeSeconds) },
  { title: 'sent', value: (s) => String(s.sent) },
  { title: 'received', value: (s) => String(s.received) },
  { title: 'deleted', value: (s) => String(s.deleted) },
  { title: 'empty rcv', value: (s) => String(s.emptyReceives) },
];

/** The samples as a right-aligned text table. */
export function statsTable(samples: readonly QueueSample[]): string {
  const cells = [COLUMNS.map((c) => c.title), ...samples.map((s) => COLUMNS.map((c) => c.value(s)))];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) => row.map((cell, i) => cell.padStart(widths[i]!)).join('  ')).join('\n');
}

/** An event source mapping as /api/event-source-mappings lists it. */
interface MappingRow {
  UUID: string;
  EventSourceArn: string;
  FunctionArn: string;
  State: string;
  BatchSize: number;
  Pollers: number;
}

/** The queue's event source mappings: function, state, batch size, pollers at work on the server. */
/** An SNS subscription into the queue, as /api/sns/subscriptions lists it. */
interface SubscriptionRow {
  subscriptionArn: string;
  topic: string;
  filterPolicy: string | undefined;
  rawMessageDelivery: boolean;
  awsWouldDeliver: boolean;
}

/** The topics delivering into the queue, each marked when AWS would deliver nothing. */
export function subscriptionsTable(subscriptions: readonly SubscriptionRow[]): string {
  const cells = [
    ['topic', 'raw', 'filter policy', 'on AWS'],
    ...subscriptions.map((s) => [
      s.topic,
      s.rawMessageDelivery ? 'yes' : 'no',
      s.filterPolicy ?? '-',
      s.awsWouldDeliver ? 'delivers' : "delivers nothing: the queue's policy does not allow the topic",
    ]),
  ];
  return columns(cells);
}

export function mappingsTable(mappings: readonly MappingRow[]): string {
  const cells = [
    ['uuid', 'function', 'state', 'batch', 'pollers'],
    ...mappings.map((m) => [
      m.UUID,
      m.FunctionArn.replace(/^.*:function:/, ''),
      m.State,
      String(m.BatchSize),
      String(m.Pollers),
    ]),
  ];
  return columns(cells);
}

/** Runs `sluice stats`; returns the exit status. Writes the table (or JSON) to `out`. */
export async function stats(args: string[], out: (text: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    options: {
      range: { type: 'string' },
      last: { type: 'string' },
      endpoint: { type: 'string' },
      json: { type: 'boolean' },
      topic: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    out(`${STATS_HELP}\n`);
    return 0;
  }
  if (values.topic !== undefined) {
    if (positionals.length > 0 || values.range !== undefined || values.last !== undefined)
      throw new UsageError('--topic takes no QUEUE, --range or --last');
    return topicStats(values.topic, values.endpoint ?? DEFAULT_ENDPOINT, values.json === true, out);
  }
  if (positionals.length !== 1) throw new UsageError('give exactly one queue (name, URL or ARN)');
  const given = positionals[0]!;
  const reference = queueReference(given);
  const range = values.range ?? '1h';
  if (!(range in HISTORY_RANGES)) throw new UsageError('--range must be 1h or 24h');
  const last = integerFlag('last', values.last, 1, 10_000) ?? 30;
  const endpoint = serverOf(reference, values.endpoint);
  try {
    const { queues, accountId } = await getJson<{
      queues: Array<{ name: string; arn: string }>;
      accountId: string;
    }>(`${endpoint}/api/overview?queue=${encodeURIComponent(reference.name)}`);
    const queue = queues.find((q) => q.name === reference.name);
    const sameAccount = reference.accountId === undefined || reference.accountId === accountId;
    if (!queue || !sameAccount || (reference.arn !== undefined && reference.arn !== queue.arn))
      throw new Error(`no queue named "${given}" at ${endpoint}`);
    const history = await getJson<{ samples: QueueSample[] }>(
      `${endpoint}/api/history?queue=${encodeURIComponent(queue.name)}&range=${range as HistoryRange}`,
    );
    const rows = history.samples.slice(-last);
    const { mappings } = await getJson<{ mappings: MappingRow[] }>(`${endpoint}/api/event-source-mappings`);
    const ofQueue = mappings.filter((mapping) => mapping.EventSourceArn === queue.arn);
    const { subscriptions } = await getJson<{ subscriptions: SubscriptionRow[] }>(
      `${endpoint}/api/sns/subscriptions?queue=${encodeURIComponent(queue.name)}`,
    );
    if (values.json) out(`${JSON.stringify(rows, null, 2)}\n`);
    else {
      if (rows.length === 0) out(`${queue.name}: no samples yet (the server takes one every 10 s)\n`);
      else out(`${statsTable(rows)}\n`);
      if (ofQueue.length > 0) out(`\nevent source mappings:\n${mappingsTable(ofQueue)}\n`);
      if (subscriptions.length > 0) out(`\nSNS subscriptions:\n${subscriptionsTable(subscriptions)}\n`);
    }
    return 0;
  } catch (error) {
    throw explainRefused(error, endpoint);
  }
}

/** An HTTP/HTTPS subscription as /api/sns/http-subscriptions lists it (server/sns-operations-api.ts). */
interface HttpSubscriptionRow {
  subscriptionArn: string;
  endpoint: string;
  state: 'PendingConfirmation' | 'Confirmed';
  pending: number;
  failing: number;
  more: boolean;
  deliveries: Array<{
    messageId: string;
    attempts: number;
    lastError: string | undefined;
    nextAttemptAt: number;
  }>;
}

const utc = (at: number) => new Date(at).toISOString().slice(0, 19).replace('T', ' ');

/** The rows as left-aligned columns. */
function columns(cells: string[][]): string {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Each HTTP/HTTPS subscription's line, then its waiting deliveries, indented. */
export function httpSubscriptionsText(subscriptions: readonly HttpSubscriptionRow[]): string {
  return subscriptions
    .map((s) => {
      const head = `${s.endpoint}  ${s.state === 'Confirmed' ? 'confirmed' : 'pending confirmation'}  ${s.pending} pending, ${s.failing} failing${s.more ? ' (the next 50 shown)' : ''}\n  ${s.subscriptionArn}`;
      if (s.deliveries.length === 0) return head;
      const table = columns([
        ['message', 'failed', 'last error', 'next attempt (UTC)'],
        ...s.deliveries.map((d) => [
          d.messageId,
          String(d.attempts),
          d.lastError ?? '-',
          utc(d.nextAttemptAt),
        ]),
      ]);
      return `${head}\n${table.replace(/^/gm, '  ')}`;
    })
    .join('\n\n');
}

async function topicStats(
  given: string,
  endpoint: string,
  json: boolean,
  out: (text: string) => void,
): Promise<number> {
  const topic = given.startsWith('arn:') ? given.slice(given.lastIndexOf(':') + 1) : given;
  if (topic === '') throw new UsageError('--topic needs a topic name or ARN');
  try {
    const answer = await getJson<{ subscriptions: HttpSubscriptionRow[] }>(
      `${endpoint}/api/sns/http-subscriptions?topic=${encodeURIComponent(topic)}`,
    );
    if (json) out(`${JSON.stringify(answer.subscriptions, null, 2)}\n`);
    else if (answer.subscriptions.length === 0)
      out(`${topic}: no HTTP/HTTPS subscriptions (or no such topic the key may see)\n`);
    else out(`${httpSubscriptionsText(answer.subscriptions)}\n`);
    return 0;
  } catch (error) {
    throw explainRefused(error, endpoint);
  }
}
