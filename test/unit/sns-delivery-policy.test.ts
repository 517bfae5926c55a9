import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_HTTP_RETRY_POLICY,
  deliveryPolicyProblem,
  effectiveDeliveryPolicy,
  retryDelaySeconds,
} from '../../packages/server/src/core/sns/http-endpoints.ts';
import { EndpointRules } from '../../packages/server/src/server/sns-http-delivery.ts';

/** The delays before each retry, until the policy has none left. */
const schedule = (policy = DEFAULT_HTTP_RETRY_POLICY) => {
  const delays: number[] = [];
  for (let retry = 1; ; retry++) {
    const delay = retryDelaySeconds(policy, retry);
    if (delay === undefined) return delays;
    delays.push(delay);
  }
};

test("AWS's default HTTP/S policy: 3 retries, 20 seconds apart", () => {
  assert.deepEqual(schedule(), [20, 20, 20]);
  assert.deepEqual(effectiveDeliveryPolicy(undefined, undefined).retry, DEFAULT_HTTP_RETRY_POLICY);
});

test('the four phases in order: immediate, pre-backoff, backoff (by the function), post-backoff', () => {
  const policy = {
    minDelayTarget: 1,
    maxDelayTarget: 60,
    numRetries: 10,
    numNoDelayRetries: 2,
    numMinDelayRetries: 2,
    numMaxDelayRetries: 2,
    backoffFunction: 'linear' as const,
  };
  const delays = schedule(policy);
  assert.equal(delays.length, 10);
  assert.deepEqual(delays.slice(0, 2), [0, 0], 'immediate');
  assert.deepEqual(delays.slice(2, 4), [1, 1], 'pre-backoff at minDelayTarget');
  assert.deepEqual(delays.slice(8), [60, 60], 'post-backoff at maxDelayTarget');
  const backoff = delays.slice(4, 8);
  assert.deepEqual(backoff, [16, 31, 45, 60], 'linear from the minimum to the maximum');
  for (const fn of ['arithmetic', 'geometric', 'exponential'] as const) {
    const rising = schedule({ ...policy, backoffFunction: fn }).slice(4, 8);
    assert.equal(rising.at(-1), 60, fn);
    for (let index = 1; index < rising.length; index++) assert.ok(rising[index]! >= rising[index - 1]!, fn);
    assert.ok(rising[0]! < backoff[0]!, `${fn} starts slower than linear`);
  }
});

test("the subscription's policy overrides the topic's unless the topic disables overrides", () => {
  const topic = JSON.stringify({
    http: {
      defaultHealthyRetryPolicy: { numRetries: 5, minDelayTarget: 10, maxDelayTarget: 10 },
      defaultThrottlePolicy: { maxReceivesPerSecond: 3 },
    },
  });
  const subscription = JSON.stringify({
    healthyRetryPolicy: { numRetries: 1, minDelayTarget: 2, maxDelayTarget: 2 },
    throttlePolicy: { maxReceivesPerSecond: 7 },
  });
  assert.deepEqual(schedule(effectiveDeliveryPolicy(topic, undefined).retry), [10, 10, 10, 10, 10]);
  const overridden = effectiveDeliveryPolicy(topic, subscription);
  assert.deepEqual(schedule(overridden.retry), [2]);
  assert.equal(overridden.maxReceivesPerSecond, 7);
  const locked = JSON.stringify({ http: { ...JSON.parse(topic).http, disableSubscriptionOverrides: true } });
  assert.equal(effectiveDeliveryPolicy(locked, subscription).retry.numRetries, 5);
  assert.equal(effectiveDeliveryPolicy(locked, subscription).maxReceivesPerSecond, 3);
});

test('link-local and metadata addresses are refused; loopback and others allowed; --sns-http-allow narrows', async () => {
  const open = new EndpointRules(undefined);
  for (const url of [
    'http://169.254.169.254/',
    'http://169.254.0.1:8080/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::abcd]/',
    'http://[::ffff:169.254.169.254]/',
  ])
    assert.ok('refused' in (await open.resolve(new URL(url))), url);
  for (const url of ['http://127.0.0.1:9/', 'http://[::1]:9/', 'http://10.1.2.3/', 'http://localhost:9/'])
    assert.ok(!('refused' in (await open.resolve(new URL(url)))), url);
  const narrow = new EndpointRules(['10.0.0.0/8', '*.example.internal', 'hooks.test', '169.254.0.0/16']);
  assert.ok(!('refused' in (await narrow.resolve(new URL('http://10.9.9.9/')))));
  assert.ok('refused' in (await narrow.resolve(new URL('http://127.0.0.1/'))));
  assert.ok(
    'refused' in (await narrow.resolve(new URL('http://169.254.169.254/'))),
    'denied whatever it allows',
  );
  assert.throws(() => new EndpointRules(['10.0.0.0/33']), /CIDR/);
  assert.throws(() => new EndpointRules(['http://x/']), /host name/);
});

test("DeliveryPolicy checks: AWS's ranges, with the member's path", () => {
  const topic = (retry: Record<string, unknown>) =>
    deliveryPolicyProblem('topic', { http: { defaultHealthyRetryPolicy: retry } });
  const subscription = (policy: Record<string, unknown>) => deliveryPolicyProblem('subscription', policy);
  // Accepted: AWS's examples, a partial policy, the extremes.
  assert.equal(topic({ numRetries: 5 }), undefined);
  assert.equal(
    subscription({ healthyRetryPolicy: { numRetries: 10, minDelayTarget: 1, maxDelayTarget: 2 } }),
    undefined,
  );
  assert.equal(topic({ numRetries: 0, minDelayTarget: 1, maxDelayTarget: 1 }), undefined);
  assert.equal(
    subscription({
      healthyRetryPolicy: {
        numRetries: 100,
        numNoDelayRetries: 100,
        minDelayTarget: 1,
        maxDelayTarget: 3600,
      },
      throttlePolicy: { maxReceivesPerSecond: 1 },
      requestPolicy: { headerContentType: 'application/json' },
    }),
    undefined,
  );
  assert.equal(deliveryPolicyProblem('topic', { http: { disableSubscriptionOverrides: true } }), undefined);
  // Refused.
  assert.equal(
    topic({ numRetries: 101 }),
    'http.defaultHealthyRetryPolicy.numRetries must be less than or equal to 100',
  );
  assert.equal(
    topic({ numRetries: -1 }),
    'http.defaultHealthyRetryPolicy.numRetries must be greater than or equal to 0',
  );
  assert.equal(topic({ numRetries: 1.5 }), 'http.defaultHealthyRetryPolicy.numRetries must be an integer');
  assert.equal(
    topic({ minDelayTarget: 0 }),
    'http.defaultHealthyRetryPolicy.minDelayTarget must be greater than or equal to 1',
  );
  assert.equal(
    topic({ maxDelayTarget: 3601 }),
    'http.defaultHealthyRetryPolicy.maxDelayTarget must be less than or equal to 3600',
  );
  assert.equal(
    topic({ minDelayTarget: 30, maxDelayTarget: 10 }),
    'http.defaultHealthyRetryPolicy.minDelayTarget must be less than or equal to maxDelayTarget',
  );
  assert.equal(
    topic({ backoffFunction: 'cubic' }),
    'http.defaultHealthyRetryPolicy.backoffFunction must be one of linear, arithmetic, geometric, exponential',
  );
  assert.equal(
    subscription({ healthyRetryPolicy: { numRetries: 3, numNoDelayRetries: 2, numMaxDelayRetries: 2 } }),
    'healthyRetryPolicy: numNoDelayRetries + numMinDelayRetries + numMaxDelayRetries must be less than or equal to numRetries',
  );
  // AWS's recorded refusal: 10 retries an hour apart.
  assert.equal(
    topic({ numRetries: 10, minDelayTarget: 3599, maxDelayTarget: 3600 }),
    'http.defaultHealthyRetryPolicy: Total policy retry time cannot be greater than 3600 seconds',
  );
  assert.equal(
    subscription({ throttlePolicy: { maxReceivesPerSecond: 0 } }),
    'throttlePolicy.maxReceivesPerSecond must be greater than or equal to 1',
  );
  // The subscription's keys on a topic, and the topic's on a subscription, are unknown members.
  assert.equal(
    deliveryPolicyProblem('topic', { http: { healthyRetryPolicy: { numRetries: 3 } } }),
    'Unexpected JSON member: healthyRetryPolicy',
  );
  assert.equal(
    subscription({ defaultHealthyRetryPolicy: {} }),
    'Unexpected JSON member: defaultHealthyRetryPolicy',
  );
  assert.equal(subscription({ healthyRetryPolicy: { retries: 3 } }), 'Unexpected JSON member: retries');
  assert.equal(
    deliveryPolicyProblem('topic', { http: { disableSubscriptionOverrides: 'yes' } }),
    'http.disableSubscriptionOverrides must be a boolean',
  );
});
