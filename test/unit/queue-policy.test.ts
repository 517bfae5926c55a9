import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  evaluateQueuePolicy,
  globMatches,
  type PolicyRequest,
} from '../../packages/server/src/server/auth/queue-policy.ts';
import { readConfigFile } from '../../packages/server/src/server/config-file.ts';

const QUEUE = 'arn:aws:sqs:us-east-1:000000000000:orders';
const OTHER = '111122223333';
const request = (overrides: Partial<PolicyRequest> = {}): PolicyRequest => ({
  action: 'SendMessage',
  account: OTHER,
  resource: QUEUE,
  context: {},
  ...overrides,
});
const policy = (...Statement: Record<string, unknown>[]) =>
  JSON.stringify({ Version: '2012-10-17', Statement });
const allow = (extra: Record<string, unknown> = {}) => ({
  Effect: 'Allow',
  Principal: '*',
  Action: 'sqs:SendMessage',
  Resource: QUEUE,
  ...extra,
});

describe('queue policy evaluation', () => {
  it('matches IAM globs as a regular expression of them would, * any run and ? one character', () => {
    const asRegExp = (glob: string, ignoreCase: boolean) =>
      new RegExp(
        `^${glob
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.')}$`,
        ignoreCase ? 'is' : 's',
      );
    const text = (characters: string[]) =>
      fc.array(fc.constantFrom(...characters), { maxLength: 12 }).map((a) => a.join(''));
    fc.assert(
      fc.property(
        text(['a', 'B', '*', '?', '.', '\n']),
        text(['a', 'b', 'B', '.', '\n']),
        fc.boolean(),
        (glob, value, ignoreCase) =>
          assert.equal(
            globMatches(glob, value, ignoreCase),
            asRegExp(glob, ignoreCase).test(value),
            `${glob} ${value}`,
          ),
      ),
      { numRuns: 2_000 },
    );
  });

  it('matches nothing without a policy, or with one that is not JSON', () => {
    assert.equal(evaluateQueuePolicy(undefined, request()), 'no-match');
    assert.equal(evaluateQueuePolicy('{not json', request()), 'no-match');
  });

  it('lets an explicit Deny win over any Allow', () => {
    const text = policy(allow(), { ...allow(), Effect: 'Deny', Action: 'sqs:*' });
    assert.equal(evaluateQueuePolicy(text, request()), 'deny');
    assert.equal(evaluateQueuePolicy(policy(allow()), request()), 'allow');
  });

  it('matches principals: *, {"AWS": "*"}, an account id, its root ARN, any IAM ARN of it, lists', () => {
    for (const Principal of [
      '*',
      { AWS: '*' },
      { AWS: OTHER },
      { AWS: `arn:aws:iam::${OTHER}:root` },
      { AWS: `arn:aws:iam::${OTHER}:user/alice` },
      { AWS: ['444455556666', OTHER] },
    ]) {
      assert.equal(
        evaluateQueuePolicy(policy(allow({ Principal })), request()),
        'allow',
        JSON.stringify(Principal),
      );
    }
    for (const Principal of [
      { AWS: '444455556666' },
      { AWS: 'arn:aws:iam::444455556666:root' },
      { Service: '*' },
    ]) {
      assert.equal(evaluateQueuePolicy(policy(allow({ Principal })), request()), 'no-match');
    }
  });

  it('matches actions case-insensitively, with wildcards and lists; batches count as their action', () => {
    for (const Action of [
      'sqs:*',
      '*',
      'SQS:SendMessage',
      'sqs:send*',
      'sqs:Send?essage',
      ['sqs:Receive*', 'SQS:SendMessage'],
    ]) {
      assert.equal(
        evaluateQueuePolicy(policy(allow({ Action })), request()),
        'allow',
        JSON.stringify(Action),
      );
    }
    assert.equal(evaluateQueuePolicy(policy(allow()), request({ action: 'SendMessageBatch' })), 'allow');
    assert.equal(evaluateQueuePolicy(policy(allow()), request({ action: 'ReceiveMessage' })), 'no-match');
    assert.equal(evaluateQueuePolicy(policy(allow({ Action: 'SendMessage' })), request()), 'no-match');
  });

  it('matches resources by ARN with wildcards, and honours NotAction / NotResource / NotPrincipal', () => {
    assert.equal(
      evaluateQueuePolicy(policy(allow({ Resource: 'arn:aws:sqs:*:000000000000:ord*' })), request()),
      'allow',
    );
    assert.equal(
      evaluateQueuePolicy(
        policy(allow({ Resource: 'arn:aws:sqs:us-east-1:000000000000:payroll' })),
        request(),
      ),
      'no-match',
    );
    const notAction = { Effect: 'Allow', Principal: '*', NotAction: 'sqs:DeleteQueue', Resource: '*' };
    assert.equal(evaluateQueuePolicy(policy(notAction), request()), 'allow');
    assert.equal(evaluateQueuePolicy(policy(notAction), request({ action: 'DeleteQueue' })), 'no-match');
    const notResource = { Effect: 'Deny', Principal: '*', Action: '*', NotResource: QUEUE };
    assert.equal(evaluateQueuePolicy(policy(allow(), notResource), request()), 'allow');
    const notPrincipal = { Effect: 'Deny', NotPrincipal: { AWS: OTHER }, Action: '*', Resource: '*' };
    assert.equal(evaluateQueuePolicy(policy(allow(), notPrincipal), request()), 'allow');
    assert.equal(
      evaluateQueuePolicy(policy(allow(), notPrincipal), request({ account: '444455556666' })),
      'deny',
    );
  });

  it('evaluates aws:SourceArn and aws:SourceAccount conditions', () => {
    const topic = 'arn:aws:sns:us-east-1:111122223333:orders-topic';
    const withArn = { context: { 'aws:SourceArn': topic, 'aws:SourceAccount': OTHER } };
    const cases: [Record<string, unknown>, 'allow' | 'no-match'][] = [
      [{ ArnEquals: { 'aws:SourceArn': topic } }, 'allow'],
      [{ ArnEquals: { 'aws:SourceArn': `${topic}-2` } }, 'no-match'],
      [{ ArnLike: { 'aws:SourceArn': 'arn:aws:sns:*:111122223333:*' } }, 'allow'],
      [{ ArnLike: { 'aws:SourceArn': 'arn:aws:sns:*:444455556666:*' } }, 'no-match'],
      [{ StringEquals: { 'aws:SourceAccount': OTHER } }, 'allow'],
      [{ StringEquals: { 'AWS:SOURCEACCOUNT': ['1', OTHER] } }, 'allow'],
      [{ StringNotEquals: { 'aws:SourceAccount': OTHER } }, 'no-match'],
      [{ StringEquals: { 'aws:SourceAccount': OTHER }, ArnLike: { 'aws:SourceArn': '*:sqs:*' } }, 'no-match'],
      [{ NumericLessThan: { 'aws:SourceAccount': '5' } }, 'no-match'],
    ];
    for (const [Condition, expected] of cases) {
      assert.equal(
        evaluateQueuePolicy(policy(allow({ Condition })), request(withArn)),
        expected,
        JSON.stringify(Condition),
      );
    }
    // Without the key in the request, a condition on it fails, unless ...IfExists.
    assert.equal(
      evaluateQueuePolicy(policy(allow({ Condition: { ArnEquals: { 'aws:SourceArn': topic } } })), request()),
      'no-match',
    );
    assert.equal(
      evaluateQueuePolicy(
        policy(allow({ Condition: { ArnEqualsIfExists: { 'aws:SourceArn': topic } } })),
        request(),
      ),
      'allow',
    );
  });
});

it('a config file key may name its 12-digit account', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-account-'));
  try {
    const file = join(dir, 'sluice.json');
    const key = { accessKeyId: 'AKIDPARTNER', secretAccessKey: 's' };
    writeFileSync(file, JSON.stringify({ credentials: [{ ...key, accountId: '1234' }] }));
    assert.throws(() => readConfigFile(file), /"accountId" must be 12 digits/);
    writeFileSync(file, JSON.stringify({ credentials: [{ ...key, accountId: OTHER }] }));
    assert.equal(readConfigFile(file).credentials?.[0]?.accountId, OTHER);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
