import assert from 'node:assert/strict';
import { it, mock } from 'node:test';
import { SqsError } from '../../packages/server/src/core/errors.ts';
import {
  decodeJsonRequest,
  MAX_JSON_DEPTH,
  nestedDeeperThan,
} from '../../packages/server/src/protocol/json.ts';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

it('measures bracket depth outside strings, escaped quotes included', () => {
  assert.equal(nestedDeeperThan(nested(3), 3), false);
  assert.equal(nestedDeeperThan(nested(4), 3), true);
  assert.equal(nestedDeeperThan('{"a":[{"b":{}}]}', 4), false);
  assert.equal(nestedDeeperThan('{"a":[{"b":{"c":1}}]}', 3), true);
  // Brackets inside strings do not count, however the strings escape their quotes and backslashes.
  assert.equal(nestedDeeperThan(`{"a":"${'['.repeat(100)}"}`, 1), false);
  assert.equal(nestedDeeperThan(`{"a":"\\"${'['.repeat(100)}"}`, 1), false);
  assert.equal(nestedDeeperThan(`{"a":"\\\\","b":${nested(5)}}`, 5), true);
  assert.equal(nestedDeeperThan(`{"a":"\\\\\\"[[[[","b":1}`, 1), false);
  // An unterminated string ends the scan.
  assert.equal(nestedDeeperThan(`{"a":"${'['.repeat(100)}`, 1), false);
});

it('refuses a body nested deeper than the limit with a SerializationException, before parsing it', () => {
  const deep = `{"QueueName":${nested(2_500_000)}}`;
  const parse = mock.method(JSON, 'parse');
  try {
    assert.throws(
      () => decodeJsonRequest('AmazonSQS.GetQueueUrl', deep),
      (error: unknown) =>
        error instanceof SqsError &&
        error.code === 'SerializationError' &&
        error.message === `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`,
    );
    assert.equal(parse.mock.callCount(), 0, 'the deep body was parsed before being refused');
  } finally {
    parse.mock.restore();
  }
  const entry = {
    Id: 'a',
    MessageBody: 'x',
    MessageAttributes: { n: { DataType: 'String', StringListValues: ['v'] } },
  };
  assert.deepEqual(
    decodeJsonRequest('AmazonSQS.SendMessageBatch', JSON.stringify({ Entries: [entry] })).input,
    {
      Entries: [entry],
    },
  );
});
