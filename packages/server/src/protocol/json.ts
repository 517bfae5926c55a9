import { errors, type SqsError } from '../core/errors.ts';
import type { Input } from '../core/input.ts';

/** AWS JSON 1.0: `X-Amz-Target: AmazonSQS.<Action>`, the input as a JSON object. */
export const JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';
const TARGET_PREFIX = 'AmazonSQS.';

export function isJsonRequest(headers: Record<string, string | string[] | undefined>): boolean {
  return typeof headers['x-amz-target'] === 'string';
}

export function decodeJsonRequest(target: string, body: string): { action: string; input: Input } {
  if (!target.startsWith(TARGET_PREFIX)) {
    throw errors.unknownOperation(target);
  }
  const action = target.slice(TARGET_PREFIX.length);
  if (body.trim() === '') return { action, input: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw errors.serialization('The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw errors.serialization('The request body must be a JSON object.');
  }
  return { action, input: parsed as Input };
}

export function renderJsonResponse(output: Record<string, unknown>): string {
  return JSON.stringify(output);
}

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * SQS is query-compatible: besides `__type`, it sends the legacy Query code in `x-amzn-query-error`,
 * which SDKs expose as the error code (e.g. AWS.SimpleQueueService.NonExistentQueue).
 */
export function renderJsonError(error: SqsError): RenderedError {
  const { spec } = error;
  return {
    status: spec.status,
    headers: {
      'content-type': JSON_CONTENT_TYPE,
      'x-amzn-query-error': `${spec.queryCode};${spec.sender ? 'Sender' : 'Receiver'}`,
    },
    body: JSON.stringify({ __type: spec.jsonType, message: error.message }),
  };
}
