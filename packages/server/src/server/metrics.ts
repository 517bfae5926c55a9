import { Counter, Gauge, Registry } from 'prom-client';
import { isActionName } from '../core/actions.ts';
import type { AlarmState } from '../core/dlq-alarms.ts';
import type { MappingObserver } from '../core/event-source/poller.ts';
import type { LongPoll } from '../core/long-poll.ts';
import type { ActivityTotals, QueueActivity } from '../core/queue-activity.ts';
import { type CountsDependencies, QueueCounts } from '../core/queue-counts.ts';
import { ageSeconds, SAMPLE_PERIOD_MS } from '../core/queue-history.ts';
import type { ReceiptRules } from '../core/receipt-rules.ts';
import type { SnsActivity } from '../core/sns/sns-activity.ts';
import { isSnsAction } from '../core/sns/sns-dispatch.ts';
import type { MessageCounts } from '../store/contract.ts';
import { mappingMetrics } from './mapping-metrics.ts';
import { LabelledHistogram, labelValue, PairCounter } from './metric-families.ts';

/** Request latency buckets in seconds: fast actions in the low ms, long polls up to 20 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];
/** Publication to 2xx of an HTTP/HTTPS delivery: a first attempt, then AWS's default retries (20 s apart) and longer policies. */
const HTTP_DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];
/** SentMessageSize buckets in bytes, up to SQS's 1 MiB message. */
const SIZE_BUCKETS = [64, 256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576];
/** Scrapes within this long of a render get that render: a burst of scrapers costs one. */
export const MIN_RENDER_INTERVAL_MS = 1000;
/**
 * Counts read for every queue at once (by the history sampler every 10 s, on the lease holder) older than
 * this are read again by the next render: on a node without the lease, at most once per this interval.
 */
const FULL_READ_MAX_AGE_MS = 2 * SAMPLE_PERIOD_MS;
const MAX_TOUCHED = 10_000;

export interface ServerMetrics {
  /** Prometheus text exposition of every metric. */
  render(): Promise<string>;
  readonly contentType: string;
  /** Called by the HTTP front once per answered SQS request. */
  observeRequest(action: string, status: number, seconds: number): void;
  /** Told of every event source mapping's invocation (mapping-metrics.ts). */
  readonly mappings: MappingObserver;
}

/**
 * /metrics: per queue, CloudWatch's SQS metrics under their CloudWatch names (prefixed `sluice_`, with a
 * `queue` label) and the SentMessageSize histogram; request counts and latencies per action; stale receipt
 * handles refused, per queue and action; the long polls waiting; and the DLQ alarm states.
 *
 * A scrape reads no queue's counts but those this node's clients sent to, received from or deleted from
 * since the last render: the rest come from `counts`, which the history sampler reads every 10 s. Concurrent
 * scrapes share one render, and one made less than MIN_RENDER_INTERVAL_MS ago (`monotonicNow`) is served again.
 */
export function createServerMetrics(
  service: {
    activity: QueueActivity;
    receiptRules: ReceiptRules;
    longPoll: Pick<LongPoll, 'waiting'>;
  } & CountsDependencies,
  alarmStates: () => Promise<AlarmState[]>,
  counts: QueueCounts = new QueueCounts(service),
  monotonicNow: () => number = () => performance.now(),
  sns?: Pick<SnsActivity, 'snapshot' | 'onDelivered'>,
): ServerMetrics {
  const registry = new Registry();
  if (sns) snsFamilies(registry, sns);
  processMemoryGauges(registry);
  // Queues whose counts this node's own clients changed since the last render; past MAX_TOUCHED (nobody
  // scraping while queues come and go), the next render reads them all instead.
  const touched = new Set<string>();
  let touchedTooMany = false;
  service.activity.onChange((queue) => {
    if (touched.size < MAX_TOUCHED) touched.add(queue);
    else touchedTooMany = true;
  });
  const refreshCounts = async () => {
    const readAt = counts.readAllAt;
    const names = [...touched];
    const readAll =
      touchedTooMany || readAt === undefined || service.clock.now() - readAt > FULL_READ_MAX_AGE_MS;
    touched.clear();
    touchedTooMany = false;
    if (readAll) await counts.readAll();
    else await counts.read(names);
  };

  // The families observed per request or per message, kept by hand (metric-families.ts).
  const sentSize = new LabelledHistogram(
    'sluice_SentMessageSize',
    'Size in bytes of messages sent (body and message attributes).',
    'queue',
    SIZE_BUCKETS,
  );
  service.activity.onSent((queue, _event, sizes) => {
    for (const size of sizes) sentSize.observe(queue, size);
  });
  // One series per HTTP/HTTPS subscription (the ARN names its topic): bounded by the subscriptions a
  // deployment makes, few next to its queues (docs/guide/sns.md, "Operating HTTP subscriptions").
  const httpLatency = new LabelledHistogram(
    'sluice_sns_http_delivery_seconds',
    "Time from a publication to its HTTP/HTTPS subscriber's 2xx, per subscription, on Sluice's clock (retries included).",
    'subscription',
    HTTP_DELIVERY_BUCKETS,
  );
  sns?.onDelivered((subscription, seconds) => httpLatency.observe(subscription, seconds));
  const requests = new PairCounter(
    'sluice_requests_total',
    'SQS API requests answered, by action and HTTP status.',
    ['action', 'status'],
  );
  const latency = new LabelledHistogram(
    'sluice_request_duration_seconds',
    'Time to answer SQS API requests, by action (long polls included).',
    'action',
    LATENCY_BUCKETS,
  );

  new Counter({
    name: 'sluice_stale_receipt_handles_total',
    help: 'Deletes and visibility changes refused because the receipt handle was stale (superseded by a later receive, or its visibility timeout lapsed): strict standard queues and FIFO queues.',
    labelNames: ['queue', 'action'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { queue, action, count } of service.receiptRules.refusedStale())
        this.inc({ queue, action }, count);
    },
  });
  new Gauge({
    name: 'sluice_long_polls_waiting',
    help: 'Receives waiting now (long polls), on every queue of this node.',
    registers: [registry],
    collect() {
      this.set(service.longPoll.waiting());
    },
  });
  new Gauge({
    name: 'sluice_dlq_alarm',
    help: '1 while the dead-letter queue holds more visible messages than its threshold.',
    labelNames: ['queue', 'silenced'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await alarmStates())
        this.set({ queue: s.queue, silenced: String(s.silenced) }, s.state === 'ALARM' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'sluice_dlq_visible_messages',
    help: 'Visible messages in the dead-letter queue at its last check.',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await alarmStates()) this.set({ queue: s.queue }, s.visible);
    },
  });

  let rendering: Promise<string> | undefined;
  let last: { text: string; at: number } | undefined;
  const render = async () => {
    const at = monotonicNow();
    await refreshCounts();
    const perQueue = queueFamiliesText(
      counts.latest,
      (queue) => service.activity.totals(queue),
      service.clock.now(),
    );
    const perRequest = [sentSize, requests, latency, ...(sns ? [httpLatency] : [])]
      .map((family) => family.text())
      .join('\n\n');
    const text = `${await registry.metrics()}\n${perRequest}\n${perQueue}`;
    last = { text, at };
    return text;
  };
  const mappings = mappingMetrics(registry);
  return {
    contentType: registry.contentType,
    mappings,
    render() {
      if (last && monotonicNow() - last.at < MIN_RENDER_INTERVAL_MS) return Promise.resolve(last.text);
      rendering ??= render().finally(() => {
        rendering = undefined;
      });
      return rendering;
    },
    observeRequest(action, status, seconds) {
      // A client can name any action; only real ones become label values, so the series stay bounded.
      const known = isActionName(action) || isSnsAction(action) ? action : 'unknown';
      requests.inc(known, String(status));
      latency.observe(known, seconds);
    },
  };
}

/**
 * SNS, since this node started: messages published per topic, and per subscription what became of them
 * (delivered into its queue, filtered out by its policy, failed: sent to its dead-letter queue or dropped).
 */
function snsFamilies(registry: Registry, sns: Pick<SnsActivity, 'snapshot'>): void {
  new Counter({
    name: 'sluice_sns_messages_published_total',
    help: 'Messages published to the SNS topic (duplicates within a FIFO topic window not counted).',
    labelNames: ['topic'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [topic, activity] of sns.snapshot()) this.inc({ topic }, activity.published);
    },
  });
  new Counter({
    name: 'sluice_sns_deliveries_total',
    help: "Publications per SNS subscription, by outcome: delivered, filtered (its filter policy did not match), failed (its queue refused it, or an HTTP/HTTPS endpoint failed the last retry: sent to the subscription's dead-letter queue, or dropped), retried (an HTTP/HTTPS attempt failed and will be retried), dropped (an operator dropped an HTTP/HTTPS delivery).",
    labelNames: ['topic', 'subscription', 'outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [topic, activity] of sns.snapshot())
        for (const [subscription, counts] of activity.subscriptions)
          for (const [outcome, count] of Object.entries(counts))
            this.inc({ topic, subscription, outcome }, count);
    },
  });
}

interface QueueFamily {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  value(counts: MessageCounts, totals: ActivityTotals, now: number): number;
}

/** CloudWatch's SQS metrics, per queue: the counts as last read, and this node's activity since it started. */
const QUEUE_FAMILIES: readonly QueueFamily[] = [
  {
    name: 'sluice_ApproximateNumberOfMessagesVisible',
    help: 'Messages available for retrieval.',
    type: 'gauge',
    value: (c) => c.visible,
  },
  {
    name: 'sluice_ApproximateNumberOfMessagesNotVisible',
    help: 'Messages in flight.',
    type: 'gauge',
    value: (c) => c.notVisible,
  },
  {
    name: 'sluice_ApproximateNumberOfMessagesDelayed',
    help: 'Messages delayed, not yet visible.',
    type: 'gauge',
    value: (c) => c.delayed,
  },
  {
    name: 'sluice_ApproximateAgeOfOldestMessage',
    help: 'Age in seconds of the oldest message in the queue (0 when empty).',
    type: 'gauge',
    value: (c, _t, now) => ageSeconds(c.oldestSentAt, now),
  },
  {
    name: 'sluice_NumberOfMessagesSent',
    help: 'Messages added to the queue.',
    type: 'counter',
    value: (_c, t) => t.sent,
  },
  {
    name: 'sluice_NumberOfMessagesReceived',
    help: 'Messages returned by ReceiveMessage.',
    type: 'counter',
    value: (_c, t) => t.received,
  },
  {
    name: 'sluice_NumberOfMessagesDeleted',
    help: 'Messages deleted.',
    type: 'counter',
    value: (_c, t) => t.deleted,
  },
  {
    name: 'sluice_NumberOfEmptyReceives',
    help: 'ReceiveMessage calls that returned no message.',
    type: 'counter',
    value: (_c, t) => t.emptyReceives,
  },
];

/**
 * The per-queue families in Prometheus's text format, written straight from the kept values: prom-client
 * setting and formatting them took most of a render (10,000 queues are 80,000 series).
 */
function queueFamiliesText(
  counts: ReadonlyMap<string, MessageCounts>,
  totalsOf: (queue: string) => ActivityTotals,
  now: number,
): string {
  const lines = QUEUE_FAMILIES.map((family) => [
    `# HELP ${family.name} ${family.help}`,
    `# TYPE ${family.name} ${family.type}`,
  ]);
  for (const [queue, queueCounts] of counts) {
    const totals = totalsOf(queue);
    const labels = `{queue="${labelValue(queue)}"} `;
    QUEUE_FAMILIES.forEach((family, i) => {
      lines[i]?.push(`${family.name}${labels}${family.value(queueCounts, totals, now)}`);
    });
  }
  return `${lines.map((family) => family.join('\n')).join('\n')}\n`;
}

/**
 * The server's memory under prom-client's default metric names, read at scrape time (npm run soak samples
 * them). Not collectDefaultMetrics(): its GC observer and event-loop monitor are never released, and an
 * embedding process may start many servers.
 */
function processMemoryGauges(registry: Registry): void {
  const gauge = (name: string, help: string, read: (m: NodeJS.MemoryUsage) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(process.memoryUsage()));
      },
    });
  gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', (m) => m.rss);
  gauge('nodejs_heap_size_total_bytes', 'V8 heap size in bytes.', (m) => m.heapTotal);
  gauge('nodejs_heap_size_used_bytes', 'V8 heap used in bytes.', (m) => m.heapUsed);
  gauge(
    'nodejs_external_memory_bytes',
    'Memory of C++ objects bound to JavaScript, in bytes.',
    (m) => m.external,
  );
}
