/**
 * Lambda event filtering for SQS event source mappings: LocalStack's recordings made on AWS
 * (tests/aws/services/lambda_/event_source_mapping/test_lambda_integration_sqs.py, test_sqs_event_filter and
 * test_sqs_invalid_event_filter) and the examples of the Lambda Developer Guide's "Lambda event filtering"
 * page, restated as data.
 */
import type { JsonObjectValue } from '../../../packages/server/src/core/event-filter/index.ts';

export interface LambdaFilterCase {
  readonly source: string;
  /** FilterCriteria.Filters[].Pattern, as sent. */
  readonly patterns: readonly string[];
  readonly record: JsonObjectValue;
  /** Whether the record is passed to the function, or Lambda's error for the criteria. */
  readonly expected: boolean | { readonly error: string };
}

/** An SQS record as Lambda sends it, with this body. */
export function sqsRecord(body: string, fields: Record<string, unknown> = {}): JsonObjectValue {
  return JSON.parse(
    JSON.stringify({
      messageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
      receiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a',
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '1545082649183',
        SenderId: 'AIDAIENQZJOLO23YVJ4VO',
        ApproximateFirstReceiveTimestamp: '1545082649185',
      },
      messageAttributes: {},
      md5OfBody: 'e4e68fb7bd0e697a0ae8f1bb342846b3',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-2:123456789012:my-queue',
      awsRegion: 'us-east-2',
      ...fields,
    }),
  );
}

const RECORDED = 'recorded on AWS: test_lambda_integration_sqs.py test_sqs_event_filter';

/** [id, filter, body that passed, body that did not (unknown for the older parameters)] */
const recordedFilters: [string, unknown, unknown, unknown?][] = [
  ['single', { body: { 'my-key': ['my-value'] } }, { 'my-key': 'my-value' }, { 'my-key': 'other-value' }],
  [
    'or',
    { body: { 'my-key': ['my-value-one', 'my-value-two'] } },
    { 'my-key': 'my-value-two' },
    { 'my-key': 'other-value' },
  ],
  [
    'and',
    { body: { 'my-key-one': ['other-filter', 'my-value-one'], 'my-key-two': ['my-value-two'] } },
    { 'my-key-one': 'my-value-one', 'my-key-two': 'my-value-two' },
    { 'my-key-one': 'other-value-', 'my-key-two': 'my-value-two' },
  ],
  [
    'exists',
    { body: { 'my-key': [{ exists: true }] } },
    { 'my-key': 'any-value-one' },
    { 'other-key': 'any-value-two' },
  ],
  [
    'numeric-bigger',
    { body: { 'my-number': [{ numeric: ['>', 100] }] } },
    { 'my-number': 101 },
    { 'my-number': 100 },
  ],
  [
    'numeric-smaller',
    { body: { 'my-number': [{ numeric: ['<', 100] }] } },
    { 'my-number': 99 },
    { 'my-number': 100 },
  ],
  [
    'numeric-range',
    { body: { 'my-number': [{ numeric: ['>=', 100, '<', 200] }] } },
    { 'my-number': 100 },
    { 'my-number': 200 },
  ],
  [
    'prefix',
    { body: { 'my-key': [{ prefix: 'yes' }] } },
    { 'my-key': 'yes-value' },
    { 'my-key': 'no-value' },
  ],
  ['valid-json-filter', { body: { 'my-key': ['my-value'] } }, { 'my-key': 'my-value' }, 'plain-string'],
  ['filter0 / single-filter', { body: { testItem: ['test24'] } }, { testItem: 'test24' }],
  ['filter1 / or-filter', { body: { testItem: ['test24', 'test45'] } }, { testItem: 'test45' }],
  [
    'filter2 / and-filter',
    { body: { testItem: ['test24', 'test45'], test2: ['go'] } },
    { testItem: 'test45', test2: 'go' },
  ],
  ['filter3 / exists-filter', { body: { test2: [{ exists: true }] } }, { test2: '7411' }],
  ['filter4', { body: { test2: [{ numeric: ['>', 100] }] } }, { test2: 105 }, 'this is a test string'],
  ['filter5', { body: { test2: [{ numeric: ['<', 100] }] } }, { test2: 93 }],
  ['filter6', { body: { test2: [{ numeric: ['>=', 100, '<', 200] }] } }, { test2: 105 }],
  ['filter7 / numeric-prefix', { body: { test2: [{ prefix: 'us-1' }] } }, { test2: 'us-1-48454' }],
];

const text = (body: unknown): string => (typeof body === 'string' ? body : JSON.stringify(body));

export const lambdaRecordedCases: readonly LambdaFilterCase[] = [
  ...recordedFilters.flatMap(([id, filter, passed, withheld]) => [
    {
      source: `${RECORDED}[${id}]`,
      patterns: [JSON.stringify(filter)],
      record: sqsRecord(text(passed)),
      expected: true,
    },
    ...(withheld === undefined
      ? []
      : [
          {
            source: `${RECORDED}[${id}]`,
            patterns: [JSON.stringify(filter)],
            record: sqsRecord(text(withheld)),
            expected: false,
          },
        ]),
  ]),
  ...[
    'null',
    'simple string',
    JSON.stringify({ eventSource: 'aws:sqs' }),
    JSON.stringify({ eventSource: [] }),
  ].map((pattern) => ({
    source: `recorded on AWS: test_lambda_integration_sqs.py test_sqs_invalid_event_filter[${pattern}]`,
    patterns: [pattern],
    record: sqsRecord('{}'),
    expected: { error: 'Invalid filter pattern definition.' },
  })),
];

const LAMBDA_DOCS = 'AWS docs: Lambda Developer Guide, Lambda event filtering';
const onBody = (label: string, pattern: unknown, cases: [unknown, boolean][]): LambdaFilterCase[] =>
  cases.map(([body, expected]) => ({
    source: `${LAMBDA_DOCS}, ${label}`,
    patterns: [JSON.stringify({ body: pattern })],
    record: sqsRecord(text(body)),
    expected,
  }));

export const lambdaDocumentedCases: readonly LambdaFilterCase[] = [
  ...onBody('comparison operators: Null', { UserID: [null] }, [
    [{ UserID: null }, true],
    [{ UserID: 'null' }, false],
  ]),
  ...onBody('comparison operators: Empty', { LastName: [''] }, [
    [{ LastName: '' }, true],
    [{ LastName: 'Doe' }, false],
  ]),
  ...onBody('comparison operators: Equals', { Name: ['Alice'] }, [
    [{ Name: 'Alice' }, true],
    [{ Name: 'alice' }, false],
  ]),
  ...onBody('comparison operators: And', { Location: ['New York'], Day: ['Monday'] }, [
    [{ Location: 'New York', Day: 'Monday' }, true],
    [{ Location: 'New York', Day: 'Tuesday' }, false],
  ]),
  ...onBody('comparison operators: Or', { PaymentType: ['Credit', 'Debit'] }, [
    [{ PaymentType: 'Debit' }, true],
    [{ PaymentType: 'Cash' }, false],
  ]),
  ...onBody('comparison operators: Not', { Weather: [{ 'anything-but': ['Raining'] }] }, [
    [{ Weather: 'Sunny' }, true],
    [{ Weather: 'Raining' }, false],
  ]),
  ...onBody('comparison operators: Numeric (equals)', { Price: [{ numeric: ['=', 100] }] }, [
    [{ Price: 100 }, true],
    [{ Price: 101 }, false],
  ]),
  ...onBody('comparison operators: Numeric (range)', { Price: [{ numeric: ['>', 10, '<=', 20] }] }, [
    [{ Price: 20 }, true],
    [{ Price: 10 }, false],
  ]),
  ...onBody('comparison operators: Exists', { ProductName: [{ exists: true }] }, [
    [{ ProductName: 'Sluice' }, true],
    [{ Product: 'Sluice' }, false],
  ]),
  ...onBody('comparison operators: Does not exist', { ProductName: [{ exists: false }] }, [
    [{ Product: 'Sluice' }, true],
    [{ ProductName: 'Sluice' }, false],
  ]),
  ...onBody('comparison operators: Begins with', { Region: [{ prefix: 'us-' }] }, [
    [{ Region: 'us-east-2' }, true],
    [{ Region: 'eu-west-1' }, false],
  ]),
  {
    source: `${LAMBDA_DOCS}, duplicate keys: the last value counts`,
    patterns: [
      '{ "body": { "duplicateKey" : ["hello"], "uniqueKey" : ["test123"], "duplicateKey" : ["world"] } }',
    ],
    record: sqsRecord(JSON.stringify({ duplicateKey: 'world', uniqueKey: 'test123' })),
    expected: true,
  },
  {
    source: `${LAMBDA_DOCS}, duplicate keys: the first value is dropped`,
    patterns: [
      '{ "body": { "duplicateKey" : ["hello"], "uniqueKey" : ["test123"], "duplicateKey" : ["world"] } }',
    ],
    record: sqsRecord(JSON.stringify({ duplicateKey: 'hello', uniqueKey: 'test123' })),
    expected: false,
  },
  {
    source: `${LAMBDA_DOCS}, metadata properties: a record field`,
    patterns: ['{ "attributes": { "ApproximateReceiveCount": ["1"] } }'],
    record: sqsRecord('plain text'),
    expected: true,
  },
  {
    source: `${LAMBDA_DOCS}, any of the filters`,
    patterns: ['{ "body": { "kind": ["a"] } }', '{ "body": { "kind": ["b"] } }'],
    record: sqsRecord('{"kind": "b"}'),
    expected: true,
  },
  // "Properly filtering Amazon SQS messages": the body's format against the filter's.
  {
    source: `${LAMBDA_DOCS}, SQS body: plain string body, plain string filter: filtered`,
    patterns: ['{ "body": ["plain text"] }'],
    record: sqsRecord('plain text'),
    expected: true,
  },
  {
    source: `${LAMBDA_DOCS}, SQS body: plain string body, no filter on data properties: metadata only`,
    patterns: ['{ "eventSource": ["aws:sqs"] }'],
    record: sqsRecord('plain text'),
    expected: true,
  },
  {
    source: `${LAMBDA_DOCS}, SQS body: plain string body, valid JSON filter: dropped`,
    patterns: ['{ "body": { "kind": [{ "exists": false }] } }'],
    record: sqsRecord('plain text'),
    expected: false,
  },
  {
    source: `${LAMBDA_DOCS}, SQS body: valid JSON body, plain string filter: dropped`,
    patterns: ['{ "body": [{ "exists": false }] }'],
    record: sqsRecord('{"kind": "a"}'),
    expected: false,
  },
  {
    source: `${LAMBDA_DOCS}, SQS body: valid JSON body, no filter on data properties: metadata only`,
    patterns: ['{ "eventSourceARN": [{ "suffix": ":my-queue" }] }'],
    record: sqsRecord('{"kind": "a"}'),
    expected: true,
  },
  {
    source: `${LAMBDA_DOCS}, SQS body: valid JSON body, valid JSON filter: filtered`,
    patterns: ['{ "body": { "kind": ["a"] } }'],
    record: sqsRecord('{"kind": "a"}'),
    expected: true,
  },
];

/** The page's Kinesis and DynamoDB examples, matched as event patterns on the record's JSON. */
export const lambdaDocumentedPatternExamples: readonly {
  source: string;
  pattern: string;
  event: JsonObjectValue;
  expected: boolean;
}[] = [
  {
    source: `${LAMBDA_DOCS}, filtering examples: metadata and data properties`,
    pattern: '{ "partitionKey": [ "1" ], "data": { "Location": [ "Los Angeles" ] }}',
    event: { partitionKey: '1', data: { Location: 'Los Angeles' } },
    expected: true,
  },
  {
    source: `${LAMBDA_DOCS}, filtering examples: metadata and data properties`,
    pattern: '{ "partitionKey": [ "1" ], "data": { "Location": [ "Los Angeles" ] }}',
    event: {
      partitionKey: '1',
      data: { City: 'Seattle', State: 'WA', Temperature: '46', Month: 'December' },
    },
    expected: false,
  },
  {
    source: `${LAMBDA_DOCS}, filtering examples: numeric range on a data property`,
    pattern: '{ "data": { "Temperature": [ {"numeric": [ ">", 50, "<=", 60 ] } ]}}',
    event: { data: { Temperature: 55 } },
    expected: true,
  },
  {
    source: `${LAMBDA_DOCS}, filtering examples: numeric range on a data property (a string is not a number)`,
    pattern: '{ "data": { "Temperature": [ {"numeric": [ ">", 50, "<=", 60 ] } ]}}',
    event: { data: { Temperature: '55' } },
    expected: false,
  },
  {
    source: `${LAMBDA_DOCS}, multi-level filtering`,
    pattern: '{ "dynamodb": { "Keys": { "Id": { "N": [ "101" ] } } } }',
    event: {
      dynamodb: {
        Keys: { Id: { N: '101' } },
        NewImage: { Message: { S: 'New item!' }, Id: { N: '101' } },
        SequenceNumber: '111',
        SizeBytes: 26,
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    },
    expected: true,
  },
  {
    source: `${LAMBDA_DOCS}, the console's example filter`,
    pattern: '{ "a" : [ 1, 2 ] }',
    event: { a: 2 },
    expected: true,
  },
  {
    source: `${LAMBDA_DOCS}, the console's example filter`,
    pattern: '{ "a" : [ 1, 2 ] }',
    event: { a: 3 },
    expected: false,
  },
];
