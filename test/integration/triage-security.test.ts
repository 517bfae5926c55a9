import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  NEEDS_OWN_SERVER,
  type RunningServer,
  removeDataDir,
  SLUICE_CLI,
  startServer,
} from '../helpers/server.ts';
import { signedFetch } from '../helpers/sigv4.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const DLQ_ARN = 'arn:aws:sqs:us-east-1:000000000000:orders-dlq';

interface Key {
  accessKeyId: string;
  secretAccessKey: string;
  queues?: string[];
  actions?: string[];
}
const ADMIN: Key = { accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret' };
/** Every action, on the orders queues only. */
const ORDERS: Key = { accessKeyId: 'AKIDORDERS', secretAccessKey: 'orders-secret', queues: ['orders*'] };
/** May look at the orders queues' settings and counts, not at their messages. */
const PEEKER: Key = {
  accessKeyId: 'AKIDPEEKER',
  secretAccessKey: 'peeker-secret',
  queues: ['orders*'],
  actions: ['GetQueueAttributes'],
};
/** Read-only: may read the orders queues' messages, change nothing. */
const READER: Key = {
  accessKeyId: 'AKIDREADER',
  secretAccessKey: 'reader-secret',
  queues: ['orders*'],
  actions: ['GetQueueAttributes', 'ReceiveMessage'],
};
/** May change the orders queues' settings and send to them, not read their messages. */
const CONFIGURER: Key = {
  accessKeyId: 'AKIDCONFIGURER',
  secretAccessKey: 'configurer-secret',
  queues: ['orders*'],
  actions: ['GetQueueAttributes', 'SetQueueAttributes', 'SendMessage'],
};

interface Browsed {
  messageId: string;
  body: string;
  origin?: { queue: string };
}
interface Alarm {
  queue: string;
  history: Array<{ event: string; sourceQueues: string[]; message: string }>;
}

/** A body on which a backtracking matcher takes 2^64 steps for `^(a+)+$`: it would never answer. */
const HOSTILE_BODY = `orders ${'a'.repeat(64)}!`;

/**
 * The DLQ triage features as an attacker with a key of limited scope tries them (issue 38), against a real
 * `sluice serve` with keys from its config file, every request signed: `orders-dlq` is the DLQ of `orders` and
 * of `secret`, which the `orders*` keys may not touch.
 */
describe('DLQ triage against keys of limited scope', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let admin: SQSClient;
  let orders: SQSClient;
  let secretUrl: string;
  let ordersUrl: string;
  let dlqUrl: string;

  const signed = (key: Key, method: 'GET' | 'POST', path: string, body = '', signal?: AbortSignal) =>
    signedFetch(server.endpoint, key, method, path, body, signal);
  const browse = async (key: Key, query: string) => {
    const response = await signed(key, 'GET', `/api/messages?${query}`);
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as { messages: Browsed[] }).messages;
  };
  const refusal = async (response: Response) => ({
    status: response.status,
    code: ((await response.json()) as { __type?: string }).__type?.split('#').pop(),
  });
  const visible = async (url: string) => {
    const { Attributes } = await admin.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    return Number(Attributes!.ApproximateNumberOfMessages);
  };
  const cli = (key: Key, ...args: string[]) =>
    promisify(execFile)(process.execPath, [...SLUICE_CLI, ...args, '--endpoint', server.endpoint], {
      env: { ...process.env, AWS_ACCESS_KEY_ID: key.accessKeyId, AWS_SECRET_ACCESS_KEY: key.secretAccessKey },
      // A backtracking matcher would run for ever: end it rather than hang the suite.
      timeout: 120_000,
    });
  /** Sends `body` to `url` as the admin, then receives it until it is dead-lettered into orders-dlq. */
  const deadLetter = async (url: string, body: string) => {
    await admin.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
    while (
      ((await admin.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 0 }))).Messages
        ?.length ?? 0) > 0
    ) {}
  };
  const idOf = async (body: string) =>
    (await browse(ADMIN, 'queue=orders-dlq&limit=100')).find((message) => message.body === body)!.messageId;

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-triage-security-'));
    const config = join(dir, 'sluice.json');
    writeFileSync(
      config,
      JSON.stringify({
        credentials: [ADMIN, ORDERS, PEEKER, READER, CONFIGURER],
        alarms: { periodSeconds: 1 },
      }),
    );
    server = await startServer({ dataDir: join(dir, 'data'), args: ['--config', config] });
    admin = sqsClient(server.endpoint, { credentials: ADMIN });
    orders = sqsClient(server.endpoint, { credentials: ORDERS });
    dlqUrl = (await admin.send(new CreateQueueCommand({ QueueName: 'orders-dlq' }))).QueueUrl!;
    const redrive = { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: DLQ_ARN, maxReceiveCount: 1 }) };
    secretUrl = (await admin.send(new CreateQueueCommand({ QueueName: 'secret', Attributes: redrive })))
      .QueueUrl!;
    ordersUrl = (await admin.send(new CreateQueueCommand({ QueueName: 'orders', Attributes: redrive })))
      .QueueUrl!;
    await deadLetter(secretUrl, 'secret payroll');
    await deadLetter(ordersUrl, 'order 1');
    await deadLetter(ordersUrl, HOSTILE_BODY);
    assert.equal(await visible(dlqUrl), 3);
  });
  after(async () => {
    admin?.destroy();
    orders?.destroy();
    // SIGKILL: a server stuck in a search would never handle SIGTERM.
    await server?.kill();
    if (server) removeDataDir(join(server.dataDir, '..'));
  });

  it('lists on /alarms only the source queues the key may read', async () => {
    let alarm: Alarm | undefined;
    for (let tries = 0; !alarm?.history.some((n) => n.event === 'raised'); tries++) {
      assert.ok(tries < 300, 'the alarm of orders-dlq was not raised within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { alarms } = (await (await signed(ADMIN, 'GET', '/alarms')).json()) as { alarms: Alarm[] };
      alarm = alarms.find((a) => a.queue === 'orders-dlq');
    }
    const raised = alarm!.history.find((n) => n.event === 'raised')!;
    assert.deepEqual(raised.sourceQueues, ['orders', 'secret']);
    assert.match(raised.message, /from orders, secret$/);
    const { alarms } = (await (await signed(ORDERS, 'GET', '/alarms')).json()) as { alarms: Alarm[] };
    const seen = alarms.find((a) => a.queue === 'orders-dlq')!.history.find((n) => n.event === 'raised')!;
    assert.deepEqual(seen.sourceQueues, ['orders']);
    assert.match(seen.message, /from orders$/);
    assert.doesNotMatch(JSON.stringify(alarms), /secret/);
  });

  it('shows message bodies only to a key that may receive them: browse, search and one message', async () => {
    const id = await idOf('order 1');
    for (const query of [
      'queue=orders-dlq',
      'queue=orders-dlq&text=order',
      `queue=orders-dlq&filter=id%3D${id}`,
    ])
      assert.deepEqual(
        await refusal(await signed(PEEKER, 'GET', `/api/messages?${query}`)),
        { status: 403, code: 'AccessDeniedException' },
        query,
      );
    const found = await browse(READER, `queue=orders-dlq&filter=id%3D${id}`);
    assert.deepEqual(
      found.map((message) => message.body),
      ['order 1'],
    );
    // A replay or delete selects messages by their contents: the selection reads them.
    const deleting = JSON.stringify({ queue: 'orders-dlq', filters: ['body~payroll'] });
    assert.deepEqual(await refusal(await signed(CONFIGURER, 'POST', '/api/messages/delete', deleting)), {
      status: 403,
      code: 'AccessDeniedException',
    });
    assert.equal(await visible(dlqUrl), 3);
  });

  it("refuses a replay to a message's origin that the key may not send to, by the API and by sluice redrive", async () => {
    const id = await idOf('secret payroll');
    const replay = JSON.stringify({ queue: 'orders-dlq', ids: [id], body: 'edited by orders' });
    const refused = await signed(ORDERS, 'POST', '/api/messages/replay', replay);
    assert.equal(refused.status, 403);
    const { message } = (await refused.json()) as { message: string };
    assert.match(message, /AKIDORDERS is not authorized to perform: sqs:SendMessage on resource: .*:secret$/);
    await assert.rejects(
      cli(ORDERS, 'redrive', '--source', 'orders-dlq', '--search', 'payroll'),
      (failure: { code?: number; stderr?: string }) => {
        assert.equal(failure.code, 1);
        assert.match(failure.stderr ?? '', /HTTP 403 .*sqs:SendMessage on resource: .*:secret/);
        return true;
      },
    );
    assert.equal(await visible(secretUrl), 0, 'nothing reached secret');
    assert.equal(await visible(dlqUrl), 3, 'nothing left orders-dlq');
    // Naming secret is refused as before.
    const named = JSON.stringify({ queue: 'orders-dlq', ids: [id], destination: 'secret' });
    assert.equal((await signed(ORDERS, 'POST', '/api/messages/replay', named)).status, 403);
  });

  it("replays to an origin the key may send to, as the key's message", async () => {
    const id = await idOf('order 1');
    const replayed = await signed(
      ORDERS,
      'POST',
      '/api/messages/replay',
      JSON.stringify({ queue: 'orders-dlq', ids: [id] }),
    );
    assert.equal(replayed.status, 200, await replayed.clone().text());
    const { done } = (await replayed.json()) as {
      done: Array<{ messageId: string; destination: string; newMessageId: string }>;
    };
    assert.deepEqual(
      done.map(({ messageId, destination }) => ({ messageId, destination })),
      [{ messageId: id, destination: 'orders' }],
    );
    const { Messages = [] } = await orders.send(
      new ReceiveMessageCommand({ QueueUrl: ordersUrl, MessageSystemAttributeNames: ['SenderId'] }),
    );
    assert.equal(Messages[0]?.MessageId, done[0]!.newMessageId);
    assert.equal(Messages[0]?.Body, 'order 1');
    assert.equal(
      Messages[0]?.Attributes?.SenderId,
      'AKIDORDERS',
      'sent by the admin, replayed by AKIDORDERS',
    );
  });

  it('answers a hostile pattern from a read-only key at once, and bounds what a pattern may cost', async () => {
    const query = new URLSearchParams({ queue: 'orders-dlq', filter: 'body~^orders (a+)+$' });
    // A backtracking matcher would take 2^64 steps: the signal ends the wait instead of hanging the suite.
    const response = await signed(READER, 'GET', `/api/messages?${query}`, '', AbortSignal.timeout(60_000));
    assert.equal(response.status, 200);
    assert.deepEqual(((await response.json()) as { messages: Browsed[] }).messages, []);
    const matching = new URLSearchParams({ queue: 'orders-dlq', filter: 'body~^orders (a+)+!$' });
    assert.deepEqual(
      (await browse(READER, matching.toString())).map((message) => message.body),
      [HOSTILE_BODY],
    );
    const health = await fetch(`${server.endpoint}/health`);
    assert.equal(health.status, 200);

    const refused = async (filters: string[]) => {
      const params = new URLSearchParams({ queue: 'orders-dlq' });
      for (const filter of filters) params.append('filter', filter);
      const answer = await signed(READER, 'GET', `/api/messages?${params}`);
      const { message } = (await answer.clone().json()) as { message: string };
      return { ...(await refusal(answer)), message };
    };
    // RE2 has no backreferences or lookarounds (they cannot run in linear time).
    assert.match((await refused(['body~(a)\\1'])).message, /RE2 syntax/);
    // Compiling is bounded: `x{1000}` is 7 characters and 1,000 instructions.
    assert.match(
      (await refused([`body~${'x{1000}'.repeat(10)}`])).message,
      /come to 10002 instructions together, over the 10000 one search may use/,
    );
    assert.match((await refused(Array.from({ length: 21 }, () => 'body=x'))).message, /at most 20 filters/);
    // Matching is bounded per message: a pattern that defeats the DFA costs its program size per character.
    await admin.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: 'ab'.repeat(100_000) }));
    const costly = await refused(['body~[ab]*a[ab]{100}$']);
    assert.deepEqual([costly.status, costly.code], [400, 'InvalidParameterValueException']);
    assert.match(costly.message, /would take 106 × 200000 steps/);
  });

  it('runs sluice redrive --filter with a hostile pattern in linear time too', async () => {
    const { stderr } = await cli(
      ADMIN,
      'redrive',
      '--source',
      'orders-dlq',
      '--destination',
      'orders',
      '--filter',
      'body~^orders (a+)+$',
      '--hold',
      '10',
    );
    assert.match(stderr, /DONE: 0 moved/);
  });
});
