import { StoreUnavailableError } from '../store/contract.ts';
import { ACTION_NAMES, type ActionInputs, type ActionName, type ActionOutputs } from './api-types.ts';
import { errors, UnavailableError } from './errors.ts';
import type { RequestContext } from './request-context.ts';
import type { SqsActions } from './sqs-service.ts';

/** Whether a name is one of the SQS actions (the generated list); any other is an unknown operation. */
export function isActionName(name: string): name is ActionName {
  return (ACTION_NAMES as readonly string[]).includes(name);
}

/** One action's method, as dispatch calls it. */
type Handler = (
  input: ActionInputs[ActionName],
  context: RequestContext,
) => Promise<ActionOutputs[ActionName]>;

/**
 * Runs one action with the input a protocol adapter decoded; both wire protocols come through here. Every
 * failure it throws is an SqsError or a bug: the store's conditions become SQS errors here, in one place.
 * The input is the protocol adapter's, every member already checked against the model, so it has the
 * action's input type; this is the one place that says so.
 */
export async function dispatch(
  service: SqsActions,
  action: string,
  input: Record<string, unknown>,
  context: RequestContext,
): Promise<ActionOutputs[ActionName]> {
  if (!isActionName(action)) throw errors.unknownOperation(action);
  const handler: Handler = service[action].bind(service) as Handler;
  try {
    return await handler(input as ActionInputs[typeof action], context);
  } catch (error) {
    throw asSqsError(error);
  }
}

/** A store that cannot work now as the SQS error it is answered with (503 ServiceUnavailable); others as they are. */
export function asSqsError(error: unknown): unknown {
  return error instanceof StoreUnavailableError
    ? new UnavailableError(error.message, error.reason, { cause: error.cause })
    : error;
}
