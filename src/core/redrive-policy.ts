import { errors } from './errors.ts';

export interface RedrivePolicy {
  deadLetterTargetArn: string;
  maxReceiveCount: number;
}

/**
 * Parses a RedrivePolicy attribute value. SDKs send maxReceiveCount as a number or a string; both are
 * accepted, as SQS accepts them.
 */
export function parseRedrivePolicy(text: string): RedrivePolicy {
  const invalid = (reason: string) => errors.invalidAttributeValue('RedrivePolicy', reason);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('Redrive policy is not a valid JSON map.');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalid('Redrive policy is not a valid JSON map.');
  const { deadLetterTargetArn, maxReceiveCount } = parsed as Record<string, unknown>;
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
    throw invalid('Value for maxReceiveCount must be an integer from 1 to 1000.');
  }
  return { deadLetterTargetArn, maxReceiveCount: count };
}
