/**
 * SNS filter policies: AWS's documented examples and LocalStack's recordings made on AWS
 * (tests/aws/services/sns/test_sns_filter_policy.py and test_sns.py with their snapshots), restated as data.
 * Each case names where it comes from; docs/decisions/event-filter.md says how the evidence was read.
 */
import type {
  FilterPolicyAction,
  FilterPolicyScope,
  SnsMessageAttribute,
} from '../../../packages/server/src/core/event-filter/index.ts';

export interface SnsMatchCase {
  readonly source: string;
  readonly scope: FilterPolicyScope;
  readonly policy: string;
  readonly attributes?: Readonly<Record<string, SnsMessageAttribute>>;
  readonly body?: string;
  readonly expected: boolean;
}

export interface SnsErrorCase {
  readonly source: string;
  readonly action: FilterPolicyAction;
  readonly scope: FilterPolicyScope;
  readonly policy: string;
  readonly error: string;
}

const string = (value: string): SnsMessageAttribute => ({ DataType: 'String', StringValue: value });
const number = (value: string): SnsMessageAttribute => ({ DataType: 'Number', StringValue: value });
const stringArray = (...values: unknown[]): SnsMessageAttribute => ({
  DataType: 'String.Array',
  StringValue: JSON.stringify(values),
});

/** A policy and the messages it was checked with, by attributes and by body. */
function onAttributes(
  source: string,
  policy: unknown,
  messages: [Readonly<Record<string, SnsMessageAttribute>>, boolean][],
): SnsMatchCase[] {
  const text = typeof policy === 'string' ? policy : JSON.stringify(policy);
  return messages.map(([attributes, expected]) => ({
    source,
    scope: 'MessageAttributes',
    policy: text,
    attributes,
    expected,
  }));
}

function onBody(source: string, policy: unknown, messages: [unknown, boolean][]): SnsMatchCase[] {
  const text = typeof policy === 'string' ? policy : JSON.stringify(policy);
  return messages.map(([body, expected]) => ({
    source,
    scope: 'MessageBody',
    policy: text,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    expected,
  }));
}

/** Every error AWS was recorded answering to a filter policy, with its whole message. */
export const snsRecordedErrors: readonly SnsErrorCase[] = [
  {
    source: 'test_sub_filter_policy_nested_property / sub-filter-policy-nested-error',
    action: 'SetSubscriptionAttributes',
    scope: 'MessageAttributes',
    policy: '{"object": {"key": [{"prefix": "auto-"}]}}',
    error: 'Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy',
  },
  {
    source:
      'test_sub_filter_policy_nested_property_constraints / sub-filter-policy-nested-error-too-many-combinations',
    action: 'SetSubscriptionAttributes',
    scope: 'MessageBody',
    policy:
      '{"key_a": {"key_b": {"key_c": ["value_one", "value_two", "value_three", "value_four"]}}, "key_d": {"key_e": ["value_one", "value_two", "value_three"]}, "key_f": ["value_one", "value_two", "value_three"]}',
    error: 'Invalid parameter: FilterPolicy: Filter policy is too complex',
  },
  {
    source: 'test_sub_filter_policy_nested_property_constraints / sub-filter-policy-max-attr-keys',
    action: 'SetSubscriptionAttributes',
    scope: 'MessageBody',
    policy:
      '{"key_a": ["value_one"], "key_b": ["value_two"], "key_c": ["value_three"], "key_d": ["value_four"], "key_e": ["value_five"], "key_f": ["value_six"]}',
    error: 'Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys',
  },
  {
    source: 'test_sub_filter_policy_nested_property_constraints / sub-filter-policy-rule-no-list',
    action: 'SetSubscriptionAttributes',
    scope: 'MessageBody',
    policy: '{"key_a": "value_one"}',
    error:
      'Invalid parameter: FilterPolicy: "key_a" must be an object or an array\n at [Source: (String)"{"key_a":"value_one"}"; line: 1, column: 11]',
  },
  {
    source: 'test_validate_policy / error-condition-list',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [["value"]]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Match value must be String, number, true, false, or null\n at [Source: (String)"{"key":[["value"]]}"; line: 1, column: 10]',
  },
  {
    source: 'test_validate_policy / error-condition-operator',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"wrong-operator": true}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Unrecognized match type wrong-operator\n at [Source: (String)"{"key":[{"wrong-operator":true}]}"; line: 1, column: 31]',
  },
  {
    source: 'test_validate_policy / error-condition-two-operators',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"suffix": "value", "prefix": "value2"}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Only one key allowed in match expression\n at [Source: (String)"{"key":[{"suffix":"value","prefix":"value2"}]}"; line: 1, column: 37]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-empty-array',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": []}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Empty arrays are not allowed\n at [Source: (String)"{"key":[]}"; line: 1, column: 10]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-is-numeric',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"suffix": 100}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: suffix match pattern must be a string\n at [Source: (String)"{"key":[{"suffix":100}]}"; line: 1, column: 22]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-is-none',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"suffix": null}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: suffix match pattern must be a string\n at [Source: (String)"{"key":[{"suffix":null}]}"; line: 1, column: 23]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-is-not-list-and-operator',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": {"suffix": "value"}}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: "suffix" must be an object or an array\n at [Source: (String)"{"key":{"suffix":"value"}}"; line: 1, column: 19]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-empty-list',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"suffix": []}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: suffix match pattern must be a string\n at [Source: (String)"{"key":[{"suffix":[]}]}"; line: 1, column: 20]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-list-wrong-type',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"suffix": ["test", "test2"]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: suffix match pattern must be a string\n at [Source: (String)"{"key":[{"suffix":["test","test2"]}]}"; line: 1, column: 20]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-is-not-list-two-ops',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": {"suffix": "value", "prefix": "value"}}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: "suffix" must be an object or an array\n at [Source: (String)"{"key":{"suffix":"value","prefix":"value"}}"; line: 1, column: 19]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-is-not-list-and-no-operator',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": {"not-an-operator": "value"}}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: "not-an-operator" must be an object or an array\n at [Source: (String)"{"key":{"not-an-operator":"value"}}"; line: 1, column: 28]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-bad-type',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"cidr": ["bad-filter"]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: prefix match pattern must be a string\n at [Source: (String)"{"key":[{"cidr":["bad-filter"]}]}"; line: 1, column: 18]',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-bad-cidr-str',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"cidr": "bad-filter"}]}',
    error: "Invalid parameter: Attributes Reason: FilterPolicy: Malformed CIDR, one '/' required",
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-bad-cidr-str-slash',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"cidr": "bad-filter/64"}]}',
    error: 'Invalid parameter: Attributes Reason: FilterPolicy: Nonstandard IP address: bad-filter',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-bad-cidr-str-slash-2',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"cidr": "bad-/64filter"}]}',
    error: 'Invalid parameter: Attributes Reason: FilterPolicy: Malformed CIDR, mask bits must be an integer',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-bad-cidr-v4',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"cidr": "xx.11.xx/8"}]}',
    error: 'Invalid parameter: Attributes Reason: FilterPolicy: Nonstandard IP address: xx.11.xx',
  },
  {
    source: 'test_validate_policy_string_operators / error-condition-bad-cidr-v6',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"cidr": "xxxx:db8:1234:1a00::/64"}]}',
    error: 'Invalid parameter: Attributes Reason: FilterPolicy: Nonstandard IP address: xxxx:db8:1234:1a00::',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-empty',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": []}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Invalid member in numeric match: ]\n at [Source: (String)"{"key":[{"numeric":[]}]}"; line: 1, column: 22]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-wrong-operator',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": ["operator"]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Unrecognized numeric range operator: operator\n at [Source: (String)"{"key":[{"numeric":["operator"]}]}"; line: 1, column: 32]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-operator-order',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [1, "<="]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Invalid member in numeric match: 1\n at [Source: (String)"{"key":[{"numeric":[1,"<="]}]}"; line: 1, column: 22]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-type',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": ["=", "000"]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Value of equals must be numeric\n at [Source: (String)"{"key":[{"numeric":["=","000"]}]}"; line: 1, column: 26]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-missing-value',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [">="]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Value of >= must be numeric\n at [Source: (String)"{"key":[{"numeric":[">="]}]}"; line: 1, column: 26]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-wrong-range-order',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": ["<", 100, ">", 10]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Too many elements in numeric expression\n at [Source: (String)"{"key":[{"numeric":["<",100,">",10]}]}"; line: 1, column: 30]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-wrong-range-operators',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [">=", 1, ">", 2]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Bad numeric range operator: >\n at [Source: (String)"{"key":[{"numeric":[">=",1,">",2]}]}"; line: 1, column: 31]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-wrong-value-order',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [">", 3, "<", 1]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Bottom must be less than top\n at [Source: (String)"{"key":[{"numeric":[">",3,"<",1]}]}"; line: 1, column: 33]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-missing-range-value',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [">", 20, "<="]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Value of <= must be numeric\n at [Source: (String)"{"key":[{"numeric":[">",20,"<="]}]}"; line: 1, column: 33]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-missing-range-operator',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [">", 20, 30]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Bad value in numeric range: 30\n at [Source: (String)"{"key":[{"numeric":[">",20,30]}]}"; line: 1, column: 30]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-wrong-second-range-operator',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [">", 20, "test"]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Bad numeric range operator: test\n at [Source: (String)"{"key":[{"numeric":[">",20,"test"]}]}"; line: 1, column: 34]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-wrong-range-value-1-type',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [">", "20", "<", "30"]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Value of > must be numeric\n at [Source: (String)"{"key":[{"numeric":[">","20","<","30"]}]}"; line: 1, column: 26]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-wrong-range-value-2-type',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [">", 20, "<", "30"]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Value of < must be numeric\n at [Source: (String)"{"key":[{"numeric":[">",20,"<","30"]}]}"; line: 1, column: 33]',
  },
  {
    source: 'test_validate_policy_numeric_operator / error-numeric-too-many-range',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"numeric": [">", 20, "<", 30, "<", 50]}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Too many terms in numeric range expression\n at [Source: (String)"{"key":[{"numeric":[">",20,"<",30,"<",50]}]}"; line: 1, column: 36]',
  },
  {
    source: 'test_validate_policy_exists_operator / error-condition-none',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"exists": null}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: exists match pattern must be either true or false.\n at [Source: (String)"{"key":[{"exists":null}]}"; line: 1, column: 23]',
  },
  {
    source: 'test_validate_policy_exists_operator / error-condition-string',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"exists": "no"}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: exists match pattern must be either true or false.\n at [Source: (String)"{"key":[{"exists":"no"}]}"; line: 1, column: 20]',
  },
  {
    source: 'test_validate_policy_nested_anything_but_operator / error-condition-wrong-operator',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"anything-but": {"wrong-operator": null}}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Unsupported anything-but pattern: wrong-operator\n at [Source: (String)"{"key":[{"anything-but":{"wrong-operator":null}}]}"; line: 1, column: 47]',
  },
  {
    source: 'test_validate_policy_nested_anything_but_operator / error-condition-anything-but-suffix',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"anything-but": {"suffix": "test"}}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Unsupported anything-but pattern: suffix\n at [Source: (String)"{"key":[{"anything-but":{"suffix":"test"}}]}"; line: 1, column: 36]',
  },
  {
    source: 'test_validate_policy_nested_anything_but_operator / error-condition-anything-but-exists',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"anything-but": {"exists": false}}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: Unsupported anything-but pattern: exists\n at [Source: (String)"{"key":[{"anything-but":{"exists":false}}]}"; line: 1, column: 40]',
  },
  {
    source:
      'test_validate_policy_nested_anything_but_operator / error-condition-anything-but-prefix-wrong-type',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: '{"key": [{"anything-but": {"prefix": false}}]}',
    error:
      'Invalid parameter: Attributes Reason: FilterPolicy: prefix match pattern must be a string\n at [Source: (String)"{"key":[{"anything-but":{"prefix":false}}]}"; line: 1, column: 40]',
  },
  {
    source: 'test_policy_complexity / error-complexity-in-one-condition',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy:
      '{"key": ["value0", "value1", "value2", "value3", "value4", "value5", "value6", "value7", "value8", "value9", "value10", "value11", "value12", "value13", "value14", "value15", "value16", "value17", "value18", "value19", "value20", "value21", "value22", "value23", "value24", "value25", "value26", "value27", "value28", "value29", "value30", "value31", "value32", "value33", "value34", "value35", "value36", "value37", "value38", "value39", "value40", "value41", "value42", "value43", "value44", "value45", "value46", "value47", "value48", "value49", "value50", "value51", "value52", "value53", "value54", "value55", "value56", "value57", "value58", "value59", "value60", "value61", "value62", "value63", "value64", "value65", "value66", "value67", "value68", "value69", "value70", "value71", "value72", "value73", "value74", "value75", "value76", "value77", "value78", "value79", "value80", "value81", "value82", "value83", "value84", "value85", "value86", "value87", "value88", "value89", "value90", "value91", "value92", "value93", "value94", "value95", "value96", "value97", "value98", "value99", "value100", "value101", "value102", "value103", "value104", "value105", "value106", "value107", "value108", "value109", "value110", "value111", "value112", "value113", "value114", "value115", "value116", "value117", "value118", "value119", "value120", "value121", "value122", "value123", "value124", "value125", "value126", "value127", "value128", "value129", "value130", "value131", "value132", "value133", "value134", "value135", "value136", "value137", "value138", "value139", "value140", "value141", "value142", "value143", "value144", "value145", "value146", "value147", "value148", "value149", "value150"]}',
    error: 'Invalid parameter: Attributes Reason: FilterPolicy: Filter policy is too complex',
  },
  {
    source: 'test_policy_complexity / error-complexity-in-two-conditions',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy:
      '{"key1": ["value0", "value1", "value2", "value3", "value4", "value5", "value6", "value7", "value8", "value9", "value10", "value11", "value12", "value13", "value14", "value15", "value16", "value17", "value18", "value19", "value20", "value21", "value22", "value23", "value24", "value25", "value26", "value27", "value28", "value29", "value30", "value31", "value32", "value33", "value34", "value35", "value36", "value37", "value38", "value39", "value40", "value41", "value42", "value43", "value44", "value45", "value46", "value47", "value48", "value49", "value50", "value51", "value52", "value53", "value54", "value55", "value56", "value57", "value58", "value59", "value60", "value61", "value62", "value63", "value64", "value65", "value66", "value67", "value68", "value69", "value70", "value71", "value72", "value73", "value74", "value75", "value76", "value77", "value78", "value79", "value80", "value81", "value82", "value83", "value84", "value85", "value86", "value87", "value88", "value89", "value90", "value91", "value92", "value93", "value94", "value95", "value96", "value97", "value98", "value99"], "key2": ["value0", "value1", "value2", "value3", "value4", "value5", "value6", "value7", "value8", "value9", "value10", "value11", "value12", "value13", "value14", "value15", "value16", "value17", "value18", "value19", "value20", "value21", "value22", "value23", "value24", "value25", "value26", "value27", "value28", "value29", "value30", "value31", "value32", "value33", "value34", "value35", "value36", "value37", "value38", "value39", "value40", "value41", "value42", "value43", "value44", "value45", "value46", "value47", "value48", "value49", "value50"]}',
    error: 'Invalid parameter: Attributes Reason: FilterPolicy: Filter policy is too complex',
  },
  {
    source: 'test_policy_complexity / error-complexity-too-many-fields',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy:
      '{"key1": ["value1"], "key2": ["value2"], "key3": ["value3"], "key4": ["value4"], "key5": ["value5"], "key6": ["value6"]}',
    error: 'Invalid parameter: Attributes Reason: FilterPolicy: Filter policy can not have more than 5 keys',
  },
  {
    source: 'test_policy_complexity_with_or / error-complexity-or-flat',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy:
      '{"source": ["aws.cloudwatch", "aws.events", "aws.test", "aws.test2"], "$or": [{"metricName": ["CPUUtilization", "ReadLatency", "t1", "t2", "t3", "t4"]}, {"metricType": ["MetricType", "TestType", "TestType2", "TestType3"], "$or": [{"metricId": [1234, 4321, 5678, 9012]}, {"spaceId": [1, 2, 3, 4]}]}]}',
    error: 'Invalid parameter: Attributes Reason: FilterPolicy: Filter policy is too complex',
  },
  {
    source: 'test_policy_complexity_with_or / error-complexity-or-nested',
    action: 'Subscribe',
    scope: 'MessageBody',
    policy:
      '{"$or": [{"metricName": ["CPUUtilization", "ReadLatency", "TestValue"]}, {"namespace": ["AWS/EC2", "AWS/ES"]}], "detail": {"scope": ["Service", "Test"], "$or": [{"source": ["aws.cloudwatch"]}, {"type": ["CloudWatch Alarm State Change", "TestValue", "TestValue2"]}]}}',
    error: 'Invalid parameter: Attributes Reason: FilterPolicy: Filter policy is too complex',
  },
  {
    source: 'TestSNSSubscriptionCrud::test_validate_set_sub_attributes / invalid-json-filter-policy',
    action: 'SetSubscriptionAttributes',
    scope: 'MessageAttributes',
    policy: '{invalidjson}',
    error:
      "Invalid parameter: FilterPolicy: failed to parse JSON. Unexpected character ('i' (code 105)): was expecting double-quote to start field name\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 2]",
  },
  {
    source:
      'TestSNSSubscriptionCrudV2::test_subscribe_invalid_filter_policy / subscribe-invalid-filter-policy',
    action: 'Subscribe',
    scope: 'MessageAttributes',
    policy: 'invalid-json',
    error:
      "Invalid parameter: Attributes Reason: FilterPolicy: failed to parse JSON. Unrecognized token 'invalid': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 8]",
  },
];

const LOCALSTACK = 'recorded on AWS: test_sns_filter_policy.py';

/** A policy AWS accepted in the recordings. */
export const snsRecordedAcceptedPolicies: readonly {
  source: string;
  scope: FilterPolicyScope;
  policy: string;
}[] = [
  {
    source: `${LOCALSTACK} test_set_subscription_filter_policy_scope`,
    scope: 'MessageBody',
    policy: JSON.stringify({ attr: ['match-this'] }),
  },
  {
    source: `${LOCALSTACK} test_validate_policy_nested_anything_but_operator (positive)`,
    scope: 'MessageAttributes',
    policy: JSON.stringify({ key: [{ 'anything-but': { prefix: 'test-' } }] }),
  },
  {
    source: `${LOCALSTACK} test_validate_policy_nested_anything_but_operator (positive)`,
    scope: 'MessageAttributes',
    policy: JSON.stringify({ key: [{ 'anything-but': ['test', 'test2'] }] }),
  },
  {
    source: `${LOCALSTACK} test_validate_policy_nested_anything_but_operator (positive)`,
    scope: 'MessageAttributes',
    policy: JSON.stringify({ key: [{ 'anything-but': 'test' }] }),
  },
  {
    // (3 x 6) + (3 x 4 x 4) + (3 x 4 x 7) = 150 combinations: the limit itself is allowed.
    source: `${LOCALSTACK} test_policy_complexity_with_or (positive)`,
    scope: 'MessageAttributes',
    policy: JSON.stringify({
      source: ['aws.cloudwatch', 'aws.events', 'aws.test'],
      $or: [
        { metricName: ['CPUUtilization', 'ReadLatency', 'TestVal', 'TestVal2', 'TestVal3', 'TestVal4'] },
        {
          metricType: ['MetricType', 'TestType', 'TestType2', 'TestType3'],
          $or: [{ metricId: [1234, 4321, 5678, 9012] }, { spaceId: [1, 2, 3, 4, 5, 6, 7] }],
        },
      ],
    }),
  },
  {
    source: `${LOCALSTACK} test_sub_filter_policy_nested_property (body scope)`,
    scope: 'MessageBody',
    policy: JSON.stringify({ object: { key: [{ prefix: 'auto-' }] } }),
  },
];

const s3Created = {
  Records: [
    {
      eventSource: 'aws:s3',
      eventTime: '2022-11-21T03:41:29.743Z',
      eventName: 'ObjectCreated:Put',
      s3: {
        bucket: { name: 'insurance-bucket-demo', arn: 'arn:aws:s3:::insurance-bucket-demo' },
        object: { key: 'auto-insurance-2314.xml', size: 17 },
      },
    },
  ],
};
const withRecord = (changes: { eventName?: string; key?: string }) => ({
  Records: [
    {
      ...s3Created.Records[0],
      eventName: changes.eventName ?? 'ObjectCreated:Put',
      s3: {
        ...s3Created.Records[0]?.s3,
        object: { key: changes.key ?? 'auto-insurance-2314.xml', size: 17 },
      },
    },
  ],
});

const orPolicy = {
  $or: [{ metricName: ['CPUUtilization', 'ReadLatency'] }, { namespace: ['AWS/EC2', 'AWS/ES'] }],
  detail: {
    scope: ['Service'],
    $or: [{ source: ['aws.cloudwatch'] }, { type: ['CloudWatch Alarm State Change'] }],
  },
};

const ipEvent = (detail: Record<string, string>) => ({
  id: '1',
  source: 'test-source',
  'detail-type': 'test-detail-type',
  account: '123456789012',
  region: 'my-region',
  time: '2022-07-13T13:48:01Z',
  detail,
});

/** What AWS delivered and withheld in the recordings. */
export const snsRecordedDeliveries: readonly SnsMatchCase[] = [
  ...onAttributes(`${LOCALSTACK} test_filter_policy`, { attr1: [{ numeric: ['>', 0, '<=', 100] }] }, [
    [{ attr1: number('99') }, true],
    [{ attr1: number('111') }, false],
  ]),
  ...onAttributes(
    `${LOCALSTACK} test_filter_policy (null or anything-but)`,
    { attr1: [null, { 'anything-but': 'whatever' }] },
    [[{}, false]],
  ),
  ...onAttributes(
    `${LOCALSTACK} test_filter_policy_for_batch`,
    { attr1: [{ numeric: ['>', 0, '<=', 100] }] },
    [
      [{ attr1: number('99') }, true],
      [{ attr1: number('111') }, false],
    ],
  ),
  ...onAttributes(`${LOCALSTACK} test_exists_filter_policy`, { store: [{ exists: true }] }, [
    [{ store: number('99'), def: number('99') }, true],
    [{ attr1: number('111') }, false],
  ]),
  ...onAttributes(`${LOCALSTACK} test_exists_filter_policy (exists false)`, { store: [{ exists: false }] }, [
    [{ def: number('99') }, true],
    [{ store: number('99'), def: number('99') }, false],
  ]),
  ...onAttributes(`${LOCALSTACK} test_exists_filter_policy_attributes_array`, { store: ['value1'] }, [
    [{ store: string('value1') }, true],
    [{ store: stringArray('value1', 'value2') }, true],
    [{ store: stringArray('value2', 'value3') }, false],
  ]),
  ...onBody(
    `${LOCALSTACK} test_filter_policy_on_message_body`,
    {
      object: { key: [{ prefix: 'auto-' }, 'hardcodedvalue'], nested_key: [{ exists: false }] },
      test: [{ exists: false }],
    },
    [
      [{ object: { key: 'auto-test' } }, true],
      [{ object: { key: 'hardcodedvalue' } }, true],
      [{ object: { key: 'test-auto' } }, false],
      [{ object: { key: 'auto-test' }, test: 'just-exists' }, false],
      [{ object: { key: 'auto-test', nested_key: 'just-exists' } }, false],
      [{ object: { test: 'auto-test' } }, false],
      [{ test: 'auto-test' }, false],
      ['Regular string message', false],
      [JSON.stringify('Regular string message'), false],
    ],
  ),
  ...onBody(
    `${LOCALSTACK} test_filter_policy_on_message_body_dot_attribute`,
    { 'object.nested': ['string.value'] },
    [
      [{ object: { nested: 'string.value' } }, true],
      [{ 'object.nested': 'string.value' }, true],
      [{ object: { nested: 'test-auto' } }, false],
    ],
  ),
  ...onBody(
    `${LOCALSTACK} test_filter_policy_on_message_body_dot_attribute (deeper)`,
    { 'object.nested.test': ['string.value'] },
    [
      [{ object: { nested: { test: 'string.value' } } }, true],
      [{ 'object.nested.test': 'string.value' }, true],
      [{ 'object.nested': { test: 'string.value' } }, true],
      [{ object: { 'nested.test': 'string.value' } }, true],
      [{ object: { nested: { test: 'string.notvalue' } } }, false],
    ],
  ),
  ...onBody(
    `${LOCALSTACK} test_filter_policy_on_message_body_array_attributes (queue 1)`,
    { headers: { 'route-to': ['queue1'] } },
    [
      [{ headers: { 'route-to': ['queue3'] } }, false],
      [{ headers: { 'route-to': ['queue1'] } }, true],
      [{ headers: { 'route-to': ['queue2'] } }, false],
      [{ headers: { 'route-to': ['queue1', 'queue2'] } }, true],
    ],
  ),
  ...onBody(
    `${LOCALSTACK} test_filter_policy_on_message_body_array_attributes (queue 2)`,
    { headers: { 'route-to': ['queue2'] } },
    [
      [{ headers: { 'route-to': ['queue3'] } }, false],
      [{ headers: { 'route-to': ['queue1'] } }, false],
      [{ headers: { 'route-to': ['queue2'] } }, true],
      [{ headers: { 'route-to': ['queue1', 'queue2'] } }, true],
    ],
  ),
  ...onBody(
    `${LOCALSTACK} test_filter_policy_on_message_body_array_of_object_attributes`,
    {
      Records: { s3: { object: { key: [{ prefix: 'auto-' }] } }, eventName: [{ prefix: 'ObjectCreated:' }] },
    },
    [
      [
        {
          Records: [
            {
              eventSource: 'aws:s3',
              eventName: 'ObjectCreated:Put',
              s3: { object: [[{ key: 'auto-insurance-2314.xml', size: 17 }]] },
            },
            {
              eventSource: 'aws:s3',
              eventName: 'ObjectRemoved:Delete',
              s3: { object: { key: 'home-insurance-2314.xml', size: 17 } },
            },
          ],
        },
        true,
      ],
      [withRecord({ eventName: 'ObjectRemoved:Delete' }), false],
      [withRecord({ key: 'home-insurance-2314.xml' }), false],
      [s3Created, true],
    ],
  ),
  ...onBody(`${LOCALSTACK} test_filter_policy_on_message_body_or_attribute`, orPolicy, [
    [
      {
        metricName: 'CPUUtilization',
        detail: { scope: 'aws.cloudwatch', type: 'CloudWatch Alarm State Change' },
      },
      false,
    ],
    [{ metricName: 'CPUUtilization', detail: { scope: 'Service', type: 'CPUUtilization' } }, false],
    [{ metricName: 'CPUUtilization', detail: { type: 'CloudWatch Alarm State Change' } }, false],
    [{ metricName: 'CPUUtilization', detail: { scope: 'Service' } }, false],
    [{ metricName: 'CPUUtilization', scope: 'Service' }, false],
    [{ metricName: 'AWS/EC2', detail: { scope: 'Service', type: 'CloudWatch Alarm State Change' } }, false],
    [
      { namespace: 'CPUUtilization', detail: { scope: 'Service', type: 'CloudWatch Alarm State Change' } },
      false,
    ],
    [{ metricName: 'CPUUtilization', detail: { scope: 'Service', source: 'aws.cloudwatch' } }, true],
    [{ metricName: 'ReadLatency', detail: { scope: 'Service', source: 'aws.cloudwatch' } }, true],
    [{ namespace: 'AWS/EC2', detail: { scope: 'Service', source: 'aws.cloudwatch' } }, true],
    [{ namespace: 'AWS/ES', detail: { scope: 'Service', source: 'aws.cloudwatch' } }, true],
    [
      { metricName: 'CPUUtilization', detail: { scope: 'Service', type: 'CloudWatch Alarm State Change' } },
      true,
    ],
  ]),
  ...onBody(`${LOCALSTACK} test_filter_policy_empty_array_payload`, { detail: { eventVersion: [''] } }, [
    [
      {
        version: '0',
        id: '3e3c153a-8339-4e30-8c35-687ebef853fe',
        'detail-type': 'EC2 Instance Launch Successful',
        source: 'aws.autoscaling',
        account: '123456789012',
        time: '2015-11-11T21:31:47Z',
        region: 'my-region',
        resources: [],
        detail: { eventVersion: '', responseElements: null },
      },
      true,
    ],
  ]),
  ...onBody(
    `${LOCALSTACK} test_filter_policy_ip_address_condition`,
    {
      detail: {
        $or: [
          { sourceIPAddress: [{ cidr: '10.0.0.0/24' }] },
          { sourceIPAddressV6: [{ cidr: '2001:db8:1234:1a00::/64' }] },
        ],
      },
    },
    [
      [ipEvent({ sourceIPAddress: '10.0.0.255' }), true],
      [ipEvent({ sourceIPAddress: '10.0.0.256' }), false],
      [ipEvent({ sourceIPAddressV6: '2001:0db8:1234:1a00:0000:0000:0000:0000' }), true],
      [ipEvent({ sourceIPAddressV6: '2001:0db8:123f:1a01:0000:0000:0000:0000' }), false],
    ],
  ),
];

const SNS_DOCS = 'AWS docs: Amazon SNS Developer Guide';
const SNS_ACCURACY = `${SNS_DOCS}, Filter policy constraints: five digits of accuracy after the decimal point`;
const interests = (...values: string[]) => ({ customer_interests: values.length === 1 ? values[0] : values });

/** The examples of the SNS Developer Guide's filter policy pages, each example message with its outcome. */
export const snsDocumentedExamples: readonly SnsMatchCase[] = [
  ...onAttributes(`${SNS_DOCS}, String value matching: exact`, { customer_interests: ['rugby', 'tennis'] }, [
    [{ customer_interests: string('rugby') }, true],
    [{ customer_interests: string('tennis') }, true],
    [{ customer_interests: stringArray('rugby', 'tennis') }, true],
    [{ customer_interests: string('baseball') }, false],
    [{ customer_interests: stringArray('baseball') }, false],
  ]),
  ...onBody(`${SNS_DOCS}, String value matching: exact`, { customer_interests: ['rugby', 'tennis'] }, [
    [interests('rugby'), true],
    [interests('tennis'), true],
    [interests('baseball'), false],
  ]),
  ...onAttributes(`${SNS_DOCS}, String value matching: prefix`, { customer_interests: [{ prefix: 'bas' }] }, [
    [{ customer_interests: string('baseball') }, true],
    [{ customer_interests: string('basketball') }, true],
    [{ customer_interests: string('rugby') }, false],
  ]),
  ...onBody(`${SNS_DOCS}, String value matching: prefix`, { customer_interests: [{ prefix: 'bas' }] }, [
    [interests('baseball'), true],
    [interests('basketball'), true],
    [interests('rugby'), false],
  ]),
  ...onAttributes(
    `${SNS_DOCS}, String value matching: anything-but`,
    { customer_interests: [{ 'anything-but': ['rugby', 'tennis'] }] },
    [
      [{ customer_interests: string('baseball') }, true],
      [{ customer_interests: string('football') }, true],
      [{ customer_interests: stringArray('rugby', 'baseball') }, true],
      [{ customer_interests: string('rugby') }, false],
    ],
  ),
  ...onBody(
    `${SNS_DOCS}, String value matching: anything-but`,
    { customer_interests: [{ 'anything-but': ['rugby', 'tennis'] }] },
    [
      [interests('baseball'), true],
      [interests('football'), true],
      [interests('rugby', 'baseball'), true],
      [{ customer_interests: ['rugby'] }, false],
    ],
  ),
  ...onAttributes(
    `${SNS_DOCS}, String value matching: anything-but with a prefix`,
    { event: [{ 'anything-but': { prefix: 'order-' } }] },
    [
      [{ event: string('data-entry') }, true],
      [{ event: string('order_number') }, true],
      [{ event: string('order-cancelled') }, false],
    ],
  ),
  ...onBody(
    `${SNS_DOCS}, String value matching: anything-but with a prefix`,
    { event: [{ 'anything-but': { prefix: 'order-' } }] },
    [
      [{ event: 'data-entry' }, true],
      [{ event: 'order_number' }, true],
      [{ event: 'order-cancelled' }, false],
    ],
  ),
  ...onAttributes(
    `${SNS_DOCS}, String value matching: IP address`,
    { source_ip: [{ cidr: '10.0.0.0/24' }] },
    [
      [{ source_ip: string('10.0.0.0') }, true],
      [{ source_ip: string('10.0.0.255') }, true],
      [{ source_ip: string('10.1.1.0') }, false],
    ],
  ),
  ...onBody(`${SNS_DOCS}, String value matching: IP address`, { source_ip: [{ cidr: '10.0.0.0/24' }] }, [
    [{ source_ip: '10.0.0.0' }, true],
    [{ source_ip: '10.0.0.255' }, true],
    [{ source_ip: '10.1.1.0' }, false],
  ]),
  ...onAttributes(`${SNS_DOCS}, Numeric value matching: exact`, { price_usd: [{ numeric: ['=', 301.5] }] }, [
    [{ price_usd: number('301.5') }, true],
    [{ price_usd: number('3.015e2') }, true],
  ]),
  ...onBody(`${SNS_DOCS}, Numeric value matching: exact`, '{"price_usd": [{"numeric": ["=",301.5]}]}', [
    [{ price_usd: 301.5 }, true],
    ['{"price_usd": 3.015e2}', true],
  ]),
  ...onAttributes(
    `${SNS_DOCS}, Numeric value matching: anything-but`,
    { price: [{ 'anything-but': [100, 500] }] },
    [
      [{ price: number('101') }, true],
      [{ price: number('100.1') }, true],
      [{ price: number('100') }, false],
    ],
  ),
  ...onBody(
    `${SNS_DOCS}, Numeric value matching: anything-but`,
    { price: [{ 'anything-but': [100, 500] }] },
    [
      [{ price: 101 }, true],
      [{ price: 100.1 }, true],
      [{ price: [100, 50] }, true],
      [{ price: 100 }, false],
    ],
  ),
  ...onBody(
    `${SNS_DOCS}, Numeric value matching: range (negative values)`,
    { price_usd: [{ numeric: ['<', 0] }] },
    [
      [{ price_usd: -0.5 }, true],
      [{ price_usd: 0 }, false],
    ],
  ),
  ...onBody(
    `${SNS_DOCS}, Numeric value matching: range (positive up to and including 150)`,
    { price_usd: [{ numeric: ['>', 0, '<=', 150] }] },
    [
      [{ price_usd: 150 }, true],
      [{ price_usd: 0.01 }, true],
      [{ price_usd: 0 }, false],
      [{ price_usd: 150.01 }, false],
    ],
  ),
  // "A numeric policy attribute can have a value from -10^9 to 10^9, with 5 digits of accuracy after the decimal
  // point" (Filter policy constraints): digits after the fifth do not count, in the policy or the message.
  ...onAttributes(
    `${SNS_ACCURACY} (exact number; moto's test_filtering_exact_number_float_accuracy)`,
    { price: [100.123456789] },
    [
      [{ price: number('100.1234567') }, true],
      [{ price: number('100.12345') }, true],
      [{ price: number('1.0012345e2') }, true],
      [{ price: number('100.12346') }, false],
      [{ price: number('100.123449') }, false],
    ],
  ),
  ...onBody(
    `${SNS_ACCURACY} (exact number; moto's test_filtering_exact_number_float_accuracy_message_body)`,
    { price: [100.123456789] },
    [
      [{ price: 100.1234567 }, true],
      [{ price: [1, 100.12345999] }, true],
      [{ price: 100.12346 }, false],
    ],
  ),
  ...onAttributes(`${SNS_ACCURACY} (String.Array of numbers)`, { price: [100.123456789] }, [
    [{ price: stringArray(100.1234567, 'one') }, true],
    [{ price: stringArray(100.12346) }, false],
  ]),
  ...onAttributes(`${SNS_ACCURACY} (numeric =)`, { price_usd: [{ numeric: ['=', 301.5] }] }, [
    [{ price_usd: number('301.500009') }, true],
    [{ price_usd: number('301.50001') }, false],
  ]),
  ...onBody(`${SNS_ACCURACY} (numeric ranges)`, { low: [{ numeric: ['>', 0.1, '<=', 0.2] }] }, [
    [{ low: 0.100009 }, false],
    [{ low: 0.10001 }, true],
    [{ low: 0.200009 }, true],
    [{ low: 0.20001 }, false],
  ]),
  ...onBody(`${SNS_ACCURACY} (negative numbers truncate towards zero)`, { t: [-1.5] }, [
    [{ t: -1.500009 }, true],
    [{ t: -1.499999 }, false],
    [{ t: -1.50001 }, false],
  ]),
  ...onAttributes(`${SNS_ACCURACY} (anything-but a number)`, { price: [{ 'anything-but': [100] }] }, [
    [{ price: number('100.000001') }, false],
    [{ price: number('100.00001') }, true],
  ]),
  ...onBody(
    `${SNS_ACCURACY} (0.29 is 0.29000, not 0.28999 as a double times 10^5 would make it)`,
    { v: [0.29] },
    [
      [{ v: 0.29 }, true],
      [{ v: 0.28999 }, false],
    ],
  ),
  ...onAttributes(`${SNS_DOCS}, Key matching: exists true`, { store: [{ exists: true }] }, [
    [{ store: string('fans'), customer_interests: stringArray('baseball', 'basketball') }, true],
    [{ customer_interests: stringArray('baseball', 'basketball') }, false],
  ]),
  ...onBody(`${SNS_DOCS}, Key matching: exists true`, { store: [{ exists: true }] }, [
    [{ store: 'fans', customer_interests: ['baseball', 'basketball'] }, true],
    [{ customer_interests: ['baseball', 'basketball'] }, false],
  ]),
  ...onAttributes(`${SNS_DOCS}, Key matching: exists false`, { store: [{ exists: false }] }, [
    [{ store: string('fans'), customer_interests: stringArray('baseball', 'basketball') }, false],
    [{ customer_interests: stringArray('baseball', 'basketball') }, true],
  ]),
  ...onBody(`${SNS_DOCS}, Key matching: exists false`, { store: [{ exists: false }] }, [
    [{ store: 'fans', customer_interests: ['baseball', 'basketball'] }, false],
    [{ customer_interests: ['baseball', 'basketball'] }, true],
  ]),
  ...onBody(
    `${SNS_DOCS}, AND/OR logic: AND`,
    { customer_interests: ['rugby'], price_usd: [{ numeric: ['>', 100] }] },
    [
      [{ customer_interests: 'rugby', price_usd: 100.5 }, true],
      [{ customer_interests: 'rugby', price_usd: 100 }, false],
      [{ customer_interests: 'football', price_usd: 200 }, false],
    ],
  ),
  ...onAttributes(
    `${SNS_DOCS}, AND/OR logic: OR`,
    { customer_interests: ['rugby', 'football', 'baseball'] },
    [
      [{ customer_interests: string('football') }, true],
      [{ customer_interests: string('tennis') }, false],
    ],
  ),
  ...onAttributes(
    `${SNS_DOCS}, AND/OR logic: the OR operator, standard OR`,
    { source: ['aws.cloudwatch'], $or: [{ metricName: ['CPUUtilization'] }, { namespace: ['AWS/EC2'] }] },
    [
      [{ source: string('aws.cloudwatch'), metricName: string('CPUUtilization') }, true],
      [{ source: string('aws.cloudwatch'), namespace: string('AWS/EC2') }, true],
      [{ source: string('aws.cloudwatch'), metricName: string('ReadLatency') }, false],
      [{ metricName: string('CPUUtilization') }, false],
    ],
  ),
  ...onBody(
    `${SNS_DOCS}, AND/OR logic: the OR operator, OR with an AND inside`,
    {
      source: ['aws.cloudwatch'],
      $or: [
        { metricName: ['CPUUtilization', 'ReadLatency'] },
        { metricType: ['MetricType'], namespace: ['AWS/EC2', 'AWS/ES'] },
        { scope: ['Service'] },
      ],
    },
    [
      [{ source: 'aws.cloudwatch', metricType: 'MetricType', namespace: 'AWS/ES' }, true],
      [{ source: 'aws.cloudwatch', scope: 'Service' }, true],
      [{ source: 'aws.cloudwatch', metricType: 'MetricType' }, false],
    ],
  ),
  ...onBody(
    `${SNS_DOCS}, AND/OR logic: the OR operator, parallel OR`,
    {
      $or: [{ metricName: ['CPUUtilization', 'ReadLatency'] }, { namespace: ['AWS/EC2', 'AWS/ES'] }],
      detail: { $or: [{ source: ['aws.cloudwatch'] }, { 'detail-type': ['CloudWatch Alarm State Change'] }] },
    },
    [
      [{ namespace: 'AWS/ES', detail: { 'detail-type': 'CloudWatch Alarm State Change' } }, true],
      [{ namespace: 'AWS/ES', detail: { source: 'aws.events' } }, false],
    ],
  ),
];

/** The example message of "Amazon SNS example filter policies", as attributes and as a body. */
const exampleAttributes: Record<string, SnsMessageAttribute> = {
  customer_interests: stringArray('soccer', 'rugby', 'hockey'),
  store: string('example_corp'),
  event: string('order_placed'),
  price_usd: number('210.75'),
};
const exampleBody = {
  customer_interests: ['soccer', 'rugby', 'hockey'],
  store: 'example_corp',
  event: 'order_placed',
  price_usd: 210.75,
};
const acceptingPolicy = {
  store: ['example_corp'],
  event: [{ 'anything-but': 'order_cancelled' }],
  customer_interests: ['rugby', 'football', 'baseball'],
  price_usd: [{ numeric: ['>=', 100] }],
};
const rejectingPolicy = {
  store: ['example_corp'],
  event: ['order_cancelled'],
  encrypted: [false],
  customer_interests: ['basketball', 'baseball'],
};

export const snsDocumentedPolicyExamples: readonly SnsMatchCase[] = [
  ...onAttributes(`${SNS_DOCS}, Example filter policies: a policy that accepts`, acceptingPolicy, [
    [exampleAttributes, true],
  ]),
  ...onBody(`${SNS_DOCS}, Example filter policies: a policy that accepts`, acceptingPolicy, [
    [exampleBody, true],
  ]),
  ...onAttributes(`${SNS_DOCS}, Example filter policies: a policy that rejects`, rejectingPolicy, [
    [exampleAttributes, false],
  ]),
  ...onBody(`${SNS_DOCS}, Example filter policies: a policy that rejects`, rejectingPolicy, [
    [exampleBody, false],
  ]),
];

/** Documented policies SNS accepts (the constraints page's examples of counting combinations). */
export const snsDocumentedAcceptedPolicies: readonly {
  source: string;
  scope: FilterPolicyScope;
  policy: string;
}[] = [
  {
    source: `${SNS_DOCS}, Filter policy constraints: 3 x 1 x 2 = 6 combinations`,
    scope: 'MessageAttributes',
    policy: JSON.stringify({
      key_a: ['value_one', 'value_two', 'value_three'],
      key_b: ['value_one'],
      key_c: ['value_one', 'value_two'],
    }),
  },
  {
    source: `${SNS_DOCS}, Filter policy constraints: nested, 3 x 4 x 2 x 3 = 72 combinations`,
    scope: 'MessageBody',
    policy: JSON.stringify({
      key_a: { key_b: { key_c: ['value_one', 'value_two', 'value_three', 'value_four'] } },
      key_d: { key_e: ['value_one', 'value_two', 'value_three'] },
    }),
  },
];
