import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { jsonProtocol } from '../../packages/server/src/protocol/protocols.ts';
import type { ApiCall, ServeApi } from '../../packages/server/src/server/http/api.ts';
import type { Exchange, Serve } from '../../packages/server/src/server/http/front.ts';
import { byService, type Route, RouteTable } from '../../packages/server/src/server/http/routes.ts';

function exchange(method: string, path: string, headers: Record<string, string> = {}): Exchange {
  const request = { method, url: path, headers } as unknown as IncomingMessage;
  return {
    request,
    response: {} as ServerResponse,
    requestId: 'r',
    method,
    url: () => new URL(path, 'http://localhost'),
    path: new URL(path, 'http://localhost').pathname,
    baseUrl: 'http://localhost',
    bodyShare: undefined as never,
    started: 0n,
  };
}

/** A route that answers with its own name, so a test can tell which served. */
const named =
  (name: string): Serve =>
  async () => ({ contentType: 'text/plain', body: name });
const route = (methods: string, path: string, name: string, when?: Route['when']): Route => ({
  methods,
  path,
  serve: named(name),
  ...(when && { when }),
});

async function served(table: RouteTable, request: Exchange): Promise<string> {
  const reply = await table.find(request).serve(request, jsonProtocol);
  return String(reply?.body);
}

describe('the HTTP front: the route table', () => {
  const table = new RouteTable(
    [
      route('GET HEAD', '/health', 'health'),
      route('GET', '/', 'redirect', (request) => request.headers.accept === 'text/html'),
      route('POST', '/api/change', 'change'),
      route('*', '/_sluice/reset', 'test'),
      route('*', '/2015-03-31/*', 'lambda'),
    ],
    route('*', '*', 'api'),
  );

  test('matches a route by its method and exact path, any method where it says *', async () => {
    assert.equal(await served(table, exchange('GET', '/health')), 'health');
    assert.equal(await served(table, exchange('HEAD', '/health')), 'health');
    assert.equal(await served(table, exchange('POST', '/api/change')), 'change');
    assert.equal(await served(table, exchange('PUT', '/_sluice/reset')), 'test');
  });

  test('a route with a condition serves only the requests it accepts', async () => {
    assert.equal(await served(table, exchange('GET', '/', { accept: 'text/html' })), 'redirect');
    assert.equal(await served(table, exchange('GET', '/')), 'api');
  });

  test('a path ending in * serves every path under it', async () => {
    assert.equal(await served(table, exchange('GET', '/2015-03-31/functions/f/invocations')), 'lambda');
  });

  test('anything else is the API at the root, whatever its method and path (SQS Query goes to queue URLs)', async () => {
    assert.equal(await served(table, exchange('POST', '/')), 'api');
    assert.equal(await served(table, exchange('POST', '/000000000000/q')), 'api');
    assert.equal(await served(table, exchange('GET', '/health/more')), 'api');
    assert.equal(await served(table, exchange('POST', '/health')), 'api');
  });
});

describe('the HTTP front: the API at the root, by service', () => {
  const answering =
    (name: string): ServeApi =>
    async () => ({ contentType: 'text/plain', body: name });
  const serve = byService(
    { sqs: { serve: answering('sqs') }, sns: { serve: answering('sns'), actions: new Set(['Publish']) } },
    'sqs',
  );
  const call = (body: string): ApiCall => ({ body, action: 'unknown' });
  const signedFor = (service: string) => ({
    authorization: `AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/${service}/aws4_request, SignedHeaders=host, Signature=0`,
  });
  const answer = async (request: Exchange, body = '') =>
    String((await serve(request, jsonProtocol, call(body)))?.body);

  test("a signed POST to / goes to the service of its signature's credential scope", async () => {
    assert.equal(await answer(exchange('POST', '/', signedFor('sns'))), 'sns');
    assert.equal(await answer(exchange('POST', '/', signedFor('sqs'))), 'sqs');
    // A service not served here is left to SQS, which answers it as it always did.
    assert.equal(await answer(exchange('POST', '/', signedFor('s3'))), 'sqs');
  });

  test('an unsigned POST to / goes to the service whose Query action it names', async () => {
    assert.equal(await answer(exchange('POST', '/'), 'Action=Publish&TopicArn=x'), 'sns');
    assert.equal(await answer(exchange('POST', '/'), 'Action=SendMessage&QueueUrl=x'), 'sqs');
    assert.equal(await answer(exchange('POST', '/'), '{"QueueUrl":"x"}'), 'sqs');
  });

  test('any request but a POST to / is SQS: queue URLs and Query GETs', async () => {
    assert.equal(await answer(exchange('POST', '/000000000000/q', signedFor('sns'))), 'sqs');
    assert.equal(await answer(exchange('GET', '/?Action=Publish'), ''), 'sqs');
  });
});
