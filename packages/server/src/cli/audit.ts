import { parseArgs } from 'node:util';
import type { AuditRecord } from '../store/triage.ts';
import { DEFAULT_ENDPOINT, explainRefused } from './endpoint.ts';
import { integerFlag, UsageError } from './flags.ts';
import { getJson } from './sluice-api.ts';
import { type TableColumn, textTable, utcTime } from './table.ts';
import { safeJson } from './terminal-text.ts';

export const AUDIT_HELP = `sluice audit — what operators did: replays, deletes, purges and move tasks (newest first)

Usage:
  sluice audit [--limit N] [--before ID] [--endpoint URL] [--json]

Reads the audit trail a running server keeps in its store (GET /api/audit): the replays and deletes done
from the console, its API or \`sluice redrive --id/--search\`, and the purges and move tasks started from
the console or the CLI. Only entries of queues the key may read are shown.

Options:
  --limit N        show at most N entries, 1-200 (default 50)
  --before ID      entries older than the entry ID (to page back)
  --endpoint URL   the Sluice server (default http://127.0.0.1:9324)
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
  { title: 'detail', value: (e) => e.detail ?? '' },
];

/** Runs `sluice audit`; returns the exit status. */
export async function audit(args: string[], out: (text: string) => void): Promise<number> {
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
    const { entries } = await getJson<{ entries: AuditRecord[] }>(
      `${endpoint}/api/audit?limit=${limit}${before === undefined ? '' : `&before=${before}`}`,
    );
    if (values.json) out(`${safeJson(entries)}\n`);
    else if (entries.length === 0) out('the audit trail is empty\n');
    // The selections people typed are printed escaped (see safeText).
    else out(`${textTable(COLUMNS, entries)}\n`);
    return 0;
  } catch (error) {
    throw explainRefused(error, endpoint);
  }
}
