import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ACTION_NAMES } from '../../src/core/actions.ts';
import { createLogger } from '../../src/server/logger.ts';
import { type RunningSluice, startSluice } from '../../src/server/sluice-server.ts';
import { postForm, postJson } from '../helpers/raw-requests.ts';

/**
 * Property: whatever arrives, the answer is a 200 or a well-formed AWS error with a 4xx status, and the
 * server keeps serving. Requests are random and mutated bodies in both protocols, over real HTTP.
 */
const RUNS = Number(process.env.SLUICE_FUZZ_RUNS ?? 400);

describe('protocol fuzzing', () => {
  let sluice: RunningSluice;
  let dir: string;
  let queueUrl: string;
  let cases = 0;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-fuzz-'));
    sluice = await startSluice({ port: 0, dataDir: dir, logger: createLogger('silent') });
    const response = await json('CreateQueue', JSON.stringify({ QueueName: 'fuzz' }));
    queueUrl = ((await response.json()) as { QueueUrl: string }).QueueUrl;
  });
  after(async () => {
    await sluice.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const json = (action: string, body: string) => postJson(sluice.endpoint, action, body);
  const form = (body: string) => postForm(sluice.endpoint, body);

  const action = fc.oneof(fc.constantFrom(...ACTION_NAMES), fc.string({ maxLength: 30 }));
  const scalar = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant('\u0000'),
    fc.constant('x'.repeat(300)),
  );
  const value = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      scalar,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 12 }), tie('value'), { maxKeys: 4 }),
    ),
  })).value;
  const memberName = fc.constantFrom(
    'QueueUrl',
    'QueueName',
    'MessageBody',
    'Entries',
    'Attributes',
    'MessageAttributes',
    'AttributeNames',
    'MessageAttributeNames',
    'MaxNumberOfMessages',
    'WaitTimeSeconds',
    'VisibilityTimeout',
    'DelaySeconds',
    'ReceiptHandle',
    'Tags',
    'TagKeys',
    'Label',
    'NextToken',
    'MaxResults',
  );

  const assertAwsShaped = async (response: Response, protocol: 'json' | 'query') => {
    cases++;
    const text = await response.text();
    if (response.status === 200) return;
    assert.ok(
      response.status >= 400 && response.status < 500,
      `status ${response.status}: ${text.slice(0, 300)}`,
    );
    if (protocol === 'json') {
      const parsed = JSON.parse(text) as { __type?: unknown; message?: unknown };
      assert.match(String(parsed.__type), /^com\.amazonaws\.sqs#\w+$/);
      assert.equal(typeof parsed.message, 'string');
      assert.match(String(response.headers.get('x-amzn-query-error')), /^[\w.]+;(Sender|Receiver)$/);
    } else {
      assert.match(
        text,
        /^<\?xml version="1\.0"\?><ErrorResponse xmlns="[^"]+"><Error><Type>Sender<\/Type><Code>[\w.]+<\/Code>/,
      );
    }
  };

  it('answers random JSON inputs with a result or an AWS error', async () => {
    await fc.assert(
      fc.asyncProperty(
        action,
        fc.dictionary(memberName, value, { maxKeys: 6 }),
        fc.boolean(),
        async (name, input, withQueue) => {
          const body = withQueue ? { ...input, QueueUrl: queueUrl } : input;
          await assertAwsShaped(await json(name, JSON.stringify(body)), 'json');
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('answers mutated and truncated JSON bodies with an AWS error', async () => {
    const valid = JSON.stringify({
      QueueUrl: 'QUEUE',
      Entries: [
        { Id: 'a', MessageBody: 'hello', MessageAttributes: { k: { DataType: 'String', StringValue: 'v' } } },
      ],
    });
    await fc.assert(
      fc.asyncProperty(
        fc.nat(valid.length),
        fc.string({ maxLength: 5 }),
        fc.nat(valid.length),
        async (cut, insert, at) => {
          const mutated = valid.replace('QUEUE', queueUrl);
          const body = mutated.slice(0, at) + insert + mutated.slice(at, Math.max(at, cut + at));
          await assertAwsShaped(await json('SendMessageBatch', body), 'json');
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('answers random flattened Query parameters with a result or an AWS error', async () => {
    const key = fc.oneof(
      memberName,
      fc.constantFrom(
        'Attribute.1.Name',
        'Attribute.1.Value',
        'MessageAttribute.1.Name',
        'MessageAttribute.1.Value.DataType',
        'MessageAttribute.1.Value.StringValue',
        'MessageAttribute.1.Value.BinaryValue',
        'SendMessageBatchRequestEntry.1.Id',
        'SendMessageBatchRequestEntry.1.MessageBody',
        'SendMessageBatchRequestEntry.2.Id',
        'DeleteMessageBatchRequestEntry.1.ReceiptHandle',
        'AttributeName.1',
        'AttributeName.99999999999',
        'Tag.1.Key',
        'Tag.0.Value',
        'Version',
      ),
      fc.string({ maxLength: 20 }),
    );
    await fc.assert(
      fc.asyncProperty(
        action,
        fc.array(fc.tuple(key, fc.string({ maxLength: 30 })), { maxLength: 8 }),
        async (name, pairs) => {
          const params = new URLSearchParams([['Action', name], ['QueueUrl', queueUrl], ...pairs]);
          await assertAwsShaped(await form(params.toString()), 'query');
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('still serves normal requests afterwards (fuzzed calls may have deleted the queue)', async (t) => {
    t.diagnostic(`fuzzed requests tried: ${cases}`);
    assert.equal(cases, RUNS * 3);
    const created = await json('CreateQueue', JSON.stringify({ QueueName: 'after-fuzz' }));
    assert.equal(created.status, 200);
    const listed = await json('ListQueues', JSON.stringify({ QueueNamePrefix: 'after-fuzz' }));
    assert.deepEqual(((await listed.json()) as { QueueUrls?: string[] }).QueueUrls?.length, 1);
  });
});
