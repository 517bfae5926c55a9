import { parseQueueArn } from '#toolkit/arn';
import { SERVE_FLAGS } from '../server/serve-flags.ts';

/** Where the commands that talk to a server look for it unless told otherwise: where `sluice serve` listens by default. */
export const DEFAULT_ENDPOINT = `http://${SERVE_FLAGS.host.default}:${SERVE_FLAGS.port.default}`;

/** Nothing listens at the endpoint: said plainly, with the likely cause, instead of a socket error. */
export class ServerNotRunningError extends Error {
  constructor(endpoint: string) {
    super(`no Sluice at ${endpoint}: is \`sluice serve\` running?`);
  }
}

/**
 * ServerNotRunningError when `error` is a refused connection (fetch puts the socket's error in `cause`, the
 * AWS SDK throws it as it is); `error` itself otherwise.
 */
export function explainRefused(error: unknown, endpoint: string): unknown {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if ((cause as { code?: unknown }).code === 'ECONNREFUSED') return new ServerNotRunningError(endpoint);
  }
  return error;
}

/** A queue as a user names it on the command line: by name, by URL or by ARN. */
export interface QueueReference {
  name: string;
  /** Given as a URL. */
  url?: string;
  /** The account of a URL or ARN. */
  accountId?: string;
  /** Given as an ARN. */
  arn?: string;
}

/** Reads a queue name, URL (http(s)://host/ACCOUNT/NAME) or ARN (arn:aws:sqs:REGION:ACCOUNT:NAME). */
export function queueReference(text: string): QueueReference {
  if (text.startsWith('arn:')) {
    const parsed = parseQueueArn(text);
    return { name: parsed?.name ?? '', accountId: parsed?.accountId, arn: text };
  }
  if (/^https?:\/\//.test(text)) {
    const [accountId, name = ''] = new URL(text).pathname.split('/').filter(Boolean).slice(-2);
    return name === '' ? { name: accountId ?? '', url: text } : { name, accountId, url: text };
  }
  return { name: text };
}

/**
 * The Sluice server a command talks to: `--endpoint` when given, else the server a queue URL names, else the
 * default; without a trailing slash.
 */
export function serverOf(reference: QueueReference, endpoint: string | undefined): string {
  return (
    endpoint ?? (reference.url === undefined ? DEFAULT_ENDPOINT : new URL(reference.url).origin)
  ).replace(/\/+$/, '');
}
