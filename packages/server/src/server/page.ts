import type { IncomingMessage } from 'node:http';
import type { SqsError } from '../core/errors.ts';
import { renderJsonError } from '../protocol/json.ts';

/*
 * What the HTTP front serves besides the SQS API (the console, its API, /metrics, test mode's endpoints),
 * apart from the front itself so that the modules serving them need not import it.
 */

export interface Page {
  /** Default 200. */
  status?: number;
  contentType: string;
  body: string | Buffer;
  /** Sent besides the content type: the console's security headers, Set-Cookie, Location, WWW-Authenticate… */
  headers?: Readonly<Record<string, string>>;
}

export interface EndpointRequest {
  method: string;
  body: string;
}

/** A request outside the SQS API; a thrown SqsError is its answer. */
export type Endpoint = (request: EndpointRequest) => Promise<Page>;

/** Who reads a page: which queues it may see, and the key it signed in with (none when pages are open). */
export interface PageViewer {
  readonly accessKeyId?: string;
  /** How the key was proven: a SigV4 signature or the console's session cookie (none when pages are open). */
  readonly authenticatedBy?: 'signature' | 'console-session';
  /** Whether the viewer may see the queue (GetQueueAttributes). */
  mayRead(queue: string): Promise<boolean>;
  /** Whether the viewer may change the queue's settings, its alarm's silence too (SetQueueAttributes). */
  mayConfigure(queue: string): Promise<boolean>;
  /** Whether the viewer may read the queue's messages (ReceiveMessage): triage's browse and search. */
  mayReceive(queue: string): Promise<boolean>;
  /** Whether the viewer may put messages in the queue (SendMessage): where a replay sends them. */
  maySend(queue: string): Promise<boolean>;
}

/** Pages without credentials configured: everyone sees and changes every queue. */
export const ANYONE: PageViewer = {
  mayRead: async () => true,
  mayConfigure: async () => true,
  mayReceive: async () => true,
  maySend: async () => true,
};

/** An SQS-shaped JSON error as a page's answer (with the error's own status unless told another). */
export function errorPage(error: SqsError, status = error.spec.status): Page {
  const rendered = renderJsonError(error);
  const { 'content-type': contentType, ...headers } = rendered.headers;
  return { status, contentType: contentType ?? 'application/json', body: rendered.body, headers };
}

/** A console request that changes state: served on POST, from the console's own origin only. */
export type ConsoleChange = (body: string, viewer: PageViewer, request: IncomingMessage) => Promise<Page>;
