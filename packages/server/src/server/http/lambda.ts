import type { Authenticator } from '../auth/access.ts';
import type { BrowserGuard } from '../browser-guard.ts';
import type { LambdaHandler } from '../lambda-entry.ts';
import type { Serve } from './front.ts';
import { type BodyLimits, readRequestBody } from './request-body.ts';

export interface LambdaRouteParts {
  body: BodyLimits;
  browser: BrowserGuard | undefined;
  auth: Authenticator | undefined;
}

/**
 * The Lambda API's event-source-mapping actions (REST-JSON, lambda-entry.ts): the body read within the
 * server's budgets, then the handler, which answers refusals and errors in Lambda's own shape.
 */
export function serveLambda(handler: LambdaHandler, parts: LambdaRouteParts): Serve {
  return async (exchange, protocol) => {
    const read = await readRequestBody(exchange, parts.body, protocol);
    if (!('body' in read)) return read.answer;
    const { request, method, body } = { ...exchange, body: read.body };
    const { auth } = parts;
    const signed = { method, target: request.url ?? '/', rawHeaders: request.rawHeaders, body };
    return await handler({
      method,
      url: exchange.url(),
      body,
      refusal: parts.browser?.crossOriginRefusal(request),
      authenticate: auth && (() => auth.authenticateLambda(signed)),
    });
  };
}
