import { asSqsError } from '../../core/actions.ts';
import { errors, SqsError, UnavailableError } from '../../core/errors.ts';
import type { ProtocolAdapter } from '../../protocol/adapter.ts';
import type { BrowserGuard } from '../browser-guard.ts';
import type { Logger } from '../logger.ts';
import type { Exchange, Reply, Serve } from './front.ts';
import { type BodyLimits, readRequestBody } from './request-body.ts';

/** An API request as its service sees it: the body, and its action once decoded. */
export interface ApiCall {
  readonly body: string;
  /** "unknown" until the service has decoded the action: the metrics and the log name it. */
  action: string;
  /** The protocol the service answers in when it is not the request's own (SNS's Query model and namespace). */
  protocol?: ProtocolAdapter;
}

/** One API's work on a request whose body is read and whose origin is allowed; what it throws is answered. */
export type ServeApi = (
  exchange: Exchange,
  protocol: ProtocolAdapter,
  call: ApiCall,
) => Promise<Reply | undefined>;

export interface ApiRouteParts {
  body: BodyLimits;
  browser: BrowserGuard | undefined;
  logger: Logger;
}

/**
 * What every API route does around its service (the SQS API, test mode's endpoints): reads the body, refuses
 * other origins' pages (a browser sends their requests with the user's cookies), answers CORS preflights of
 * the allowed ones, and answers what the service throws as an error in the request's protocol, a store that
 * cannot work now as 503 and anything else as an internal error.
 */
export function apiRoute(parts: ApiRouteParts, serve: ServeApi): Serve {
  return (exchange, protocol) => apiRequest(parts, serve, exchange, protocol);
}

async function apiRequest(
  parts: ApiRouteParts,
  serve: ServeApi,
  exchange: Exchange,
  protocol: ProtocolAdapter,
): Promise<Reply | undefined> {
  const { browser, logger } = parts;
  const read = await readRequestBody(exchange, parts.body, protocol);
  if (!('body' in read)) return read.answer;
  const call: ApiCall = { body: read.body, action: 'unknown' };
  const { request, response, requestId } = exchange;
  try {
    const crossOrigin = browser?.crossOriginRefusal(request);
    if (crossOrigin) throw crossOrigin;
    if (exchange.method === 'OPTIONS' && browser?.corsHeaders(request))
      return { status: 204, headers: {}, body: '' };
    return await serve(exchange, protocol, call);
  } catch (thrown) {
    if (response.destroyed) return undefined;
    const { action } = call;
    // The audit's own reads come before dispatch, which makes the store's conditions SQS errors.
    const error = asSqsError(thrown);
    if (error instanceof UnavailableError)
      logger.warn({ requestId, action, reason: error.reason, cause: String(error.cause) }, error.message);
    const answering = call.protocol ?? protocol;
    if (error instanceof SqsError) return { ...answering.renderError(error, requestId), action };
    logger.error({ err: error, requestId, action }, 'unexpected error');
    return { ...answering.renderError(errors.internal(), requestId), action };
  }
}
