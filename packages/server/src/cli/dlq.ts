import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseFilter } from '../core/message-filter.ts';
import { MOVE_TASK_DEFAULTS } from '../core/move-tasks.ts';
import type { BrowsedMessage } from '../core/triage.ts';
import { integerFlag, UsageError } from '../shared/command-flags.ts';
import { type JsonObject, readJsonObject } from '../shared/json-object.ts';
import { DEFAULT_ENDPOINT, explainRefused, queueReference, serverOf } from './endpoint.ts';
import { onInterrupt } from './interrupt.ts';
import { messageDetail, messageTable } from './message-view.ts';
import { ask, canAsk } from './prompt.ts';
import { safeJson, safeText } from './terminal-text.ts';
import { browsePage, changeSelection, findMessages, type MessageSearch } from './triage-selection.ts';

export const DLQ_HELP = `sluice dlq — look into a dead-letter queue without receiving, and replay or delete messages one by one

Usage:
  sluice dlq list QUEUE [--limit N] [--after CURSOR] [--all] [--json]
  sluice dlq search QUEUE [--text TEXT] [--filter EXPR ...] [--limit N] [--after CURSOR] [--all] [--json]
  sluice dlq show QUEUE MESSAGE_ID [--json]
  sluice dlq replay QUEUE [MESSAGE_ID ...] [--text TEXT] [--filter EXPR ...] [--destination Q]
                    [--body TEXT | --body-file FILE] [--attributes JSON | --attributes-file FILE]
                    [--rate N] [--dry-run] [--yes] [--json]
  sluice dlq delete QUEUE [MESSAGE_ID ...] [--text TEXT] [--filter EXPR ...] [--dry-run] [--yes] [--json]

Through a Sluice server's triage API (/api/messages), as the console's Messages page: messages are read as
they are, without receiving them, so no receive is counted and nothing is hidden from consumers. QUEUE is a
queue's name, URL or ARN (any queue, not only a DLQ); a URL also names the server.

Replay and delete act on the messages named by id, or found by --text and --filter (all given must match):
exactly those, by id, each atomically on the server. A message a consumer holds (in flight) is skipped and
listed. Before touching more than one message they list them and ask; with no terminal to ask on, they
refuse unless given --yes. The server records each change in its audit trail (sluice audit).

Options:
  --text TEXT        search, replay, delete: the body contains TEXT
  --filter EXPR      search, replay, delete: attr.NAME=VALUE, body.PATH=VALUE, body=VALUE or id=VALUE, and
                     with ~ instead of =, a regular expression; repeat to require several
  --limit N          list, search: messages a page, 1-100 (default 20)
  --after CURSOR     list, search: the page after CURSOR (a page that is not the last says its cursor)
  --all              list, search: every page at once
  --destination Q    replay: where to (default: each message back to the queue it was dead-lettered from)
  --body TEXT        replay: the new body of the one message replayed
  --body-file FILE   replay: the same, read from FILE exactly as it is (a final newline included)
  --attributes JSON  replay: message attributes replacing the messages' own, as SQS takes them:
                     {"kind": {"DataType": "String", "StringValue": "refund"}}
  --attributes-file FILE  replay: the same, read from FILE
  --rate N           replay: messages per second, 1-500 (default ${MOVE_TASK_DEFAULTS.defaultRate})
  --dry-run          replay, delete: list the messages it would touch, and touch none
  --yes, -y          replay, delete: act on more than one message without asking
  --json             print JSON for scripts: messages as the API gives them, or what a change did
  --endpoint URL     the Sluice server (default: the queue URL's server, else ${DEFAULT_ENDPOINT})
  -h, --help         this text

On a terminal, list and search stop after each page and ask whether to go on; elsewhere they print one page
and the cursor of the next. Bodies, ids and attributes are printed with control characters and line breaks
escaped (\\n, \\t, \\x1b, \\u{202e}; a backslash as \\\\), so that no message can drive the terminal; --json
escapes them as JSON does.

With AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set (and AWS_REGION, default us-east-1), the requests are
signed with that key, as a server with credentials requires.

Exit status: 0 on success; 1 when no server answers, there is no such queue or message, a message was
skipped, or a change was not confirmed; 2 on a usage error, a change of several messages without --yes and
without a terminal included; 130 when stopped with Ctrl-C.`;

const SUBCOMMANDS = ['list', 'search', 'show', 'replay', 'delete'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

const OPTIONS = {
  text: { type: 'string' },
  filter: { type: 'string', multiple: true },
  limit: { type: 'string' },
  after: { type: 'string' },
  all: { type: 'boolean' },
  destination: { type: 'string' },
  body: { type: 'string' },
  'body-file': { type: 'string' },
  attributes: { type: 'string' },
  'attributes-file': { type: 'string' },
  rate: { type: 'string' },
  'dry-run': { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  json: { type: 'boolean' },
  endpoint: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;
type Option = keyof typeof OPTIONS;

const COMMON: Option[] = ['json', 'endpoint', 'help'];
const PAGING: Option[] = ['limit', 'after', 'all'];
const SELECTION: Option[] = ['text', 'filter', 'dry-run', 'yes'];
/** The options each subcommand takes; any other is a usage error, not silently ignored. */
const ALLOWED: Record<Subcommand, ReadonlySet<Option>> = {
  list: new Set([...COMMON, ...PAGING]),
  search: new Set([...COMMON, ...PAGING, 'text', 'filter']),
  show: new Set(COMMON),
  replay: new Set([
    ...COMMON,
    ...SELECTION,
    'destination',
    'body',
    'body-file',
    'attributes',
    'attributes-file',
    'rate',
  ]),
  delete: new Set([...COMMON, ...SELECTION]),
};

/** Messages a page of list and search shows unless --limit says otherwise. */
const PAGE_DEFAULT = 20;

/** Runs `sluice dlq`; returns the exit status. */
export async function dlq(args: string[]): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === undefined || subcommand === 'help' || subcommand === '--help' || subcommand === '-h') {
    process.stdout.write(`${DLQ_HELP}\n`);
    return 0;
  }
  if (!(SUBCOMMANDS as readonly string[]).includes(subcommand))
    throw new UsageError(`unknown command "dlq ${subcommand}": ${SUBCOMMANDS.join(', ')}`);
  const command = subcommand as Subcommand;
  const { values, positionals } = parseDlqArgs(rest);
  if (values.help) {
    process.stdout.write(`${DLQ_HELP}\n`);
    return 0;
  }
  for (const name of Object.keys(values) as Option[])
    if (!ALLOWED[command].has(name))
      throw new UsageError(`--${name} does not go with \`sluice dlq ${command}\``);
  const [queueText, ...ids] = positionals;
  if (queueText === undefined) throw new UsageError('name the queue: its name, URL or ARN');
  if (values.endpoint === 'aws') throw new UsageError('triage needs a Sluice server, not AWS');
  const reference = queueReference(queueText);
  const endpoint = serverOf(reference, values.endpoint);
  const queue = reference.name;
  const search: MessageSearch = {
    ...(values.text !== undefined ? { text: values.text } : {}),
    filters: (values.filter ?? []).map(checkedFilter),
  };
  const searched = search.text !== undefined || search.filters.length > 0;
  const expect = (count: number, what: string) => {
    if (ids.length !== count) throw new UsageError(`\`sluice dlq ${command}\` takes ${what}`);
  };
  try {
    switch (command) {
      case 'list':
        expect(0, 'the queue only (search finds messages)');
        return await listPages(endpoint, queue, search, values);
      case 'search':
        expect(0, 'the queue only, and --text or --filter');
        if (!searched) throw new UsageError('search with --text, --filter or both');
        return await listPages(endpoint, queue, search, values);
      case 'show':
        expect(1, 'the queue and one message id');
        return await show(endpoint, queue, ids[0]!, values.json ?? false);
      default:
        if (ids.length === 0 && !searched)
          throw new UsageError('name the messages: their ids, --text, --filter, or several of these');
        return await change(endpoint, queue, command, { ...search, ids }, values);
    }
  } catch (error) {
    throw explainRefused(error, endpoint);
  }
}

function checkedFilter(text: string): string {
  try {
    return parseFilter(text).text;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function parseDlqArgs(args: string[]) {
  return parseArgs({ args, strict: true, allowPositionals: true, options: OPTIONS });
}

type Values = ReturnType<typeof parseDlqArgs>['values'];

/**
 * list and search: a page of messages; on a terminal, page after page while the reader asks for more;
 * elsewhere the cursor of the next page, or with --all every page.
 */
async function listPages(
  endpoint: string,
  queue: string,
  search: MessageSearch,
  values: Values,
): Promise<number> {
  const limit = integerFlag('limit', values.limit, 1, 100) ?? PAGE_DEFAULT;
  const json = values.json ?? false;
  const searched = search.text !== undefined || search.filters.length > 0;
  const name = safeText(queue);
  let after = values.after;
  if (values.all) {
    const messages: BrowsedMessage[] = [];
    do {
      const page = await browsePage(endpoint, queue, search, after, 100);
      messages.push(...page.messages);
      after = page.next;
    } while (after !== undefined);
    process.stdout.write(
      json ? `${safeJson({ queue, messages })}\n` : listing(messages, name, searched, false),
    );
    return 0;
  }
  const interactive = !json && canAsk() && process.stdout.isTTY === true;
  for (;;) {
    const page = await browsePage(endpoint, queue, search, after, limit);
    if (json) {
      process.stdout.write(`${safeJson({ queue, ...page })}\n`);
      return 0;
    }
    process.stdout.write(listing(page.messages, name, searched, after !== undefined));
    if (page.next === undefined) return 0;
    if (!interactive) {
      process.stderr.write(`more after this page: --after ${safeText(page.next)} (or --all)\n`);
      return 0;
    }
    const answer = await ask(`-- more: Enter for the next ${limit}, q to stop -- `);
    if (answer === undefined || /^\s*q/i.test(answer)) return 0;
    after = page.next;
  }
}

function listing(
  messages: readonly BrowsedMessage[],
  name: string,
  searched: boolean,
  later: boolean,
): string {
  if (messages.length > 0) return `${messageTable(messages, process.stdout.columns)}\n`;
  if (later) return 'no more messages\n';
  return searched ? `no message of ${name} matches\n` : `${name} holds no messages\n`;
}

async function show(endpoint: string, queue: string, id: string, json: boolean): Promise<number> {
  const [message] = await findMessages(endpoint, queue, { ids: [id], filters: [] }, () => false);
  if (!message) {
    process.stderr.write(`sluice dlq: no message ${safeText(id)} in ${safeText(queue)}\n`);
    return 1;
  }
  process.stdout.write(`${json ? safeJson(message) : messageDetail(message)}\n`);
  return 0;
}

async function change(
  endpoint: string,
  queue: string,
  action: 'replay' | 'delete',
  criteria: MessageSearch & { ids: string[] },
  values: Values,
): Promise<number> {
  const body = oneOf(values, 'body', 'body-file');
  const attributes = oneOf(values, 'attributes', 'attributes-file');
  const destination = values.destination && queueReference(values.destination).name;
  let stopping = false;
  const release = onInterrupt(() => {
    stopping = true;
  });
  try {
    return await changeSelection({
      endpoint,
      queue,
      action,
      criteria,
      ...(destination ? { destination } : {}),
      ...(body !== undefined ? { body } : {}),
      ...(attributes !== undefined ? { messageAttributes: attributesObject(attributes) } : {}),
      ...(action === 'replay'
        ? { rate: integerFlag('rate', values.rate, 1, 500) ?? MOVE_TASK_DEFAULTS.defaultRate }
        : {}),
      dryRun: values['dry-run'] === true,
      yes: values.yes === true,
      json: values.json === true,
      stopping: () => stopping,
    });
  } finally {
    release();
  }
}

/** The text of `--NAME TEXT` or of `--NAME-file FILE`, which exclude each other. */
function oneOf(values: Values, inline: 'body' | 'attributes', file: 'body-file' | 'attributes-file') {
  const text = values[inline];
  const path = values[file];
  if (text !== undefined && path !== undefined)
    throw new UsageError(`--${inline} and --${file} exclude each other`);
  if (path === undefined) return text;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--${file}: ${(error as Error).message}`);
  }
}

function attributesObject(text: string): JsonObject {
  const reading = readJsonObject(text);
  if ('object' in reading) return reading.object;
  throw new UsageError(
    'the message attributes must be a JSON object: {"NAME": {"DataType": "String", "StringValue": "VALUE"}}',
  );
}
