import { countOf } from '../core/plural.ts';
import type { BrowsedMessage, BrowsePage, TriageReport } from '../core/triage.ts';
import { UsageError } from '../shared/command-flags.ts';
import type { JsonObject } from '../shared/json-object.ts';
import type { AuditRecord } from '../store/triage.ts';
import { messageTable } from './message-view.ts';
import { ProgressLine } from './progress.ts';
import { canAsk, confirmed } from './prompt.ts';
import { getJson, postJson } from './sluice-api.ts';
import { safeJson, safeText } from './terminal-text.ts';

/** Messages one browse request asks for (the API's most). */
const BROWSE_LIMIT = 100;
/** Ids one replay or delete request names at most (the server takes up to 1,000; smaller keeps the bar moving). */
const CHUNK_MAX = 100;
/** Ids one search by id names, in one regular expression: keeps the request's URL short. */
const IDS_PER_SEARCH = 50;
/** Messages a confirmation question lists before "and N more". */
const PREVIEW_ROWS = 20;

/** What a search asks the server for: the body contains `text`, and every filter matches. */
export interface MessageSearch {
  text?: string;
  filters: readonly string[];
}

/** Which messages of a queue: those with these ids (when any), that the search matches (when given). */
export interface MessageCriteria extends MessageSearch {
  ids: readonly string[];
}

function browseUrl(
  endpoint: string,
  queue: string,
  search: MessageSearch,
  after: string | undefined,
  limit: number,
) {
  const query = new URLSearchParams({ queue, limit: String(limit) });
  if (search.text !== undefined) query.set('text', search.text);
  for (const filter of search.filters) query.append('filter', filter);
  if (after !== undefined) query.set('after', after);
  return `${endpoint}/api/messages?${query}`;
}

/**
 * Up to `limit` of the queue's messages the search matches, from the cursor `after` on, and the cursor of the
 * rest. The server reads a bounded number of messages per request, so a search can answer short with a cursor
 * to go on from: this goes on until it has `limit` messages or reaches the queue's end.
 */
export async function browsePage(
  endpoint: string,
  queue: string,
  search: MessageSearch,
  after: string | undefined,
  limit: number,
): Promise<BrowsePage> {
  const messages: BrowsedMessage[] = [];
  let next = after;
  do {
    const page = await getJson<BrowsePage>(browseUrl(endpoint, queue, search, next, limit - messages.length));
    messages.push(...page.messages);
    next = page.next;
  } while (next !== undefined && messages.length < limit);
  return { messages, next };
}

/** Every message that meets the criteria, without receiving any; by ids, the server looks for them itself. */
export async function findMessages(
  endpoint: string,
  queue: string,
  criteria: MessageCriteria,
  stopping: () => boolean,
): Promise<BrowsedMessage[]> {
  const ids = [...new Set(criteria.ids)];
  // Each search with the most it can find: by ids, it stops once it has found them all.
  const searches: Array<{ search: MessageSearch; most: number }> = [];
  if (ids.length === 0) searches.push({ search: criteria, most: Number.POSITIVE_INFINITY });
  for (let i = 0; i < ids.length; i += IDS_PER_SEARCH) {
    const some = ids.slice(i, i + IDS_PER_SEARCH);
    const byId = `id~^(?:${some.map(escapeRegExp).join('|')})$`;
    searches.push({ search: { ...criteria, filters: [...criteria.filters, byId] }, most: some.length });
  }
  const found: BrowsedMessage[] = [];
  for (const { search, most } of searches) {
    let after: string | undefined;
    let count = 0;
    do {
      const page = await browsePage(endpoint, queue, search, after, Math.min(BROWSE_LIMIT, most - count));
      found.push(...page.messages);
      count += page.messages.length;
      after = page.next;
    } while (after !== undefined && count < most && !stopping());
  }
  return found;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** A replay or delete of chosen messages, through a Sluice server's triage API. */
export interface SelectionChange {
  endpoint: string;
  queue: string;
  action: 'replay' | 'delete';
  criteria: MessageCriteria;
  /** Replays: where to; absent, each message back to the queue it was dead-lettered from. */
  destination?: string;
  /** Replays: a new body (one message only). */
  body?: string;
  /** Replays: new message attributes, in SQS's shape, replacing the messages' own. */
  messageAttributes?: JsonObject;
  /** Messages per second; absent, as fast as the requests go. */
  rate?: number;
  /** Say what would be touched; change nothing. */
  dryRun: boolean;
  /** Go ahead with more than one message without asking. */
  yes: boolean;
  /** Print the outcome as JSON on stdout. */
  json: boolean;
  /** Whether Ctrl-C asked to stop (checked between requests). */
  stopping: () => boolean;
}

/** What a finished change prints with --json. */
interface ChangeOutcome {
  action: SelectionChange['action'];
  queue: string;
  destination?: string;
  done: TriageReport['done'];
  skipped: TriageReport['skipped'];
  audit: AuditRecord[];
}

/**
 * `sluice dlq replay|delete` and `sluice redrive --id/--search`: finds the selected messages without receiving
 * them, shows them (--dry-run stops there), asks before touching more than one (unless --yes; with no terminal
 * to ask on, refuses), then replays or deletes exactly those, by id, each atomically on the server; messages a
 * consumer holds are skipped and listed. Returns the exit status.
 */
export async function changeSelection(change: SelectionChange): Promise<number> {
  const { criteria } = change;
  const searched = criteria.text !== undefined || criteria.filters.length > 0;
  const given = [...new Set(criteria.ids)];
  // Messages named by id alone need no look-up unless they are to be shown.
  const shown =
    change.dryRun || searched || (given.length > 1 && !change.yes)
      ? await findMessages(change.endpoint, change.queue, criteria, change.stopping)
      : undefined;
  if (change.stopping()) {
    process.stderr.write('stopped: nothing changed\n');
    return 130;
  }
  const ids = searched ? shown!.map((message) => message.messageId) : given;
  const absent = shown ? given.filter((id) => !shown.some((message) => message.messageId === id)) : [];
  if (change.body !== undefined && ids.length > 1)
    throw new UsageError(`a new body is for one message at a time, and ${ids.length} are selected`);
  const where =
    change.action === 'delete'
      ? ''
      : change.destination
        ? ` to ${change.destination}`
        : ' back to their source queues';
  const what = safeText(`${countOf(ids.length, 'message')} of ${change.queue}${where}`);
  if (shown && change.dryRun) {
    process.stdout.write(
      change.json
        ? `${safeJson({ dryRun: true, action: change.action, queue: change.queue, destination: change.destination, messages: shown, absent })}\n`
        : preview(`would ${change.action} ${what}`, shown, absent, searched, {
            rows: Number.POSITIVE_INFINITY,
            columns: process.stdout.columns,
          }),
    );
    return 0;
  }
  if (ids.length > 1 && !change.yes) {
    if (!canAsk())
      throw new UsageError(
        `this would ${change.action} ${what}: with no terminal to ask on, confirm with --yes (--dry-run lists them)`,
      );
    process.stderr.write(
      preview(`this would ${change.action} ${what}`, shown!, absent, searched, {
        rows: PREVIEW_ROWS,
        columns: process.stderr.columns,
      }),
    );
    if (!(await confirmed(`${capitalized(change.action)} ${countOf(ids.length, 'message')}?`))) {
      process.stderr.write('nothing changed\n');
      return 1;
    }
  }
  return apply(change, ids, what);
}

/**
 * The messages about to be touched, the first `rows` of them as a table `columns` wide (a terminal's; undefined
 * elsewhere), then the ids given that are not among them.
 */
function preview(
  title: string,
  messages: readonly BrowsedMessage[],
  absent: readonly string[],
  searched: boolean,
  { rows, columns }: { rows: number; columns: number | undefined },
): string {
  const lines = [`${title}${messages.length > 0 ? ':' : ''}`];
  if (messages.length > 0) lines.push(messageTable(messages.slice(0, rows), columns));
  if (messages.length > rows) lines.push(`and ${messages.length - rows} more`);
  const held = messages.filter((message) => message.state === 'inFlight').length;
  if (held > 0)
    lines.push(
      `${countOf(held, 'message')} in flight: a consumer holds ${held === 1 ? 'it' : 'them'}, so ${held === 1 ? 'it' : 'they'} would be skipped`,
    );
  const reason = searched ? 'not in the queue, or not matching' : 'not in the queue';
  for (const id of absent) lines.push(`${safeText(id)}: ${reason}`);
  return `${lines.join('\n')}\n`;
}

function capitalized(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * Replays or deletes the ids in requests of CHUNK_MAX, at the rate; reports on stderr, and as JSON on stdout
 * with --json. `what` says how many messages from where to where, printed safe.
 */
async function apply(change: SelectionChange, ids: readonly string[], what: string): Promise<number> {
  const replaying = change.action === 'replay';
  process.stderr.write(`${replaying ? 'replaying' : 'deleting'} ${what}\n`);
  const progress = new ProgressLine(process.stderr, replaying ? 'replayed' : 'deleted');
  const chunk = Math.max(1, Math.min(CHUNK_MAX, change.rate ?? CHUNK_MAX));
  const outcome: ChangeOutcome = {
    action: change.action,
    queue: change.queue,
    ...(change.destination ? { destination: change.destination } : {}),
    done: [],
    skipped: [],
    audit: [],
  };
  let nextAt = Date.now();
  for (let i = 0; i < ids.length && !change.stopping(); i += chunk) {
    const wait = nextAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const names = ids.slice(i, i + chunk);
    if (change.rate !== undefined)
      nextAt = Math.max(Date.now(), nextAt) + (names.length / change.rate) * 1000;
    const report = await postJson<TriageReport>(`${change.endpoint}/api/messages/${change.action}`, {
      queue: change.queue,
      ids: names,
      ...(change.destination ? { destination: change.destination } : {}),
      ...(change.body !== undefined ? { body: change.body } : {}),
      ...(change.messageAttributes ? { messageAttributes: change.messageAttributes } : {}),
    });
    outcome.done.push(...report.done);
    outcome.skipped.push(...report.skipped);
    outcome.audit.push(report.audit);
    progress.update(
      i + names.length,
      ids.length,
      `${outcome.done.length} ${replaying ? 'moved' : 'deleted'}`,
    );
  }
  const stopped = change.stopping();
  progress.finish(
    `${stopped ? 'STOPPED' : 'DONE'}: ${outcome.done.length} ${replaying ? 'moved' : 'deleted'}, ${outcome.skipped.length} skipped`,
  );
  for (const { messageId, reason } of outcome.skipped.slice(0, 20))
    process.stderr.write(
      `  skipped ${safeText(messageId)}: ${reason === 'inFlight' ? 'in flight (a consumer holds it)' : safeText(reason)}\n`,
    );
  if (outcome.skipped.length > 20) process.stderr.write(`  and ${outcome.skipped.length - 20} more\n`);
  if (change.json) process.stdout.write(`${safeJson(outcome)}\n`);
  if (stopped) return 130;
  return outcome.skipped.length > 0 ? 1 : 0;
}
