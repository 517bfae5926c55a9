import { createHash, timingSafeEqual } from 'node:crypto';
import { formatQueueArn } from '#toolkit/arn';
import type { Clock } from '#toolkit/clock';
import { errors } from '../../core/errors.ts';
import { OWNER_ONLY_ACTIONS } from '../../core/permissions.ts';
import type { AccessedQueue, QueueAccess } from '../../core/queue-reference.ts';
import { evaluateQueuePolicy, globMatches } from './queue-policy.ts';
import {
  checkSignatureScope,
  type RequestHeadersToVerify,
  type RequestToVerify,
  type SigningCredential,
  verifySigV4,
} from './sigv4.ts';

/** One access key the server accepts (config file `credentials`, or `--credentials ID:SECRET`). */
export interface AccessKey extends SigningCredential {
  /** Queue (and SNS topic) name patterns (`*` any run, `?` one character) this key may touch; all when absent. */
  readonly queues?: readonly string[];
  /** Actions (`SendMessage`, `sqs:Receive*`, `sns:Publish`, `*`) this key may call; all when absent. */
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
   * A request to the Lambda API's event-source-mapping actions: signed for service `lambda`, by a key without
   * queue or action limits (a mapping consumes a queue on its own); throws the error to answer otherwise.
   */
  authenticateLambda(request: RequestToVerify): AccessKey;
  /** Throws the error authenticate would give whatever the body (see checkSignatureScope). */
  checkScope(request: RequestHeadersToVerify): void;
  /**
   * What `key` may do in one request of `action`. Throws AccessDenied at once when it may not call the
   * action at all (its `actions` list; for a key of another account, an action SQS keeps to the owner);
   * otherwise returns the check the core applies to every queue the action touches: the key's `queues`
   * list and, for a key of another account, the queue's Policy.
   */
  authorize(key: AccessKey, action: string, context: PolicyContext): QueueAccess;
  /** The key with this id and secret (the console's sign-in form), or undefined. */
  verifySecret(accessKeyId: string, secretAccessKey: string): AccessKey | undefined;
}

export function createAuthenticator(options: {
  keys: readonly AccessKey[];
  region: string;
  accountId: string;
  clock: Clock;
}): Authenticator {
  const byId = new Map(options.keys.map((key) => [key.accessKeyId, key]));
  const actionPatterns = new Map(
    options.keys.map((key) => [key, key.actions?.map((action) => action.replace(/^(sqs|sns):/i, ''))]),
  );
  const mayCall = (key: AccessKey, action: string) =>
    actionPatterns.get(key)?.some((pattern) => globMatches(pattern, action, true)) ?? true;
  const mayUse = (key: AccessKey, queue: string) =>
    key.queues?.some((pattern) => globMatches(pattern, queue, true)) ?? true;
  const denied = (key: AccessKey, action: string, resource: string) =>
    errors.accessDenied(
      `User: ${key.accessKeyId} is not authorized to perform: sqs:${action} on resource: ${resource}`,
    );
  const verifyOptions = () => ({
    lookup: (id: string) => byId.get(id),
    region: options.region,
    now: options.clock.now(),
  });
  return {
    authenticate: (request) => verifySigV4(request, verifyOptions()),
    authenticateLambda(request) {
      const key = verifySigV4(request, { ...verifyOptions(), service: 'lambda' });
      if (
        key.queues !== undefined ||
        key.actions !== undefined ||
        (key.accountId ?? options.accountId) !== options.accountId
      )
        throw errors.accessDenied(
          `User: ${key.accessKeyId} may not manage event source mappings: sign with a key of this account without queue or action limits.`,
        );
      return key;
    },
    checkScope: (request) => {
      checkSignatureScope(request, verifyOptions());
    },
    authorize(key, action, context) {
      const account = key.accountId ?? options.accountId;
      const owner = account === options.accountId;
      if (!mayCall(key, action) || (!owner && OWNER_ONLY_ACTIONS.has(action)))
        throw denied(
          key,
          action,
          formatQueueArn({ region: options.region, accountId: options.accountId, name: '*' }),
        );
      const allows = (queue: AccessedQueue, as: string) =>
        (as === action || mayCall(key, as)) &&
        mayUse(key, queue.name) &&
        // Another account reaches a queue only where the queue's own Policy lets it in.
        (owner ||
          evaluateQueuePolicy(queue.policy, { action: as, account, resource: queue.arn, context }) ===
            'allow');
      return {
        require(queue, as = action) {
          if (!allows(queue, as)) throw denied(key, as, queue.arn);
        },
        allows: (queue) => allows(queue, action),
      };
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
