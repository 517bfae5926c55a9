/**
 * EventBridge patterns beyond the templates: the other tests of LocalStack's test_events_patterns.py recorded
 * on AWS (TestEventPattern and PutEvents through a rule), and the documented examples of event-ruler's README,
 * which the EventBridge and SNS pages on `$or`, arrays and `exists` repeat.
 */
import type { JsonObjectValue } from '../../../packages/server/src/core/event-filter/index.ts';
import type { RecordedPatternCase } from './eventbridge-recordings.ts';

const RECORDED = 'recorded on AWS: test_events_patterns.py';

const envelope = (fields: Record<string, unknown>): JsonObjectValue =>
  JSON.parse(
    JSON.stringify({
      version: '0',
      id: '1',
      'detail-type': 'test-detail-type',
      source: 'test-source',
      account: '123456789012',
      time: '2022-07-13T13:48:01Z',
      region: 'us-east-2',
      resources: [],
      ...fields,
    }),
  );

/** A payload like the 35 KB one of the recording: deep, wide, with arrays, one value far inside. */
export function largePayload(): JsonObjectValue {
  let seed = 7;
  const next = () => {
    seed = (seed * 48271) % 2147483647;
    return seed;
  };
  const word = () =>
    Array.from({ length: 8 + (next() % 20) }, () => String.fromCharCode(97 + (next() % 26))).join('');
  const filler = (depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let field = 0; field < 6; field++) {
      const roll = next() % 5;
      out[word()] =
        depth > 0 && roll === 0
          ? filler(depth - 1)
          : depth > 0 && roll === 1
            ? [filler(depth - 1), filler(depth - 1)]
            : roll === 2
              ? next() % 1000
              : word();
    }
    return out;
  };
  return envelope({
    source: 'test-source',
    'detail-type': 'cmd.documents.generate',
    detail: {
      sourceHostname: word(),
      metadata: filler(3),
      payload: {
        ...filler(3),
        nested: { ...filler(2), 'another-level': { deep: [{ 'inside-list': 'q-test-value' }, filler(1)] } },
      },
    },
  });
}

export const eventPatternRecordings: readonly RecordedPatternCase[] = [
  {
    name: `${RECORDED} test_event_pattern_with_multi_key (the last of two equal keys counts)`,
    pattern:
      '{\n  "detail": {\n    "location": [ { "prefix": "us-" } ],\n    "location": [ { "anything-but": "us-east" } ]\n  }\n}\n',
    event: envelope({ detail: { location: 'eu-central-1' } }),
    expected: true,
  },
  {
    name: `${RECORDED} test_event_pattern_with_escape_characters`,
    pattern: String.raw`{"detail": {"escape_star": ["*"], "escape_backslash": ["\\"]}}`,
    event: envelope({ detail: { escape_star: '*', escape_backslash: '\\' } }),
    expected: true,
  },
  {
    name: `${RECORDED} test_event_pattern_source`,
    pattern: '{"source": ["order"], "detail-type": ["Test"]}',
    event: envelope({ source: 'order', 'detail-type': 'Test' }),
    expected: true,
  },
  {
    name: `${RECORDED} test_event_pattern_source (no match)`,
    pattern: '{"source": ["shipment"], "detail-type": ["Test"]}',
    event: envelope({ source: 'order', 'detail-type': 'Test' }),
    expected: false,
  },
  ...[
    [
      'this is valid json but not a dict',
      "Unrecognized token 'this': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (String)\"this is valid json but not a dict\"; line: 1, column: 5]",
    ],
    [
      "{'bad': 'quotation'}",
      "Unexpected character (''' (code 39)): was expecting double-quote to start field name\n at [Source: (String)\"{'bad': 'quotation'}\"; line: 1, column: 2]",
    ],
    [
      '{"not": closed mark"',
      "Unrecognized token 'closed': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (String)\"{\"not\": closed mark\"\"; line: 1, column: 15]",
    ],
    [
      '["not", "a", "dict", "but valid json"]',
      'Filter is not an object\n at [Source: (String)"["not", "a", "dict", "but valid json"]"; line: 1, column: 2]',
    ],
  ].map(([pattern = '', reason = '']) => ({
    name: `${RECORDED} test_invalid_json_event_pattern[${pattern}]`,
    pattern,
    event: envelope({ detail: { test: 'test' } }),
    expected: {
      error: `Event pattern is not valid. Reason: ${reason.split('\n')[0]}`,
      raw: `Event pattern is not valid. Reason: ${reason}`,
    },
  })),
  {
    name: `${RECORDED} test_event_with_large_and_complex_payload (simple pattern)`,
    pattern: '{"detail-type": ["cmd.documents.generate"]}',
    event: largePayload(),
    expected: true,
  },
  {
    name: `${RECORDED} test_event_with_large_and_complex_payload (complex pattern)`,
    pattern: '{"detail": {"payload.nested.another-level.deep": {"inside-list": [{"prefix": "q-test"}]}}}',
    event: largePayload(),
    expected: true,
  },
  ...(
    [
      [{ command: 'display-message', payload: 'baz' }, true],
      [{ command: null, payload: 'baz' }, true],
      [{ command: 'no-message', payload: 'baz' }, false],
    ] as const
  ).map(([detail, expected]) => ({
    name: `${RECORDED} test_put_events_with_rule_pattern_anything_but`,
    pattern: JSON.stringify({
      source: ['core.update-account-command'],
      'detail-type': ['core.update-account-command'],
      detail: { command: [{ 'anything-but': ['no-message'] }] },
    }),
    event: envelope({
      source: 'core.update-account-command',
      'detail-type': 'core.update-account-command',
      detail,
    }),
    expected,
  })),
  ...(
    [
      [true, { key: 'value', payload: 'baz' }, true],
      [true, { 'no-key': 'no-value', payload: 'baz' }, false],
      [false, { key: 'value', payload: 'baz' }, false],
      [false, { 'no-key': 'no-value', payload: 'baz' }, true],
    ] as const
  ).map(([exists, detail, expected]) => ({
    name: `${RECORDED} test_put_events_with_rule_pattern_exists_${exists}`,
    pattern: JSON.stringify({
      source: ['core.update-account-command'],
      'detail-type': ['core.update-account-command'],
      detail: { key: [{ exists }] },
    }),
    event: envelope({
      source: 'core.update-account-command',
      'detail-type': 'core.update-account-command',
      detail,
    }),
    expected,
  })),
  {
    name: `${RECORDED} test_put_event_with_content_base_rule_in_pattern`,
    pattern: JSON.stringify({
      source: [{ exists: true }],
      'detail-type': [{ prefix: 'core.app' }],
      detail: {
        description: ['this-is-event-details'],
        amount: [200],
        salary: [2000, 4000],
        env: ['dev', 'prod'],
        user: ['user1', 'user2', 'user3'],
        admins: ['skyli', { prefix: 'hey' }, { prefix: 'ad' }],
        test1: [{ 'anything-but': 200 }],
        test2: [{ 'anything-but': 'test2' }],
        test3: [{ 'anything-but': ['test3', 'test33'] }],
        test4: [{ 'anything-but': { prefix: 'test4' } }],
        'num-test1': [{ numeric: ['<', 200] }],
        'num-test2': [{ numeric: ['<=', 200] }],
        'num-test3': [{ numeric: ['>', 200] }],
        'num-test4': [{ numeric: ['>=', 200] }],
        'num-test5': [{ numeric: ['>=', 200, '<=', 500] }],
        'num-test6': [{ numeric: ['>', 200, '<', 500] }],
        'num-test7': [{ numeric: ['>=', 200, '<', 500] }],
      },
    }),
    event: envelope({
      source: 'core.update-account-command',
      'detail-type': 'core.app.backend',
      detail: {
        description: 'this-is-event-details',
        amount: 200,
        salary: 2000,
        env: 'prod',
        user: 'user3',
        admins: 'admin',
        test1: 300,
        test2: 'test22',
        test3: 'test333',
        test4: 'this test4',
        ip: '10.102.1.100',
        'num-test1': 100,
        'num-test2': 200,
        'num-test3': 300,
        'num-test4': 200,
        'num-test5': 500,
        'num-test6': 300,
        'num-test7': 300,
      },
    }),
    expected: true,
  },
];

const README = "event-ruler's README (repeated by AWS's EventBridge and SNS pages)";
const employees = {
  employees: [
    { firstName: 'John', lastName: 'Doe' },
    { firstName: 'Anna', lastName: 'Smith' },
    { firstName: 'Peter', lastName: 'Jones' },
  ],
};
const nestedOr = JSON.stringify({
  source: ['aws.cloudwatch'],
  $or: [
    { metricName: ['CPUUtilization', 'ReadLatency'] },
    {
      metricType: ['MetricType'],
      namespace: ['AWS/EC2', 'AWS/ES'],
      $or: [{ metricId: [1234] }, { spaceId: [1000] }],
    },
    { scope: ['Service'] },
  ],
});

export const eventPatternDocumentedExamples: readonly RecordedPatternCase[] = [
  {
    name: `${README}: JSON array matching, objects in an array`,
    pattern: '{ "employees": { "firstName": [ "Anna" ] } }',
    event: employees,
    expected: true,
  },
  {
    name: `${README}: JSON array matching, multi-level arrays`,
    pattern: '{ "employees": { "firstName": [ "Anna" ] } }',
    event: {
      employees: [[employees.employees[0], employees.employees[1]], [employees.employees[2]]],
    } as JsonObjectValue,
    expected: true,
  },
  {
    name: `${README}: array consistency, two fields from different elements of one array do not match`,
    pattern: '{ "employees": { "firstName": [ "Anna" ], "lastName": [ "Jones" ] } }',
    event: employees,
    expected: false,
  },
  {
    name: `${README}: array consistency, two fields of one element match`,
    pattern: '{ "employees": { "firstName": [ "Anna" ], "lastName": [ "Smith" ] } }',
    event: employees,
    expected: true,
  },
  {
    name: `${README}: exists false matches where the key is an object, not a leaf`,
    pattern: '{ "detail": { "c-count": [ { "exists": false } ] } }',
    event: { detail: { state: ['initializing', 'running'], 'c-count': { c1: 100 } } },
    expected: true,
  },
  {
    name: `${README}: exists false does not match a present leaf`,
    pattern: '{ "detail": { "c-count": [ { "exists": false } ] } }',
    event: { detail: { 'c-count': 5 } },
    expected: false,
  },
  {
    name: `${README}: nested OR and AND, the innermost alternative`,
    pattern: nestedOr,
    event: { source: 'aws.cloudwatch', metricType: 'MetricType', namespace: 'AWS/EC2', spaceId: 1000 },
    expected: true,
  },
  {
    name: `${README}: nested OR and AND, an AND short of its OR`,
    pattern: nestedOr,
    event: { source: 'aws.cloudwatch', metricType: 'MetricType', namespace: 'AWS/EC2' },
    expected: false,
  },
  {
    name: `${README}: nested OR and AND, the first alternative`,
    pattern: nestedOr,
    event: { source: 'aws.cloudwatch', metricName: 'ReadLatency' },
    expected: true,
  },
  {
    name: `${README}: "$or" with a reserved word inside is refused`,
    pattern: '{ "$or": [ {"numeric" : 123}, {"prefix": "abc"} ] }',
    event: {},
    expected: {
      error:
        'Event pattern is not valid. Reason: numeric is Ruler reserved fieldName which cannot be used inside $or.',
    },
  },
  {
    name: `${README}: wildcard, escaped star is the character itself`,
    pattern: String.raw`{ "file": [ { "wildcard": "*\\*.txt" } ] }`,
    event: { file: 'notes*.txt' },
    expected: true,
  },
  {
    name: `${README}: wildcard, escaped star does not match other characters`,
    pattern: String.raw`{ "file": [ { "wildcard": "*\\*.txt" } ] }`,
    event: { file: 'notes.txt' },
    expected: false,
  },
  {
    name: `${README}: numeric matching works only on JSON numbers`,
    pattern: '{ "detail": { "x-limit": [ { "numeric": [ "=", 3.018e2 ] } ] } }',
    event: { detail: { 'x-limit': 301.8 } },
    expected: true,
  },
  {
    name: `${README}: IP address matching works with IPv6`,
    pattern: '{ "detail": { "source-ip": [ { "cidr": "2001:db8::/32" } ] } }',
    event: { detail: { 'source-ip': '2001:db8:ffff::1' } },
    expected: true,
  },
];
