import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  CreateQueueCommand,
  PurgeQueueCommand,
  SendMessageCommand,
  type SQSClient,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { admin, freshDatabase } from '../../tools/postgres.ts';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * A PostgreSQL database that refuses writes (read-only) or connections answers 503 ServiceUnavailable, as a
 * full or read-only SQLite disk does (SDKs retry it), never 500; writes resume once it is back.
 */
let database: Awaited<ReturnType<typeof freshDatabase>>;
let server: RunningServer;
let client: SQSClient;
let queueUrl: string;

before(async () => {
  database = await freshDatabase();
  server = await startServer({ args: ['--store', database.url, '--log-level', 'fatal'] });
  client = sqsClient(server.endpoint, { credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  queueUrl = (await client.send(new CreateQueueCommand({ QueueName: 'unavailable' }))).QueueUrl!;
});

after(async () => {
  client?.destroy();
  await server?.stop();
  if (server) removeDataDir(server.dataDir);
  await admin(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS true`);
  await database?.drop();
});

/** Ends the server's connections, so that it connects again under the database's new settings. */
const reconnectAll = () =>
  admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database.name}'`);

/** A send; resolves to the error when the server refuses it. */
async function send(): Promise<SQSServiceException | undefined> {
  try {
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'hello' }));
    return undefined;
  } catch (error) {
    if (error instanceof SQSServiceException) return error;
    throw error;
  }
}

/** Sends until the refusal names `reason` (the first may meet a connection just ended); each must be a 503. */
async function assertRefused(reason: RegExp): Promise<void> {
  let error: SQSServiceException | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    error = await send();
    assert.ok(error, 'the send should have been refused');
    assert.equal(error.$metadata.httpStatusCode, 503, `${error.name}: ${error.message}`);
    assert.equal(error.name, 'ServiceUnavailable');
    if (reason.test(error.message)) return;
  }
  assert.match(error!.message, reason);
}

test('a read-only PostgreSQL database answers 503, and sends resume once it is writable', {
  skip: NEEDS_OWN_SERVER,
}, async () => {
  assert.equal(await send(), undefined);
  await admin(`ALTER DATABASE ${database.name} SET default_transaction_read_only = on`);
  await reconnectAll();
  await assertRefused(/read-only/);

  await admin(`ALTER DATABASE ${database.name} RESET default_transaction_read_only`);
  await reconnectAll();
  let error = await send();
  if (error?.$metadata.httpStatusCode === 503) error = await send();
  assert.equal(error, undefined);
});

test('an unreachable PostgreSQL database answers 503, and sends resume once it is back', {
  skip: NEEDS_OWN_SERVER,
}, async () => {
  await admin(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS false`);
  await reconnectAll();
  await assertRefused(/reach/);
  // The console's API says the same, not 500.
  const page = await fetch(`${server.endpoint}/api/overview`);
  assert.equal(page.status, 503);
  assert.match(((await page.json()) as { message: string }).message, /cannot reach its database/);
  // And so does a purge from the CLI, whose audit entry reads the queue's counts before the purge.
  const cli = sqsClient(server.endpoint, { customUserAgent: 'sluice-cli' });
  const purge = await cli
    .send(new PurgeQueueCommand({ QueueUrl: queueUrl }))
    .catch((error: unknown) => error);
  cli.destroy();
  assert.ok(purge instanceof SQSServiceException, String(purge));
  assert.equal(purge.$metadata.httpStatusCode, 503, purge.message);

  await admin(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS true`);
  let error = await send();
  if (error?.$metadata.httpStatusCode === 503) error = await send();
  assert.equal(error, undefined);
  assert.equal(server.process.exitCode, null, 'the node kept running');
});
