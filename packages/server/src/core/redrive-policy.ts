import { parseJsonObject } from '../shared/json-object.ts';
import { errors } from './errors.ts';

export interface RedrivePolicy {
  deadLetterTargetArn: string;
  maxReceiveCount: number;
}

/**
 * Why a RedrivePolicy is refused, in SQS's shape for it: InvalidParameterValue "Value <policy> for parameter
 * RedrivePolicy is invalid. Reason: <reason>".
 */
export function invalidRedrivePolicy(text: string, reason: string) {
  return errors.invalidParameter('RedrivePolicy', text, reason);
}

/**
 * Parses a RedrivePolicy attribute value. SDKs send maxReceiveCount as a number or a string; both are
 * accepted, as SQS accepts them.
 */
export function parseRedrivePolicy(text: string): RedrivePolicy {
  const invalid = (reason: string) => invalidRedrivePolicy(text, reason);
  const parsed = parseJsonObject(text);
  if (!parsed) throw invalid('Redrive policy is not a valid JSON map.');
  const { deadLetterTargetArn, maxReceiveCount } = parsed;
  if (typeof deadLetterTargetArn !== 'string' || deadLetterTargetArn === '') {
    throw invalid('Redrive policy does not contain mandatory attribute: deadLetterTargetArn.');
  }
  const count =
    typeof maxReceiveCount === 'string' && /^\d+$/.test(maxReceiveCount)
      ? Number(maxReceiveCount)
      : maxReceiveCount;
  if (count === undefined)
    throw invalid('Redrive policy does not contain mandatory attribute: maxReceiveCount.');
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1000) {
    throw invalid(
      `Invalid value for maxReceiveCount: ${String(maxReceiveCount)}, valid values are from 1 to 1000 both inclusive.`,
    );
  }
  return { deadLetterTargetArn, maxReceiveCount: count };
}

export type RedriveAllowPolicy =
  | { redrivePermission: 'allowAll' | 'denyAll' }
  | { redrivePermission: 'byQueue'; sourceQueueArns: string[] };

const MAX_ALLOWED_SOURCES = 10;

/** Parses a RedriveAllowPolicy attribute value, with SQS's rules: byQueue names 1-10 sources, the others none. */
export function parseRedriveAllowPolicy(text: string): RedriveAllowPolicy {
  const invalid = (reason: string) => errors.invalidAttributeValue('RedriveAllowPolicy', reason);
  const parsed = parseJsonObject(text);
  if (!parsed) throw invalid('Redrive allow policy is not a valid JSON map.');
  const { redrivePermission, sourceQueueArns } = parsed;
  if (redrivePermission === 'allowAll' || redrivePermission === 'denyAll') {
    if (sourceQueueArns !== undefined)
      throw invalid(`sourceQueueArns may only be given when redrivePermission is byQueue.`);
    return { redrivePermission };
  }
  if (redrivePermission !== 'byQueue')
    throw invalid('Value for redrivePermission must be one of allowAll, denyAll or byQueue.');
  if (
    !Array.isArray(sourceQueueArns) ||
    sourceQueueArns.length === 0 ||
    sourceQueueArns.some((arn) => typeof arn !== 'string' || arn === '')
  ) {
    throw invalid('sourceQueueArns must be a list of queue ARNs when redrivePermission is byQueue.');
  }
  if (sourceQueueArns.length > MAX_ALLOWED_SOURCES)
    throw invalid(`sourceQueueArns can contain at most ${MAX_ALLOWED_SOURCES} queue ARNs.`);
  return { redrivePermission, sourceQueueArns: sourceQueueArns as string[] };
}

/** Whether a queue with this RedriveAllowPolicy (absent: allowAll) may be the DLQ of `sourceArn`. */
export function allowsRedriveFrom(policyText: string | undefined, sourceArn: string): boolean {
  if (!policyText) return true;
  const policy = parseRedriveAllowPolicy(policyText);
  if (policy.redrivePermission === 'byQueue') return policy.sourceQueueArns.includes(sourceArn);
  return policy.redrivePermission === 'allowAll';
}
