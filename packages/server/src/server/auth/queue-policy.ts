/**
 * SQS queue policies (the `Policy` attribute, also written by AddPermission), evaluated for callers whose
 * key belongs to another account than the queue's owner. The subset evaluated is listed in
 * docs/guide/authentication.md; anything outside it makes a statement not match, so an unknown construct
 * never grants access (it can, however, make a Deny not apply: see there).
 */
import { parseJsonObject } from '../../shared/json-object.ts';

/** What a request asks, in the terms a policy speaks. */
export interface PolicyRequest {
  /** The SQS action as called (SendMessageBatch is authorized as sqs:SendMessage, as SQS does). */
  action: string;
  /** The caller's 12-digit account id. */
  account: string;
  /** An AWS service acting for the account (`sns.amazonaws.com` delivering a topic's message). */
  service?: string;
  /** The queue's ARN. */
  resource: string;
  /** Condition keys the request carries (aws:SourceArn, aws:SourceAccount, ...); names are case-insensitive. */
  context: Readonly<Record<string, string | undefined>>;
}

export type PolicyDecision = 'allow' | 'deny' | 'no-match';

/** Batch actions are authorized as the single action they batch: SQS policies have no batch actions. */
const POLICY_ACTION: Readonly<Record<string, string>> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

export function policyActionOf(action: string): string {
  return `sqs:${POLICY_ACTION[action] ?? action}`;
}

/**
 * An explicit Deny in any matching statement wins; otherwise any matching Allow allows; otherwise nothing
 * matched (SQS's implicit deny). A policy that is not valid JSON matches nothing.
 */
export function evaluateQueuePolicy(policyText: string | undefined, request: PolicyRequest): PolicyDecision {
  if (!policyText) return 'no-match';
  const policy = parseJsonObject(policyText);
  if (!policy) return 'no-match';
  const statements: unknown[] = Array.isArray(policy.Statement)
    ? policy.Statement
    : policy.Statement
      ? [policy.Statement]
      : [];
  let allowed = false;
  for (const statement of statements) {
    if (
      !statement ||
      typeof statement !== 'object' ||
      !statementMatches(statement as Record<string, unknown>, request)
    )
      continue;
    const effect = (statement as { Effect?: unknown }).Effect;
    if (effect === 'Deny') return 'deny';
    if (effect === 'Allow') allowed = true;
  }
  return allowed ? 'allow' : 'no-match';
}

function statementMatches(statement: Record<string, unknown>, request: PolicyRequest): boolean {
  // A topic's policy (SNS) names SNS's actions; a queue's, SQS's.
  const action = request.resource.startsWith('arn:aws:sns:')
    ? `sns:${request.action}`
    : policyActionOf(request.action);
  return (
    either(statement, 'Principal', 'NotPrincipal', (value) =>
      principalMatches(value, request.account, request.service),
    ) &&
    either(statement, 'Action', 'NotAction', (value) =>
      stringsOf(value)?.some((pattern) => globMatches(pattern, action, true)),
    ) &&
    either(statement, 'Resource', 'NotResource', (value) =>
      stringsOf(value)?.some((pattern) => globMatches(pattern, request.resource, false)),
    ) &&
    conditionsHold(statement.Condition, request.context)
  );
}

/**
 * A statement element and its Not form: exactly one must be present; the Not form matches what the
 * element would not. A malformed value (test returns undefined) matches nothing either way.
 */
function either(
  statement: Record<string, unknown>,
  name: string,
  notName: string,
  test: (value: unknown) => boolean | undefined,
): boolean {
  const value = statement[name];
  const notValue = statement[notName];
  if (value !== undefined && notValue === undefined) return test(value) === true;
  if (notValue !== undefined && value === undefined) {
    const matched = test(notValue);
    return matched === undefined ? false : !matched;
  }
  return false;
}

function stringsOf(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  return undefined;
}

/** "*", {"AWS": "*"}, {"AWS": account id | arn:aws:iam::ACCOUNT:root | arn:aws:iam::ACCOUNT:... | list}. */
function principalMatches(principal: unknown, account: string, service?: string): boolean | undefined {
  if (principal === '*') return true;
  if (!principal || typeof principal !== 'object' || Array.isArray(principal)) return undefined;
  if (service !== undefined && stringsOf((principal as { Service?: unknown }).Service)?.includes(service))
    return true;
  const aws = stringsOf((principal as { AWS?: unknown }).AWS);
  if (aws === undefined) return false;
  return aws.some((entry) => {
    if (entry === '*' || entry === account) return true;
    // Any IAM ARN of the account stands for it: Sluice keys are whole-account principals.
    const match = /^arn:aws:iam::(\d{12}):/.exec(entry);
    return match?.[1] === account;
  });
}

/**
 * IAM globs: `*` any run, `?` one character (also the per-key `queues` and `actions` lists); actions compare
 * case-insensitively, ARNs exactly. Matched in at most glob × value steps: on a failed match a `*` only ever
 * takes one more character, from the last `*` seen. (A RegExp made of the glob backtracks: a queue policy's
 * `*a*a*a*a*a*a*b` against an 80-character queue name held the server for minutes.)
 */
export function globMatches(glob: string, value: string, ignoreCase: boolean): boolean {
  const pattern = ignoreCase ? glob.toLowerCase() : glob;
  const text = ignoreCase ? value.toLowerCase() : value;
  let at = 0;
  let next = 0;
  /** The last `*` seen, and where in the text what it takes ends. */
  let star = -1;
  let starEnd = 0;
  while (next < text.length) {
    if (at < pattern.length && (pattern[at] === '?' || pattern[at] === text[next])) {
      at++;
      next++;
    } else if (at < pattern.length && pattern[at] === '*') {
      star = at++;
      starEnd = next;
    } else if (star >= 0) {
      at = star + 1;
      next = ++starEnd;
    } else return false;
  }
  while (pattern[at] === '*') at++;
  return at === pattern.length;
}

type Operator = (actual: string, expected: string) => boolean;

const OPERATORS: Readonly<Record<string, Operator>> = {
  stringequals: (actual, expected) => actual === expected,
  stringequalsignorecase: (actual, expected) => actual.toLowerCase() === expected.toLowerCase(),
  stringlike: (actual, expected) => globMatches(expected, actual, false),
  arnequals: (actual, expected) => actual === expected,
  arnlike: (actual, expected) => arnLike(actual, expected),
};

/** The negated operators: the value matches none of the listed ones. */
const NEGATED: Readonly<Record<string, string>> = {
  stringnotequals: 'stringequals',
  stringnotequalsignorecase: 'stringequalsignorecase',
  stringnotlike: 'stringlike',
  arnnotequals: 'arnequals',
  arnnotlike: 'arnlike',
};

/** ArnLike compares each of the six colon-separated parts with its own glob, as IAM does. */
function arnLike(actual: string, pattern: string): boolean {
  const actualParts = actual.split(':');
  const patternParts = pattern.split(':');
  if (actualParts.length < 6 || patternParts.length < 6) return false;
  const head = (parts: string[]) => [...parts.slice(0, 5), parts.slice(5).join(':')];
  const expected = head(patternParts);
  return head(actualParts).every((part, index) => globMatches(expected[index] as string, part, false));
}

/**
 * Every operator block and every key in it must hold (AND); a key's values are alternatives (OR). An
 * operator outside the list above makes the statement not match. `...IfExists` holds when the key is absent.
 */
function conditionsHold(condition: unknown, context: PolicyRequest['context']): boolean {
  if (condition === undefined) return true;
  if (!condition || typeof condition !== 'object' || Array.isArray(condition)) return false;
  const lookup = new Map(Object.entries(context).map(([key, value]) => [key.toLowerCase(), value]));
  return Object.entries(condition as Record<string, unknown>).every(([rawOperator, block]) => {
    const lower = rawOperator.toLowerCase();
    const ifExists = lower.endsWith('ifexists');
    const name = ifExists ? lower.slice(0, -'ifexists'.length) : lower;
    const negated = NEGATED[name];
    const operator = OPERATORS[negated ?? name];
    if (!operator || !block || typeof block !== 'object' || Array.isArray(block)) return false;
    return Object.entries(block as Record<string, unknown>).every(([key, values]) => {
      const expected = stringsOf(values);
      if (expected === undefined) return false;
      const actual = lookup.get(key.toLowerCase());
      if (actual === undefined) return ifExists || negated !== undefined;
      const matched = expected.some((value) => operator(actual, value));
      return negated ? !matched : matched;
    });
  });
}

/**
 * Whether a queue's policy lets an SNS topic deliver into it, as AWS requires even within one account:
 * `sqs:SendMessage` allowed to `sns.amazonaws.com` (or the topic's account) with the topic as `aws:SourceArn`.
 */
export function queuePolicyAllowsTopic(
  policy: string | undefined,
  queueArn: string,
  topicArn: string,
): boolean {
  const account = topicArn.split(':')[4] ?? '';
  return (
    evaluateQueuePolicy(policy, {
      action: 'SendMessage',
      account,
      service: 'sns.amazonaws.com',
      resource: queueArn,
      context: { 'aws:SourceArn': topicArn, 'aws:SourceAccount': account },
    }) === 'allow'
  );
}
