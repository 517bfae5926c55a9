import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from 'sluice-client/clock';
import { errors } from '../../core/errors.ts';
import type { Input } from '../../core/input.ts';
import { evaluateQueuePolicy, globRegExp } from './queue-policy.ts';
import { type RequestToVerify, type SigningCredential, verifySigV4 } from './sigv4.ts';

/** One access key the server accepts (config file `credentials`, or `--credentials ID:SECRET`). */
export interface AccessKey extends SigningCredential {
  /** Queue name patterns (`*` any run, `?` one character) this key may touch; all when absent. */
  readonly queues?: readonly string[];
  /** Actions (`SendMessage`, `sqs:Receive*`, `*`) this key may call; all when absent. */
  readonly actions?: readonly string[];
  /**
   * The 12-digit account the key belongs to; the server's own account when absent. A key of another
   * account reaches a queue only where the queue's Policy allows it.
   */
  readonly accountId?: string;
}

/** Condition keys a request states about itself (headers `x-amz-source-arn`, `x-amz-source-account`). */
export type PolicyContext = Readonly<Record<string, string | undefined>>;

export interface Authenticator {
  /** The key that signed the request, or SQS's authentication error. */
  authenticate(request: RequestToVerify): AccessKey;
  /**
   * Throws AccessDenied unless `key` may run `action` on the queue `input` names: the key's own
   * `queues`/`actions` lists, and, for a key of another account, the queue's Policy.
   */
  authorize(key: AccessKey, action: string, input: Input, context: PolicyContext): Promise<void>;
  /** The key with this id and secret (the console's sign-in form), or undefined. */
  verifySecret(accessKeyId: string, secretAccessKey: string): AccessKey | undefined;
}

export function createAuthenticator(options: {
  keys: readonly AccessKey[];
  region: string;
  accountId: string;
  clock: Clock;
  /** The Policy attribute of the named queue; undefined when it has none or does not exist. */
  queuePolicy: (queueName: string) => Promise<string | undefined>;
}): Authenticator {
  const byId = new Map(options.keys.map((key) => [key.accessKeyId, key]));
  const queuePatterns = new Map(
    options.keys.map((key) => [key, key.queues?.map((queue) => globRegExp(queue, true))]),
  );
  const actionPatterns = new Map(
    options.keys.map((key) => [
      key,
      key.actions?.map((action) => globRegExp(action.replace(/^sqs:/i, ''), true)),
    ]),
  );
  return {
    authenticate: (request) =>
      verifySigV4(request, {
        lookup: (id) => byId.get(id),
        region: options.region,
        now: options.clock.now(),
      }),
    async authorize(key, action, input, context) {
      const queue = queueNameOf(input);
      const resource = queue
        ? `arn:aws:sqs:${options.region}:${options.accountId}:${queue}`
        : `arn:aws:sqs:${options.region}:${options.accountId}:*`;
      const allowedAction = actionPatterns.get(key)?.some((pattern) => pattern.test(action)) ?? true;
      const allowedQueue =
        queue === undefined || (queuePatterns.get(key)?.some((pattern) => pattern.test(queue)) ?? true);
      const denied = () =>
        errors.accessDenied(
          `User: ${key.accessKeyId} is not authorized to perform: sqs:${action} on resource: ${resource}`,
        );
      if (!allowedAction || !allowedQueue) throw denied();
      const account = key.accountId ?? options.accountId;
      if (account === options.accountId) return;
      // Another account: only a queue's own Policy can let it in, so account-wide actions stay closed.
      if (queue === undefined) throw denied();
      const decision = evaluateQueuePolicy(await options.queuePolicy(queue), {
        action,
        account,
        resource,
        context,
      });
      if (decision !== 'allow') throw denied();
    },
    verifySecret(accessKeyId, secretAccessKey) {
      const key = byId.get(accessKeyId);
      return key && sameSecret(key.secretAccessKey, secretAccessKey) ? key : undefined;
    },
  };
}

/** Compared as digests, so the time taken says nothing about the secret, not even its length. */
export function sameSecret(expected: string, given: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(expected), digest(given));
}

/** The queue an action works on, from whichever parameter names it. */
function queueNameOf(input: Input): string | undefined {
  const { QueueUrl, QueueName, SourceArn } = input as Record<string, unknown>;
  if (typeof QueueName === 'string') return QueueName;
  if (typeof QueueUrl === 'string') return QueueUrl.replace(/\/+$/, '').split('/').pop();
  if (typeof SourceArn === 'string') return SourceArn.split(':').pop();
  return undefined;
}
