/**
 * Every error Sluice returns is an SqsError with an SQS code, created here and only rendered by the
 * protocol adapters. The table gives, per code, the JSON `__type`, the legacy Query code (also sent as
 * `x-amzn-query-error` on JSON), the HTTP status and whether the sender is at fault.
 */

interface ErrorSpec {
  /** JSON protocol `__type`: `com.amazonaws.sqs#<shape>`, or AWS's generic `com.amazon.coral.service#...`. */
  readonly jsonType: string;
  /** Query protocol `<Code>`, and the JSON `x-amzn-query-error` header. */
  readonly queryCode: string;
  readonly status: number;
  readonly sender: boolean;
}

const spec = (
  shape: string,
  queryCode: string,
  status = 400,
  sender = true,
  namespace = 'com.amazonaws.sqs',
): ErrorSpec => ({ jsonType: `${namespace}#${shape}`, queryCode, status, sender });

/** The generic errors SQS's JSON protocol sends with the shapes of AWS's service framework (Coral). */
const coral = (shape: string, queryCode: string): ErrorSpec =>
  spec(shape, queryCode, 400, true, 'com.amazon.coral.service');

export const ERROR_SPECS = {
  QueueDoesNotExist: spec('QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue'),
  QueueNameExists: spec('QueueNameExists', 'QueueAlreadyExists'),
  QueueDeletedRecently: spec('QueueDeletedRecently', 'AWS.SimpleQueueService.QueueDeletedRecently'),
  PurgeQueueInProgress: spec('PurgeQueueInProgress', 'AWS.SimpleQueueService.PurgeQueueInProgress', 403),
  InvalidAttributeName: spec('InvalidAttributeName', 'InvalidAttributeName'),
  InvalidAttributeValue: spec('InvalidAttributeValue', 'InvalidAttributeValue'),
  InvalidParameterValue: coral('InvalidParameterValueException', 'InvalidParameterValue'),
  MissingParameter: coral('MissingRequiredParameterException', 'MissingParameter'),
  InvalidAction: spec('InvalidAction', 'InvalidAction'),
  UnknownOperation: spec('UnknownOperationException', 'InvalidAction'),
  // A GET that names no operation, as SQS answers a browser opening a queue URL.
  NoOperation: spec('UnknownOperationException', 'UnknownOperationException', 404),
  MalformedInput: spec('MalformedQueryString', 'MalformedQueryString'),
  SerializationError: spec('SerializationException', 'SerializationException'),
  ReceiptHandleIsInvalid: spec('ReceiptHandleIsInvalid', 'ReceiptHandleIsInvalid'),
  MessageNotInflight: spec('MessageNotInflight', 'AWS.SimpleQueueService.MessageNotInflight'),
  InvalidMessageContents: spec('InvalidMessageContents', 'InvalidMessageContents'),
  EmptyBatchRequest: spec('EmptyBatchRequest', 'AWS.SimpleQueueService.EmptyBatchRequest'),
  TooManyEntriesInBatchRequest: spec(
    'TooManyEntriesInBatchRequest',
    'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
  ),
  BatchEntryIdsNotDistinct: spec(
    'BatchEntryIdsNotDistinct',
    'AWS.SimpleQueueService.BatchEntryIdsNotDistinct',
  ),
  InvalidBatchEntryId: spec('InvalidBatchEntryId', 'AWS.SimpleQueueService.InvalidBatchEntryId'),
  BatchRequestTooLong: spec('BatchRequestTooLong', 'AWS.SimpleQueueService.BatchRequestTooLong'),
  OverLimit: spec('OverLimit', 'OverLimit', 403),
  UnsupportedOperation: spec('UnsupportedOperation', 'AWS.SimpleQueueService.UnsupportedOperation'),
  RequestTooLarge: spec('RequestEntityTooLarge', 'RequestEntityTooLarge', 413),
  ResourceNotFound: spec('ResourceNotFoundException', 'ResourceNotFoundException', 404),
  // Authentication and access, as AWS's common errors (the JSON shapes are the ones AWS's JSON services send).
  InvalidClientTokenId: spec('UnrecognizedClientException', 'InvalidClientTokenId', 403),
  SignatureDoesNotMatch: spec('InvalidSignatureException', 'SignatureDoesNotMatch', 403),
  IncompleteSignature: spec('IncompleteSignatureException', 'IncompleteSignature', 400),
  MissingAuthenticationToken: spec('MissingAuthenticationTokenException', 'MissingAuthenticationToken', 403),
  AccessDenied: spec('AccessDeniedException', 'AccessDenied', 403),
  // SNS's errors (Query only: the JSON type is never sent, but names the model's exception shape).
  SnsNotFound: spec('NotFoundException', 'NotFound', 404, true, 'com.amazonaws.sns'),
  SnsInvalidParameter: spec('InvalidParameterException', 'InvalidParameter', 400, true, 'com.amazonaws.sns'),
  SnsInvalidParameterValue: spec(
    'InvalidParameterValueException',
    'ParameterValueInvalid',
    400,
    true,
    'com.amazonaws.sns',
  ),
  SnsAuthorizationError: spec(
    'AuthorizationErrorException',
    'AuthorizationError',
    403,
    true,
    'com.amazonaws.sns',
  ),
  SnsTopicLimitExceeded: spec(
    'TopicLimitExceededException',
    'TopicLimitExceeded',
    403,
    true,
    'com.amazonaws.sns',
  ),
  SnsTooManyEntriesInBatchRequest: spec(
    'TooManyEntriesInBatchRequestException',
    'TooManyEntriesInBatchRequest',
    400,
    true,
    'com.amazonaws.sns',
  ),
  SnsEmptyBatchRequest: spec(
    'EmptyBatchRequestException',
    'EmptyBatchRequest',
    400,
    true,
    'com.amazonaws.sns',
  ),
  SnsBatchEntryIdsNotDistinct: spec(
    'BatchEntryIdsNotDistinctException',
    'BatchEntryIdsNotDistinct',
    400,
    true,
    'com.amazonaws.sns',
  ),
  SnsInvalidBatchEntryId: spec(
    'InvalidBatchEntryIdException',
    'InvalidBatchEntryId',
    400,
    true,
    'com.amazonaws.sns',
  ),
  SnsBatchRequestTooLong: spec(
    'BatchRequestTooLongException',
    'BatchRequestTooLong',
    400,
    true,
    'com.amazonaws.sns',
  ),
  InternalError: spec('InternalError', 'InternalError', 500, false),
  ServiceUnavailable: spec('ServiceUnavailable', 'ServiceUnavailable', 503, false),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_SPECS;

export class SqsError extends Error {
  readonly code: ErrorCode;
  /** The message in the Query protocol, where SQS words a few errors differently; else `message`. */
  readonly queryMessage: string;
  constructor(code: ErrorCode, message: string, queryMessage = message) {
    super(message);
    this.code = code;
    this.queryMessage = queryMessage;
  }
  get spec(): ErrorSpec {
    return ERROR_SPECS[this.code];
  }
}

/**
 * A condition of the machine, not a bug (the store's disk full or read-only): answered 503, which tells SDKs
 * to retry later, and logged as a warning naming the reason.
 */
export class UnavailableError extends SqsError {
  constructor(
    message: string,
    readonly reason: string,
    options: { cause: unknown },
  ) {
    super('ServiceUnavailable', message);
    this.cause = options.cause;
  }
}

const INVALID_CHARACTERS =
  'Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF';

/** The messages below are SQS's own wording where we know it, so that people's log searches keep working. */
export const errors = {
  queueDoesNotExist: () =>
    new SqsError(
      'QueueDoesNotExist',
      'The specified queue does not exist.',
      'The specified queue does not exist for this wsdl version.',
    ),
  /** `attribute`: the first attribute whose value differs (SQS names one). */
  queueNameExists: (attribute: string) =>
    new SqsError(
      'QueueNameExists',
      `A queue already exists with the same name and a different value for attribute ${attribute}`,
    ),
  queueDeletedRecently: () =>
    new SqsError(
      'QueueDeletedRecently',
      'You must wait 60 seconds after deleting a queue before you can create another with the same name.',
    ),
  purgeInProgress: (queueName: string) =>
    new SqsError(
      'PurgeQueueInProgress',
      `Only one PurgeQueue operation on ${queueName} is allowed every 60 seconds.`,
    ),
  invalidAttributeName: (name: string) => new SqsError('InvalidAttributeName', `Unknown Attribute ${name}.`),
  /** A known attribute refused in this combination; SQS answers InvalidAttributeName with the reason. */
  attributeNotAllowed: (message: string) => new SqsError('InvalidAttributeName', message),
  invalidAttributeValue: (name: string, reason: string) =>
    new SqsError('InvalidAttributeValue', `Invalid value for the parameter ${name}. Reason: ${reason}`),
  invalidParameterValue: (message: string) => new SqsError('InvalidParameterValue', message),
  invalidParameter: (name: string, value: unknown, reason: string) =>
    new SqsError(
      'InvalidParameterValue',
      `Value ${String(value)} for parameter ${name} is invalid. Reason: ${reason}`,
    ),
  missingParameter: (name: string) =>
    new SqsError('MissingParameter', `The request must contain the parameter ${name}.`),
  unknownOperation: (action: string) =>
    new SqsError('UnknownOperation', `The action ${action} is not valid for this web service.`),
  noOperation: () => new SqsError('NoOperation', 'The request names no operation: a GET needs an Action.'),
  invalidActionForEndpoint: (action: string) =>
    new SqsError('InvalidAction', `The action ${action} is not valid for this endpoint.`),
  malformed: (message: string) => new SqsError('MalformedInput', message),
  serialization: (message: string) => new SqsError('SerializationError', message),
  receiptHandleIsInvalid: (handle: string) =>
    new SqsError(
      'ReceiptHandleIsInvalid',
      `The input receipt handle "${handle}" is not a valid receipt handle.`,
    ),
  /** A stale handle refused on a queue with strict receipt handles (docs/decisions/strict-receipt-handles.md). */
  staleReceiptHandle: (handle: string, why: 'superseded' | 'lapsed') =>
    new SqsError(
      'ReceiptHandleIsInvalid',
      `The input receipt handle "${handle}" is not a valid receipt handle. Reason: ${
        why === 'superseded'
          ? 'the message was received again after this handle was issued'
          : 'its visibility timeout has lapsed'
      } (strict receipt handles).`,
    ),
  messageNotInflight: () => new SqsError('MessageNotInflight', 'The message referred to is not in flight.'),
  invalidMessageContents: () => new SqsError('InvalidMessageContents', INVALID_CHARACTERS),
  invalidAttributeContents: (name: string) =>
    new SqsError('InvalidParameterValue', `Message (user) attribute '${name}': ${INVALID_CHARACTERS}`),
  emptyBatch: (entryName: string) =>
    new SqsError('EmptyBatchRequest', `There should be at least one ${entryName} in the request.`),
  tooManyEntries: (count: number) =>
    new SqsError(
      'TooManyEntriesInBatchRequest',
      `Maximum number of entries per request are 10. You have sent ${count}.`,
    ),
  batchIdsNotDistinct: (id: string) => new SqsError('BatchEntryIdsNotDistinct', `Id ${id} repeated.`),
  invalidBatchEntryId: () =>
    new SqsError(
      'InvalidBatchEntryId',
      'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
    ),
  batchTooLong: (size: number, max: number) =>
    new SqsError(
      'BatchRequestTooLong',
      `Batch requests cannot be longer than ${max} bytes. You have sent ${size} bytes.`,
    ),
  overLimit: (message: string) => new SqsError('OverLimit', message),
  unsupported: (message: string) => new SqsError('UnsupportedOperation', message),
  resourceNotFound: (message: string) => new SqsError('ResourceNotFound', message),
  requestTooLarge: (max: number) =>
    new SqsError('RequestTooLarge', `The request body is larger than the server accepts (${max} bytes).`),
  invalidClientTokenId: () =>
    new SqsError('InvalidClientTokenId', 'The security token included in the request is invalid.'),
  signatureDoesNotMatch: (message: string) => new SqsError('SignatureDoesNotMatch', message),
  incompleteSignature: (message: string) => new SqsError('IncompleteSignature', message),
  missingAuthenticationToken: () =>
    new SqsError('MissingAuthenticationToken', 'Request is missing Authentication Token'),
  /** A console session cookie that is unknown or expired: the console signs in again. */
  sessionEnded: () =>
    new SqsError('MissingAuthenticationToken', 'The console session has ended or expired: sign in again.'),
  accessDenied: (message: string) => new SqsError('AccessDenied', message),
  unsignedGet: () =>
    new SqsError(
      'MissingAuthenticationToken',
      'A Query request by GET must be signed in an Authorization header: any web page can make a browser send a GET. Send it by POST, or sign it.',
    ),
  testModeOff: (path: string) =>
    new SqsError(
      'ResourceNotFound',
      `${path} is served only in test mode: start the server with sluice serve --test-clock.`,
    ),
  wrongMethod: (path: string, method: string, allowed: string) =>
    new SqsError('InvalidAction', `${path} takes ${allowed}, not ${method}.`),
  internal: () => new SqsError('InternalError', 'We encountered an internal error. Please try again.'),
  unavailable: (message: string) => new SqsError('ServiceUnavailable', message),
};
