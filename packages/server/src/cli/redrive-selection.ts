import { countOf } from '../core/plural.ts';
import type { BrowsePage, TriageReport } from '../core/triage.ts';
import { ProgressLine } from './progress.ts';
import { getJson, postJson } from './sluice-api.ts';

/** Ids one replay request names at most (the server takes up to 1,000; smaller keeps the bar moving). */
const CHUNK_MAX = 100;

export interface SelectedRedrive {
  endpoint: string;
  source: string;
  destination: string | undefined;
  /** Message ids; with a search or filters, only those of them that match. */
  ids: readonly string[];
  search: string | undefined;
  filters: readonly string[];
  rate: number;
  /** Whether Ctrl-C asked to stop (checked between requests). */
  stopping: () => boolean;
}

/**
 * `sluice redrive --id/--search`: through a Sluice server's triage API, finds the selected messages without
 * receiving them, then replays them at the rate, each atomically on the server; messages a consumer holds
 * are skipped and listed. Returns the exit status.
 */
export async function redriveSelection(move: SelectedRedrive): Promise<number> {
  const ids =
    move.search !== undefined || move.filters.length > 0 ? await search(move) : [...new Set(move.ids)];
  const where = move.destination ? `to ${move.destination}` : 'back to their source queues';
  process.stderr.write(`replaying ${countOf(ids.length, 'message')} of ${move.source} ${where}\n`);
  const progress = new ProgressLine(process.stderr, 'replayed');
  const chunk = Math.max(1, Math.min(CHUNK_MAX, move.rate));
  const skipped: TriageReport['skipped'] = [];
  let done = 0;
  let nextAt = Date.now();
  for (let i = 0; i < ids.length && !move.stopping(); i += chunk) {
    const wait = nextAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const names = ids.slice(i, i + chunk);
    nextAt = Math.max(Date.now(), nextAt) + (names.length / move.rate) * 1000;
    const report = await postJson<TriageReport>(`${move.endpoint}/api/messages/replay`, {
      queue: move.source,
      ids: names,
      ...(move.destination ? { destination: move.destination } : {}),
    });
    done += report.done.length;
    skipped.push(...report.skipped);
    progress.update(i + names.length, ids.length, `${done} moved`);
  }
  const stopped = move.stopping();
  progress.finish(`${stopped ? 'STOPPED' : 'DONE'}: ${done} moved, ${skipped.length} skipped`);
  for (const { messageId, reason } of skipped.slice(0, 20))
    process.stderr.write(
      `  skipped ${messageId}: ${reason === 'inFlight' ? 'in flight (a consumer holds it)' : reason}\n`,
    );
  if (skipped.length > 20) process.stderr.write(`  and ${skipped.length - 20} more\n`);
  if (stopped) return 130;
  return skipped.length > 0 ? 1 : 0;
}

/** The ids of the source's messages the search and filters match (and in `ids`, when given), in queue order. */
async function search(move: SelectedRedrive): Promise<string[]> {
  const wanted = move.ids.length > 0 ? new Set(move.ids) : undefined;
  const query = new URLSearchParams({ queue: move.source, limit: '100' });
  if (move.search !== undefined) query.set('text', move.search);
  for (const filter of move.filters) query.append('filter', filter);
  const found: string[] = [];
  for (;;) {
    const page = await getJson<BrowsePage>(`${move.endpoint}/api/messages?${query}`);
    for (const message of page.messages)
      if (!wanted || wanted.has(message.messageId)) found.push(message.messageId);
    if (page.next === undefined || move.stopping()) return found;
    query.set('after', page.next);
  }
}
