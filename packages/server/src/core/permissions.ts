import { parseJsonObject } from '../shared/json-object.ts';
import { errors } from './errors.ts';

/**
 * The queue policy AddPermission and RemovePermission edit, written as SQS writes it: version 2008-10-17,
 * id `<queueArn>/SQSDefaultPolicy`, one statement per label, and a single principal or action as a string
 * (a list for several).
 */
export interface PermissionGrant {
  label: string;
  accountIds: readonly string[];
  actions: readonly string[];
  queueArn: string;
}

/** SQS: "An Amazon SQS policy can have a maximum of seven actions per statement." */
const MAX_ACTIONS = 7;

/**
 * The actions cross-account permissions do not apply to (SQS Developer Guide): no grant may name them, and a
 * queue Policy cannot open them to another account, however it is written.
 */
export const OWNER_ONLY_ACTIONS: ReadonlySet<string> = new Set([
  'AddPermission',
  'CancelMessageMoveTask',
  'CreateQueue',
  'DeleteQueue',
  'ListMessageMoveTasks',
  'ListQueues',
  'ListQueueTags',
  'RemovePermission',
  'SetQueueAttributes',
  'StartMessageMoveTask',
  'TagQueue',
  'UntagQueue',
]);

type Statement = Record<string, unknown> & { Sid?: unknown };

/** The queue's Policy with a statement for `grant` added; refuses what SQS refuses. */
export function withPermission(policyText: string | undefined, grant: PermissionGrant): string {
  if (grant.actions.length > MAX_ACTIONS) {
    throw errors.overLimit(`${grant.actions.length} Actions were found, maximum allowed is ${MAX_ACTIONS}.`);
  }
  const ownerOnly = grant.actions.find((action) => OWNER_ONLY_ACTIONS.has(action));
  if (ownerOnly !== undefined) {
    throw errors.invalidParameter(
      'ActionName',
      `SQS:${ownerOnly}`,
      'Only the queue owner is allowed to invoke this action.',
    );
  }
  const { Version, Id, Statement, ...rest } = parseJsonObject(policyText ?? '') ?? {};
  const statements: Statement[] = Array.isArray(Statement) ? Statement : [];
  if (statements.some((statement) => statement.Sid === grant.label)) {
    throw errors.invalidParameter('Label', grant.label, 'Already exists.');
  }
  const oneOrMany = (items: string[]) => (items.length === 1 ? items[0] : items);
  statements.push({
    Sid: grant.label,
    Effect: 'Allow',
    Principal: { AWS: oneOrMany(grant.accountIds.map((account) => `arn:aws:iam::${account}:root`)) },
    Action: oneOrMany(grant.actions.map((action) => `SQS:${action}`)),
    Resource: grant.queueArn,
  });
  return JSON.stringify({
    Version: Version ?? '2008-10-17',
    Id: Id ?? `${grant.queueArn}/SQSDefaultPolicy`,
    ...rest,
    Statement: statements,
  });
}

/** The queue's Policy without the statement `label`; undefined once no statement is left (SQS drops it). */
export function withoutPermission(policyText: string | undefined, label: string): string | undefined {
  const policy = parseJsonObject(policyText ?? '') ?? {};
  const statements: Statement[] = Array.isArray(policy.Statement) ? policy.Statement : [];
  const remaining = statements.filter((statement) => statement.Sid !== label);
  if (remaining.length === statements.length) {
    throw errors.invalidParameter('Label', label, "can't find label.");
  }
  return remaining.length === 0 ? undefined : JSON.stringify({ ...policy, Statement: remaining });
}
