import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, sep } from 'node:path';
import { parseQueueArn } from '#toolkit/arn';
import type { AlarmState, DlqAlarms } from '../core/dlq-alarms.ts';
import { errors } from '../core/errors.ts';
import { attributeCatalog } from '../core/queue-attributes.ts';
import type { QueueDirectory } from '../core/queue-directory.ts';
import {
  ageSeconds,
  bucketSamples,
  HISTORY_RANGES,
  type HistoryDependencies,
  type HistoryRange,
  queueHistory,
  SAMPLE_PERIOD_MS,
  samplesSince,
} from '../core/queue-history.ts';
import { parseRedrivePolicy } from '../core/redrive-policy.ts';
import { readJsonObject } from '../shared/json-object.ts';
import type { QueueRecord, QueueSample } from '../store/contract.ts';
import { type ConsoleChange, errorPage, type Page, type PageViewer } from './page.ts';

/** Most points of a queue's sparkline before the count now: an hour at one a minute, or less at one a sample. */
const SPARKLINE_POINTS = 60;
/** The rates beside a queue's counts are over the samples of the last minute. */
const RATE_WINDOW_MS = 60_000;

/**
 * A queue's visible messages over its sampled life, an hour at most: a fresh queue's line is drawn from its
 * 10 s samples (a minute-long step would leave it one point), an older one's from coarser steps.
 */
export interface Sparkline {
  /** Seconds between points. */
  stepSeconds: number;
  /** Seconds from the first sample to now. */
  spanSeconds: number;
  /** Oldest first, one per step; the last is the count now. */
  visible: number[];
}

/** What clients did to a queue per second over the last minute's samples (`windowSeconds` of them). */
export interface RecentRates {
  windowSeconds: number;
  sent: number;
  received: number;
  deleted: number;
  emptyReceives: number;
}

export interface QueueOverview {
  name: string;
  arn: string;
  fifo: boolean;
  visible: number;
  notVisible: number;
  delayed: number;
  oldestAgeSeconds: number;
  /** Name of the queue its RedrivePolicy sends to. */
  deadLetterQueue: string | undefined;
  /** Names of the queues whose RedrivePolicy sends here. */
  deadLetterSources: string[];
  alarm: { state: 'OK' | 'ALARM'; silenced: boolean; since: number | undefined } | undefined;
  sparkline: Sparkline;
}

/**
 * Most queues the overview describes in one answer. Each costs about 600 bytes of JSON (counts plus an hour of
 * sparkline), so 250 keep the answer well under the console's 200 KiB budget; the console narrows the list with
 * a name filter, which is applied here, before any count is read.
 */
export const OVERVIEW_LIMIT = 250;

export interface OverviewQuery {
  /** Only queues whose name contains this text (case-insensitive). */
  nameContains?: string;
  /** Only the queue of exactly this name (a queue page). */
  name?: string;
}

export interface Overview {
  queues: QueueOverview[];
  /** How many queues matched the query; more than `queues.length` when the answer was cut at the limit. */
  matching: number;
}

/** GET /api/overview's answer: the overview, with the server's time, account and ARN prefix, and the viewer's key. */
export interface OverviewAnswer extends Overview {
  now: number;
  accountId: string;
  /** Every queue's ARN is this prefix and its name. */
  queueArnPrefix: string;
  limit: number;
  signedInAs: string | undefined;
}

/** GET /api/history's answer: a queue's samples over the range, and its rates over the last minute. */
export interface HistoryAnswer {
  queue: string;
  range: HistoryRange;
  now: number;
  samples: QueueSample[];
  rates: RecentRates | undefined;
}

/** GET /alarms's answer: the alarm of every watched dead-letter queue the viewer may read. */
export interface AlarmsAnswer {
  alarms: AlarmState[];
}

/** GET /api/attributes's answer: which queue attributes exist and how they may be set. */
export type AttributesAnswer = ReturnType<typeof attributeCatalog>;

/** What the console's read-only pages read: time, the queues, their history, and the account. */
export interface ConsoleReads extends HistoryDependencies {
  readonly accountId: string;
  readonly queues: HistoryDependencies['queues'] & Pick<QueueDirectory, 'queueArn'>;
}

/**
 * The queues matching `query` that `viewer` may read (at most OVERVIEW_LIMIT, by name) with counts, DLQ links,
 * alarm and sparkline.
 */
export async function overview(
  reads: ConsoleReads,
  alarms: AlarmState[],
  viewer: PageViewer,
  query: OverviewQuery = {},
): Promise<Overview> {
  const now = reads.clock.now();
  const needle = query.nameContains?.toLowerCase();
  const matches: QueueRecord[] = [];
  // DLQ links are read from every readable queue's RedrivePolicy (in memory), so a DLQ names all its sources
  // even when they fall outside the filter.
  const sources = new Map<string, string[]>();
  const deadLetterQueueOf = new Map<string, string>();
  for await (const queue of reads.queues.allQueues()) {
    if (!(await viewer.mayRead(queue.name))) continue;
    const policy = queue.attributes.RedrivePolicy;
    const deadLetterQueue = policy
      ? parseQueueArn(parseRedrivePolicy(policy).deadLetterTargetArn)?.name
      : undefined;
    if (deadLetterQueue) {
      deadLetterQueueOf.set(queue.name, deadLetterQueue);
      sources.set(deadLetterQueue, [...(sources.get(deadLetterQueue) ?? []), queue.name]);
    }
    if (query.name !== undefined && queue.name !== query.name) continue;
    if (needle && !queue.name.toLowerCase().includes(needle)) continue;
    matches.push(queue);
  }
  matches.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const queues: QueueOverview[] = [];
  for (const queue of matches.slice(0, OVERVIEW_LIMIT)) {
    const counts = await reads.queues.counts(queue, now);
    const alarm = alarms.find((a) => a.queue === queue.name);
    const samples = await samplesSince(reads, queue.name, now - HISTORY_RANGES['1h']);
    queues.push({
      name: queue.name,
      arn: reads.queues.queueArn(queue.name),
      fifo: queue.fifo,
      visible: counts.visible,
      notVisible: counts.notVisible,
      delayed: counts.delayed,
      oldestAgeSeconds: ageSeconds(counts.oldestSentAt, now),
      deadLetterQueue: deadLetterQueueOf.get(queue.name),
      deadLetterSources: sources.get(queue.name) ?? [],
      alarm: alarm && { state: alarm.state, silenced: alarm.silenced, since: alarm.since },
      sparkline: sparklineOf(samples, counts.visible, now),
    });
  }
  return { queues, matching: matches.length };
}

function sparklineOf(samples: readonly QueueSample[], visibleNow: number, now: number): Sparkline {
  const spanMs = now - (samples[0]?.at ?? now);
  const stepMs = Math.max(1, Math.ceil(spanMs / SPARKLINE_POINTS / SAMPLE_PERIOD_MS)) * SAMPLE_PERIOD_MS;
  return {
    stepSeconds: stepMs / 1000,
    spanSeconds: Math.round(spanMs / 1000),
    visible: [...bucketSamples(samples, stepMs).map((sample) => sample.visible), visibleNow],
  };
}

/** Rates per second over `samples`, or undefined when there are none yet. */
function ratesOf(samples: readonly QueueSample[]): RecentRates | undefined {
  const seconds = samples.reduce((sum, sample) => sum + sample.periodMs, 0) / 1000;
  if (seconds === 0) return undefined;
  const perSecond = (count: (sample: QueueSample) => number) =>
    samples.reduce((sum, sample) => sum + count(sample), 0) / seconds;
  return {
    windowSeconds: seconds,
    sent: perSecond((sample) => sample.sent),
    received: perSecond((sample) => sample.received),
    deleted: perSecond((sample) => sample.deleted),
    emptyReceives: perSecond((sample) => sample.emptyReceives),
  };
}

const isHistoryRange = (range: string): range is HistoryRange => range in HISTORY_RANGES;

export function json(value: unknown, status = 200): Page {
  return { status, contentType: 'application/json', body: JSON.stringify(value) };
}

/**
 * GET /api/overview?filter=TEXT|queue=NAME, /api/history?queue=NAME&range=1h|24h (with the last minute's
 * rates), and /api/attributes (which queue attributes exist and how they may be set, so the console's forms
 * follow the server's one list). `signedInAs` is the viewer's key, when credentials are configured.
 */
export function consoleApi(
  reads: ConsoleReads,
  alarmStates: () => Promise<AlarmState[]>,
): Record<string, (url: URL, viewer: PageViewer) => Promise<Page>> {
  return {
    '/api/overview': async (url, viewer) =>
      json({
        now: reads.clock.now(),
        accountId: reads.accountId,
        queueArnPrefix: reads.queues.queueArn(''),
        limit: OVERVIEW_LIMIT,
        signedInAs: viewer.accessKeyId,
        ...(await overview(reads, await alarmStates(), viewer, {
          nameContains: url.searchParams.get('filter') ?? undefined,
          name: url.searchParams.get('queue') ?? undefined,
        })),
      } satisfies OverviewAnswer),
    '/api/attributes': async () => json(attributeCatalog()),
    '/api/history': async (url, viewer) => {
      const queue = url.searchParams.get('queue');
      const range = url.searchParams.get('range') ?? '1h';
      if (!queue) return json({ error: 'queue is required' }, 400);
      if (!(await viewer.mayRead(queue)))
        return json({ error: `${viewer.accessKeyId} may not read ${queue}` }, 403);
      if (!isHistoryRange(range)) return json({ error: 'range must be 1h or 24h' }, 400);
      const samples = await queueHistory(reads, queue, range);
      const now = reads.clock.now();
      // Samples taken within the last minute, each covering the period before it.
      const recent = await samplesSince(reads, queue, now - RATE_WINDOW_MS + 1);
      return json({ queue, range, now, samples, rates: ratesOf(recent) } satisfies HistoryAnswer);
    },
  };
}

/**
 * POST /api/alarms/silence `{"queue": NAME, "silenced": true|false}`: silences a DLQ's alarm, or lifts the
 * silence, for every node and across restarts. The viewer needs SetQueueAttributes on the queue.
 */
export function consoleChanges(
  service: { queues: QueueDirectory },
  alarms: DlqAlarms,
): Record<string, ConsoleChange> {
  return {
    '/api/alarms/silence': async (body, viewer) => {
      const reading = readJsonObject(body);
      // Any JSON but an object reads as one without members, so gets the missing member's error.
      if ('problem' in reading && reading.problem === 'not JSON')
        return errorPage(
          errors.serialization('The body must be JSON: {"queue": NAME, "silenced": true|false}.'),
        );
      const { queue: name, silenced } = 'object' in reading ? reading.object : {};
      if (typeof name !== 'string' || name === '') return errorPage(errors.missingParameter('queue'));
      if (typeof silenced !== 'boolean')
        return errorPage(errors.invalidParameterValue('silenced must be true or false.'));
      if (!(await viewer.mayConfigure(name)))
        return errorPage(
          errors.accessDenied(
            `User: ${viewer.accessKeyId} is not authorized to perform: sqs:SetQueueAttributes on resource: ${service.queues.queueArn(name)}`,
          ),
        );
      const queue = await service.queues.queueByName(name);
      if (!queue) return errorPage(errors.queueDoesNotExist());
      return json({ queue: name, ...(await alarms.setSilence(queue, silenced, viewer.accessKeyId)) });
    },
  };
}

const CONSOLE_FOLDER = new URL('../../console/', import.meta.url);
const INDEX = { file: 'index.html', contentType: 'text/html; charset=utf-8' };
const FAVICON = { file: 'favicon.svg', contentType: 'image/svg+xml' };
/** The console's page, at its addresses; its other files are served by their path in its folder. */
const CONSOLE_ROUTES: Record<string, { file: string; contentType: string }> = {
  '/console': INDEX,
  '/console/': INDEX,
  // Where a refused sign-in leaves the browser: reloading it shows the console, or the form again.
  '/console/login': INDEX,
  // Browsers ask for it on any page they show, /metrics too.
  '/favicon.ico': FAVICON,
};
/** The types of the files served by their path: the console's modules, stylesheet and icon. */
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The console runs only its own files and talks only to its server: no inline script or style for an
 * injected value to use, no framing (clickjacking of its purge and delete buttons), no type sniffing.
 */
const consoleHeaders = (styleSource: string) => ({
  'content-security-policy':
    `default-src 'none'; script-src 'self'; style-src ${styleSource}; img-src 'self'; connect-src 'self'; ` +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});
const CONSOLE_HEADERS = consoleHeaders("'self'");

/**
 * The console's committed static files (packages/server/console), read once at start: there is no build
 * step. Its modules, stylesheet and icon are served under /console/ by their path in the folder
 * (/console/pages/queue.js), its page only at its routes.
 */
export function consolePages(): Record<string, () => Page> {
  const files = { ...CONSOLE_ROUTES };
  for (const found of readdirSync(CONSOLE_FOLDER, { recursive: true, encoding: 'utf8' })) {
    const contentType = CONTENT_TYPES[extname(found)];
    const file = found.split(sep).join('/');
    if (contentType) files[`/console/${file}`] = { file, contentType };
  }
  const pages: Record<string, () => Page> = {};
  for (const [path, { file, contentType }] of Object.entries(files)) {
    const body = readFileSync(new URL(file, CONSOLE_FOLDER));
    pages[path] = () => ({ contentType, body, headers: CONSOLE_HEADERS });
  }
  return pages;
}

const LOGIN_PAGE = readFileSync(new URL('login.html', CONSOLE_FOLDER), 'utf8');
/**
 * The sign-in form carries its style inline (the console's stylesheet is a page behind the sign-in); the
 * policy allows that one style by its hash, nothing else inline.
 */
const LOGIN_HEADERS = consoleHeaders(
  `'sha256-${createHash('sha256')
    .update(/<style>([\s\S]*?)<\/style>/.exec(LOGIN_PAGE)?.[1] ?? '')
    .digest('base64')}'`,
);

/** The console's sign-in form (served in place of any console page until a session exists), with a message. */
export function loginPage(status: number, message: string): Page {
  const escaped = message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const body = LOGIN_PAGE.replace(
    '<!--message-->',
    message === '' ? '' : `<p class="error" role="alert">${escaped}</p>`,
  );
  return { status, contentType: 'text/html; charset=utf-8', body, headers: LOGIN_HEADERS };
}
