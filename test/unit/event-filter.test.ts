/**
 * The event filter (packages/server/src/core/event-filter), table-driven: every documented example of the AWS
 * pages on SNS filter policies, EventBridge patterns and Lambda event filtering, and every case LocalStack
 * recorded on AWS, each as data (test/unit/event-filter/*), checked for its outcome or AWS's exact error text.
 * Below the tables, the rules no table shows: bounded cost, and what SNS and Lambda do around the matcher.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compileEventPattern,
  compileFilterPolicy,
  EventPatternError,
  FilterCriteriaError,
  FilterPolicyError,
  type JsonObjectValue,
  MessageIndex,
  matchesPattern,
  parseFilterPolicyScope,
  SnsPublication,
  SqsFilterCriteria,
} from '../../packages/server/src/core/event-filter/index.ts';
import { eventPatternDocumentedExamples, eventPatternRecordings } from './event-filter/eventbridge-cases.ts';
import { eventPatternTemplates, type RecordedPatternCase } from './event-filter/eventbridge-recordings.ts';
import {
  type LambdaFilterCase,
  lambdaDocumentedCases,
  lambdaDocumentedPatternExamples,
  lambdaRecordedCases,
  sqsRecord,
} from './event-filter/lambda-cases.ts';
import {
  type SnsErrorCase,
  type SnsMatchCase,
  snsDocumentedAcceptedPolicies,
  snsDocumentedExamples,
  snsDocumentedPolicyExamples,
  snsRecordedAcceptedPolicies,
  snsRecordedDeliveries,
  snsRecordedErrors,
} from './event-filter/sns-cases.ts';

function eventPatternOutcome(pattern: string, event: JsonObjectValue): boolean | string {
  try {
    return compileEventPattern(pattern).matches(event);
  } catch (error) {
    if (error instanceof EventPatternError) return error.message;
    throw error;
  }
}

function checkEventPattern(testCase: RecordedPatternCase): void {
  const outcome = eventPatternOutcome(testCase.pattern, testCase.event);
  const { expected } = testCase;
  if (typeof expected === 'boolean') assert.equal(outcome, expected);
  else if (expected.raw !== undefined) assert.equal(outcome, expected.raw);
  else assert.equal(typeof outcome === 'string' ? outcome.split('\n')[0] : outcome, expected.error);
}

function snsOutcome(testCase: SnsMatchCase): boolean {
  const policy = compileFilterPolicy(testCase.policy, testCase.scope);
  assert.ok(policy, 'the policy filters');
  const attributes = new Map(Object.entries(testCase.attributes ?? {}));
  return policy.matches(new SnsPublication(testCase.body ?? 'a message', attributes));
}

function snsRefusal(testCase: SnsErrorCase): string {
  try {
    compileFilterPolicy(testCase.policy, testCase.scope);
  } catch (error) {
    if (error instanceof FilterPolicyError) return error.messageFor(testCase.action);
    throw error;
  }
  return 'accepted';
}

function lambdaOutcome(testCase: LambdaFilterCase): boolean | string {
  try {
    return SqsFilterCriteria.compile(testCase.patterns).matches(testCase.record);
  } catch (error) {
    if (error instanceof FilterCriteriaError) return error.message;
    throw error;
  }
}

const tables = {
  'EventBridge TestEventPattern templates (recorded)': eventPatternTemplates.length,
  'EventBridge other pattern tests (recorded)': eventPatternRecordings.length,
  'event-ruler README / EventBridge docs examples': eventPatternDocumentedExamples.length,
  'SNS filter policy errors (recorded, whole message)': snsRecordedErrors.length,
  'SNS policies accepted (recorded)': snsRecordedAcceptedPolicies.length,
  'SNS deliveries (recorded)': snsRecordedDeliveries.length,
  'SNS docs examples': snsDocumentedExamples.length + snsDocumentedPolicyExamples.length,
  'SNS docs policies accepted': snsDocumentedAcceptedPolicies.length,
  'Lambda filter criteria (recorded)': lambdaRecordedCases.length,
  'Lambda docs examples': lambdaDocumentedCases.length + lambdaDocumentedPatternExamples.length,
};

describe('event filter: the tables', () => {
  it('counts its cases', (t) => {
    const total = Object.values(tables).reduce((sum, count) => sum + count, 0);
    for (const [table, count] of Object.entries(tables)) t.diagnostic(`${table}: ${count}`);
    t.diagnostic(`event filter table: ${total} cases`);
    assert.equal(eventPatternTemplates.length, 155);
  });

  describe('EventBridge patterns recorded on AWS (TestEventPattern)', () => {
    for (const testCase of eventPatternTemplates) it(testCase.name, () => checkEventPattern(testCase));
  });

  describe('EventBridge patterns: other recorded tests', () => {
    for (const testCase of eventPatternRecordings) it(testCase.name, () => checkEventPattern(testCase));
  });

  describe('EventBridge patterns: documented examples', () => {
    for (const testCase of eventPatternDocumentedExamples)
      it(testCase.name, () => checkEventPattern(testCase));
  });

  describe('SNS filter policies AWS refused, with its whole message', () => {
    for (const testCase of snsRecordedErrors) {
      it(`${testCase.source} (${testCase.action})`, () => assert.equal(snsRefusal(testCase), testCase.error));
    }
  });

  describe('SNS filter policies AWS accepted', () => {
    for (const testCase of [...snsRecordedAcceptedPolicies, ...snsDocumentedAcceptedPolicies]) {
      it(testCase.source, () => assert.ok(compileFilterPolicy(testCase.policy, testCase.scope)));
    }
  });

  describe('SNS deliveries recorded on AWS', () => {
    snsRecordedDeliveries.forEach((testCase, index) => {
      it(`${testCase.source} #${index}`, () => assert.equal(snsOutcome(testCase), testCase.expected));
    });
  });

  describe('SNS documented examples', () => {
    [...snsDocumentedExamples, ...snsDocumentedPolicyExamples].forEach((testCase, index) => {
      it(`${testCase.source} (${testCase.scope}) #${index}`, () =>
        assert.equal(snsOutcome(testCase), testCase.expected));
    });
  });

  describe('Lambda filter criteria', () => {
    [...lambdaRecordedCases, ...lambdaDocumentedCases].forEach((testCase, index) => {
      it(`${testCase.source} #${index}`, () => {
        const { expected } = testCase;
        assert.equal(lambdaOutcome(testCase), typeof expected === 'boolean' ? expected : expected.error);
      });
    });
    lambdaDocumentedPatternExamples.forEach((testCase, index) => {
      it(`${testCase.source} #${index}`, () => {
        assert.equal(eventPatternOutcome(testCase.pattern, testCase.event), testCase.expected);
      });
    });
  });
});

describe('event filter: SNS around the matcher', () => {
  const attributes = (entries: Record<string, { DataType: string; StringValue: string }>) =>
    new Map(Object.entries(entries));

  it('refuses a FilterPolicyScope other than the two, with the recorded text', () => {
    assert.throws(
      () => parseFilterPolicyScope('RandomValue'),
      (error: FilterPolicyError) =>
        error.message ===
        'Invalid parameter: FilterPolicyScope: Invalid value [RandomValue]. Please use either MessageBody or MessageAttributes',
    );
    assert.equal(parseFilterPolicyScope('MessageBody'), 'MessageBody');
  });

  it('takes an empty policy or {} as no filter (the documented way to remove one)', () => {
    assert.equal(compileFilterPolicy('', 'MessageAttributes'), undefined);
    assert.equal(compileFilterPolicy('{}', 'MessageBody'), undefined);
    assert.equal(compileFilterPolicy(' { } ', 'MessageBody'), undefined);
  });

  it('compares String attributes with `"` and `\\` escaped, as the constraints page tells policies to double-escape', () => {
    const publication = new SnsPublication(
      'x',
      attributes({ quote: { DataType: 'String', StringValue: 'say "hi" \\o/' } }),
    );
    const doubled = compileFilterPolicy(
      JSON.stringify({ quote: ['say \\"hi\\" \\\\o/'] }),
      'MessageAttributes',
    );
    const single = compileFilterPolicy(JSON.stringify({ quote: ['say "hi" \\o/'] }), 'MessageAttributes');
    assert.equal(doubled?.matches(publication), true);
    assert.equal(single?.matches(publication), false);
  });

  it('ignores Binary attributes, even for exists', () => {
    const publication = new SnsPublication(
      'x',
      attributes({ store: { DataType: 'Binary', StringValue: 'AQID' } }),
    );
    assert.equal(
      compileFilterPolicy('{"store": [{"exists": true}]}', 'MessageAttributes')?.matches(publication),
      false,
    );
    assert.equal(
      compileFilterPolicy('{"store": [{"exists": false}]}', 'MessageAttributes')?.matches(publication),
      true,
    );
  });

  it('matches a Number attribute as a number and a String attribute as a string', () => {
    const publication = new SnsPublication(
      'x',
      attributes({
        n: { DataType: 'Number', StringValue: '1.5e2' },
        s: { DataType: 'String', StringValue: '150' },
      }),
    );
    assert.equal(compileFilterPolicy('{"n": [150]}', 'MessageAttributes')?.matches(publication), true);
    assert.equal(compileFilterPolicy('{"n": ["150"]}', 'MessageAttributes')?.matches(publication), false);
    assert.equal(
      compileFilterPolicy('{"s": [{"numeric": ["=", 150]}]}', 'MessageAttributes')?.matches(publication),
      false,
    );
    assert.equal(compileFilterPolicy('{"s": ["150"]}', 'MessageAttributes')?.matches(publication), true);
    const hex = new SnsPublication('x', attributes({ n: { DataType: 'Number', StringValue: '0x96' } }));
    assert.equal(compileFilterPolicy('{"n": [150]}', 'MessageAttributes')?.matches(hex), false);
  });

  it('counts keys across $or branches and refuses a sixth', () => {
    const policy = {
      a: ['1'],
      $or: [
        { b: ['1'], c: ['1'] },
        { d: ['1'], e: ['1'], f: ['1'] },
      ],
    };
    assert.throws(
      () => compileFilterPolicy(JSON.stringify(policy), 'MessageBody'),
      (error: FilterPolicyError) =>
        error.detail === 'FilterPolicy: Filter policy can not have more than 5 keys',
    );
  });

  it('refuses wildcard values past SNS complexity: four stars in one value, or more than 100 points', () => {
    const refused = (policy: unknown) => () => compileFilterPolicy(JSON.stringify(policy), 'MessageBody');
    const tooComplex = (error: FilterPolicyError) =>
      error.detail === 'FilterPolicy: Filter policy is too complex';
    assert.throws(refused({ path: [{ wildcard: '*a*b*c*' }] }), tooComplex);
    // Three values of three stars: (9 + 9 + 9) x 3 = 81 points, allowed; four of them: 36 x 4 = 144.
    assert.ok(
      compileFilterPolicy(
        JSON.stringify({ path: ['*a*b*c', 'x*y*z*', '*1*2*3'].map((wildcard) => ({ wildcard })) }),
        'MessageBody',
      ),
    );
    assert.throws(
      refused({ path: ['*a*b*c', 'x*y*z*', '*1*2*3', '*4*5*6'].map((wildcard) => ({ wildcard })) }),
      tooComplex,
    );
  });

  it('refuses a policy over 256 KB', () => {
    const policy = JSON.stringify({ key: ['x'.repeat(256 * 1024)] });
    assert.throws(() => compileFilterPolicy(policy, 'MessageBody'), FilterPolicyError);
  });

  it('matches wildcard and anything-but wildcard, which SNS accepts since 2025', () => {
    const policy = compileFilterPolicy(
      JSON.stringify({ level: [{ wildcard: '*-error' }], env: [{ 'anything-but': { wildcard: 'test-*' } }] }),
      'MessageAttributes',
    );
    const publication = (level: string, env: string) =>
      new SnsPublication(
        'x',
        attributes({
          level: { DataType: 'String', StringValue: level },
          env: { DataType: 'String', StringValue: env },
        }),
      );
    assert.equal(policy?.matches(publication('db-error', 'prod')), true);
    assert.equal(policy?.matches(publication('db-warning', 'prod')), false);
    assert.equal(policy?.matches(publication('db-error', 'test-7')), false);
  });

  it('refuses JSON syntax errors as SNS words them, the source redacted', () => {
    assert.throws(
      () => compileFilterPolicy('{"a": ["b"]', 'MessageBody'),
      (error: FilterPolicyError) =>
        error.detail ===
        'FilterPolicy: failed to parse JSON. Unexpected end-of-input: expected close marker for Object (start marker at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 1])\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 12]',
    );
  });

  it('quotes the compact policy Jackson writes back, floats as Java prints them', () => {
    assert.throws(
      () =>
        compileFilterPolicy('{ "price": [ 1e2, { "numeric": [ ">", 1.5e10, "<", 2 ] } ] }', 'MessageBody'),
      (error: FilterPolicyError) =>
        error.detail ===
        'FilterPolicy: Bottom must be less than top\n at [Source: (String)"{"price":[100.0,{"numeric":[">",1.5E10,"<",2]}]}"; line: 1, column: 46]',
    );
  });
});

describe('event filter: exists and arrays, as event-ruler decides', () => {
  const matches = (pattern: unknown, event: unknown) =>
    compileEventPattern(JSON.stringify(pattern)).matches(event as JsonObjectValue);

  it('exists false: a key absent from every element', () => {
    assert.equal(matches({ Records: { b: [{ exists: false }] } }, { Records: [{ a: 1 }, { a: 2 }] }), true);
  });

  it('exists false: a key in any element of an array no earlier field has chosen counts as present', () => {
    assert.equal(
      matches({ Records: { b: [{ exists: false }] } }, { Records: [{ a: 1, b: 2 }, { a: 3 }] }),
      false,
    );
  });

  it('exists false: once an earlier field (in path order) chose an element, only that element counts', () => {
    assert.equal(
      matches({ Records: { a: [3], b: [{ exists: false }] } }, { Records: [{ a: 1, b: 2 }, { a: 3 }] }),
      true,
    );
    assert.equal(
      matches({ Records: { a: [1], b: [{ exists: false }] } }, { Records: [{ a: 1, b: 2 }, { a: 3 }] }),
      false,
    );
  });

  it('an empty array has no leaves: exists true fails, exists false holds', () => {
    assert.equal(matches({ resources: [{ exists: false }] }, { resources: [] }), true);
  });

  it('a String.Array attribute matches when any element does', () => {
    const policy = compileFilterPolicy('{"tags": [{"prefix": "b"}]}', 'MessageAttributes');
    const publication = new SnsPublication(
      'x',
      new Map([['tags', { DataType: 'String.Array', StringValue: '["a", "bb", 3, null]' }]]),
    );
    assert.equal(policy?.matches(publication), true);
  });
});

/** Counts the leaves the matcher is handed, to measure its work without a clock. */
class CountingIndex extends MessageIndex {
  leavesHandedOut = 0;

  override consistentLeaves(path: string, constraints: ReadonlyMap<number, number>) {
    const leaves = super.consistentLeaves(path, constraints);
    this.leavesHandedOut += leaves.length;
    return leaves;
  }
}

describe('event filter: bounded cost', () => {
  const records = (count: number, make: (index: number) => JsonObjectValue) =>
    Array.from({ length: count }, (_, i) => make(i));

  it('fields of one array of 20,000 records cost about one pass each, not one per pair', () => {
    const event: JsonObjectValue = { Records: records(20_000, (i) => ({ a: `a${i}`, b: `b${i}` })) };
    const pattern = compileEventPattern('{"Records": {"a": [{"prefix": "a"}], "b": ["b-never"]}}').compiled;
    const index = new CountingIndex(event);
    assert.equal(matchesPattern(pattern, index), false);
    assert.ok(index.leavesHandedOut <= 3 * 20_000, `${index.leavesHandedOut} leaves looked at`);
  });

  it('sibling arrays do not multiply: 5,000 x 5,000 elements and a failing third field', () => {
    const event: JsonObjectValue = {
      left: records(5_000, (i) => ({ x: i })),
      right: records(5_000, (i) => ({ y: i })),
      z: 'no',
    };
    const pattern = compileEventPattern(
      '{"left": {"x": [{"exists": true}]}, "right": {"y": [{"exists": true}]}, "z": ["yes"]}',
    ).compiled;
    const index = new CountingIndex(event);
    assert.equal(matchesPattern(pattern, index), false);
    assert.ok(index.leavesHandedOut <= 3 * 10_000, `${index.leavesHandedOut} leaves looked at`);
  });

  it('indexes a body nested 100,000 arrays deep without recursion', () => {
    const depth = 100_000;
    const body = `${'['.repeat(depth)}"deep"${']'.repeat(depth)}`;
    const event = { value: JSON.parse(body) } as JsonObjectValue;
    assert.equal(compileEventPattern('{"value": ["deep"]}').matches(event), true);
  });

  it('matches wildcards without backtracking (a value that takes a backtracking matcher cubic time)', () => {
    const pattern = compileEventPattern('{"v": [{"wildcard": "*a*a*b"}]}');
    assert.equal(pattern.matches({ v: 'a'.repeat(200_000) }), false);
    assert.equal(pattern.matches({ v: `${'a'.repeat(200_000)}b` }), true);
  });

  it('refuses patterns nested deeper than Jackson allows (1,000)', () => {
    const pattern = `${'{"a":'.repeat(1001)}[1]${'}'.repeat(1001)}`;
    assert.throws(
      () => compileEventPattern(pattern),
      (error: EventPatternError) =>
        error.reason ===
        'Document nesting depth (1001) exceeds the maximum allowed (1000, from `StreamReadConstraints.getMaxNestingDepth()`)',
    );
  });
});

describe('event filter: event-ruler details no recording shows', () => {
  const reason = (pattern: string) => {
    try {
      compileEventPattern(pattern);
      return 'accepted';
    } catch (error) {
      if (error instanceof EventPatternError) return error.reason.split('\n')[0];
      throw error;
    }
  };

  it('CIDR: IPv4 masks stop at /31, IPv6 at /127; an IPv4-mapped address is its IPv4 address', () => {
    assert.equal(reason('{"ip": [{"cidr": "10.0.0.1/32"}]}'), 'IPv4 mask bits must be < 32');
    assert.equal(reason('{"ip": [{"cidr": "::1/128"}]}'), 'IPv6 mask bits must be < 128');
    assert.equal(
      reason('{"ip": [{"cidr": "10.0.0.0/-1"}]}'),
      'Malformed CIDR, mask bits must not be negative',
    );
    assert.equal(reason('{"ip": [{"cidr": "10.0.0.300/8"}]}'), 'Invalid IP address: 10.0.0.300');
    assert.equal(
      compileEventPattern('{"ip": [{"cidr": "10.0.0.0/8"}]}').matches({ ip: '::ffff:a00:1' }),
      true,
    );
  });

  it('an IP address as an exact value matches any spelling of that address', () => {
    assert.equal(
      compileEventPattern('{"ip": ["2001:db8::1"]}').matches({ ip: '2001:0db8:0:0:0:0:0:1' }),
      true,
    );
  });

  it('numbers must be exact doubles in numeric matches', () => {
    assert.equal(reason('{"n": [{"numeric": [">", 0.1]}]}'), 'accepted');
    assert.equal(
      reason('{"n": [{"numeric": [">", 12345678901234567890]}]}'),
      'Cannot compare number : 12345678901234567890',
    );
    // SNS documents its own range (-10^9 to 10^9, five decimals) but was not seen refusing beyond it.
    assert.ok(compileFilterPolicy('{"n": [{"numeric": [">", 12345678901234567890]}]}', 'MessageBody'));
  });

  it('EventBridge and Lambda compare numbers as doubles, to the last digit (SNS to five decimals)', () => {
    const pattern = '{"price": [100.123456789], "range": [{"numeric": [">", 0.1]}]}';
    assert.equal(compileEventPattern(pattern).matches({ price: 100.123456789, range: 0.100001 }), true);
    assert.equal(compileEventPattern(pattern).matches({ price: 100.1234567, range: 0.100001 }), false);
    assert.equal(
      SqsFilterCriteria.compile([`{"body": ${pattern}}`]).matches(
        sqsRecord(JSON.stringify({ price: 100.1234567, range: 0.100001 })),
      ),
      false,
    );
    const sns = compileFilterPolicy(pattern, 'MessageBody');
    const body = (price: number, range: number) =>
      new SnsPublication(JSON.stringify({ price, range }), new Map());
    assert.equal(sns?.matches(body(100.1234567, 0.10001)), true);
    assert.equal(sns?.matches(body(100.1234567, 0.100001)), false);
  });

  it('wildcard positions are UTF-8 bytes of the quoted value', () => {
    assert.equal(reason('{"v": [{"wildcard": "é**"}]}'), 'Consecutive wildcard characters at pos 3');
    assert.equal(reason(String.raw`{"v": [{"wildcard": "a\\b"}]}`), 'Invalid escape character at pos 2');
  });

  it('equals-ignore-case, prefix and suffix ignoring case', () => {
    assert.equal(
      compileEventPattern('{"s": [{"equals-ignore-case": "ÄRGER"}]}').matches({ s: 'ärger' }),
      true,
    );
    assert.equal(
      compileEventPattern('{"s": [{"prefix": {"equals-ignore-case": "EventB"}}]}').matches({
        s: 'eventbridge',
      }),
      true,
    );
    assert.equal(
      compileEventPattern('{"s": [{"suffix": {"equals-ignore-case": ".PNG"}}]}').matches({ s: 'a.png' }),
      true,
    );
    assert.equal(
      compileEventPattern('{"s": [{"suffix": {"equals-ignore-case": ".PNG"}}]}').matches({ s: 'a.jpg' }),
      false,
    );
  });

  it('Lambda answers every refused pattern with one text and keeps the reason', () => {
    try {
      SqsFilterCriteria.compile(['{"body": {"n": [{"numeric": [">", 1, ">", 2]}]}}']);
      assert.fail('accepted');
    } catch (error) {
      assert.ok(error instanceof FilterCriteriaError);
      assert.equal(error.message, 'Invalid filter pattern definition.');
      assert.match(error.detail, /^Event pattern is not valid\. Reason: Bad numeric range operator: >/);
    }
  });
});
