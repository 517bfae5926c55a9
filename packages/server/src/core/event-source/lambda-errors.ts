/**
 * The errors of Lambda's event-source-mapping actions, as Lambda's REST-JSON API answers them: the type in the
 * `x-amzn-errortype` header, and a body `{"Type": "User", "message": ...}` (a model constraint's
 * ValidationException carries only `message`). Created here, rendered by the Lambda adapter.
 */
const LAMBDA_ERRORS = {
  InvalidParameterValueException: 400,
  ResourceNotFoundException: 404,
  ResourceConflictException: 409,
  ResourceInUseException: 400,
  ValidationException: 400,
  ServiceException: 500,
  UnrecognizedClientException: 403,
} as const;

export type LambdaErrorType = keyof typeof LAMBDA_ERRORS;

export class LambdaError extends Error {
  constructor(
    readonly type: LambdaErrorType,
    message: string,
  ) {
    super(message);
  }

  get status(): number {
    return LAMBDA_ERRORS[this.type];
  }
}

export const lambdaErrors = {
  invalidParameter: (message: string) => new LambdaError('InvalidParameterValueException', message),
  /** A value outside the API model's constraint, in the words of AWS's request validation. */
  constraint: (field: string, value: unknown, constraint: string) =>
    new LambdaError(
      'ValidationException',
      `1 validation error detected: Value '${String(value)}' at '${field}' failed to satisfy constraint: ${constraint}`,
    ),
  notFound: () => new LambdaError('ResourceNotFoundException', 'The resource you requested does not exist.'),
  conflict: (message: string) => new LambdaError('ResourceConflictException', message),
};
