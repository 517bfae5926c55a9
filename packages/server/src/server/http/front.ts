import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#toolkit/clock';
import type { SqsActions } from '../../core/actions.ts';
import type { ProtocolAdapter } from '../../protocol/adapter.ts';
import type { StoreCondition } from '../../store/contract.ts';
import type { Authenticator } from '../auth/access.ts';
import type { PageAccess } from '../auth/page-access.ts';
import type { BrowserGuard } from '../browser-guard.ts';
import type { BudgetShare, ByteBudget } from '../byte-budget.ts';
import type { ConnectionLimits } from '../connections.ts';
import type { LambdaHandler } from '../lambda-entry.ts';
import type { Logger } from '../logger.ts';
import type { LongPollCaps, longPollGate } from '../long-poll-gate.ts';
import type { OperatorAudit } from '../operator-audit.ts';
import type { ConsoleChange, Endpoint, Page, PageViewer } from '../page.ts';
import type { SnsEntry } from '../sns-entry.ts';

/*
 * What the HTTP front is built from (HttpServerOptions), what it shares between requests (Transport), what a
 * route sees of one request (Exchange) and what it answers (Reply).
 */

/** Form encoding can triple a 1 MiB message, so the largest body accepted by default leaves room. */
export const DEFAULT_MAX_REQUEST_BYTES = 5 * 1024 * 1024;

export interface HttpServerOptions {
  /** The SQS actions, by name (core/actions.ts), and the account a request without a key is made by. */
  sqs: { actions: SqsActions; accountId: string };
  /** Why the store is degraded (disk full, read-only…), as /health reports it; undefined when it is not. */
  storeCondition: () => Promise<StoreCondition | undefined>;
  logger: Logger;
  /** Largest request body accepted (DEFAULT_MAX_REQUEST_BYTES). */
  maxRequestBytes?: number;
  /** Read-only pages served on GET besides the SQS API (/metrics, /alarms, /api/*, /console), by path. */
  pages?: Record<string, (url: URL, viewer: PageViewer) => Page | Promise<Page>>;
  /** The console's requests that change state, served on POST to /api/..., by path. */
  changes?: Record<string, ConsoleChange>;
  /** Who may read the pages, the console's sign-in, and its session cookie on SQS requests; all open without. */
  pageAccess?: PageAccess;
  /** Writes the purges, queue deletions and move tasks of every client to the audit trail. */
  operatorAudit?: OperatorAudit;
  /**
   * Test mode's requests, by path, any method: refused to other origins' pages as SQS requests are, and with
   * credentials configured to any request not signed by a key that may act on every queue
   * (`pageAccess.admitTest`); their errors are answered in JSON.
   */
  testEndpoints?: ReadonlyMap<string, Endpoint>;
  /** Told of every SQS API request answered: its action, HTTP status and duration. */
  observeRequest?: (action: string, status: number, seconds: number) => void;
  /** With credentials configured: every SQS request must be signed by a known key allowed to make it. */
  auth?: Authenticator;
  /** Caps on concurrent long polls, per connection, per client address and in total. */
  longPolls?: Partial<LongPollCaps>;
  /** Request body bytes held at once, server-wide; past it a new body gets 503 at once. */
  maxBufferedBytes?: number;
  /** Message bytes ReceiveMessage answers hold at once, server-wide; past it receives wait for room. */
  maxResponseBytes?: number;
  /** Timeouts of connections and requests, and the cap on connections per client address. */
  connections?: Partial<ConnectionLimits>;
  /** PEM certificate chain and private key: serve HTTPS instead of HTTP. */
  tls?: { cert: string; key: string };
  /** The Host check, the refusal of other origins' pages, and CORS for the allowed ones. */
  browser?: BrowserGuard;
  /** Time for waits for answer room and the log of client aborts; the system's by default. */
  clock?: Clock;
  /** The Lambda API's event-source-mapping actions (lambda-entry.ts), for paths under LAMBDA_PATH_PREFIX. */
  lambda?: LambdaHandler;
  /** SNS on the API's root: the requests it claims are decoded and run by it instead of SQS (sns-entry.ts). */
  sns?: SnsEntry;
}

/** What the server shares between its requests: caps, budgets and the abort log. */
export interface Transport {
  maxRequestBytes: number;
  admitLongPoll: ReturnType<typeof longPollGate>;
  bodies: ByteBudget;
  answers: ByteBudget;
  sendTimeoutMs: number;
  noteAbort: (address: string) => void;
}

/** One request as a route sees it, with its response and what the front knows of it. */
export interface Exchange {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly requestId: string;
  readonly method: string;
  /** The URL, parsed on first use: a JSON POST (almost every SQS request) never looks at it. */
  url(): URL;
  /** The URL's path; "/" for SQS's JSON requests, without parsing their URL. */
  readonly path: string;
  /** Scheme, host and port the client used, e.g. http://127.0.0.1:9324; queue URLs are built on it. */
  readonly baseUrl: string;
  /** This request's room in the server's budget of buffered bodies, released when the request ends. */
  readonly bodyShare: BudgetShare;
  /** When the request came in (process.hrtime), for the duration logged and observed. */
  readonly started: bigint;
}

/** What a route answers: a page, or an answer as it goes on the wire. */
export type Reply = Page | WireReply;

export interface WireReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
  /**
   * The API action answered, for the metrics and the log ("unknown" when the request failed before one was
   * decoded); none for an answer outside the API.
   */
  readonly action?: string;
}

/**
 * One route's work: the request, the protocol its errors are rendered in, and its answer; undefined when there
 * is none to send (the client went away).
 */
export type Serve = (exchange: Exchange, protocol: ProtocolAdapter) => Promise<Reply | undefined>;

/** The request as the routes see it. */
export function exchangeOf(
  request: IncomingMessage,
  response: ServerResponse,
  bodyShare: BudgetShare,
): Exchange {
  let parsedUrl: URL | undefined;
  const url = () => (parsedUrl ??= new URL(request.url ?? '/', 'http://localhost'));
  return {
    request,
    response,
    requestId: randomUUID(),
    started: process.hrtime.bigint(),
    method: request.method ?? 'GET',
    url,
    // SQS's JSON requests all go to "/": their route is found without parsing a URL.
    path: request.url === '/' ? '/' : url().pathname,
    baseUrl: baseUrlOf(request),
    bodyShare,
  };
}

function baseUrlOf(request: IncomingMessage): string {
  const host = request.headers.host;
  const address = request.socket.localAddress ?? '127.0.0.1';
  const fallback = `${address.includes(':') ? `[${address}]` : address}:${request.socket.localPort}`;
  const scheme = 'encrypted' in request.socket ? 'https' : 'http';
  return `${scheme}://${host && /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? host : fallback}`;
}
