import { eventually } from './client-toolkit.ts';

/** The server's `sluice_long_polls_waiting` gauge (an open /metrics). */
async function longPollsWaiting(endpoint: string): Promise<number> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  const match = /^sluice_long_polls_waiting (\d+)$/m.exec(text);
  if (!match) throw new Error('/metrics has no sluice_long_polls_waiting');
  return Number(match[1]);
}

/**
 * Resolves once the server holds `count` long polls: the requests a test sent have reached it, however
 * slow the machine (rather than a fixed pause that a loaded machine outlasts).
 */
export function longPollsHeld(endpoint: string, count: number): Promise<void> {
  return eventually(
    async () => (await longPollsWaiting(endpoint)) >= count,
    `${count} long polls held by the server`,
    30_000,
  );
}
