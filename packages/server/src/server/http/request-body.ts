import type { IncomingMessage } from 'node:http';
import { errors, SqsError } from '../../core/errors.ts';
import type { ProtocolAdapter } from '../../protocol/adapter.ts';
import type { Authenticator } from '../auth/access.ts';
import { SMALL_TAKE_BYTES } from '../byte-budget.ts';
import type { Exchange, Reply, Transport } from './front.ts';

/** What bounds a request's body: the server's budget and cap, and, with credentials, the signature's scope. */
export interface BodyLimits {
  transport: Transport;
  auth: Authenticator | undefined;
}

/** The body, or what to answer instead: its error, or nothing when the client went away before sending it. */
export type BodyRead = { readonly body: string } | { readonly answer: Reply | undefined };

/**
 * Reads a request's body within the server's budget of buffered bodies and the cap on one. An error is
 * answered in `protocol` with the connection closed (the body may be unread); a body cut off is noted in the
 * abort log and answered with nothing.
 */
export async function readRequestBody(
  exchange: Exchange,
  { transport, auth }: BodyLimits,
  protocol: ProtocolAdapter,
): Promise<BodyRead> {
  const { request } = exchange;
  try {
    admitBody(exchange, transport, auth);
    return { body: await readBody(request, transport.maxRequestBytes) };
  } catch (error) {
    if (error instanceof SqsError) {
      const { status, headers, body } = protocol.renderError(error, exchange.requestId);
      return { answer: { status, headers: { ...headers, connection: 'close' }, body, action: 'unknown' } };
    }
    if (error instanceof BodyCutOff) {
      transport.noteAbort(request.socket.remoteAddress ?? 'unknown');
      return { answer: undefined };
    }
    throw error;
  }
}

/**
 * Takes room for the body in the server's budget of buffered bodies, or throws the error to answer at
 * once, before a byte of it is read: 503 when the budget is full, and, with credentials, the signature's
 * error when its key or date is wrong (the signature itself needs the body).
 */
function admitBody(exchange: Exchange, transport: Transport, auth: Authenticator | undefined): void {
  const { request } = exchange;
  const declared = declaredBodyBytes(request);
  // A body past the cap is drained, not kept (see readBody); one of unknown length may be as large as the cap.
  const bytes = declared === undefined ? transport.maxRequestBytes : declared;
  if (bytes > SMALL_TAKE_BYTES)
    auth?.checkScope({ method: exchange.method, target: request.url ?? '/', rawHeaders: request.rawHeaders });
  if (bytes <= transport.maxRequestBytes && !exchange.bodyShare.tryTake(bytes)) {
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
