/**
 * What keeps a web page from driving the server through the browser of someone who runs it: the Host
 * check against DNS rebinding, the refusal of requests a page on another origin sent, and CORS for the
 * origins the operator allows. See docs/guide/network-safety.md.
 */
import type { IncomingMessage } from 'node:http';
import { errors, type SqsError } from '../core/errors.ts';

export interface BrowserGuardOptions {
  /** Origins (`http(s)://host[:port]`) whose pages may call the API; they get CORS headers, nobody else does. */
  corsOrigins: readonly string[];
  /** Host names accepted besides loopback names and addresses and the address a connection came in on. */
  allowedHosts: readonly string[];
  /** The address or name the server listens on, accepted too. */
  boundHost: string;
  /** false: any Host is accepted (a server on the network that checks signatures). */
  checkHost: boolean;
}

export interface BrowserGuard {
  /**
   * A page on a name the attacker controls can make that name resolve to 127.0.0.1 (DNS rebinding) and
   * then talk to the server as its own origin; its requests still carry that name in Host. Names a browser
   * resolves to loopback itself (`localhost`, `*.localhost`) and addresses cannot be rebound.
   */
  hostRefusal(request: IncomingMessage): SqsError | undefined;
  /**
   * A request a page on another origin sent, which must not change or read anything: an Origin that is
   * neither the server's own nor allowed, or, without Origin (an `<img>` GET), a Sec-Fetch-Site other than
   * same-origin or none. A page on another port of the same host is same-site, hence the second rule. Only
   * host and port are compared with Host, so the console works behind a proxy that ends TLS.
   */
  crossOriginRefusal(request: IncomingMessage): SqsError | undefined;
  /** The headers every answer to an allowed origin carries; undefined for any other request. */
  corsHeaders(request: IncomingMessage): Record<string, string> | undefined;
}

/** Most Host values remembered as accepted, so that the usual few are not parsed on every request. */
const ACCEPTED_HOSTS_CACHE_SIZE = 100;

/** Addresses only this machine can reach; anything else exposes the server. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Checks the options as flags are: an origin is `http(s)://host[:port]`, a host a name or address. */
export function createBrowserGuard(options: BrowserGuardOptions): BrowserGuard {
  const corsOrigins = new Set(
    options.corsOrigins.map((origin) => {
      const parsed = parseOrigin(origin);
      if (parsed === undefined || !/^https?:\/\/[^/?#@]+\/?$/i.test(origin))
        throw new Error(`--cors-origin must be an origin such as http://localhost:3000, not "${origin}"`);
      return parsed;
    }),
  );
  const allowedHosts = new Set(
    options.allowedHosts.map((host) => {
      const name = hostName(host);
      if (name === undefined || name !== host.toLowerCase().replace(/^\[|\]$/g, ''))
        throw new Error(`--allow-host must be a host name or address without a port, not "${host}"`);
      return name;
    }),
  );
  const bound = hostName(options.boundHost.includes(':') ? `[${options.boundHost}]` : options.boundHost);
  if (bound !== undefined) allowedHosts.add(bound);
  const acceptedHosts = new Set<string>();
  const allowedOrigin = (request: IncomingMessage): string | undefined => {
    const origin = singleHeader(request, 'origin');
    return origin !== undefined && corsOrigins.has(parseOrigin(origin) ?? '') ? origin : undefined;
  };
  return {
    hostRefusal(request) {
      const header = request.headers.host;
      if (!options.checkHost || header === undefined || acceptedHosts.has(header)) return undefined;
      const name = hostName(header);
      if (name !== undefined) {
        const address = unmapped(name);
        if (isLoopback(address) || name.endsWith('.localhost') || allowedHosts.has(name)) {
          if (acceptedHosts.size >= ACCEPTED_HOSTS_CACHE_SIZE) acceptedHosts.clear();
          acceptedHosts.add(header);
          return undefined;
        }
        // Per connection: on a wildcard bind, each arrives on an address of its own.
        const local = request.socket.localAddress;
        if (local !== undefined && address === unmapped(local)) return undefined;
      }
      return errors.accessDenied(
        `The Host ${header} is not a name this server answers to (a guard against DNS rebinding). Start it with --allow-host NAME to accept another name.`,
      );
    },
    crossOriginRefusal(request) {
      const origin = singleHeader(request, 'origin');
      const site = singleHeader(request, 'sec-fetch-site');
      if (origin !== undefined) {
        if (allowedOrigin(request) !== undefined) return undefined;
        if (isOwnOrigin(origin, request.headers.host) && (site === undefined || site === 'same-origin'))
          return undefined;
        return errors.accessDenied(
          `Requests from a web page on ${origin} are refused. Start the server with --cors-origin ${origin} to allow that origin.`,
        );
      }
      if (site === undefined || site === 'same-origin' || site === 'none') return undefined;
      return errors.accessDenied(
        `Requests a browser sends from another site (Sec-Fetch-Site: ${site}) are refused.`,
      );
    },
    corsHeaders(request) {
      const origin = allowedOrigin(request);
      if (origin === undefined) return undefined;
      const headers: Record<string, string> = {
        'access-control-allow-origin': origin,
        // SDKs read the request id, the error code of a query-compatible error, and the date (clock skew).
        'access-control-expose-headers': 'x-amzn-requestid, x-amzn-query-error, date',
        vary: 'Origin',
      };
      if (request.method === 'OPTIONS') {
        headers['access-control-allow-methods'] = 'POST, GET';
        // The origin is trusted, and SDKs add headers over time (amz-sdk-request, x-amzn-query-mode, ...).
        const requested = singleHeader(request, 'access-control-request-headers');
        if (requested !== undefined) headers['access-control-allow-headers'] = requested;
        headers['access-control-max-age'] = '600';
      }
      return headers;
    },
  };
}

/** Whether a browser's Origin names the host and port the request was sent to. */
function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const url = new URL(origin);
    return new URL(`${url.protocol}//${host}`).host === url.host;
  } catch {
    return false;
  }
}

function singleHeader(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** `scheme://host[:port]` as browsers write it in Origin, or undefined (`null`, or not http(s)). */
function parseOrigin(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The host name of a Host header (lower case, without port, brackets or a final dot), if it parses. */
function hostName(header: string): string | undefined {
  try {
    const url = new URL(`http://${header}`);
    if (url.username !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return undefined;
    return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

/** `::ffff:127.0.0.1` (an IPv4 client on a dual-stack socket) as `127.0.0.1`. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
