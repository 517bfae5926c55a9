import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  AddPermissionCommand,
  CancelMessageMoveTaskCommand,
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListDeadLetterSourceQueuesCommand,
  ListMessageMoveTasksCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  RemovePermissionCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
  SQSServiceException,
  StartMessageMoveTaskCommand,
  TagQueueCommand,
  UntagQueueCommand,
} from '@aws-sdk/client-sqs';
import { ERROR_SPECS, type ErrorCode } from '../../packages/server/src/core/errors.ts';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sdkSigner } from '../helpers/sigv4.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * Authorization acts on the queue the request touches, whatever the wire protocol. Every action is called
 * over both protocols (AWS JSON through @aws-sdk/client-sqs, Query as form posts signed by the SDK's signer)
 * with a key limited to `orders*`, a key limited by actions and a key of another account that a queue Policy
 * lets in, on a queue each may use, on one it may not, and through hostile QueueUrl forms that name one
 * queue in the text after their last `/` and another in their path; then the parameters that name further
 * queues (RedrivePolicy, RedriveAllowPolicy, move task ARNs) and the list outputs.
 */

const ACCOUNT = '000000000000';
const PARTNER_ACCOUNT = '111122223333';
const REGION = 'us-east-1';

interface Key {
  readonly label: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly queues?: readonly string[];
  readonly actions?: readonly string[];
  readonly accountId?: string;
}

const ADMIN: Key = { label: 'admin', accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret' };
const ORDERS: Key = {
  label: 'orders* key',
  accessKeyId: 'AKIDORDERS',
  secretAccessKey: 'orders-secret',
  queues: ['orders*'],
};
const SENDER: Key = {
  label: 'send-only key',
  accessKeyId: 'AKIDSENDER',
  secretAccessKey: 'sender-secret',
  actions: ['GetQueueUrl', 'ListQueues', 'SendMessage*'],
};
const PARTNER: Key = {
  label: 'other account',
  accessKeyId: 'AKIDPARTNER',
  secretAccessKey: 'partner-secret',
  accountId: PARTNER_ACCOUNT,
};
const KEYS = [ADMIN, ORDERS, SENDER, PARTNER];

type Protocol = 'json' | 'query';
type Input = Record<string, unknown>;
type Outcome =
  | { ok: true; queueUrls: string[]; taskHandle?: string }
  | { ok: false; code: string; status: number; message: string };
type Expect = 'ok' | ErrorCode;

/** The SDK's command classes by action; each has its own input type, so they are built untyped. */
const COMMANDS: Record<string, new (input: never) => object> = {
  AddPermission: AddPermissionCommand,
  CancelMessageMoveTask: CancelMessageMoveTaskCommand,
  ChangeMessageVisibility: ChangeMessageVisibilityCommand,
  ChangeMessageVisibilityBatch: ChangeMessageVisibilityBatchCommand,
  CreateQueue: CreateQueueCommand,
  DeleteMessage: DeleteMessageCommand,
  DeleteMessageBatch: DeleteMessageBatchCommand,
  DeleteQueue: DeleteQueueCommand,
  GetQueueAttributes: GetQueueAttributesCommand,
  GetQueueUrl: GetQueueUrlCommand,
  ListDeadLetterSourceQueues: ListDeadLetterSourceQueuesCommand,
  ListMessageMoveTasks: ListMessageMoveTasksCommand,
  ListQueues: ListQueuesCommand,
  ListQueueTags: ListQueueTagsCommand,
  PurgeQueue: PurgeQueueCommand,
  ReceiveMessage: ReceiveMessageCommand,
  RemovePermission: RemovePermissionCommand,
  SendMessage: SendMessageCommand,
  SendMessageBatch: SendMessageBatchCommand,
  SetQueueAttributes: SetQueueAttributesCommand,
  StartMessageMoveTask: StartMessageMoveTaskCommand,
  TagQueue: TagQueueCommand,
  UntagQueue: UntagQueueCommand,
};

/** Query list members and their item names, as the SQS API reference writes them. */
const QUERY_LIST_ITEMS: Record<string, string> = {
  AttributeNames: 'AttributeName',
  TagKeys: 'TagKey',
  AWSAccountIds: 'AWSAccountId',
  Actions: 'ActionName',
};

/** A JSON-shaped input as a Query form: `Attribute.1.Name`, `Tag.1.Key`, `<Action>RequestEntry.1.Id`... */
function queryForm(action: string, input: Input): string {
  const form = new URLSearchParams({ Action: action, Version: '2012-11-05' });
  for (const [name, value] of Object.entries(input)) {
    if (Array.isArray(value)) {
      value.forEach((item: unknown, index) => {
        if (item && typeof item === 'object') {
          for (const [field, fieldValue] of Object.entries(item))
            form.append(`${action}RequestEntry.${index + 1}.${field}`, String(fieldValue));
        } else form.append(`${QUERY_LIST_ITEMS[name]}.${index + 1}`, String(item));
      });
    } else if (value && typeof value === 'object') {
      const [prefix, keyName] = name === 'Attributes' ? ['Attribute', 'Name'] : ['Tag', 'Key'];
      Object.entries(value).forEach(([entryKey, entryValue], index) => {
        form.append(`${prefix}.${index + 1}.${keyName}`, entryKey);
        form.append(`${prefix}.${index + 1}.Value`, String(entryValue));
      });
    } else form.append(name, String(value));
  }
  return form.toString();
}

const xmlValues = (xml: string, element: string) =>
  [...xml.matchAll(new RegExp(`<${element}>([^<]*)</${element}>`, 'g'))].map(([, value]) =>
    (value ?? '').replace(/&amp;/g, '&'),
  );

/** A queue as a request may name it. */
interface Target {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
}

interface ActionSpec {
  readonly action: string;
  /** SQS lets a queue Policy open this action to other accounts (not "owner only"). */
  readonly crossAccount: boolean;
  /** Which queue a target names: the one in QueueUrl (default), QueueName, or a move task's source. */
  readonly names?: 'url' | 'name' | 'source';
  /** Makes what a fresh queue needs for the call to succeed (a dead-letter source, messages...). */
  readonly prepare?: (target: Target, world: World) => Promise<void>;
  /** The request for a target; `willSucceed` says whether the admin may prepare state on it. */
  readonly input: (target: Target, world: World, willSucceed: boolean) => Promise<Input> | Input;
}

let server: RunningServer;
const sqsClients = new Map<Key, SQSClient>();
const sdk = (key: Key) => sqsClients.get(key) as SQSClient;

function command(action: string, input: Input): Parameters<SQSClient['send']>[0] {
  const Command = COMMANDS[action] as new (input: never) => object;
  return new Command(input as never) as Parameters<SQSClient['send']>[0];
}

async function sdkCall<T>(key: Key, action: string, input: Input): Promise<T> {
  return (await sdk(key).send(command(action, input))) as T;
}

const admin = <T>(action: string, input: Input) => sdkCall<T>(ADMIN, action, input);

async function call(
  protocol: Protocol,
  key: Key,
  action: string,
  input: Input,
  path = '/',
): Promise<Outcome> {
  if (protocol === 'json') {
    try {
      const output = await sdkCall<{ QueueUrls?: string[]; queueUrls?: string[]; TaskHandle?: string }>(
        key,
        action,
        input,
      );
      return {
        ok: true,
        queueUrls: output.QueueUrls ?? output.queueUrls ?? [],
        taskHandle: output.TaskHandle,
      };
    } catch (error) {
      if (!(error instanceof SQSServiceException)) throw error;
      return {
        ok: false,
        code: (error as SQSServiceException & { Code?: string }).Code ?? error.name,
        status: error.$metadata.httpStatusCode ?? 0,
        message: error.message,
      };
    }
  }
  const url = new URL(path, server.endpoint);
  const body = queryForm(action, input);
  const signed = await sdkSigner(key).sign({
    method: 'POST',
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: {},
    headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  const response = await fetch(url, { method: 'POST', headers: signed.headers, body });
  const xml = await response.text();
  if (response.ok)
    return { ok: true, queueUrls: xmlValues(xml, 'QueueUrl'), taskHandle: xmlValues(xml, 'TaskHandle')[0] };
  return {
    ok: false,
    code: xmlValues(xml, 'Code')[0] ?? '',
    status: response.status,
    message: xmlValues(xml, 'Message')[0] ?? xml,
  };
}

function assertOutcome(outcome: Outcome, expected: Expect): void {
  if (expected === 'ok') {
    assert.ok(outcome.ok, outcome.ok ? '' : `expected success, got ${outcome.code}: ${outcome.message}`);
    return;
  }
  assert.ok(!outcome.ok, `expected ${expected}, but the call succeeded`);
  assert.equal(outcome.code, ERROR_SPECS[expected].queryCode, outcome.message);
  assert.equal(outcome.status, ERROR_SPECS[expected].status, outcome.message);
}

/** One protocol's queues; names carry the protocol so the two runs share nothing. */
class World {
  private made = 0;
  /** Every queue made for a case to be refused on, to check at the end that none was changed. */
  readonly protectedQueues: Target[] = [];
  constructor(readonly protocol: Protocol) {}

  target(name: string): Target {
    return { name, url: `${server.endpoint}/${ACCOUNT}/${name}`, arn: arn(name) };
  }
  /** The queues no limited key may touch, and a queue whose Policy lets the other account in. */
  get secret() {
    return this.target(`secret-${this.protocol}`);
  }
  get secretDlq() {
    return this.target(`secret-dlq-${this.protocol}`);
  }
  get public() {
    return this.target(`public-${this.protocol}`);
  }
  freshName(kind: 'orders' | 'public' | 'secret'): string {
    return `${kind}-${this.protocol}-${++this.made}`;
  }
  async create(name: string, attributes: Record<string, string> = {}): Promise<Target> {
    await admin('CreateQueue', { QueueName: name, Attributes: attributes });
    return this.target(name);
  }
  async createPublic(name: string): Promise<Target> {
    return this.create(name, { Policy: partnerPolicy(name) });
  }
  /** `dlq` becomes the dead-letter queue of `<dlq>-src` and holds `count` messages. */
  async makeDeadLetterQueue(dlq: Target, count = 10): Promise<void> {
    await this.create(`${dlq.name}-src`, { RedrivePolicy: redrivePolicy(dlq.name) });
    if (count === 0) return;
    await admin('SendMessageBatch', {
      QueueUrl: dlq.url,
      Entries: Array.from({ length: count }, (_, index) => ({ Id: `m${index}`, MessageBody: 'dead' })),
    });
  }
  /** A receipt handle of a message in flight in the queue. */
  async receiptHandle(target: Target): Promise<string> {
    await admin('SendMessage', { QueueUrl: target.url, MessageBody: 'probe' });
    const { Messages = [] } = await admin<{ Messages?: Array<{ ReceiptHandle?: string }> }>(
      'ReceiveMessage',
      { QueueUrl: target.url, VisibilityTimeout: 600 },
    );
    return Messages[0]?.ReceiptHandle as string;
  }
  /** A move task out of a dead-letter queue made by makeDeadLetterQueue: at one message a second, RUNNING. */
  async runningTask(dlq: Target): Promise<string> {
    const { TaskHandle } = await admin<{ TaskHandle: string }>('StartMessageMoveTask', {
      SourceArn: dlq.arn,
      DestinationArn: arn(`${dlq.name}-src`),
      MaxNumberOfMessagesPerSecond: 1,
    });
    return TaskHandle;
  }
  /**
   * A fresh queue no limited key may use, ready for `spec`, so that a case the server wrongly lets through
   * damages only its own queue and every case is judged on its own.
   */
  async protectedQueue(spec: ActionSpec): Promise<Target> {
    const target = await this.create(this.freshName('secret'));
    await spec.prepare?.(target, this);
    this.protectedQueues.push(target);
    return target;
  }
  /** A dead-letter queue of the orders* key with two sources: `<dlq>-src`, its own, and one it may not use. */
  async deadLetterQueueWithHiddenSource(): Promise<Target> {
    const dlq = await this.create(this.freshName('orders'));
    await this.makeDeadLetterQueue(dlq, 0);
    await this.create(this.freshName('secret'), { RedrivePolicy: redrivePolicy(dlq.name) });
    return dlq;
  }
}

const arn = (name: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
const redrivePolicy = (dlq: string) => JSON.stringify({ deadLetterTargetArn: arn(dlq), maxReceiveCount: 3 });
const partnerPolicy = (name: string) =>
  JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { AWS: PARTNER_ACCOUNT }, Action: 'sqs:*', Resource: arn(name) },
    ],
  });

const moveTaskSource = (dlq: Target, world: World) => world.makeDeadLetterQueue(dlq);

/** Every action that names a queue, with the input that names it. ListQueues is checked on its own. */
const ACTIONS: readonly ActionSpec[] = [
  { action: 'CreateQueue', crossAccount: false, names: 'name', input: (q) => ({ QueueName: q.name }) },
  { action: 'GetQueueUrl', crossAccount: true, names: 'name', input: (q) => ({ QueueName: q.name }) },
  {
    action: 'GetQueueAttributes',
    crossAccount: true,
    input: (q) => ({ QueueUrl: q.url, AttributeNames: ['All'] }),
  },
  {
    action: 'SetQueueAttributes',
    crossAccount: false,
    input: (q) => ({ QueueUrl: q.url, Attributes: { VisibilityTimeout: '31' } }),
  },
  { action: 'DeleteQueue', crossAccount: false, input: (q) => ({ QueueUrl: q.url }) },
  { action: 'PurgeQueue', crossAccount: true, input: (q) => ({ QueueUrl: q.url }) },
  { action: 'TagQueue', crossAccount: false, input: (q) => ({ QueueUrl: q.url, Tags: { team: 'x' } }) },
  { action: 'UntagQueue', crossAccount: false, input: (q) => ({ QueueUrl: q.url, TagKeys: ['team'] }) },
  { action: 'ListQueueTags', crossAccount: false, input: (q) => ({ QueueUrl: q.url }) },
  {
    action: 'AddPermission',
    crossAccount: false,
    input: (q) => ({
      QueueUrl: q.url,
      Label: 'partner-send',
      AWSAccountIds: [PARTNER_ACCOUNT],
      Actions: ['SendMessage'],
    }),
  },
  {
    action: 'RemovePermission',
    crossAccount: false,
    async input(q, _world, willSucceed) {
      // Only a queue the call may change gets a statement to remove: the protected ones stay as they are.
      if (willSucceed)
        await admin('AddPermission', {
          QueueUrl: q.url,
          Label: 'removable',
          AWSAccountIds: [PARTNER_ACCOUNT],
          Actions: ['ReceiveMessage'],
        });
      return { QueueUrl: q.url, Label: 'removable' };
    },
  },
  { action: 'ListDeadLetterSourceQueues', crossAccount: true, input: (q) => ({ QueueUrl: q.url }) },
  { action: 'SendMessage', crossAccount: true, input: (q) => ({ QueueUrl: q.url, MessageBody: 'hello' }) },
  {
    action: 'SendMessageBatch',
    crossAccount: true,
    input: (q) => ({ QueueUrl: q.url, Entries: [{ Id: 'a', MessageBody: 'hello' }] }),
  },
  { action: 'ReceiveMessage', crossAccount: true, input: (q) => ({ QueueUrl: q.url }) },
  {
    action: 'DeleteMessage',
    crossAccount: true,
    input: async (q, world) => ({ QueueUrl: q.url, ReceiptHandle: await world.receiptHandle(q) }),
  },
  {
    action: 'DeleteMessageBatch',
    crossAccount: true,
    input: async (q, world) => ({
      QueueUrl: q.url,
      Entries: [{ Id: 'a', ReceiptHandle: await world.receiptHandle(q) }],
    }),
  },
  {
    action: 'ChangeMessageVisibility',
    crossAccount: true,
    input: async (q, world) => ({
      QueueUrl: q.url,
      ReceiptHandle: await world.receiptHandle(q),
      VisibilityTimeout: 5,
    }),
  },
  {
    action: 'ChangeMessageVisibilityBatch',
    crossAccount: true,
    input: async (q, world) => ({
      QueueUrl: q.url,
      Entries: [{ Id: 'a', ReceiptHandle: await world.receiptHandle(q), VisibilityTimeout: 5 }],
    }),
  },
  {
    action: 'StartMessageMoveTask',
    crossAccount: false,
    names: 'source',
    prepare: moveTaskSource,
    input: (q) => ({
      SourceArn: q.arn,
      DestinationArn: arn(`${q.name}-src`),
      MaxNumberOfMessagesPerSecond: 1,
    }),
  },
  {
    action: 'ListMessageMoveTasks',
    crossAccount: false,
    names: 'source',
    prepare: moveTaskSource,
    input: (q) => ({ SourceArn: q.arn }),
  },
  {
    action: 'CancelMessageMoveTask',
    crossAccount: false,
    names: 'source',
    prepare: moveTaskSource,
    input: async (q, world) => ({ TaskHandle: await world.runningTask(q) }),
  },
];

const byName = (action: string) => ACTIONS.find((spec) => spec.action === action) as ActionSpec;

function keyMayCall(key: Key, action: string): boolean {
  if (key === PARTNER) return byName(action).crossAccount;
  return (
    key.actions === undefined ||
    key.actions.some((allowed) => new RegExp(`^${allowed.replace('*', '.*')}$`).test(action))
  );
}

interface Case {
  readonly title: string;
  readonly key: Key;
  readonly action: string;
  readonly expect: Expect;
  readonly input: (world: World) => Promise<Input> | Input;
  /** Query only: the path posted to (a queue's URL path), instead of `/`. */
  readonly path?: (world: World) => Promise<string> | string;
  readonly check?: (outcome: Outcome & { ok: true }, input: Input, world: World) => void;
}

/** A fresh queue the key may use (for the other account, one whose Policy lets it in), ready for `spec`. */
async function usableQueue(world: World, key: Key, spec: ActionSpec): Promise<Target> {
  const name = world.freshName(key === PARTNER ? 'public' : 'orders');
  if (spec.action === 'CreateQueue') return world.target(name);
  const target = key === PARTNER ? await world.createPublic(name) : await world.create(name);
  await spec.prepare?.(target, world);
  return target;
}

function everyActionCases(): Case[] {
  const cases: Case[] = [];
  for (const key of [ORDERS, SENDER, PARTNER]) {
    for (const spec of ACTIONS) {
      const allowed = keyMayCall(key, spec.action);
      cases.push({
        title: `${key.label}: ${spec.action} on a queue it may use → ${allowed ? 'ok' : 'AccessDenied'}`,
        key,
        action: spec.action,
        expect: allowed ? 'ok' : 'AccessDenied',
        input: async (world) => spec.input(await usableQueue(world, key, spec), world, allowed),
      });
      if (key === SENDER) continue; // it may use every queue: only its actions are limited
      cases.push({
        title: `${key.label}: ${spec.action} on a queue it may not use → AccessDenied`,
        key,
        action: spec.action,
        expect: 'AccessDenied',
        input: async (world) => spec.input(await world.protectedQueue(spec), world, false),
      });
      if ((spec.names ?? 'url') !== 'url') continue;
      // The attack of issue #22: the text after the last `/` names a queue the key may use, the path another.
      for (const [form, url] of [
        ['query string', (secret: Target, allowedName: string) => `${secret.url}?/${allowedName}`],
        ['fragment', (secret: Target, allowedName: string) => `${secret.url}#/${allowedName}`],
      ] as const) {
        // Refused as a missing queue: it is not a queue URL; an action the key may not call is refused first.
        const expect = allowed ? 'QueueDoesNotExist' : 'AccessDenied';
        cases.push({
          title: `${key.label}: ${spec.action} on a QueueUrl with a ${form} → ${expect}`,
          key,
          action: spec.action,
          expect,
          input: async (world) => {
            const allowedName = key === PARTNER ? world.public.name : 'orders-anything';
            const secret = await world.protectedQueue(spec);
            return { ...(await spec.input(secret, world, false)), QueueUrl: url(secret, allowedName) };
          },
        });
      }
    }
  }
  return cases;
}

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
      (_world, own) => `${server.endpoint}/${PARTNER_ACCOUNT}/${own.name}`,
      'QueueDoesNotExist',
    ],
    // A bare name is the queue of that name, as on AWS, and is checked as that queue.
    ['its bare queue name', (_world, own) => own.name, 'ok'],
    ['the bare name of a queue it may not use', (world) => world.secret.name, 'AccessDenied'],
    ['a URL without a queue', () => 'http://whatever-incorrect-queue-address', 'QueueDoesNotExist'],
    ['the path alone', (_world, own) => `/${ACCOUNT}/${own.name}`, 'ok'],
    ['the /queue/NAME form', (_world, own) => `${server.endpoint}/queue/${own.name}`, 'ok'],
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

describe('authorization acts on the queues a request touches', {
  skip: NEEDS_OWN_SERVER,
  timeout: 600_000,
}, () => {
  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-authz-'));
    const config = join(dataDir, 'keys.json');
    const credentials = KEYS.map(({ label: _label, ...key }) => key);
    writeFileSync(config, JSON.stringify({ credentials }));
    server = await startServer({ dataDir, args: ['--config', config] });
    for (const key of KEYS)
      sqsClients.set(
        key,
        sqsClient(server.endpoint, {
          region: REGION,
          credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
        }),
      );
  });
  after(async () => {
    for (const client of sqsClients.values()) client.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  for (const protocol of ['json', 'query'] as const) {
    describe(`${protocol === 'json' ? 'AWS JSON' : 'Query'} protocol`, () => {
      const world = new World(protocol);
      before(async () => {
        await world.create(world.secret.name);
        await admin('SendMessage', { QueueUrl: world.secret.url, MessageBody: 'secret' });
        await world.create(world.secretDlq.name);
        await world.makeDeadLetterQueue(world.secretDlq);
        await world.createPublic(world.public.name);
      });

      const cases = [
        ...everyActionCases(),
        ...urlFormCases(),
        ...otherQueueCases(),
        ...(protocol === 'query' ? queuePathCases : []),
      ];
      for (const testCase of cases) {
        test(testCase.title, async () => {
          const input = await testCase.input(world);
          const path = await testCase.path?.(world);
          const outcome = await call(protocol, testCase.key, testCase.action, input, path);
          assertOutcome(outcome, testCase.expect);
          if (outcome.ok) testCase.check?.(outcome, input, world);
        });
      }

      test('every queue the limited keys were refused on is as it was made', async () => {
        for (const queue of [world.secret, ...world.protectedQueues]) {
          const { Attributes = {} } = await admin<{ Attributes?: Record<string, string> }>(
            'GetQueueAttributes',
            { QueueUrl: queue.url, AttributeNames: ['All'] },
          );
          assert.equal(Attributes.VisibilityTimeout, '30', queue.name);
          for (const name of ['Policy', 'RedrivePolicy', 'RedriveAllowPolicy'])
            assert.equal(Attributes[name], undefined, `${queue.name} ${name}`);
          const { Tags } = await admin<{ Tags?: Record<string, string> }>('ListQueueTags', {
            QueueUrl: queue.url,
          });
          assert.equal(Tags, undefined, queue.name);
        }
      });
    });
  }
});
