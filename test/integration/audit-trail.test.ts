import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CancelMessageMoveTaskCommand,
  CreateQueueCommand,
  DeleteQueueCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { advanceClock } from 'sluice-client/testing';
import { signRequest } from '../../packages/server/src/server/auth/sigv4.ts';
import type { AuditRecord } from '../../packages/server/src/store/triage.ts';
import { deadLetteredOrders } from '../helpers/dead-lettered.ts';
import {
  NEEDS_OWN_SERVER,
  type RunningServer,
  removeDataDir,
  SLUICE_CLI,
  startServer,
} from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const run = promisify(execFile);
const ADMIN = { accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret' };
const ARN = 'arn:aws:sqs:us-east-1:000000000000';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** What a terminal acts on: C0 controls but the newline ending a line, DEL, C1 controls, bidirectional overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this finds.
const TERMINAL_CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** The bytes of the SQLite files in a data directory (the database and its WAL). */
const storeBytes = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.startsWith('sluice.db'))
    .reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);

/**
 * The audit trail against a real `sluice serve` with credentials: every action that destroys or moves
 * messages is recorded whoever makes it, `via` says how the request was authenticated whatever headers it
 * carries, an entry stays small whatever its request held, a replay's edit and new ids are kept, and
 * `sluice audit` prints what a terminal would act on as escapes.
 */
describe('the audit trail, with credentials', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let sqs: SQSClient;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-audit-'));

  /** A request to /api/... signed with ADMIN, with any other headers the client likes to add. */
  const signed = (method: 'GET' | 'POST', path: string, body = '', headers: Record<string, string> = {}) => {
    const url = new URL(`${server.endpoint}${path}`);
    const { host: _host, ...signature } = signRequest({ method, url, body }, ADMIN, 'us-east-1', Date.now());
    return fetch(url, {
      method,
      headers: { ...headers, ...signature },
      ...(method === 'POST' ? { body: Buffer.from(body) } : {}),
    });
  };
  const trail = async (limit: number): Promise<AuditRecord[]> => {
    const response = await signed('GET', `/api/audit?limit=${limit}`);
    assert.equal(response.status, 200);
    return ((await response.json()) as { entries: AuditRecord[] }).entries;
  };
  const sluiceAudit = (...args: string[]) =>
    run(process.execPath, [...SLUICE_CLI, 'audit', ...args, '--endpoint', server.endpoint], {
      env: {
        ...process.env,
        AWS_ACCESS_KEY_ID: ADMIN.accessKeyId,
        AWS_SECRET_ACCESS_KEY: ADMIN.secretAccessKey,
      },
    });

  before(async () => {
    const config = join(dir, 'keys.json');
    writeFileSync(config, JSON.stringify({ credentials: [ADMIN] }));
    server = await startServer({ dataDir: join(dir, 'data'), args: ['--config', config] });
    sqs = sqsClient(server.endpoint, { credentials: ADMIN });
  });
  after(async () => {
    sqs?.destroy();
    await server?.stop();
    removeDataDir(dir);
  });

  it('records every purge, queue deletion and move task of an application, via its signature whatever it claims', async () => {
    await deadLetteredOrders(sqs, [{ MessageBody: 'one' }, { MessageBody: 'two' }]);
    // An application's SDK that names itself as the CLI and adds the headers of the console's page.
    const claiming = sqsClient(server.endpoint, { credentials: ADMIN, customUserAgent: 'sluice-cli' });
    claiming.middlewareStack.add(
      (next) => (args) => {
        const request = args.request as { headers: Record<string, string> };
        request.headers['sec-fetch-site'] = 'same-origin';
        request.headers.origin = server.endpoint;
        return next(args);
      },
      { step: 'build' },
    );
    let moved = 0;
    try {
      const { TaskHandle } = await claiming.send(
        new StartMessageMoveTaskCommand({ SourceArn: `${ARN}:orders-dlq`, MaxNumberOfMessagesPerSecond: 1 }),
      );
      const { ApproximateNumberOfMessagesMoved } = await claiming.send(
        new CancelMessageMoveTaskCommand({ TaskHandle }),
      );
      // At one message a second, a slow machine may move the first before the cancel: each entry counts what
      // its action touched, whatever that was.
      moved = ApproximateNumberOfMessagesMoved ?? 0;
      await sqs.send(new PurgeQueueCommand({ QueueUrl: `${server.endpoint}/000000000000/orders-dlq` }));
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'short-lived' }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'gone with it' }));
      await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    } finally {
      claiming.destroy();
    }
    const entries = (await trail(4)).map(({ actor, via, action, source, destination, count }) => ({
      actor,
      via,
      action,
      source,
      destination,
      count,
    }));
    const by = { actor: 'AKIDADMIN', via: 'signature' };
    assert.deepEqual(entries, [
      { ...by, action: 'delete-queue', source: 'short-lived', destination: undefined, count: 1 },
      { ...by, action: 'purge', source: 'orders-dlq', destination: undefined, count: 2 - moved },
      { ...by, action: 'cancel-move-task', source: 'orders-dlq', destination: 'origin', count: moved },
      { ...by, action: 'move-task', source: 'orders-dlq', destination: 'origin', count: 2 },
    ]);
  });

  it('records the console session as the console session, and a signed triage request as signed', async () => {
    await deadLetteredOrders(sqs, [{ MessageBody: 'three' }, { MessageBody: 'four' }]);
    const form = new URLSearchParams(ADMIN).toString();
    const login = await fetch(`${server.endpoint}/console/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.endpoint },
      body: form,
    });
    assert.equal(login.status, 303);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const fromConsole = await fetch(`${server.endpoint}/api/messages/delete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ queue: 'orders-dlq', text: 'three' }),
    });
    assert.equal(fromConsole.status, 200, await fromConsole.clone().text());
    const fromScript = await signed('POST', '/api/messages/delete', '{"queue":"orders-dlq","text":"four"}', {
      'user-agent': 'sluice-cli',
      origin: server.endpoint,
    });
    assert.equal(fromScript.status, 200);
    assert.deepEqual(
      (await trail(2)).map((entry) => [entry.via, entry.action, entry.count]),
      [
        ['signature', 'delete', 1],
        ['console-session', 'delete', 1],
      ],
    );
  });

  it('keeps each entry small whatever its request held, and the trail answer with it', async () => {
    const data = join(dir, 'data');
    const before = storeBytes(data);
    const text = 'x'.repeat(4 * 1024 * 1024);
    for (let i = 0; i < 8; i++) {
      const response = await signed(
        'POST',
        '/api/messages/delete',
        JSON.stringify({ queue: 'orders-dlq', text }),
      );
      assert.equal(response.status, 200);
      const { done, audit } = (await response.json()) as { done: unknown[]; audit: AuditRecord };
      assert.equal(done.length, 0);
      const size = Buffer.byteLength(JSON.stringify(audit));
      assert.ok(size < 2048, `an entry of ${size} bytes`);
      assert.match(audit.detail!, /^body contains "x+… \(selection sha256 [0-9a-f]{64}\)$/);
    }
    const grown = storeBytes(data) - before;
    assert.ok(grown < 1024 * 1024, `8 entries grew the database and its WAL by ${grown} bytes`);
    const answer = await signed('GET', '/api/audit?limit=200');
    const bytes = (await answer.arrayBuffer()).byteLength;
    assert.ok(bytes < 64 * 1024, `the trail's answer took ${bytes} bytes`);
  });

  it("keeps what a replay changed, as digests and sizes, and the new messages' ids", async () => {
    const { sourceUrl } = await deadLetteredOrders(sqs, [{ MessageBody: '{"order":5}' }]);
    const page = await signed('GET', '/api/messages?queue=orders-dlq&text=%22order%22%3A5');
    const { messages } = (await page.json()) as { messages: Array<{ messageId: string }> };
    const body = '{"order":5,"fixed":true}';
    const replayed = await signed(
      'POST',
      '/api/messages/replay',
      JSON.stringify({
        queue: 'orders-dlq',
        ids: [messages[0]!.messageId],
        body,
        messageAttributes: { kind: { DataType: 'String', StringValue: 'fixed' } },
      }),
    );
    assert.equal(replayed.status, 200);
    const report = (await replayed.json()) as {
      done: Array<{ messageId: string; newMessageId: string }>;
      audit: AuditRecord;
    };
    const newMessageId = report.done[0]!.newMessageId;
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: sourceUrl }));
    assert.equal(Messages?.[0]?.MessageId, newMessageId);
    const [entry] = await trail(1);
    assert.deepEqual(entry!.edit?.body, { bytes: Buffer.byteLength(body), sha256: sha256(body) });
    assert.equal(entry!.edit?.messageAttributes?.bytes, 15);
    assert.deepEqual(entry!.messages, [{ messageId: messages[0]!.messageId, newMessageId }]);
    assert.doesNotMatch(JSON.stringify(entry), /fixed/, 'the content is not in the trail');

    const { stdout } = await sluiceAudit('--limit', '1');
    assert.match(stdout, new RegExp(`new body \\(24 bytes, sha256 ${sha256(body).slice(0, 12)}…\\)`));
    assert.match(stdout, new RegExp(`new ids ${newMessageId}$`, 'm'));
  });

  it('prints the control characters of an entry as escapes: one line each, nothing for the terminal to act on', async () => {
    const forged = 'id\u001b[2J\u009b2J\u202e\n14 2026-12-07 00:00:00 AKIDADMIN console purge secret';
    const response = await signed(
      'POST',
      '/api/messages/delete',
      JSON.stringify({ queue: 'orders-dlq', ids: [forged] }),
    );
    assert.equal(response.status, 200);

    const table = await sluiceAudit('--limit', '1');
    assert.doesNotMatch(table.stdout, TERMINAL_CONTROLS);
    const lines = table.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2, table.stdout);
    assert.ok(
      lines[1]!.endsWith(
        'ids id\\x1b[2J\\x9b2J\\u{202e}\\n14 2026-12-07 00:00:00 AKIDADMIN console purge secret',
      ),
      lines[1],
    );
    const json = await sluiceAudit('--limit', '1', '--json');
    assert.doesNotMatch(json.stdout, TERMINAL_CONTROLS);
    const [entry] = JSON.parse(json.stdout) as AuditRecord[];
    assert.equal(entry!.detail, `ids ${forged}`, 'the JSON holds the text as it was');
  });
});

/** The trail's retention and paging: `--audit-max-entries`, `--audit-retention-days`, `sluice audit --before`. */
describe('the audit trail kept within its retention', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let sqs: SQSClient;

  before(async () => {
    server = await startServer({
      inMemory: true,
      args: ['--test-clock', '--audit-max-entries', '3', '--audit-retention-days', '1'],
    });
    sqs = new SQSClient({
      endpoint: server.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
  });
  after(async () => {
    sqs?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  it('keeps the newest entries, pages back from the CLI, and drops what is older than its retention', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'purged' }));
    for (let i = 0; i < 5; i++) {
      await sqs.send(new PurgeQueueCommand({ QueueUrl }));
      // PurgeQueue allows one purge a minute.
      await advanceClock(server.endpoint, 60);
    }
    const list = async () =>
      ((await (await fetch(`${server.endpoint}/api/audit`)).json()) as { entries: AuditRecord[] }).entries;
    const kept = await list();
    assert.equal(kept.length, 3);
    assert.ok(kept.every((entry) => entry.action === 'purge' && entry.via === 'unauthenticated'));

    const page = await run(process.execPath, [
      ...SLUICE_CLI,
      'audit',
      '--limit',
      '2',
      '--endpoint',
      server.endpoint,
    ]);
    assert.equal(page.stdout.trimEnd().split('\n').length, 3);
    assert.equal(page.stderr, `older entries: sluice audit --before ${kept[1]!.id} --limit 2\n`);

    await advanceClock(server.endpoint, 2 * 24 * 3600);
    assert.deepEqual(await list(), [], 'the hourly pruning dropped entries older than a day');
  });
});
