import { parseArgs } from 'node:util';
import { integerFlag, UsageError } from '../shared/command-flags.ts';
import type { AuditRecord, ContentDigest } from '../store/triage.ts';
import { DEFAULT_ENDPOINT, explainRefused } from './endpoint.ts';
import { getJson } from './sluice-api.ts';
import { type TableColumn, textTable, utcTime } from './table.ts';
import { safeJson } from './terminal-text.ts';

export const AUDIT_HELP = `sluice audit — what was done to queues' messages: replays, deletes, purges, queue deletions and move tasks (newest first)

Usage:
  sluice audit [--limit N] [--before ID] [--endpoint URL] [--json]

Reads the audit trail a running server keeps in its store (GET /api/audit): the replays and deletes done
from the console, its API or \`sluice redrive --id/--search\`, and the purges, queue deletions and move
tasks of every client. Only entries of queues the key may read are shown. Control characters in the
entries are printed as escapes (\\x1b, \\n).

Options:
  --limit N        show at most N entries, 1-200 (default 50); when there are older ones, the command
                   to page back is printed on stderr
  --before ID      entries older than the entry ID (to page back)
  --endpoint URL   the Sluice server (default ${DEFAULT_ENDPOINT})
  --json           print the entries as JSON instead of a table
  -h, --help       this text

With AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set (and AWS_REGION, default us-east-1), the request is
signed with that key, as a server with credentials requires.

Exit status: 0 on success, 1 when no server answers at the endpoint, 2 on a usage error.`;

const COLUMNS: Array<TableColumn<AuditRecord>> = [
  { title: 'id', value: (e) => String(e.id), numeric: true },
  { title: 'time (UTC)', value: (e) => utcTime(e.at) },
  { title: 'actor', value: (e) => e.actor },
  { title: 'via', value: (e) => e.via },
  { title: 'action', value: (e) => e.action },
  { title: 'from', value: (e) => e.source },
  { title: 'to', value: (e) => e.destination ?? '' },
  { title: 'count', value: (e) => String(e.count), numeric: true },
  { title: 'skipped', value: (e) => String(e.skipped), numeric: true },
  { title: 'detail', value: (e) => details(e) },
];

/** The selection, what a replay changed (as sizes and digests) and the new messages' ids. */
function details(entry: AuditRecord): string {
  const digest = (what: string, content: ContentDigest | undefined) =>
    content && `new ${what} (${content.bytes} bytes, sha256 ${content.sha256.slice(0, 12)}…)`;
  const newIds = (entry.messages ?? []).flatMap((m) =>
    m.newMessageId === undefined ? [] : [m.newMessageId],
  );
  const shown = newIds.length < entry.count ? ` (first ${newIds.length} of ${entry.count})` : '';
  return [
    entry.detail,
    digest('body', entry.edit?.body),
    digest('attributes', entry.edit?.messageAttributes),
    newIds.length > 0 ? `new ids ${newIds.join(',')}${shown}` : undefined,
  ]
    .filter((part) => part !== undefined)
    .join('; ');
}

/** Runs `sluice audit`, writing the entries to `out` and the next page's command to `note`; returns the exit status. */
export async function audit(
  args: string[],
  out: (text: string) => void,
  note: (text: string) => void,
): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      limit: { type: 'string' },
      before: { type: 'string' },
      endpoint: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    out(`${AUDIT_HELP}\n`);
    return 0;
  }
  const limit = integerFlag('limit', values.limit, 1, 200) ?? 50;
  const before = integerFlag('before', values.before, 1, Number.MAX_SAFE_INTEGER);
  if (values.endpoint === 'aws')
    throw new UsageError('the audit trail is kept by a Sluice server, not by AWS');
  const endpoint = (values.endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
  try {
    const { entries, next } = await getJson<{ entries: AuditRecord[]; next?: string }>(
      `${endpoint}/api/audit?limit=${limit}${before === undefined ? '' : `&before=${before}`}`,
    );
    if (values.json) out(`${safeJson(entries)}\n`);
    else if (entries.length === 0) out('the audit trail is empty\n');
    else out(`${textTable(COLUMNS, entries)}\n`);
    if (next !== undefined && /^\d+$/.test(next))
      note(
        `older entries: sluice audit --before ${next}${values.limit === undefined ? '' : ` --limit ${limit}`}\n`,
      );
    return 0;
  } catch (error) {
    throw explainRefused(error, endpoint);
  }
}
