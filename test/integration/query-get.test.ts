import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertJsonError, assertQueryError, rawRequest } from '../helpers/raw-requests.ts';
import { type TestServer, useServer } from '../helpers/server.ts';

/**
 * The Query protocol by GET, as SQS answers it before it reads an action's input (recorded on AWS): a GET
 * that names no action, and an action that does not belong on a queue's URL.
 */
describe('Query requests by GET', () => {
  let server: TestServer;
  before(async () => {
    server = await useServer();
  });
  after(() => server?.close());

  /** SQS takes only signed GETs; the signature's value does not matter to a server without keys. */
  const signed = { authorization: 'AWS4-HMAC-SHA256 Credential=test/20261201/us-east-1/sqs/aws4_request' };
  const get = (path: string, headers: Record<string, string> = {}) =>
    rawRequest(server.endpoint, { path, headers: { ...signed, ...headers } });

  test('a GET without an Action is 404 UnknownOperationException, also when the client asks for JSON', async () => {
    for (const path of ['/000000000000/some-queue', '/000000000000/some-queue?Version=2012-11-05', '/']) {
      assertQueryError(await get(path), 'UnknownOperationException', 404);
      assertQueryError(
        await get(path, { 'content-type': 'application/x-amz-json-1.0' }),
        'UnknownOperationException',
        404,
      );
    }
    // The JSON protocol is POST only: by GET, even with a target, it names no operation.
    assertJsonError(
      await get('/000000000000/some-queue', {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'AmazonSQS.ListQueues',
      }),
      'UnknownOperationException',
      'UnknownOperationException',
      404,
    );
  });

  test('on a queue URL, an action that takes no queue, or an unknown one, is InvalidAction for this endpoint', async () => {
    for (const action of [
      'CreateQueue&QueueName=by-get',
      'ListQueues',
      'GetQueueUrl&QueueName=x',
      'NoSuchAction',
    ]) {
      const response = await get(`/000000000000/some-queue?Action=${action}`);
      assertQueryError(response, 'InvalidAction');
      const name = action.split('&')[0];
      assert.ok(
        response.text.includes(`<Message>The action ${name} is not valid for this endpoint.</Message>`),
        response.text,
      );
    }
    // Nothing was created by the refused CreateQueue.
    const list = await rawRequest(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Action=ListQueues&QueueNamePrefix=by-get',
    });
    assert.equal(list.status, 200);
    assert.doesNotMatch(list.text, /by-get/);
  });
});
