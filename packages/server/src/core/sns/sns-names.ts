import { snsErrors } from './sns-errors.ts';

/** Where a topic lives: the server's region and account. */
export interface SnsScope {
  readonly region: string;
  readonly accountId: string;
}

/** `arn:aws:sns:<region>:<account>:<topic>`. */
export function topicArnOf(scope: SnsScope, name: string): string {
  return `arn:aws:sns:${scope.region}:${scope.accountId}:${name}`;
}

const TOPIC_ARN = /^arn:aws:sns:([a-z0-9-]+):(\d{12}):([A-Za-z0-9_-]{1,256}(?:\.fifo)?)$/;

/**
 * The topic name an ARN of this server's region and account names; SNS's errors otherwise: a malformed ARN is
 * an invalid parameter, a well-formed one elsewhere a topic that does not exist here.
 */
export function topicNameOf(scope: SnsScope, arn: string | undefined, parameter = 'TopicArn'): string {
  if (arn === undefined || arn === '')
    throw snsErrors.invalidParameter(`${parameter} Reason: no value for required parameter`);
  const match = TOPIC_ARN.exec(arn);
  if (!match)
    throw snsErrors.invalidParameter(
      `${parameter} Reason: An ARN must have at least 6 elements, not ${arn.split(':').length}`,
    );
  if (match[1] !== scope.region || match[2] !== scope.accountId) throw snsErrors.topicNotFound();
  return match[3]!;
}

/**
 * SNS's errors for a malformed subscription ARN, in AWS's words (recorded: LocalStack's AWS-validated
 * test_unsubscribe_wrong_arn_format): under 6 elements, their count; 6, no subscription id. An ARN of 7 or more
 * elements is well formed: it names no subscription unless the store has it (NotFound, or for Unsubscribe,
 * nothing to do), whatever its service or topic part says.
 */
export function checkSubscriptionArn(arn: string | undefined): void {
  if (arn === undefined || arn === '')
    throw snsErrors.invalidParameter('SubscriptionArn Reason: no value for required parameter');
  const elements = arn.split(':').length;
  if (elements < 6)
    throw snsErrors.invalidParameter(
      `SubscriptionArn Reason: An ARN must have at least 6 elements, not ${elements}`,
    );
  if (elements === 6) throw snsErrors.invalidParameter('SubscriptionId');
}

/** SNS: 1 to 256 letters, digits, `_` and `-`; a FIFO topic's name ends in `.fifo`. */
export function checkTopicName(name: string | undefined, fifo: boolean): string {
  if (name === undefined || name === '') throw snsErrors.invalidParameter('Topic Name');
  const base = name.endsWith('.fifo') ? name.slice(0, -5) : name;
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(base) || name.length > 256) {
    throw fifo ? fifoNameError() : snsErrors.invalidParameter('Topic Name');
  }
  if (fifo !== name.endsWith('.fifo'))
    throw fifo ? fifoNameError() : snsErrors.invalidParameter('Topic Name');
  return name;
}

const fifoNameError = () =>
  snsErrors.invalidParameter(
    'Fifo Topic names must end with .fifo and must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long.',
  );
