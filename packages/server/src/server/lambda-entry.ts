/**
 * The Lambda API's event-source-mapping actions on Sluice's port, REST-JSON as AWS Lambda serves them:
 * `POST|GET /2015-03-31/event-source-mappings/` and `GET|PUT|DELETE /2015-03-31/event-source-mappings/{UUID}`,
 * and the tags of mappings (`GET|POST|DELETE /2017-03-31/tags/{ARN}`). This adapter only reads paths, query
 * strings and JSON, and renders answers and Lambda's errors; the rules are core/event-source's. The route
 * table (http/routes.ts) hands it every request whose path starts with LAMBDA_PATH_PREFIX or LAMBDA_TAGS_PREFIX.
 */

import { asSqsError } from '../core/actions.ts';
import { SqsError } from '../core/errors.ts';
import type { EventSourceMappings } from '../core/event-source/event-source-mappings.ts';
import { LambdaError, lambdaErrors } from '../core/event-source/lambda-errors.ts';
import { readJsonObject } from '../shared/json-object.ts';

export const LAMBDA_PATH_PREFIX = '/2015-03-31/event-source-mappings';
/** ListTags, TagResource, UntagResource: `GET|POST|DELETE /2017-03-31/tags/{ARN}`, for mappings' ARNs. */
export const LAMBDA_TAGS_PREFIX = '/2017-03-31/tags';

export interface LambdaRequest {
  method: string;
  url: URL;
  body: string;
  /** Why the transport refuses the request (another origin's page), if it does. */
  refusal?: SqsError;
  /** With credentials configured: checks the request's signature (service `lambda`), or throws. */
  authenticate?: () => unknown;
}

export type LambdaHandler = (request: LambdaRequest) => Promise<LambdaAnswer>;

export interface LambdaAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const json = (status: number, value: unknown): LambdaAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});

/** Lambda's error answer: the type in a header, and `{"Type": "User", "message": ...}`. */
export function lambdaErrorAnswer(error: LambdaError): LambdaAnswer {
  const body =
    error.type === 'ValidationException'
      ? { message: error.message }
      : { Type: 'User', message: error.message };
  return {
    status: error.status,
    headers: { 'content-type': 'application/json', 'x-amzn-errortype': error.type },
    body: JSON.stringify(body),
  };
}

/** A refusal of the transport or the signature check, in Lambda's error shape with SQS's status. */
function refusalAnswer(error: SqsError): LambdaAnswer {
  const type = error.spec.jsonType.replace(/^.*#/, '');
  return {
    status: error.spec.status,
    headers: { 'content-type': 'application/json', 'x-amzn-errortype': type },
    body: JSON.stringify({ Type: 'User', message: error.message }),
  };
}

export function lambdaEntry(mappings: EventSourceMappings): LambdaHandler {
  return async function handleLambda(request) {
    try {
      if (request.refusal) throw request.refusal;
      request.authenticate?.();
      return await route(mappings, request);
    } catch (error) {
      if (error instanceof LambdaError) return lambdaErrorAnswer(error);
      const refusal = asSqsError(error);
      if (refusal instanceof SqsError) return refusalAnswer(refusal);
      throw error;
    }
  };
}

async function route(
  mappings: EventSourceMappings,
  { method, url, body }: LambdaRequest,
): Promise<LambdaAnswer> {
  if (url.pathname.startsWith(`${LAMBDA_TAGS_PREFIX}/`)) {
    const resource = decodeURIComponent(url.pathname.slice(LAMBDA_TAGS_PREFIX.length + 1));
    if (resource === '' || resource.includes('/')) return unknownOperation(method, url);
    if (method === 'GET') return json(200, await mappings.listTags(resource));
    if (method === 'POST') {
      await mappings.tagResource(resource, bodyObject(body));
      return NO_CONTENT;
    }
    if (method === 'DELETE') {
      await mappings.untagResource(resource, url.searchParams.getAll('tagKeys'));
      return NO_CONTENT;
    }
    return unknownOperation(method, url);
  }
  const rest = url.pathname.slice(LAMBDA_PATH_PREFIX.length).replace(/^\/+/, '').replace(/\/+$/, '');
  if (rest === '') {
    if (method === 'POST') return json(202, await mappings.create(bodyObject(body)));
    if (method === 'GET') {
      const query = url.searchParams;
      const maxItems = query.get('MaxItems');
      return json(
        200,
        await mappings.list({
          eventSourceArn: query.get('EventSourceArn') ?? undefined,
          functionName: query.get('FunctionName') ?? undefined,
          marker: query.get('Marker') ?? undefined,
          maxItems: maxItems === null ? undefined : pageSize(maxItems),
        }),
      );
    }
    return unknownOperation(method, url);
  }
  if (rest.includes('/')) return unknownOperation(method, url);
  const uuid = decodeURIComponent(rest);
  if (method === 'GET') return json(200, await mappings.get(uuid));
  if (method === 'PUT') return json(202, await mappings.update(uuid, bodyObject(body)));
  if (method === 'DELETE') return json(202, await mappings.delete(uuid));
  return unknownOperation(method, url);
}

const NO_CONTENT: LambdaAnswer = { status: 204, headers: {}, body: '' };

function bodyObject(body: string): Record<string, unknown> {
  if (body.trim() === '') return {};
  const reading = readJsonObject(body);
  if ('problem' in reading) throw lambdaErrors.invalidParameter('Could not parse request body into json.');
  return reading.object;
}

function pageSize(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 10_000)
    throw lambdaErrors.constraint('maxItems', text, 'Member must have value between 1 and 10000');
  return value;
}

/** What Lambda answers a path or method it does not serve. */
function unknownOperation(method: string, url: URL): LambdaAnswer {
  return {
    status: 404,
    headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'UnknownOperationException' },
    body: JSON.stringify({ Type: 'User', message: `Unknown operation: ${method} ${url.pathname}` }),
  };
}
