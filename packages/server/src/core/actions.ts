import { StoreUnavailableError } from '../store/contract.ts';
import { errors, UnavailableError } from './errors.ts';
import type { Input } from './input.ts';
import type { RequestContext, SqsService } from './sqs-service.ts';

/** The SQS actions Sluice implements; a name not listed here is an unknown operation. */
export const ACTION_NAMES = [
  'CreateQueue',
  'GetQueueUrl',
  'ListQueues',
  'GetQueueAttributes',
  'SetQueueAttributes',
  'DeleteQueue',
  'PurgeQueue',
  'TagQueue',
  'UntagQueue',
  'ListQueueTags',
  'AddPermission',
  'RemovePermission',
  'ListDeadLetterSourceQueues',
  'SendMessage',
  'SendMessageBatch',
  'ReceiveMessage',
  'DeleteMessage',
  'DeleteMessageBatch',
  'ChangeMessageVisibility',
  'ChangeMessageVisibilityBatch',
  'StartMessageMoveTask',
  'ListMessageMoveTasks',
  'CancelMessageMoveTask',
] as const;

export type ActionName = (typeof ACTION_NAMES)[number];

export function isActionName(name: string): name is ActionName {
  return (ACTION_NAMES as readonly string[]).includes(name);
}

/**
 * Runs one action with its input in the API's JSON shape; both wire protocols come through here. Every
 * failure it throws is an SqsError or a bug: the store's conditions become SQS errors here, in one place.
 */
export async function dispatch(
  service: SqsService,
  action: string,
  input: Input,
  context: RequestContext,
): Promise<Record<string, unknown>> {
  if (!isActionName(action)) throw errors.unknownOperation(action);
  try {
    return await service[action](input, context);
  } catch (error) {
    if (error instanceof StoreUnavailableError)
      throw new UnavailableError(error.message, error.reason, { cause: error.cause });
    throw error;
  }
}
