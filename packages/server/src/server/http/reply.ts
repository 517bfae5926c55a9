import type { BrowserGuard } from '../browser-guard.ts';
import type { Logger } from '../logger.ts';
import type { Exchange, Reply } from './front.ts';

export interface ReplyParts {
  browser: BrowserGuard | undefined;
  logger: Logger;
  observeRequest: ((action: string, status: number, seconds: number) => void) | undefined;
  sendTimeoutMs: number;
}

/**
 * Writes a route's answer with the headers every answer carries (CORS for allowed origins, the request id,
 * the length), bounds how long a client may take to read it, tells the metrics of an API request's, and logs
 * it at debug level.
 */
export function writeReply(parts: ReplyParts, exchange: Exchange, reply: Reply, protocol: string): void {
  const { request, response } = exchange;
  const { status = 200, body } = reply;
  const headers =
    'contentType' in reply ? { ...reply.headers, 'content-type': reply.contentType } : reply.headers;
  response.writeHead(status, {
    ...headers,
    ...parts.browser?.corsHeaders(request),
    'x-amzn-requestid': exchange.requestId,
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
  // An answer still waiting in memory for its client: a client that stops taking it must not hold it.
  if (request.socket.writableLength > 0) response.setTimeout(parts.sendTimeoutMs, () => response.destroy());
  const seconds = Number(process.hrtime.bigint() - exchange.started) / 1e9;
  const action = 'action' in reply ? reply.action : undefined;
  if (action !== undefined) parts.observeRequest?.(action, status, seconds);
  if (parts.logger.isLevelEnabled('debug'))
    parts.logger.debug(
      {
        requestId: exchange.requestId,
        action: action ?? 'unknown',
        protocol,
        path: exchange.path,
        status,
        ms: Math.round(seconds * 1e5) / 100,
      },
      'request',
    );
}
