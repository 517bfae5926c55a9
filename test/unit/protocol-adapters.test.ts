import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatQueueArn, parseQueueArn } from '../../packages/client/src/arn.ts';
import { errors, SqsError } from '../../packages/server/src/core/errors.ts';
import type { WireRequest } from '../../packages/server/src/protocol/adapter.ts';
import { jsonProtocol, protocolOf } from '../../packages/server/src/protocol/protocols.ts';
import { queryProtocol } from '../../packages/server/src/protocol/query.ts';

const request = (overrides: Partial<WireRequest>): WireRequest => ({
  method: 'POST',
  url: new URL('http://127.0.0.1/'),
  headers: {},
  body: '',
  ...overrides,
});

/** The SQS error code `run` throws. */
const code = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof SqsError, String(error));
    return error.code;
  }
  assert.fail('no error thrown');
};

describe('protocol adapters', () => {
  it('are chosen by the X-Amz-Target header alone', () => {
    assert.equal(protocolOf({ 'x-amz-target': 'AmazonSQS.ListQueues' }), jsonProtocol);
    assert.equal(protocolOf({ 'content-type': 'application/x-amz-json-1.0' }), queryProtocol);
  });

  it('decode the same action and typed input from either wire', () => {
    const fromJson = jsonProtocol.decode(
      request({
        headers: { 'x-amz-target': 'AmazonSQS.ReceiveMessage' },
        body: '{"QueueUrl":"/000000000000/q","MaxNumberOfMessages":3,"Unknown":1}',
      }),
    );
    const fromQuery = queryProtocol.decode(
      request({ body: 'Action=ReceiveMessage&QueueUrl=%2F000000000000%2Fq&MaxNumberOfMessages=3' }),
    );
    assert.deepEqual(fromJson, {
      action: 'ReceiveMessage',
      input: { QueueUrl: '/000000000000/q', MaxNumberOfMessages: 3 },
    });
    assert.deepEqual(fromQuery, fromJson);
  });

  it('refuse what their wire cannot carry, each in its own words', () => {
    const listQueues = { 'x-amz-target': 'AmazonSQS.ListQueues' };
    assert.equal(
      code(() => jsonProtocol.decode(request({ headers: listQueues, body: '[]' }))),
      'SerializationError',
    );
    assert.equal(
      code(() => jsonProtocol.checkGet(new URL('http://127.0.0.1/'))),
      'NoOperation',
    );
    assert.equal(
      code(() => queryProtocol.decode(request({ method: 'PUT', body: 'Action=ListQueues' }))),
      'UnknownOperation',
    );
    assert.equal(
      code(() => queryProtocol.decode(request({ body: 'Action=SendMessage&MessageBody=%FF' }))),
      'MalformedInput',
    );
  });

  it('render answers and errors with their content types', () => {
    assert.deepEqual(jsonProtocol.render('GetQueueUrl', { QueueUrl: 'u' }, 'r'), {
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: '{"QueueUrl":"u"}',
    });
    const xml = queryProtocol.render('GetQueueUrl', { QueueUrl: 'u' }, 'r');
    assert.equal(xml.headers['content-type'], 'text/xml');
    assert.match(xml.body, /<GetQueueUrlResult><QueueUrl>u<\/QueueUrl><\/GetQueueUrlResult>/);
    const error = errors.queueDoesNotExist();
    assert.equal(jsonProtocol.renderError(error, 'r').status, 400);
    assert.match(queryProtocol.renderError(error, 'r').body, /AWS\.SimpleQueueService\.NonExistentQueue/);
  });
});

describe('queue ARNs', () => {
  it('read back what they write', () => {
    const arn = formatQueueArn({ region: 'us-east-1', accountId: '000000000000', name: 'orders' });
    assert.equal(arn, 'arn:aws:sqs:us-east-1:000000000000:orders');
    assert.deepEqual(parseQueueArn(arn), {
      partition: 'aws',
      region: 'us-east-1',
      accountId: '000000000000',
      name: 'orders',
    });
  });

  it('are refused when they are not an SQS queue ARN', () => {
    for (const text of [
      'orders',
      'arn:aws:sns:us-east-1:000000000000:orders',
      'arn:aws:sqs:us-east-1:000000000000',
      'arn:aws:sqs:r:a:b:c',
    ])
      assert.equal(parseQueueArn(text), undefined, text);
  });
});
