import type { SqsError } from '../core/errors.ts';

/** What a protocol adapter reads of an HTTP request: nothing of Node's objects, so it stays testable alone. */
export interface WireRequest {
  readonly method: string;
  /** The URL's path and query string. */
  readonly url: URL;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body, already read and checked to be UTF-8. */
  readonly body: string;
}

/** An action name and its input, typed against the API model (the core checks names it does not know). */
export interface DecodedRequest {
  readonly action: string;
  readonly input: Record<string, unknown>;
}

export interface WireAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * One SQS wire protocol: the HTTP front picks the adapter from the request's headers and from then on knows
 * no protocol; everything that differs between AWS JSON 1.0 and Query (form params, XML) lives behind this.
 */
export interface ProtocolAdapter {
  /** For logs. */
  readonly name: 'json' | 'query';
  /**
   * Throws what SQS answers a GET before it reads the action's input (the JSON protocol is POST only; a
   * Query GET without an action, or on a queue's URL for an action without one).
   */
  checkGet(url: URL): void;
  /** The action and its input with every member of the type the model gives; throws SqsError otherwise. */
  decode(request: WireRequest): DecodedRequest;
  render(action: string, output: Record<string, unknown>, requestId: string): WireAnswer;
  renderError(error: SqsError, requestId: string): WireAnswer;
}
