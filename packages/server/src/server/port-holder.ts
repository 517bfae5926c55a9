import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** The `server` header of `/health`: how a starting Sluice tells another Sluice on its port from anything else. */
export const HEALTH_SERVER_HEADER = 'Sluice';

/** How long the probe of a taken port waits for an answer: a Sluice on this machine answers at once. */
const PROBE_TIMEOUT_MS = 3_000;

/** The address a client on this machine reaches a wildcard bind address at. */
function reachable(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/** Whether `GET /health` at host:port, over `scheme`, is answered by a Sluice. */
function answersAsSluice(scheme: 'http' | 'https', host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = (scheme === 'http' ? httpRequest : httpsRequest)(
      {
        host: reachable(host),
        port,
        path: '/health',
        method: 'GET',
        timeout: PROBE_TIMEOUT_MS,
        // Only to read who answers: nothing is sent, and a self-signed certificate is a Sluice's usual one.
        rejectUnauthorized: false,
      },
      (response) => {
        response.resume();
        resolve(response.headers.server === HEALTH_SERVER_HEADER);
      },
    );
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
    request.end();
  });
}

/**
 * What to tell a person whose server cannot listen because host:port is taken: whether it is another Sluice
 * (its `/health`, over HTTP or HTTPS, says so) and how to choose another port. Node's own message
 * (`listen EADDRINUSE: address already in use`) names neither.
 */
export async function portTakenMessage(host: string, port: number): Promise<string> {
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const sluice = (await answersAsSluice('http', host, port)) || (await answersAsSluice('https', host, port));
  return sluice
    ? `another Sluice is already listening on ${address} (stop it, or choose another port with --port N)`
    : `something else holds ${address}; choose another port with --port N`;
}
