import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { ACTION_NAMES } from '../../packages/server/src/core/api-types.ts';
import { createLogger } from '../../packages/server/src/server/logger.ts';
import { type RunningSluice, startSluice } from '../../packages/server/src/server/sluice-server.ts';
import { postForm, postJson } from '../helpers/raw-requests.ts';

/**
 * Property: whatever arrives, the answer is a 200 or a well-formed AWS error with a 4xx status, and the
 * server keeps serving. Requests are random and mutated bodies in both protocols, over real HTTP.
 */
const RUNS = Number(process.env.SLUICE_FUZZ_RUNS ?? 250);
/** Cases per property in the heavier properties (huge and deep values), a fraction of RUNS. */
const HEAVY_RUNS = Math.max(10, Math.round(RUNS / 8));
/** Heap growth allowed over the whole run, measured after a full garbage collection. */
const HEAP_GROWTH_LIMIT = 32 * 1024 * 1024;
/** RSS also holds freed pages the allocator keeps and the huge bodies' buffers; a leak would still pass it. */
const RSS_GROWTH_LIMIT = 192 * 1024 * 1024;

const FORM_TYPE = 'application/x-www-form-urlencoded';
const mib = (bytes: number) => Math.round(bytes / 1024 / 102.4) / 10;

// A full collection before each measure, so the heap compared is what is still reachable.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function settledMemory(): NodeJS.MemoryUsage {
  collectGarbage();
  return process.memoryUsage();
}

describe('protocol fuzzing', () => {
  let sluice: RunningSluice;
  let dir: string;
  let queueUrl: string;
  let cases = 0;
  let memoryBefore: NodeJS.MemoryUsage;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-fuzz-'));
    sluice = await startSluice({ port: 0, dataDir: dir, logger: createLogger('silent') });
    const response = await json('CreateQueue', JSON.stringify({ QueueName: 'fuzz' }));
    queueUrl = ((await response.json()) as { QueueUrl: string }).QueueUrl;
    memoryBefore = settledMemory();
  });
  after(async () => {
    await sluice.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const json = (action: string, body: string | Blob) => postJson(sluice.endpoint, action, body);
  const form = (body: string) => postForm(sluice.endpoint, body);
  const postRaw = (body: Uint8Array, contentType: string | undefined, target?: string) =>
    fetch(sluice.endpoint, {
      method: 'POST',
      headers: {
        ...(contentType === undefined ? {} : { 'content-type': contentType }),
        ...(target === undefined ? {} : { 'x-amz-target': target }),
      },
      body: new Blob([new Uint8Array(body)]),
    });

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
      // SQS's own shapes, or AWS's generic ones (InvalidParameterValueException, MissingRequiredParameterException).
      assert.match(String(parsed.__type), /^com\.amazon(aws\.sqs|\.coral\.service)#\w+$/);
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

  /** A valid request as the SDKs send it, in both protocols, to mutate byte by byte. */
  const sdkShaped = () => ({
    json: JSON.stringify({
      QueueUrl: queueUrl,
      Entries: [
        {
          Id: 'a',
          MessageBody: 'hello',
          DelaySeconds: 0,
          MessageAttributes: { k: { DataType: 'String', StringValue: 'v' } },
        },
        { Id: 'b', MessageBody: 'world', MessageAttributes: { n: { DataType: 'Number', StringValue: '1' } } },
      ],
    }),
    form: new URLSearchParams([
      ['Action', 'SendMessageBatch'],
      ['Version', '2012-11-05'],
      ['QueueUrl', queueUrl],
      ['SendMessageBatchRequestEntry.1.Id', 'a'],
      ['SendMessageBatchRequestEntry.1.MessageBody', 'hello'],
      ['SendMessageBatchRequestEntry.1.MessageAttribute.1.Name', 'k'],
      ['SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType', 'String'],
      ['SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue', 'v'],
      ['SendMessageBatchRequestEntry.2.Id', 'b'],
      ['SendMessageBatchRequestEntry.2.MessageBody', 'world'],
    ]).toString(),
  });

  /** Byte-level edits: replace, insert or delete at a position, with bytes that matter to both syntaxes. */
  const mutation = fc.array(
    fc.record({
      kind: fc.constantFrom('replace', 'insert', 'delete'),
      at: fc.nat(),
      bytes: fc.oneof(
        fc.uint8Array({ minLength: 1, maxLength: 4 }),
        fc.constantFrom(
          ...[
            '%',
            '%FF',
            '%C0%80',
            '%ED%A0%80',
            '&',
            '=',
            '.',
            '"',
            '\\',
            '{',
            '}',
            '[',
            ']',
            ',',
            ':',
            '\\u0000',
          ].map((text) => Buffer.from(text)),
          Buffer.from([0xff]),
          Buffer.from([0xc3]),
          Buffer.from([0xed, 0xa0, 0x80]),
        ),
      ),
    }),
    { minLength: 1, maxLength: 4 },
  );
  const mutate = (text: string, edits: { kind: string; at: number; bytes: Uint8Array }[]): Buffer => {
    let bytes = Buffer.from(text);
    for (const { kind, at, bytes: inserted } of edits) {
      const position = at % (bytes.length + 1);
      const tail = bytes.subarray(
        kind === 'insert' ? position : Math.min(bytes.length, position + inserted.length),
      );
      bytes = Buffer.concat([
        bytes.subarray(0, position),
        kind === 'delete' ? Buffer.alloc(0) : inserted,
        tail,
      ]);
    }
    return bytes;
  };

  it('answers byte-mutated SDK-shaped requests in both protocols with a result or an AWS error', async () => {
    await fc.assert(
      fc.asyncProperty(mutation, mutation, async (jsonEdits, formEdits) => {
        const valid = sdkShaped();
        await assertAwsShaped(
          await json('SendMessageBatch', new Blob([new Uint8Array(mutate(valid.json, jsonEdits))])),
          'json',
        );
        await assertAwsShaped(await postRaw(mutate(valid.form, formEdits), FORM_TYPE), 'query');
      }),
      { numRuns: RUNS },
    );
  });

  it('answers random bytes under wrong, missing and mismatched content types with an AWS error', async () => {
    const contentType = fc.constantFrom(
      undefined,
      'text/plain',
      'application/json',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded; charset=latin1',
      FORM_TYPE,
      'application/x-amz-json-1.0',
      'application/x-amz-json-1.1',
    );
    const body = fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.constant(Buffer.from(sdkShaped().json)),
      fc.constant(Buffer.from(sdkShaped().form)),
    );
    const target = fc.oneof(
      fc.constant(undefined),
      fc.constantFrom(...ACTION_NAMES).map((name) => `AmazonSQS.${name}`),
      fc.string({ maxLength: 30 }),
    );
    await fc.assert(
      fc.asyncProperty(body, contentType, target, async (bytes, type, amzTarget) => {
        const response = await postRaw(bytes, type, amzTarget);
        await assertAwsShaped(response, amzTarget === undefined ? 'query' : 'json');
      }),
      { numRuns: RUNS },
    );
  });

  it('answers huge and deeply nested values in any member with a result or an AWS error', async () => {
    const deep = (depth: number, open: string, close: string, leaf: string) =>
      open.repeat(depth) + leaf + close.repeat(depth);
    const hugeValue = fc.oneof(
      fc.nat({ max: 20_000 }).map((depth) => deep(depth, '{"a":', '}', '1')),
      fc.nat({ max: 20_000 }).map((depth) => deep(depth, '[', ']', '"x"')),
      fc.nat({ max: 300_000 }).map((length) => JSON.stringify('y'.repeat(length))),
      fc
        .nat({ max: 20_000 })
        .map((count) => `[${Array.from({ length: count }, (_, i) => `"${i}"`).join(',')}]`),
      fc
        .nat({ max: 5_000 })
        .map(
          (count) =>
            `{${Array.from({ length: count }, (_, i) => `"k${i}":{"DataType":"String","StringValue":"v"}`).join(',')}}`,
        ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          'SendMessage',
          'SendMessageBatch',
          'SetQueueAttributes',
          'TagQueue',
          'ReceiveMessage',
        ),
        memberName,
        hugeValue,
        async (name, member, valueText) => {
          const body = `{"QueueUrl":${JSON.stringify(queueUrl)},"MessageBody":"m",${JSON.stringify(member)}:${valueText}}`;
          await assertAwsShaped(await json(name, body), 'json');
        },
      ),
      { numRuns: HEAVY_RUNS },
    );
    const huge = fc.oneof(
      fc.nat({ max: 300_000 }).map((length) => [['MessageBody', 'z'.repeat(length)]]),
      fc
        .nat({ max: 5_000 })
        .map((count) => Array.from({ length: count }, (_, i) => [`MessageAttribute.${i + 1}.Name`, `n${i}`])),
      fc.nat({ max: 2_000 }).map((depth) => [[`${'A.1.'.repeat(depth)}B`, 'v']]),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('SendMessage', 'SetQueueAttributes', 'TagQueue'),
        huge,
        async (name, pairs) => {
          const params = new URLSearchParams([
            ['Action', name],
            ['QueueUrl', queueUrl],
            ...(pairs as [string, string][]),
          ]);
          await assertAwsShaped(await form(params.toString()), 'query');
        },
      ),
      { numRuns: HEAVY_RUNS },
    );
  });

  it('answers forbidden characters, duplicate and missing parameters with a result or an AWS error', async () => {
    // JSON escapes (backslash-u in the body text), so the characters reach the core, not the JSON parser.
    const forbidden = fc.constantFrom(
      ...['0000', '0008', 'FFFE', 'FFFF', 'D800', 'DC00', '001F'].map((hex) => `\\u${hex}`),
    );
    await fc.assert(
      fc.asyncProperty(forbidden, memberName, async (escaped, member) => {
        // A raw JSON escape: lone surrogates survive JSON.parse as invalid UTF-16.
        const body = `{"QueueUrl":${JSON.stringify(queueUrl)},"MessageBody":"a${escaped}b",${JSON.stringify(member)}:"${escaped}"}`;
        const response = await json('SendMessage', body);
        await assertAwsShaped(response, 'json');
        assert.notEqual(response.status, 200, `forbidden ${escaped} in ${member} was accepted`);
      }),
      { numRuns: Math.min(RUNS, 100) },
    );
    const valid = [...new URLSearchParams(sdkShaped().form)];
    await fc.assert(
      fc.asyncProperty(
        fc.subarray(valid.map((_, index) => index)),
        fc.array(fc.tuple(fc.nat(valid.length - 1), fc.string({ maxLength: 10 })), { maxLength: 5 }),
        async (kept, duplicates) => {
          // Parameters dropped (missing) and repeated with other values (duplicates), in both protocols.
          const pairs = kept.map((index) => valid[index] as [string, string]);
          for (const [index, value] of duplicates) pairs.push([(valid[index] as [string, string])[0], value]);
          await assertAwsShaped(await form(new URLSearchParams(pairs).toString()), 'query');
          const members = pairs.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`);
          const jsonBody = `{"QueueUrl":${JSON.stringify(queueUrl)},${members.join(',')},"QueueUrl":"x"}`;
          await assertAwsShaped(await json('SendMessageBatch', jsonBody), 'json');
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('keeps memory bounded over all the cases', (t) => {
    const memoryAfter = settledMemory();
    const heapGrowth = memoryAfter.heapUsed - memoryBefore.heapUsed;
    const rssGrowth = memoryAfter.rss - memoryBefore.rss;
    t.diagnostic(
      `after ${cases} cases: heap ${mib(memoryBefore.heapUsed)} -> ${mib(memoryAfter.heapUsed)} MiB, rss ${mib(memoryBefore.rss)} -> ${mib(memoryAfter.rss)} MiB`,
    );
    assert.ok(heapGrowth < HEAP_GROWTH_LIMIT, `heap grew ${mib(heapGrowth)} MiB`);
    assert.ok(rssGrowth < RSS_GROWTH_LIMIT, `rss grew ${mib(rssGrowth)} MiB`);
  });

  it('still serves normal requests afterwards (fuzzed calls may have deleted the queue)', async (t) => {
    t.diagnostic(`fuzzed requests tried: ${cases}`);
    console.log(`protocol fuzzing: ${cases} cases tried`);
    assert.ok(cases >= RUNS * 3 + HEAVY_RUNS * 2, `only ${cases} cases ran`);
    const created = await json('CreateQueue', JSON.stringify({ QueueName: 'after-fuzz' }));
    assert.equal(created.status, 200);
    const listed = await json('ListQueues', JSON.stringify({ QueueNamePrefix: 'after-fuzz' }));
    assert.deepEqual(((await listed.json()) as { QueueUrls?: string[] }).QueueUrls?.length, 1);
  });
});
