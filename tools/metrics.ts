/**
 * Requests a Sluice server answered with HTTP 200 for one SQS action, read from its /metrics counter: the
 * server's own count, so heartbeats are counted where they land, not where a client thinks it sent them.
 */
export async function answeredRequests(endpoint: string, action: string): Promise<number> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  const series = `sluice_requests_total{action="${action}",status="200"} `;
  const line = text.split('\n').find((l) => l.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}
