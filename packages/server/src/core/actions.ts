import { StoreUnavailableError } from '../store/contract.ts';
import { ACTION_NAMES, type ActionInputs, type ActionName, type ActionOutputs } from './api-types.ts';
import { errors, UnavailableError } from './errors.ts';
import type { MoveTasks } from './move-tasks.ts';
import type { QueueActions } from './queue-actions.ts';
import type { ReceiptActions } from './receipt-actions.ts';
import type { ReceiveActions } from './receive-actions.ts';
import type { RequestContext } from './request-context.ts';
import type { SendActions } from './send-actions.ts';

/** Every SQS action, with its typed input and output, as dispatch calls it. */
export type SqsActions = {
  [Action in ActionName]: (
    input: ActionInputs[Action],
    context: RequestContext,
  ) => Promise<ActionOutputs[Action]>;
};

/** The modules that carry out the actions, one per group of actions. */
export interface ActionModules {
  queueActions: QueueActions;
  sendActions: SendActions;
  receiveActions: ReceiveActions;
  receiptActions: ReceiptActions;
  moveTasks: MoveTasks;
}

/**
 * The action table: each SQS action to the method of the module that carries it out, with nothing between.
 * `satisfies SqsActions` checks that every action is here with its generated input and output types; the
 * table keeps the methods' own signatures (a caller scope that defaults to none), which the tests use.
 */
export function actionTable({
  queueActions,
  sendActions,
  receiveActions,
  receiptActions,
  moveTasks,
}: ActionModules) {
  return {
    CreateQueue: queueActions.CreateQueue.bind(queueActions),
    GetQueueUrl: queueActions.GetQueueUrl.bind(queueActions),
    ListQueues: queueActions.ListQueues.bind(queueActions),
    GetQueueAttributes: queueActions.GetQueueAttributes.bind(queueActions),
    SetQueueAttributes: queueActions.SetQueueAttributes.bind(queueActions),
    DeleteQueue: queueActions.DeleteQueue.bind(queueActions),
    PurgeQueue: queueActions.PurgeQueue.bind(queueActions),
    TagQueue: queueActions.TagQueue.bind(queueActions),
    UntagQueue: queueActions.UntagQueue.bind(queueActions),
    ListQueueTags: queueActions.ListQueueTags.bind(queueActions),
    AddPermission: queueActions.AddPermission.bind(queueActions),
    RemovePermission: queueActions.RemovePermission.bind(queueActions),
    ListDeadLetterSourceQueues: queueActions.ListDeadLetterSourceQueues.bind(queueActions),
    SendMessage: sendActions.SendMessage.bind(sendActions),
    SendMessageBatch: sendActions.SendMessageBatch.bind(sendActions),
    ReceiveMessage: receiveActions.ReceiveMessage.bind(receiveActions),
    DeleteMessage: receiptActions.DeleteMessage.bind(receiptActions),
    DeleteMessageBatch: receiptActions.DeleteMessageBatch.bind(receiptActions),
    ChangeMessageVisibility: receiptActions.ChangeMessageVisibility.bind(receiptActions),
    ChangeMessageVisibilityBatch: receiptActions.ChangeMessageVisibilityBatch.bind(receiptActions),
    StartMessageMoveTask: moveTasks.StartMessageMoveTask.bind(moveTasks),
    ListMessageMoveTasks: moveTasks.ListMessageMoveTasks.bind(moveTasks),
    CancelMessageMoveTask: moveTasks.CancelMessageMoveTask.bind(moveTasks),
  } satisfies SqsActions;
}

/** The action table as built: every action, each with its module's own signature. */
export type ActionTable = ReturnType<typeof actionTable>;

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
  actions: SqsActions,
  action: string,
  input: Record<string, unknown>,
  context: RequestContext,
): Promise<ActionOutputs[ActionName]> {
  if (!isActionName(action)) throw errors.unknownOperation(action);
  const handler = actions[action] as Handler;
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
