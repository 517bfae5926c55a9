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
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from './server.ts';
import { sdkSigner } from './sigv4.ts';
import { sqsClient } from './sqs-client.ts';

/**
 * Authorization over both wire protocols, as the authorization*.test.ts files check it: a server with a key
 * limited to `orders*`, a key limited by actions and a key of another account that a queue Policy lets in;
 * each call made through @aws-sdk/client-sqs (AWS JSON) or as a Query form post signed by the SDK's signer;
 * the queues of each protocol's run (World); every action that names a queue (ACTIONS); and the runner that
 * makes each case a test and checks at the end that no queue a limited key was refused on changed.
 */

export const ACCOUNT = '000000000000';
export const PARTNER_ACCOUNT = '111122223333';
export const REGION = 'us-east-1';

export interface Key {
  readonly label: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly queues?: readonly string[];
  readonly actions?: readonly string[];
  readonly accountId?: string;
}

const ADMIN: Key = { label: 'admin', accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret' };
export const ORDERS: Key = {
  label: 'orders* key',
  accessKeyId: 'AKIDORDERS',
  secretAccessKey: 'orders-secret',
  queues: ['orders*'],
};
export const SENDER: Key = {
  label: 'send-only key',
  accessKeyId: 'AKIDSENDER',
  secretAccessKey: 'sender-secret',
  actions: ['GetQueueUrl', 'ListQueues', 'SendMessage*'],
};
export const PARTNER: Key = {
  label: 'other account',
  accessKeyId: 'AKIDPARTNER',
  secretAccessKey: 'partner-secret',
  accountId: PARTNER_ACCOUNT,
};
const KEYS = [ADMIN, ORDERS, SENDER, PARTNER];

type Protocol = 'json' | 'query';
export type Input = Record<string, unknown>;
export type Outcome =
  | { ok: true; queueUrls: string[]; taskHandle?: string }
  | { ok: false; code: string; status: number; message: string };
export type Expect = 'ok' | ErrorCode;

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
export interface Target {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
}

export interface ActionSpec {
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
export class World {
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

export const arn = (name: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
export const redrivePolicy = (dlq: string) =>
  JSON.stringify({ deadLetterTargetArn: arn(dlq), maxReceiveCount: 3 });
const partnerPolicy = (name: string) =>
  JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { AWS: PARTNER_ACCOUNT }, Action: 'sqs:*', Resource: arn(name) },
    ],
  });

const moveTaskSource = (dlq: Target, world: World) => world.makeDeadLetterQueue(dlq);

/** Every action that names a queue, with the input that names it. ListQueues is checked on its own. */
export const ACTIONS: readonly ActionSpec[] = [
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

export const byName = (action: string) => ACTIONS.find((spec) => spec.action === action) as ActionSpec;

export function keyMayCall(key: Key, action: string): boolean {
  if (key === PARTNER) return byName(action).crossAccount;
  return (
    key.actions === undefined ||
    key.actions.some((allowed) => new RegExp(`^${allowed.replace('*', '.*')}$`).test(action))
  );
}

export interface Case {
  readonly title: string;
  readonly key: Key;
  readonly action: string;
  readonly expect: Expect;
  readonly input: (world: World) => Promise<Input> | Input;
  /** Query only: the path posted to (a queue's URL path), instead of `/`. */
  readonly path?: (world: World) => Promise<string> | string;
  readonly check?: (outcome: Outcome & { ok: true }, input: Input, world: World) => void;
}

/** The server's endpoint, for the cases that spell queue URLs of their own. */
export const endpoint = () => server.endpoint;

/**
 * Runs the cases `casesFor` gives for each protocol as tests, on a server of their own, then checks that
 * every queue the limited keys were refused on is as it was made.
 */
export function describeAuthorization(casesFor: (protocol: Protocol) => Case[]): void {
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

        for (const testCase of casesFor(protocol)) {
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
}
