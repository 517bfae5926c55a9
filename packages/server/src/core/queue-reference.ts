import { parseQueueArn } from '#toolkit/arn';

/**
 * How a request names a queue (a QueueUrl, a queue ARN, a QueueName) and how the caller's access to it is
 * checked. The service turns every such reference into a queue through these parsers and hands the result,
 * and nothing else, to the access check, so what is authorized is what is touched.
 */

const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;
const FIFO_QUEUE_NAME = /^[A-Za-z0-9_-]{1,75}\.fifo$/;

/**
 * SQS's queue names: 1-80 of `A-Za-z0-9_-`, a FIFO queue's ending in `.fifo` (counted in the 80); without
 * `fifo`, a name either kind of queue could have.
 */
export function isQueueName(name: string, fifo?: boolean): boolean {
  if (fifo === undefined) return QUEUE_NAME.test(name) || FIFO_QUEUE_NAME.test(name);
  return fifo ? FIFO_QUEUE_NAME.test(name) : QUEUE_NAME.test(name);
}

/**
 * `[http(s)://host[:port]]/<account>/<name>`, nothing before or after: no query string, fragment, extra
 * segment or percent-encoding, which a client's own URL never has and which would let two readers of one
 * string see two queues. Any host is accepted, as clients reach a server by many names.
 */
const QUEUE_URL = /^(?:https?:\/\/[^/?#\s]+)?\/([^/]+)\/([^/]+)$/i;

/**
 * The queue name a QueueUrl gives on this server, or undefined when the string is not one of its queue
 * URLs (SQS answers QueueDoesNotExist). The account segment is the server's, or `queue` (LocalStack's and
 * ElasticMQ's form); the path alone is what a Query request posted to a queue's URL brings. A bare queue
 * name is the caller's own queue of that name: SQS takes one wherever a QueueUrl goes.
 */
export function queueNameOfUrl(url: string, accountId: string): string | undefined {
  if (isQueueName(url)) return url;
  const [, owner, name] = QUEUE_URL.exec(url) ?? [];
  if (owner !== accountId && owner !== 'queue') return undefined;
  return name !== undefined && isQueueName(name) ? name : undefined;
}

/** The queue name an ARN gives on this server (`arn:aws:sqs:<region>:<account>:<name>`), or undefined. */
export function queueNameOfArn(arn: string, region: string, accountId: string): string | undefined {
  const parsed = parseQueueArn(arn);
  if (parsed?.partition !== 'aws' || parsed.region !== region || parsed.accountId !== accountId)
    return undefined;
  return isQueueName(parsed.name) ? parsed.name : undefined;
}

/** A queue a request touches, as the caller's access check sees it. It may not exist (yet). */
export interface AccessedQueue {
  readonly name: string;
  readonly arn: string;
  /** The queue's Policy attribute; undefined when it has none or does not exist. */
  readonly policy: string | undefined;
}

/**
 * The caller's rights in one request, given by the transport (Sluice's access keys); a request without
 * one is unrestricted. The core asks it about every queue the action touches, and knows nothing of how
 * it decides.
 */
export interface QueueAccess {
  /**
   * Throws AccessDenied unless the caller may run the request's action on `queue`, or `action` where
   * the request does something else there (a move task sends into its destinations).
   */
  require(queue: AccessedQueue, action?: string): void;
  /** Whether a list the action returns (ListQueues, ListDeadLetterSourceQueues) may show `queue`. */
  allows(queue: AccessedQueue): boolean;
}

/**
 * Who asks, as far as the queue rules care: the caller's access check, applied to every queue the action
 * touches. Callers inside the server (the config file, tests) pass none and are unrestricted.
 */
export interface CallerScope {
  access?: QueueAccess;
}
