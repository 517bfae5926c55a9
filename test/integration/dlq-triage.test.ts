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
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { deadLetteredOrders } from '../helpers/dead-lettered.ts';
import {
  NEEDS_OWN_SERVER,
  type RunningServer,
  removeDataDir,
  SLUICE_CLI,
  startServer,
} from '../helpers/server.ts';
import { signedFetch } from '../helpers/sigv4.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

interface Browsed {
  messageId: string;
  body: string;
  receiveCount: number;
  state: string;
  origin?: { queue: string; arn: string };
  failureReason?: string;
}
interface BrowsePage {
  queue: string;
  messages: Browsed[];
  next?: string;
}
interface Report {
  done: Array<{ messageId: string; destination?: string; newMessageId?: string }>;
  skipped: Array<{ messageId: string; reason: string }>;
  audit: { id: number; action: string };
}
interface AuditEntry {
  actor: string;
  via: string;
  action: string;
  source: string;
  destination?: string;
  count: number;
  skipped: number;
  detail?: string;
}

const errorCode = async (response: Response) =>
  ((await response.json()) as { __type: string }).__type.split('#').pop();

/**
 * DLQ triage over HTTP against a real `sluice serve`: /api/messages browses and searches a DLQ without
 * receiving, /api/messages/replay and /delete act on a selection and skip what a consumer holds, and
 * /api/audit lists what operators did, the purges and move tasks of the console and CLI included.
 */
describe('DLQ triage API', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let sqs: SQSClient;
  let cli: SQSClient;
  let dlqUrl: string;
  let sourceUrl: string;
  const credentials = { accessKeyId: 'sluice', secretAccessKey: 'sluice' };

  const api = (path: string) => fetch(`${server.endpoint}${path}`);
  const browse = async (query: string) => {
    const response = await api(`/api/messages?queue=orders-dlq${query}`);
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as BrowsePage;
  };
  /** As the console sends it: from its own origin. */
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.endpoint}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.endpoint, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const counts = async (url: string) => {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
    );
    return [
      Number(Attributes!.ApproximateNumberOfMessages),
      Number(Attributes!.ApproximateNumberOfMessagesNotVisible),
    ];
  };

  before(async () => {
    server = await startServer();
    sqs = sqsClient(server.endpoint, { credentials });
    cli = sqsClient(server.endpoint, { credentials, customUserAgent: 'sluice-cli' });
    ({ dlqUrl, sourceUrl } = await deadLetteredOrders(
      sqs,
      [0, 1, 2, 3, 4].map((order) => ({
        MessageBody: JSON.stringify({ order, tier: order % 2 ? 'gold' : 'basic' }),
        MessageAttributes: { kind: { DataType: 'String', StringValue: order === 3 ? 'refund' : 'charge' } },
      })),
    ));
    assert.deepEqual(await counts(dlqUrl), [5, 0]);
  });
  after(async () => {
    sqs?.destroy();
    cli?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  it('browses page by page and searches, receiving nothing', async () => {
    const first = await browse('&limit=2');
    assert.equal(first.messages.length, 2);
    assert.ok(first.next);
    const second = await browse(`&limit=2&after=${first.next}`);
    const third = await browse(`&limit=2&after=${second.next}`);
    assert.equal(third.next, undefined);
    const all = [...first.messages, ...second.messages, ...third.messages];
    assert.deepEqual(
      all.map((m) => JSON.parse(m.body).order),
      [0, 1, 2, 3, 4],
    );
    assert.equal(all[0]!.receiveCount, 1);
    assert.equal(all[0]!.state, 'visible');
    assert.equal(all[0]!.origin?.queue, 'orders');
    assert.match(all[0]!.failureReason!, /maxReceiveCount 1/);
    assert.deepEqual(await counts(dlqUrl), [5, 0], 'browsing changed no visibility');
    const orders = (page: BrowsePage) => page.messages.map((m) => JSON.parse(m.body).order);
    assert.deepEqual(orders(await browse('&filter=attr.kind%3Drefund')), [3]);
    assert.deepEqual(orders(await browse('&filter=body.tier%3Dgold')), [1, 3]);
    assert.deepEqual(orders(await browse('&text=%22order%22%3A4')), [4]);
  });

  it('answers bad input with SQS-shaped errors', async () => {
    const cases: Array<[string, number, string]> = [
      ['/api/messages', 400, 'MissingRequiredParameterException'],
      ['/api/messages?queue=nowhere', 400, 'QueueDoesNotExist'],
      ['/api/messages?queue=orders-dlq&limit=0', 400, 'InvalidParameterValueException'],
      ['/api/messages?queue=orders-dlq&after=abc', 400, 'InvalidParameterValueException'],
      ['/api/messages?queue=orders-dlq&filter=nonsense', 400, 'InvalidParameterValueException'],
      ['/api/messages?queue=orders-dlq&filter=body~(', 400, 'InvalidParameterValueException'],
      ['/api/audit?limit=1000', 400, 'InvalidParameterValueException'],
    ];
    for (const [path, status, code] of cases) {
      const response = await api(path);
      assert.equal(response.status, status, path);
      assert.equal(await errorCode(response), code, path);
    }
    const posts: Array<[unknown, string]> = [
      ['not json', 'SerializationException'],
      [[1], 'SerializationException'],
      [{ ids: ['x'] }, 'MissingRequiredParameterException'],
      [{ queue: 'orders-dlq' }, 'MissingRequiredParameterException'],
      [{ queue: 'orders-dlq', ids: [] }, 'InvalidParameterValueException'],
      [{ queue: 'orders-dlq', ids: 'x' }, 'InvalidParameterValueException'],
      [{ queue: 'orders-dlq', text: 'x', destination: 'nowhere' }, 'QueueDoesNotExist'],
      [{ queue: 'orders-dlq', text: 'x', destination: 'orders-dlq' }, 'InvalidParameterValueException'],
      [{ queue: 'orders-dlq', text: 'order', body: 'one for all' }, 'InvalidParameterValueException'],
      [{ queue: 'orders-dlq', ids: ['x'], messageAttributes: { a: 'b' } }, 'InvalidParameterValueException'],
    ];
    for (const [body, code] of posts) {
      const response = await post('/api/messages/replay', body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(await errorCode(response), code, JSON.stringify(body));
    }
    const crossSite = await post(
      '/api/messages/delete',
      { queue: 'orders-dlq', text: 'order' },
      {
        origin: 'http://evil.example',
      },
    );
    assert.equal(crossSite.status, 403);
    assert.deepEqual(await counts(dlqUrl), [5, 0]);
  });

  it('replays one message with a new body, and deletes a selection, skipping the one in flight', async () => {
    const page = await browse('&limit=10');
    const first = page.messages[0]!;
    const replayed = await post('/api/messages/replay', {
      queue: 'orders-dlq',
      ids: [first.messageId],
      body: '{"order":0,"fixed":true}',
    });
    assert.equal(replayed.status, 200);
    const report = (await replayed.json()) as Report;
    assert.deepEqual(report.done, [
      { messageId: first.messageId, destination: 'orders', newMessageId: report.done[0]!.newMessageId },
    ]);
    assert.deepEqual(report.skipped, []);
    const back = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: sourceUrl,
        MessageAttributeNames: ['All'],
        AttributeNames: ['All'],
      }),
    );
    assert.equal(back.Messages?.[0]?.Body, '{"order":0,"fixed":true}');
    assert.equal(back.Messages?.[0]?.MessageAttributes?.kind?.StringValue, 'charge');
    assert.equal(back.Messages?.[0]?.Attributes?.ApproximateReceiveCount, '1');

    const held = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 120 }),
    );
    const deleted = await post('/api/messages/delete', { queue: 'orders-dlq', filters: ['body~order'] });
    const deleteReport = (await deleted.json()) as Report;
    assert.equal(deleteReport.done.length, 3);
    assert.deepEqual(deleteReport.skipped, [{ messageId: held.Messages![0]!.MessageId, reason: 'inFlight' }]);
    assert.deepEqual(await counts(dlqUrl), [0, 1]);
  });

  it('lists the audit trail, the purges and move tasks of every client included', async () => {
    await sqs.send(new PurgeQueueCommand({ QueueUrl: sourceUrl }));
    await cli.send(new PurgeQueueCommand({ QueueUrl: dlqUrl }));
    await cli.send(
      new StartMessageMoveTaskCommand({ SourceArn: 'arn:aws:sqs:us-east-1:000000000000:orders-dlq' }),
    );
    const response = await api('/api/audit');
    assert.equal(response.status, 200);
    const { entries } = (await response.json()) as { entries: AuditEntry[] };
    const shown = entries.map(({ actor, via, action, source, destination, count, skipped }) => ({
      actor,
      via,
      action,
      source,
      destination,
      count,
      skipped,
    }));
    // Without credentials no request is authenticated, whatever its client says it is.
    const by = { actor: 'anonymous', via: 'unauthenticated' };
    assert.deepEqual(shown, [
      { ...by, action: 'move-task', source: 'orders-dlq', destination: 'origin', count: 0, skipped: 0 },
      { ...by, action: 'purge', source: 'orders-dlq', destination: undefined, count: 1, skipped: 0 },
      { ...by, action: 'purge', source: 'orders', destination: undefined, count: 1, skipped: 0 },
      { ...by, action: 'delete', source: 'orders-dlq', destination: undefined, count: 3, skipped: 1 },
      { ...by, action: 'replay', source: 'orders-dlq', destination: 'origin', count: 1, skipped: 0 },
    ]);
    assert.equal(entries[3]!.detail, 'body~order');
    const older = await api('/api/audit?limit=1&before=2');
    const { entries: one } = (await older.json()) as { entries: AuditEntry[] };
    assert.equal(one.length, 1);
    assert.equal(one[0]!.action, 'replay');
  });
});

/**
 * With credentials: a signed request's key is the actor, refused without SetQueueAttributes on the queue,
 * and an unsigned one needs to sign in. (Keys of limited scope: triage-security.test.ts.)
 */
describe('DLQ triage API with credentials', { skip: NEEDS_OWN_SERVER }, () => {
  const ADMIN = { accessKeyId: 'AKIDOPS', secretAccessKey: 'ops-secret' };
  const READER = {
    accessKeyId: 'AKIDREADER',
    secretAccessKey: 'reader-secret',
    queues: ['jobs*'],
    // Reading a queue's messages: a browse shows their bodies.
    actions: ['GetQueueAttributes', 'ReceiveMessage'],
  };
  let server: RunningServer;
  let sqs: SQSClient;

  const signed = (
    key: { accessKeyId: string; secretAccessKey: string },
    method: 'GET' | 'POST',
    path: string,
    body = '',
  ) => signedFetch(server.endpoint, key, method, path, body);

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-triage-auth-'));
    const config = join(dir, 'sluice.json');
    writeFileSync(config, JSON.stringify({ credentials: [ADMIN, READER] }));
    server = await startServer({ dataDir: join(dir, 'data'), args: ['--config', config] });
    sqs = sqsClient(server.endpoint, { credentials: ADMIN });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'jobs-dlq' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'stuck job' }));
  });
  after(async () => {
    sqs?.destroy();
    await server?.stop();
    if (server) removeDataDir(join(server.dataDir, '..'));
  });

  it('records the signing key as the actor and refuses a key that may only read', async () => {
    assert.equal((await api()).status, 401);
    const page = await signed(READER, 'GET', '/api/messages?queue=jobs-dlq');
    assert.equal(page.status, 200);
    const { messages } = (await page.json()) as BrowsePage;
    assert.equal(messages.length, 1);
    const body = JSON.stringify({ queue: 'jobs-dlq', ids: [messages[0]!.messageId] });
    const refused = await signed(READER, 'POST', '/api/messages/delete', body);
    assert.equal(refused.status, 403);
    assert.equal(await errorCode(refused), 'AccessDeniedException');
    const deleted = await signed(ADMIN, 'POST', '/api/messages/delete', body);
    assert.equal(deleted.status, 200);
    const { audit } = (await deleted.json()) as Report & { audit: AuditEntry };
    assert.equal(audit.actor, 'AKIDOPS');
    assert.equal(audit.via, 'signature');
    const trail = await signed(READER, 'GET', '/api/audit');
    const { entries } = (await trail.json()) as { entries: AuditEntry[] };
    assert.deepEqual(
      entries.map((entry) => [entry.actor, entry.action, entry.source]),
      [['AKIDOPS', 'delete', 'jobs-dlq']],
    );
  });

  it('signs the CLI’s requests with the key in the environment', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'jobs-dlq' }));
    await sqs.send(new CreateQueueCommand({ QueueName: 'jobs' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'stuck again' }));
    const env = {
      ...process.env,
      AWS_ACCESS_KEY_ID: ADMIN.accessKeyId,
      AWS_SECRET_ACCESS_KEY: ADMIN.secretAccessKey,
    };
    const cli = (...args: string[]) =>
      promisify(execFile)(process.execPath, [...SLUICE_CLI, ...args, '--endpoint', server.endpoint], { env });
    const { stderr } = await cli(
      'redrive',
      '--source',
      'jobs-dlq',
      '--destination',
      'jobs',
      '--search',
      'again',
    );
    assert.match(stderr, /DONE: 1 moved, 0 skipped/);
    const { stdout } = await cli('audit', '--json', '--limit', '1');
    const [entry] = JSON.parse(stdout) as AuditEntry[];
    assert.deepEqual(
      [entry!.actor, entry!.via, entry!.action, entry!.destination],
      ['AKIDOPS', 'signature', 'replay', 'jobs'],
    );
  });

  const api = () => fetch(`${server.endpoint}/api/messages?queue=jobs-dlq`);
});

/**
 * A replay of a big selection moves it a page of messages at a time; SIGKILLed while it runs, the server comes
 * back with every message in exactly one of the two queues, none lost and none twice.
 */
describe('DLQ triage replay and kill -9', { skip: NEEDS_OWN_SERVER }, () => {
  it('leaves each message in exactly one queue, wherever the kill lands', async () => {
    let server = await startServer();
    const dataDir = server.dataDir;
    let sqs = sqsClient(server.endpoint);
    try {
      const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'big-dlq' }))).QueueUrl!;
      const targetUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'big-target' }))).QueueUrl!;
      const bodies = Array.from({ length: 1_000 }, (_, i) => `order ${i}`);
      for (let start = 0; start < bodies.length; start += 10)
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: dlqUrl,
            Entries: bodies
              .slice(start, start + 10)
              .map((MessageBody, i) => ({ Id: String(i), MessageBody })),
          }),
        );
      const replay = fetch(`${server.endpoint}/api/messages/replay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: server.endpoint },
        body: JSON.stringify({ queue: 'big-dlq', text: 'order', destination: 'big-target' }),
      }).catch(() => undefined);
      // Killed as soon as some of the selection has moved (or once it is all done, if it is quicker).
      const moved = async () => Number((await attributes(sqs, targetUrl)).ApproximateNumberOfMessages);
      while ((await moved()) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await server.kill();
      await replay;
      sqs.destroy();
      server = await startServer({ dataDir });
      sqs = sqsClient(server.endpoint);
      const found: string[] = [];
      for (const url of [dlqUrl, targetUrl].map((old) => old.replace(/^http:\/\/[^/]+/, server.endpoint)))
        for (;;) {
          const { Messages = [] } = await sqs.send(
            new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
          );
          if (Messages.length === 0) break;
          found.push(...Messages.map((message) => message.Body!));
        }
      assert.deepEqual(found.sort(), [...bodies].sort());
    } finally {
      sqs.destroy();
      await server.stop();
      removeDataDir(dataDir);
    }
  });
});

const attributes = async (sqs: SQSClient, QueueUrl: string) =>
  (
    await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    )
  ).Attributes!;
