import { SqsError } from '../errors.ts';

/**
 * SNS's errors, in SNS's codes and words (`Invalid parameter: ...`), as the same error type the Query
 * adapter renders for SQS. Texts are AWS's where recorded (LocalStack's AWS-validated snapshots, botocore's
 * model); docs/decisions/sns-topics.md names the ones Sluice words itself.
 */
export const snsErrors = {
  /** `detail` follows "Invalid parameter: ". */
  invalidParameter: (detail: string) => new SqsError('SnsInvalidParameter', `Invalid parameter: ${detail}`),
  invalidParameterValue: (message: string) => new SqsError('SnsInvalidParameterValue', message),
  topicNotFound: () => new SqsError('SnsNotFound', 'Topic does not exist'),
  subscriptionNotFound: () => new SqsError('SnsNotFound', 'Subscription does not exist'),
  resourceNotFound: () => new SqsError('SnsNotFound', 'Resource does not exist'),
  authorization: (message: string) => new SqsError('SnsAuthorizationError', message),
  /** SMS, mobile push, platform applications, data protection: one clear word for all of them. */
  unsupported: (action: string) =>
    new SqsError(
      'InvalidAction',
      `Sluice does not serve the SNS action ${action}: SMS, mobile push (platform applications and endpoints), phone numbers and data protection policies are not supported. Sluice's SNS delivers topics to SQS queues and HTTP/HTTPS endpoints.`,
    ),
  emptyBatch: () => new SqsError('SnsEmptyBatchRequest', "The batch request doesn't contain any entries"),
  tooManyEntries: () =>
    new SqsError(
      'SnsTooManyEntriesInBatchRequest',
      'The batch request contains more entries than permissible.',
    ),
  batchIdsNotDistinct: () =>
    new SqsError('SnsBatchEntryIdsNotDistinct', 'Two or more batch entries in the request have the same Id.'),
  invalidBatchEntryId: () =>
    new SqsError(
      'SnsInvalidBatchEntryId',
      'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
    ),
  batchTooLong: () =>
    new SqsError(
      'SnsBatchRequestTooLong',
      'The length of all the messages put together is more than the limit.',
    ),
};
