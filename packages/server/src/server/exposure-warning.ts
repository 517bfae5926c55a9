/**
 * What the server says at start about who can reach it: a warning when it listens beyond
 * loopback without access keys, and, inside the container image (SLUICE_IN_CONTAINER=1), where to find it
 * from the host, since the address it binds in the container is not the one a user opens.
 */
import { isLoopback } from './browser-guard.ts';

/** Set by the image's Dockerfile: the bound address and port are the container's, not the host's. */
export function inContainer(): boolean {
  return process.env.SLUICE_IN_CONTAINER === '1';
}

/**
 * The warning to log, one line each, when nobody's signature is needed and the port is reachable from other
 * machines (a host beyond loopback, no access keys); no lines otherwise. Logged at every start in the log's
 * format, so that a collector reading JSON reads it too.
 */
export function exposureWarning(address: { host: string; port: number; keys: number }): readonly string[] {
  if (address.keys > 0 || isLoopback(address.host)) return [];
  const where = `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
  return inContainer()
    ? [
        `This server is OPEN: it listens on ${where} in its container without access keys.`,
        'Whoever reaches the port published on the host can read, send, purge and delete every queue:',
        'publish it on loopback only (-p 127.0.0.1:9324:9324, as docs/guide/container.md shows),',
        'or give it access keys (SLUICE_CONFIG=/path/to/a/mounted/config.json, or serve --credentials).',
      ]
    : [
        `This server is OPEN: it listens on ${where} without access keys (--insecure).`,
        'Whoever reaches this port can read, send, purge and delete every queue.',
        'Listen on 127.0.0.1, or give it access keys (--credentials, or "credentials" in --config).',
      ];
}

/**
 * The start lines' addresses: where the SQS API listens and where to open the console. Outside a container
 * the console is on this machine (a wildcard bind address becomes loopback, which a browser can open); inside
 * one, only the user knows which host port leads to the container's.
 */
export function startAddresses(endpoint: string): { listening: string; console: string } {
  const url = new URL('/console', endpoint);
  if (inContainer()) {
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return {
      listening: `${endpoint} inside the container`,
      console: `${url.protocol}//127.0.0.1:PORT/console from the host, PORT being the host port published to the container's ${port} (-p 127.0.0.1:PORT:${port})`,
    };
  }
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  else if (url.hostname === '[::]') url.hostname = '[::1]';
  return { listening: endpoint, console: url.href };
}
