import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { systemClock } from '#toolkit/clock';
import { protocolOf } from '../../protocol/protocols.ts';
import { clientAbortLog } from '../abort-log.ts';
import type { BrowserGuard } from '../browser-guard.ts';
import { BudgetShare, ByteBudget, defaultAnswerBudgetBytes, defaultBodyBudgetBytes } from '../byte-budget.ts';
import { CONNECTION_LIMIT_DEFAULTS, guardConnections, nodeTimeoutOptions } from '../connections.ts';
import { LONG_POLL_CAP_DEFAULTS, longPollGate } from '../long-poll-gate.ts';
import { DEFAULT_MAX_REQUEST_BYTES, exchangeOf, type HttpServerOptions, type Transport } from './front.ts';
import { type ReplyParts, writeReply } from './reply.ts';
import { type RouteTable, routesOf } from './routes.ts';

export type SluiceHttpServer = Server | HttpsServer;

/**
 * The HTTP front: finds each request's route in the table (routes.ts), lets it serve the request, and writes
 * its answer. Nothing here knows a queue rule, a protocol or a page.
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
  const front: Front = {
    routes: routesOf(options, transport),
    browser: options.browser,
    reply: {
      browser: options.browser,
      logger: options.logger,
      observeRequest: options.observeRequest,
      sendTimeoutMs: transport.sendTimeoutMs,
    },
  };
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    const bodyShare = new BudgetShare(transport.bodies);
    serveRequest(front, bodyShare, request, response)
      .catch((error: unknown) => {
        options.logger.error({ err: error }, 'request handling failed');
        if (!response.headersSent) response.writeHead(500).end();
        else response.destroy();
      })
      .finally(() => bodyShare.releaseAll());
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

/** What serves every request: the route table, the Host check, and how answers are written. */
interface Front {
  routes: RouteTable;
  browser: BrowserGuard | undefined;
  reply: ReplyParts;
}

/** One request: its route, the Host check every route takes first, the route's answer written. */
async function serveRequest(
  front: Front,
  bodyShare: BudgetShare,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const exchange = exchangeOf(request, response, bodyShare);
  const route = front.routes.find(exchange);
  const protocol = route.protocol ?? protocolOf(request.headers);
  const wrongHost = front.browser?.hostRefusal(request);
  const reply = wrongHost
    ? { ...protocol.renderError(wrongHost, exchange.requestId), action: 'unknown' }
    : await route.serve(exchange, protocol);
  if (reply === undefined || response.destroyed) return;
  writeReply(front.reply, exchange, reply, protocol.name);
}
