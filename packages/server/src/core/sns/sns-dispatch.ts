import { asSqsError } from '../actions.ts';
import { SqsError } from '../errors.ts';
import type { RequestContext } from '../request-context.ts';
import { SNS_ACTION_NAMES } from './sns-api-types.ts';
import { snsErrors } from './sns-errors.ts';
import { type SnsActions, SUPPORTED_SNS_ACTIONS, type SupportedSnsAction } from './sns-service.ts';

const SUPPORTED: ReadonlySet<string> = new Set(SUPPORTED_SNS_ACTIONS);
const KNOWN: ReadonlySet<string> = new Set(SNS_ACTION_NAMES);

/** Whether a Query action names an SNS operation (the unsigned request's way of saying it is for SNS). */
export function isSnsAction(action: string): boolean {
  return KNOWN.has(action);
}

type Handler = (input: unknown, context: RequestContext) => Promise<Record<string, unknown>>;

/**
 * Runs one SNS action with the input the Query adapter decoded against SNS's model (so of the action's input
 * type): SNS's actions Sluice does not serve get one error naming what is not supported.
 */
export async function dispatchSns(
  service: SnsActions,
  action: string,
  input: Record<string, unknown>,
  context: RequestContext,
): Promise<Record<string, unknown>> {
  if (!SUPPORTED.has(action)) {
    if (KNOWN.has(action)) throw snsErrors.unsupported(action);
    throw new SqsError('InvalidAction', `The action ${action} is not valid for this web service.`);
  }
  const handler = service[action as SupportedSnsAction].bind(service) as Handler;
  try {
    return await handler(input, context);
  } catch (error) {
    throw asSqsError(error);
  }
}
