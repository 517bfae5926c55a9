import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type Clock, systemClock } from 'sluice-client/clock';
import { asSqsError, dispatch } from '../core/actions.ts';
import { errors, SqsError, UnavailableError } from '../core/errors.ts';
import type { AnswerRoom, RequestContext } from '../core/request-context.ts';
import type { SqsService } from '../core/sqs-service.ts';
import type { ProtocolAdapter, WireAnswer } from '../protocol/adapter.ts';
import { jsonProtocol, protocolOf } from '../protocol/protocols.ts';
import { clientAbortLog } from './abort-log.ts';
import type { AccessKey, Authenticator } from './auth/access.ts';
import type { PageAccess } from './auth/page-access.ts';
import type { BrowserGuard } from './browser-guard.ts';
import {
  BudgetShare,
  ByteBudget,
  defaultAnswerBudgetBytes,
  defaultBodyBudgetBytes,
  SMALL_TAKE_BYTES,
} from './byte-budget.ts';
import {
  CONNECTION_LIMIT_DEFAULTS,
  type ConnectionLimits,
  guardConnections,
  nodeTimeoutOptions,
} from './connections.ts';
import type { Logger } from './logger.ts';
import { LONG_POLL_CAP_DEFAULTS, type LongPollCaps, longPollGate } from './long-poll-gate.ts';
import type { OperatorAudit } from './operator-audit.ts';
import { ANYONE, type ConsoleChange, type Endpoint, errorPage, type Page, type PageViewer } from './page.ts';
import { HEALTH_SERVER_HEADER } from './port-holder.ts';
import { actorOf } from './triage-api.ts';

/** Form encoding can triple a 1 MiB message, so the largest body accepted by default leaves room. */
export const DEFAULT_MAX_REQUEST_BYTES = 5 * 1024 * 1024;

export interface HttpServerOptions {
  service: SqsService;
  logger: Logger;
  /** Largest request body accepted; form encoding can triple a 1 MiB message, so the default leaves room. */
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
}

export type SluiceHttpServer = Server | HttpsServer;

/** What the server shares between its requests: caps, budgets and the abort log. */
interface Transport {
  maxRequestBytes: number;
  admitLongPoll: ReturnType<typeof longPollGate>;
  bodies: ByteBudget;
  answers: ByteBudget;
  sendTimeoutMs: number;
  noteAbort: (address: string) => void;
}

/**
 * The HTTP front: reads a request, lets the matching protocol adapter decode it, runs the action in the
 * core, and has the adapter render the result. Nothing here knows a queue rule.
 */
export function createHttpServer(options: HttpServerOptions): SluiceHttpServer {
  const clock = options.clock ?? systemClock;
  const limits = { ...CONNECTION_LIMIT_DEFAULTS, ...options.connections };
  const transport: Transport = {
    maxRequestBytes: options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
    admitLongPoll: longPollGate({ ...LONG_POLL_CAP_DEFAULTS, ...options.longPolls }),
    bodies: new ByteBudget(options.maxBufferedBytes ?? defaultBodyBudgetBytes(), clock),
    answers: new ByteBudget(options.maxResponseBytes ?? defaultAnswerBudgetBytes(), clock),
    sendTimeoutMs: limits.sendTimeoutMs,
    noteAbort: clientAbortLog(options.logger, clock),
  };
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    const body = new BudgetShare(transport.bodies);
    handle(options, transport, body, request, response)
      .catch((error: unknown) => {
        options.logger.error({ err: error }, 'request handling failed');
        if (!response.headersSent) response.writeHead(500).end();
        else response.destroy();
      })
      .finally(() => body.releaseAll());
  };
  // Long polls hold a response for up to 20 s; these timeouts bound only how long a client may take to send.
  const timeouts = nodeTimeoutOptions(limits);
  const server = options.tls
    ? createHttpsServer({ ...options.tls, ...timeouts }, listener)
    : createServer(timeouts, listener);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  guardConnections(server, limits, options.tls !== undefined);
  return server;
}

async function handle(
  options: HttpServerOptions,
  transport: Transport,
  bodyShare: BudgetShare,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const requestId = randomUUID();
  const started = process.hrtime.bigint();
  // Parsed only when needed: a JSON POST (almost every SQS request) never looks at its URL.
  let parsedUrl: URL | undefined;
  const url = () => (parsedUrl ??= new URL(request.url ?? '/', 'http://localhost'));
  // SQS's JSON requests all go to "/": the look-up parses no URL for them.
  const testEndpoint = request.url === '/' ? undefined : options.testEndpoints?.get(url().pathname);
  // Test mode's errors are answered in JSON, whatever the request looks like.
  const protocol: ProtocolAdapter = testEndpoint ? jsonProtocol : protocolOf(request.headers);
  let action = 'unknown';
  const cors = options.browser?.corsHeaders(request);
  const reply = (status: number, headers: Record<string, string>, body: string | Buffer, api = true) => {
    response.writeHead(status, {
      ...headers,
      ...cors,
      'x-amzn-requestid': requestId,
      'content-length': Buffer.byteLength(body),
    });
    response.end(body);
    // An answer still waiting in memory for its client: a client that stops taking it must not hold it.
    if (request.socket.writableLength > 0)
      response.setTimeout(transport.sendTimeoutMs, () => response.destroy());
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (api) options.observeRequest?.(action, status, seconds);
    if (options.logger.isLevelEnabled('debug'))
      options.logger.debug(
        {
          requestId,
          action,
          protocol: protocol.name,
          path: url().pathname,
          status,
          ms: Math.round(seconds * 1e5) / 100,
        },
        'request',
      );
  };
  const send = ({ status, headers, body }: WireAnswer) => reply(status, headers, body);
  const fail = (error: SqsError) => send(protocol.renderError(error, requestId));

  const wrongHost = options.browser?.hostRefusal(request);
  if (wrongHost) {
    fail(wrongHost);
    return;
  }
  // HEAD as GET for health checkers that ask with it; Node leaves a HEAD response's body out.
  if ((request.method === 'GET' || request.method === 'HEAD') && url().pathname === '/health') {
    // Degraded is still 200: reads work, and on a full disk so do the receives and deletes that free it.
    const condition = await options.service.condition();
    const health = condition ? { status: 'degraded', reason: condition } : { status: 'ok' };
    reply(
      200,
      { 'content-type': 'application/json', server: HEALTH_SERVER_HEADER },
      JSON.stringify(health),
      false,
    );
    return;
  }
  // A browser opening the server's address goes to the console (an SQS client's GET always has an Action).
  if (request.method === 'GET' && request.url === '/' && request.headers.accept?.includes('text/html')) {
    reply(303, { location: '/console' }, '', false);
    return;
  }
  const answer = ({ status, contentType, body, headers }: Page) =>
    reply(status ?? 200, { ...headers, 'content-type': contentType }, body, false);
  const page = request.method === 'GET' ? options.pages?.[url().pathname] : undefined;
  if (page) {
    const viewer = options.pageAccess?.admit(url().pathname, request) ?? ANYONE;
    answer('contentType' in viewer ? viewer : await refusedAsPage(() => page(url(), viewer)));
    return;
  }
  let body: string;
  try {
    admitBody(options, transport, bodyShare, request);
    body = await readBody(request, transport.maxRequestBytes);
  } catch (error) {
    if (error instanceof SqsError) {
      // The body may be unread: close rather than read on.
      response.setHeader('connection', 'close');
      fail(error);
      return;
    }
    if (error instanceof BodyCutOff) {
      transport.noteAbort(request.socket.remoteAddress ?? 'unknown');
      return;
    }
    throw error;
  }
  if (request.method === 'POST' && options.pageAccess?.isForm(url().pathname)) {
    answer(options.pageAccess.submitForm(url().pathname, request, body, baseUrlOf(request)));
    return;
  }
  // SQS requests never go to /api/, so they do not pay for parsing their URL here.
  const change =
    request.method === 'POST' && request.url?.startsWith('/api/')
      ? options.changes?.[url().pathname]
      : undefined;
  if (change) {
    // As for the SQS API: no other origin's page may make a browser send it.
    const crossOrigin = options.browser?.crossOriginRefusal(request);
    const viewer = crossOrigin
      ? errorPage(crossOrigin)
      : (options.pageAccess?.admitChange(request, body, baseUrlOf(request)) ?? ANYONE);
    answer('contentType' in viewer ? viewer : await refusedAsPage(() => change(body, viewer, request)));
    return;
  }
  try {
    const crossOrigin = options.browser?.crossOriginRefusal(request);
    if (crossOrigin) throw crossOrigin;
    if (request.method === 'OPTIONS' && cors) {
      reply(204, {}, '', false);
      return;
    }
    if (testEndpoint) {
      const refusal = options.pageAccess?.admitTest(request, body);
      answer(refusal ?? (await testEndpoint({ method: request.method ?? 'GET', body })));
      return;
    }
    if (request.method === 'GET') checkGet(request, url(), protocol, options.auth !== undefined);
    const sessionKey = options.pageAccess?.sessionCaller(request, baseUrlOf(request));
    const method = request.method ?? 'GET';
    const caller: AccessKey | undefined =
      sessionKey ??
      options.auth?.authenticate({
        method,
        target: request.url ?? '/',
        rawHeaders: request.rawHeaders,
        body,
      });
    // Only a Query request reads its URL here: a JSON one's action and input are all in its headers and body.
    const decoded = protocol.decode({
      method,
      get url() {
        return url();
      },
      headers: request.headers,
      body,
    });
    action = decoded.action;
    // The action is checked now; each queue it touches is checked by the core as it resolves that queue.
    const access = caller && options.auth?.authorize(caller, action, policyContextOf(request));
    let signal: AbortSignal | undefined;
    let answerRoom: AnswerRoom | undefined;
    const context: RequestContext = {
      baseUrl: baseUrlOf(request),
      senderId: caller?.accessKeyId ?? senderIdOf(request) ?? options.service.accountId,
      // Only long polls read it, so most requests never pay for an AbortController and a close listener.
      get signal() {
        signal ??= abortedOnClose(response);
        return signal;
      },
      admitLongPoll: () => transport.admitLongPoll(request.socket),
      access,
      traceHeader: request.headers['x-amzn-trace-id'] as string | undefined,
      // Only receives read it, so other requests never pay for a share and a close listener.
      get answerRoom() {
        answerRoom ??= answerShare(transport.answers, response);
        return answerRoom;
      },
    };
    const audit = options.operatorAudit?.(action, decoded.input, () => ({
      actor: actorOf({ accessKeyId: caller?.accessKeyId }),
      via: sessionKey ? 'console-session' : caller ? 'signature' : 'unauthenticated',
    }));
    const finishAudit = audit && (await audit);
    const output = await dispatch(options.service, action, decoded.input, context);
    // The action is done: a trail that cannot be written is logged, not answered as the action's failure.
    await finishAudit?.(output).catch((error: unknown) =>
      options.logger.error({ err: error, requestId, action }, 'audit entry not written'),
    );
    if (response.destroyed) return;
    send(protocol.render(action, output, requestId));
  } catch (thrown) {
    if (response.destroyed) return;
    // The audit's own reads come before dispatch, which makes the store's conditions SQS errors.
    const error = asSqsError(thrown);
    if (error instanceof UnavailableError)
      options.logger.warn(
        { requestId, action, reason: error.reason, cause: String(error.cause) },
        error.message,
      );
    if (error instanceof SqsError) {
      fail(error);
      return;
    }
    options.logger.error({ err: error, requestId, action }, 'unexpected error');
    fail(errors.internal());
  }
}

/** A page's answer; a store that cannot work now answers 503 with its reason, as the SQS API does. */
async function refusedAsPage(produce: () => Page | Promise<Page>): Promise<Page> {
  try {
    return await produce();
  } catch (error) {
    const refusal = asSqsError(error);
    if (refusal instanceof UnavailableError) return errorPage(refusal);
    throw error;
  }
}

/**
 * SQS takes a Query request by GET, signed; any web page can make a browser send a GET (an `<img>`, with
 * neither Origin nor, in older browsers, Sec-Fetch-Site). Without credentials Sluice checks no signature,
 * so there a GET must carry one in the Authorization header, which a page cannot add without a CORS
 * preflight; with credentials the signature itself, header or presigned URL, is the proof.
 */
function checkGet(
  request: IncomingMessage,
  url: URL,
  protocol: ProtocolAdapter,
  signaturesChecked: boolean,
): void {
  protocol.checkGet(url);
  if (!signaturesChecked && request.headers.authorization === undefined) throw errors.unsignedGet();
}

/** A signal that aborts when the client goes away before its answer is written. */
function abortedOnClose(response: ServerResponse): AbortSignal {
  const abort = new AbortController();
  if (response.destroyed) abort.abort();
  else
    response.once('close', () => {
      if (!response.writableFinished) abort.abort();
    });
  return abort.signal;
}

/** Room for one answer's messages, held until the answer is sent or its client has gone. */
function answerShare(answers: ByteBudget, response: ServerResponse): BudgetShare {
  const share = new BudgetShare(answers);
  if (response.destroyed) share.releaseAll();
  else response.once('close', () => share.releaseAll());
  return share;
}

/**
 * Takes room for the body in the server's budget of buffered bodies, or throws the error to answer at
 * once, before a byte of it is read: 503 when the budget is full, and, with credentials, the signature's
 * error when its key or date is wrong (the signature itself needs the body).
 */
function admitBody(
  options: HttpServerOptions,
  transport: Transport,
  bodyShare: BudgetShare,
  request: IncomingMessage,
): void {
  const declared = declaredBodyBytes(request);
  // A body past the cap is drained, not kept (see readBody); one of unknown length may be as large as the cap.
  const bytes = declared === undefined ? transport.maxRequestBytes : declared;
  if (bytes > SMALL_TAKE_BYTES)
    options.auth?.checkScope({
      method: request.method ?? 'GET',
      target: request.url ?? '/',
      rawHeaders: request.rawHeaders,
    });
  if (bytes <= transport.maxRequestBytes && !bodyShare.tryTake(bytes)) {
    throw errors.unavailable(
      `The server holds as many request bodies as it may (${transport.bodies.capacity} bytes); retry later.`,
    );
  }
}

/** Content-Length, 0 for a request without a body, undefined for a chunked one. */
function declaredBodyBytes(request: IncomingMessage): number | undefined {
  const length = request.headers['content-length'];
  if (length !== undefined) return Number(length);
  return request.headers['transfer-encoding'] === undefined ? 0 : undefined;
}

/** A body that did not arrive whole: its client went away or reset, or it was cut off as too large. */
class BodyCutOff extends Error {}

/** Past this much, an oversized upload is cut off instead of drained to answer it. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // An oversized body is read to its end but not kept, so the client gets the 413 instead of a reset.
      if (size <= maxBytes) chunks.push(chunk);
      else if (size > DRAIN_LIMIT_BYTES) request.destroy();
    });
    request.once('end', () => {
      ended = true;
      if (size > maxBytes) {
        reject(errors.requestTooLarge(maxBytes));
        return;
      }
      // Invalid UTF-8 must not silently become U+FFFD inside a stored message.
      try {
        resolve(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)));
      } catch {
        reject(errors.malformed('The request body is not valid UTF-8.'));
      }
    });
    // A body cut off (client gone, or destroyed above) settles too, so nothing waits on it forever.
    const cutOff = () => {
      if (!ended) reject(new BodyCutOff());
    };
    request.once('error', cutOff);
    request.once('close', cutOff);
  });
}

function baseUrlOf(request: IncomingMessage): string {
  const host = request.headers.host;
  const address = request.socket.localAddress ?? '127.0.0.1';
  const fallback = `${address.includes(':') ? `[${address}]` : address}:${request.socket.localPort}`;
  const scheme = 'encrypted' in request.socket ? 'https' : 'http';
  return `${scheme}://${host && /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? host : fallback}`;
}

/** The condition keys a caller states about the request's origin (caller-asserted; see docs/guide/authentication.md). */
function policyContextOf(request: IncomingMessage): Record<string, string | undefined> {
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  return { 'aws:SourceArn': header('x-amz-source-arn'), 'aws:SourceAccount': header('x-amz-source-account') };
}

/** SigV4 `Credential=<access key id>/...`; SQS reports the caller in SenderId. */
function senderIdOf(request: IncomingMessage): string | undefined {
  const authorization = request.headers.authorization;
  const match = authorization ? /Credential=([A-Za-z0-9]+)\//.exec(authorization) : null;
  return match?.[1];
}
