/**
 * How long one triage request can hold the server (issue 38): `/health`'s longest wait while a hostile search
 * runs, and while a replay and a delete scan a big dead-letter queue. The server is a real `sluice serve` from
 * the sources, on SQLite (a fresh directory) or on PostgreSQL (a fresh database); this process polls
 * `/health` one request at a time while the triage request runs, and prints the request's time and the
 * longest `/health` wait.
 *
 *   node --conditions=sluice-source --import tsx bench/triage-stall.ts [--store sqlite|postgres]
 *     [--messages 100000] [--body-length 32]
 */
import { randomUUID } from 'node:crypto';
import { commandFlags, modesOf, positive } from '../tools/flags.ts';
import { freshDatabase } from '../tools/postgres.ts';
import { removeDataDir, startServer } from '../tools/sluice-process.ts';
import { now, round } from './stats.ts';

const USAGE = `usage: node --conditions=sluice-source --import tsx bench/triage-stall.ts [flags]
  --store sqlite|postgres   the server's store (default sqlite)
  --messages N              messages in the queue a replay and a delete scan (default 100000)
  --body-length N           the hostile searches' body: N times "a", then "!" (default 32)
  --help                    this text`;
const options = commandFlags(
  USAGE,
  { store: { type: 'string' }, messages: { type: 'string' }, 'body-length': { type: 'string' } },
  (values) => ({
    store: modesOf(values.store ?? 'sqlite', ['sqlite', 'postgres'] as const)[0]!,
    messages: positive('messages', values.messages, 100_000),
    bodyLength: positive('body-length', values['body-length'], 32),
  }),
);

/** Patterns that take exponential or high polynomial time in a backtracking matcher, on "aaa…a!". */
const HOSTILE_PATTERNS = ['^(a+)+$', '^(a|a)*$', '^(a|aa)+$', '(a*)*b', '^(a?){25}a{25}$', '(.*a){20}!b'];
/**
 * What a linear matcher still lets cost most: the longest compile a search may ask for (`x{1000}` 9 times,
 * 9,002 instructions), and a pattern that defeats RE2's DFA at the per-message work cap (104
 * instructions over 160,000 characters).
 */
const BOUND_CASES: Array<[queue: string, pattern: string]> = [
  ['hostile', 'x{1000}'.repeat(9)],
  ['bounds', '[ab]*a[ab]{98}$'],
];
/** Every PICK_EVERY-th message of the big queue is one the replay picks: 1,000 of 100,000. */
const PICK_EVERY = 100;

const database = options.store === 'postgres' ? await freshDatabase('sluice_triage_stall') : undefined;
const server = await startServer({
  args: ['--log-level', 'warn', ...(database ? ['--store', database.url] : [])],
});
const endpoint = server.endpoint;

async function sqs(action: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `AmazonSQS.${action}`,
      authorization:
        'AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: JSON.stringify(input),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200) throw new Error(`${action}: ${JSON.stringify(answer)}`);
  return answer;
}

async function createQueue(name: string): Promise<string> {
  return (await sqs('CreateQueue', { QueueName: name })).QueueUrl as string;
}

/**
 * Runs `work`, polling /health one request after the other meanwhile; the work's time, the longest /health
 * wait, and what the work answered.
 */
async function measure(work: () => Promise<Response>) {
  let running = true;
  let longestWait = 0;
  let polls = 0;
  const poller = (async () => {
    while (running) {
      const started = now();
      await fetch(`${endpoint}/health`).then((response) => response.text());
      longestWait = Math.max(longestWait, now() - started);
      polls++;
    }
  })();
  const started = now();
  const response = await work();
  const text = await response.text();
  const ms = now() - started;
  running = false;
  await poller;
  return { ms: round(ms, 1), longestHealthMs: round(longestWait, 1), polls, status: response.status, text };
}

const post = (path: string, body: unknown) =>
  fetch(`${endpoint}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
    body: JSON.stringify(body),
  });

try {
  console.log(`store: ${options.store}; server ${endpoint}`);
  const idle = await measure(async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return new Response('');
  });
  console.log(`idle second (the machine's own noise): longest /health wait ${idle.longestHealthMs} ms`);
  const hostile = await createQueue('hostile');
  await sqs('SendMessage', { QueueUrl: hostile, MessageBody: `${'a'.repeat(options.bodyLength)}!` });
  let worstSearch = 0;
  for (const pattern of HOSTILE_PATTERNS) {
    const query = new URLSearchParams({ queue: 'hostile', filter: `body~${pattern}` });
    const result = await measure(() => fetch(`${endpoint}/api/messages?${query}`));
    worstSearch = Math.max(worstSearch, result.ms);
    console.log(
      `search body~${pattern} on ${options.bodyLength + 1} characters: ${result.ms} ms (HTTP ${result.status}), longest /health wait ${result.longestHealthMs} ms`,
    );
  }
  const bounds = await createQueue('bounds');
  await sqs('SendMessage', { QueueUrl: bounds, MessageBody: 'ab'.repeat(80_000) });
  for (const [queue, pattern] of BOUND_CASES) {
    const query = new URLSearchParams({ queue, filter: `body~${pattern}` });
    const result = await measure(() => fetch(`${endpoint}/api/messages?${query}`));
    worstSearch = Math.max(worstSearch, result.ms);
    console.log(
      `search body~${pattern.slice(0, 24)}… on ${queue}: ${result.ms} ms (HTTP ${result.status}), longest /health wait ${result.longestHealthMs} ms`,
    );
  }
  console.log(`worst search: ${worstSearch} ms`);

  const big = await createQueue('big-dlq');
  await createQueue('big-target');
  const fillStarted = now();
  const batches = Math.ceil(options.messages / 10);
  let nextBatch = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let batch = nextBatch++; batch < batches; batch = nextBatch++) {
        const entries = [];
        for (let i = batch * 10; i < Math.min(options.messages, batch * 10 + 10); i++)
          entries.push({ Id: String(i % 10), MessageBody: `${i % PICK_EVERY === 0 ? 'pick' : 'keep'} ${i}` });
        await sqs('SendMessageBatch', { QueueUrl: big, Entries: entries });
      }
    }),
  );
  console.log(`${options.messages} messages sent in ${round((now() - fillStarted) / 1000, 1)} s`);
  const cases: Array<[string, string, unknown]> = [
    ['delete naming one id not in the queue (a whole scan)', '/api/messages/delete', { ids: [randomUUID()] }],
    [
      `replay of every ${PICK_EVERY}th message to another queue`,
      '/api/messages/replay',
      { text: 'pick', destination: 'big-target' },
    ],
  ];
  for (const [label, path, selection] of cases) {
    const result = await measure(() => post(path, { queue: 'big-dlq', ...(selection as object) }));
    const report = JSON.parse(result.text) as { done?: unknown[]; skipped?: unknown[] };
    console.log(
      `${label}: ${result.ms} ms (HTTP ${result.status}, ${report.done?.length ?? 0} done, ${report.skipped?.length ?? 0} skipped), longest /health wait ${result.longestHealthMs} ms over ${result.polls} polls`,
    );
  }
} finally {
  await server.stop();
  removeDataDir(server.dataDir);
  await database?.drop();
}
