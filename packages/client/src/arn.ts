/**
 * SQS queue ARNs, `arn:<partition>:sqs:<region>:<account>:<name>`: the one place both packages read and write
 * them (the server's queue look-ups and access errors, its CLI, the consumer's dead-letter queue).
 */
export interface QueueArn {
  /** `aws` unless told another (`aws-cn`, `aws-us-gov`). */
  readonly partition?: string;
  readonly region: string;
  readonly accountId: string;
  /** The queue's name, or `*` for every queue of the account in an access error. */
  readonly name: string;
}

export function formatQueueArn({ partition = 'aws', region, accountId, name }: QueueArn): string {
  return `arn:${partition}:sqs:${region}:${accountId}:${name}`;
}

/** The parts of a queue ARN, or undefined when the text is not one (queue names hold no colon). */
export function parseQueueArn(text: string): Required<QueueArn> | undefined {
  const parts = text.split(':');
  if (parts.length !== 6) return undefined;
  const [arn, partition, service, region, accountId, name] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (arn !== 'arn' || service !== 'sqs') return undefined;
  return { partition, region, accountId, name };
}
