import assert from 'node:assert/strict';
import {
  ACCOUNT,
  arn,
  byName,
  type Case,
  describeAuthorization,
  type Expect,
  endpoint,
  ORDERS,
  PARTNER,
  PARTNER_ACCOUNT,
  REGION,
  redrivePolicy,
  SENDER,
  type Target,
  type World,
} from '../helpers/authorization.ts';

/**
 * Authorization acts on every queue a request names, over both wire protocols (AWS JSON and Query): the other
 * spellings of a queue URL, the parameters that name further queues (RedrivePolicy, RedriveAllowPolicy, move
 * task ARNs), the list outputs, and (Query) requests posted to a queue's own URL. Every action on a queue
 * each key may or may not use is in authorization.test.ts; the harness in test/helpers/authorization.ts.
 */

/** Other spellings of a queue URL, each through ReceiveMessage and SendMessage with the orders* key. */
function urlFormCases(): Case[] {
  const forms: Array<[string, (world: World, own: Target) => string, Expect]> = [
    ['an extra path segment', (world, own) => `${world.secret.url}/${own.name}`, 'QueueDoesNotExist'],
    [
      'a percent-encoded slash',
      (world, own) => `${own.url}%2F..%2F${world.secret.name}`,
      'QueueDoesNotExist',
    ],
    [
      'an account other than the server’s',
      (_world, own) => `${endpoint()}/${PARTNER_ACCOUNT}/${own.name}`,
      'QueueDoesNotExist',
    ],
    // A bare name is the queue of that name, as on AWS, and is checked as that queue.
    ['its bare queue name', (_world, own) => own.name, 'ok'],
    ['the bare name of a queue it may not use', (world) => world.secret.name, 'AccessDenied'],
    ['a URL without a queue', () => 'http://whatever-incorrect-queue-address', 'QueueDoesNotExist'],
    ['the path alone', (_world, own) => `/${ACCOUNT}/${own.name}`, 'ok'],
    ['the /queue/NAME form', (_world, own) => `${endpoint()}/queue/${own.name}`, 'ok'],
  ];
  const cases: Case[] = [];
  for (const action of ['ReceiveMessage', 'SendMessage']) {
    for (const [form, url, expect] of forms) {
      cases.push({
        title: `orders* key: ${action} on a QueueUrl with ${form} → ${expect}`,
        key: ORDERS,
        action,
        expect,
        input: async (world) => {
          const own = await world.create(world.freshName('orders'));
          return { ...(await byName(action).input(own, world, false)), QueueUrl: url(world, own) };
        },
      });
    }
  }
  return cases;
}

/** Parameters that name more queues than QueueUrl does, and the list outputs. */
function otherQueueCases(): Case[] {
  const fresh = (world: World) => world.create(world.freshName('orders'));
  const namesOf = (urls: string[]) => urls.map((url) => url.split('/').pop());
  return [
    {
      title:
        'orders* key: SetQueueAttributes with a RedrivePolicy into a queue it may not use → AccessDenied',
      key: ORDERS,
      action: 'SetQueueAttributes',
      expect: 'AccessDenied',
      input: async (world) => ({
        QueueUrl: (await fresh(world)).url,
        Attributes: { RedrivePolicy: redrivePolicy(world.secretDlq.name) },
      }),
    },
    {
      title: 'orders* key: CreateQueue with a RedrivePolicy into a queue it may not use → AccessDenied',
      key: ORDERS,
      action: 'CreateQueue',
      expect: 'AccessDenied',
      input: (world) => ({
        QueueName: world.freshName('orders'),
        Attributes: { RedrivePolicy: redrivePolicy(world.secretDlq.name) },
      }),
    },
    {
      title: 'orders* key: SetQueueAttributes with a RedrivePolicy into its own queue → ok',
      key: ORDERS,
      action: 'SetQueueAttributes',
      expect: 'ok',
      input: async (world) => {
        const dlq = await fresh(world);
        return { QueueUrl: (await fresh(world)).url, Attributes: { RedrivePolicy: redrivePolicy(dlq.name) } };
      },
    },
    {
      title: 'orders* key: a RedriveAllowPolicy naming a queue it may not use → AccessDenied',
      key: ORDERS,
      action: 'SetQueueAttributes',
      expect: 'AccessDenied',
      input: async (world) => ({
        QueueUrl: (await fresh(world)).url,
        Attributes: {
          RedriveAllowPolicy: JSON.stringify({
            redrivePermission: 'byQueue',
            sourceQueueArns: [world.secret.arn],
          }),
        },
      }),
    },
    {
      title: 'orders* key: StartMessageMoveTask into a queue it may not use → AccessDenied',
      key: ORDERS,
      action: 'StartMessageMoveTask',
      expect: 'AccessDenied',
      input: async (world) => {
        const dlq = await fresh(world);
        await world.makeDeadLetterQueue(dlq);
        return { SourceArn: dlq.arn, DestinationArn: world.secret.arn };
      },
    },
    {
      title:
        'orders* key: StartMessageMoveTask back to the sources when one is a queue it may not use → AccessDenied',
      key: ORDERS,
      action: 'StartMessageMoveTask',
      expect: 'AccessDenied',
      input: async (world) => ({ SourceArn: (await world.deadLetterQueueWithHiddenSource()).arn }),
    },
    {
      title:
        'orders* key: StartMessageMoveTask from a DLQ with a source it may not use, into its own queue → ok',
      key: ORDERS,
      action: 'StartMessageMoveTask',
      expect: 'ok',
      input: async (world) => {
        const dlq = await world.deadLetterQueueWithHiddenSource();
        return { SourceArn: dlq.arn, DestinationArn: arn(`${dlq.name}-src`) };
      },
    },
    {
      title: 'orders* key: a SourceArn with a trailing `:orders…` part → ResourceNotFound',
      key: ORDERS,
      action: 'StartMessageMoveTask',
      expect: 'ResourceNotFound',
      input: (world) => ({ SourceArn: `${world.secretDlq.arn}:orders-anything` }),
    },
    {
      title: 'orders* key: a SourceArn of another account → ResourceNotFound',
      key: ORDERS,
      action: 'ListMessageMoveTasks',
      expect: 'ResourceNotFound',
      input: () => ({ SourceArn: `arn:aws:sqs:${REGION}:${PARTNER_ACCOUNT}:orders-anything` }),
    },
    {
      title: 'orders* key: GetQueueUrl with a path in the name → QueueDoesNotExist',
      key: ORDERS,
      action: 'GetQueueUrl',
      expect: 'QueueDoesNotExist',
      input: (world) => ({ QueueName: `orders-anything/../${world.secret.name}` }),
    },
    {
      title: 'orders* key: ListDeadLetterSourceQueues lists only the sources it may use',
      key: ORDERS,
      action: 'ListDeadLetterSourceQueues',
      expect: 'ok',
      input: async (world) => ({ QueueUrl: (await world.deadLetterQueueWithHiddenSource()).url }),
      check: (outcome, input) =>
        assert.deepEqual(namesOf(outcome.queueUrls), [`${namesOf([input.QueueUrl as string])[0]}-src`]),
    },
    {
      title: 'orders* key: ListQueues lists only the queues it may use',
      key: ORDERS,
      action: 'ListQueues',
      expect: 'ok',
      input: () => ({}),
      check: (outcome) => {
        const names = namesOf(outcome.queueUrls);
        assert.ok(names.length > 0);
        assert.deepEqual(
          names.filter((name) => !name?.startsWith('orders')),
          [],
        );
      },
    },
    {
      title: 'orders* key: ListQueues with MaxResults pages over the queues it may not see',
      key: ORDERS,
      action: 'ListQueues',
      expect: 'ok',
      input: (world) => ({ QueueNamePrefix: world.secret.name.slice(0, 3), MaxResults: 1 }),
      check: (outcome) => assert.deepEqual(outcome.queueUrls, []),
    },
    {
      title: 'send-only key: ListQueues lists every queue',
      key: SENDER,
      action: 'ListQueues',
      expect: 'ok',
      input: () => ({}),
      check: (outcome, _input, world) => assert.ok(namesOf(outcome.queueUrls).includes(world.secret.name)),
    },
    {
      title: 'other account: ListQueues → AccessDenied (SQS keeps it to the owner)',
      key: PARTNER,
      action: 'ListQueues',
      expect: 'AccessDenied',
      input: () => ({}),
    },
  ];
}

/** Query requests posted to a queue's own URL, which names the queue when QueueUrl is absent. */
const queuePathCases: Case[] = [
  {
    title: 'orders* key: ReceiveMessage posted to the URL of a queue it may not use → AccessDenied',
    key: ORDERS,
    action: 'ReceiveMessage',
    expect: 'AccessDenied',
    input: () => ({}),
    path: (world) => new URL(world.secret.url).pathname,
  },
  {
    title: 'orders* key: ReceiveMessage posted to the URL of its own queue → ok',
    key: ORDERS,
    action: 'ReceiveMessage',
    expect: 'ok',
    input: () => ({}),
    path: async (world) => new URL((await world.create(world.freshName('orders'))).url).pathname,
  },
];

describeAuthorization((protocol) => [
  ...urlFormCases(),
  ...otherQueueCases(),
  ...(protocol === 'query' ? queuePathCases : []),
]);
