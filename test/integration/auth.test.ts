import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sdkSigner } from '../helpers/sigv4.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { AwsCli } from './clients/aws-cli.ts';
import { availability, CLIS, hasBoto3, PYTHONS, run } from './clients/clients.ts';

/**
 * A server started with access keys: every real client (the JS SDK, both boto3s, both AWS CLIs, so both
 * wire protocols) works with a right key and gets SQS's own error with a wrong one.
 */

const GOOD = { accessKeyId: 'AKIDGOOD', secretAccessKey: 'good-secret' };
const LIMITED = {
  accessKeyId: 'AKIDLIMITED',
  secretAccessKey: 'limited-secret',
  queues: ['auth-shared*'],
  actions: ['CreateQueue', 'GetQueueUrl', 'SendMessage'],
};
const AUTH_CHECK_PY = new URL('./clients/auth_check.py', import.meta.url).pathname;

const env = (key: { accessKeyId: string; secretAccessKey: string }) => ({
  AWS_ACCESS_KEY_ID: key.accessKeyId,
  AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
});

describe('SigV4 authentication against real clients', { skip: NEEDS_OWN_SERVER, concurrency: true }, () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ args: ['--credentials', `${GOOD.accessKeyId}:${GOOD.secretAccessKey}`] });
    const config = `${server.dataDir}/auth-config.json`;
    writeFileSync(config, JSON.stringify({ credentials: [LIMITED] }));
    // Keys from the flag and from the config file are both accepted: restart with both.
    await server.stop();
    server = await startServer({
      dataDir: server.dataDir,
      args: ['--credentials', `${GOOD.accessKeyId}:${GOOD.secretAccessKey}`, '--config', config],
    });
  });
  after(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  const sdk = (key: { accessKeyId: string; secretAccessKey: string }, systemClockOffset = 0) =>
    sqsClient(server.endpoint, { credentials: key, systemClockOffset });

  async function sdkFails(call: Promise<unknown>, code: string, part = ''): Promise<void> {
    try {
      await call;
    } catch (error) {
      assert.ok(error instanceof SQSServiceException, String(error));
      assert.equal((error as SQSServiceException & { Code?: string }).Code, code, error.message);
      assert.equal(error.$metadata.httpStatusCode, code === 'IncompleteSignature' ? 400 : 403);
      assert.ok(error.message.includes(part), `"${error.message}" lacks "${part}"`);
      return;
    }
    assert.fail(`expected ${code}, but the call succeeded`);
  }

  test('JS SDK: the right key works end to end; wrong secret, unknown key and skewed clock fail', async () => {
    const good = sdk(GOOD);
    const { QueueUrl } = await good.send(new CreateQueueCommand({ QueueName: 'auth-js' }));
    await good.send(new SendMessageCommand({ QueueUrl, MessageBody: 'signed' }));
    const { Messages = [] } = await good.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
    assert.deepEqual(
      Messages.map((m) => m.Body),
      ['signed'],
    );
    await good.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: Messages[0]?.ReceiptHandle }));

    const send = (client: SQSClient) => client.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x' }));
    await sdkFails(send(sdk({ ...GOOD, secretAccessKey: 'bad' })), 'SignatureDoesNotMatch', 'does not match');
    await sdkFails(send(sdk({ accessKeyId: 'AKIDNOBODY', secretAccessKey: 's' })), 'InvalidClientTokenId');
    await sdkFails(send(sdk(GOOD, -20 * 60_000)), 'SignatureDoesNotMatch', 'Signature expired');
    await sdkFails(send(sdk(GOOD, 20 * 60_000)), 'SignatureDoesNotMatch', 'Signature not yet current');
    // Within AWS's 15 minutes, a client's clock may be off.
    await send(sdk(GOOD, -10 * 60_000));
    for (const client of [good]) client.destroy();
  });

  test('JS SDK: a limited key reaches only its queues and actions (AccessDenied)', async () => {
    const limited = sdk(LIMITED);
    const { QueueUrl } = await limited.send(new CreateQueueCommand({ QueueName: 'auth-shared-1' }));
    await limited.send(new SendMessageCommand({ QueueUrl, MessageBody: 'allowed' }));
    await sdkFails(
      limited.send(new ReceiveMessageCommand({ QueueUrl })),
      'AccessDenied',
      'sqs:ReceiveMessage',
    );
    await sdkFails(limited.send(new DeleteQueueCommand({ QueueUrl })), 'AccessDenied', 'sqs:DeleteQueue');
    await sdkFails(
      limited.send(new CreateQueueCommand({ QueueName: 'auth-private' })),
      'AccessDenied',
      ':auth-private',
    );
    limited.destroy();
  });

  test('unsigned and hand-forged requests get SQS errors, on both protocols', async () => {
    const unsigned = await fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Action=ListQueues&Version=2012-11-05',
    });
    assert.equal(unsigned.status, 403);
    assert.match(await unsigned.text(), /<Code>MissingAuthenticationToken<\/Code>/);
    const forged = await fetch(server.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'AmazonSQS.ListQueues',
        'x-amz-date': new Date().toISOString().replace(/[:-]|\.\d{3}/g, ''),
        authorization: `AWS4-HMAC-SHA256 Credential=${GOOD.accessKeyId}/${new Date().toISOString().slice(0, 10).replace(/-/g, '')}/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
      },
      body: '{}',
    });
    assert.equal(forged.status, 403);
    assert.equal(forged.headers.get('x-amzn-query-error'), 'SignatureDoesNotMatch;Sender');
    // The health check stays open, for load balancers.
    assert.equal((await fetch(`${server.endpoint}/health`)).status, 200);
  });

  test('the signature must cover X-Amz-Target and Content-Type: a request signed as one action is not another', async () => {
    const good = sdk(GOOD);
    const { QueueUrl } = await good.send(new CreateQueueCommand({ QueueName: 'auth-retarget' }));
    const body = JSON.stringify({ QueueUrl, MessageBody: 'kept' });
    await good.send(new SendMessageCommand({ QueueUrl, MessageBody: 'kept' }));
    /** A JSON request signed as SendMessage without the `unsigned` headers, then sent as `action`. */
    const send = async (action: string, unsigned: string[]) => {
      const url = new URL(server.endpoint);
      const signed = await sdkSigner(GOOD).sign(
        {
          method: 'POST',
          protocol: 'http:',
          hostname: url.hostname,
          port: Number(url.port),
          path: '/',
          query: {},
          headers: {
            host: url.host,
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': 'AmazonSQS.SendMessage',
          },
          body,
        },
        { unsignableHeaders: new Set(unsigned) },
      );
      return fetch(url, {
        method: 'POST',
        headers: { ...signed.headers, 'x-amz-target': `AmazonSQS.${action}` },
        body,
      });
    };
    // Signed over host;x-amz-date only as SendMessage, sent as PurgeQueue (issue #22).
    const retargeted = await send('PurgeQueue', ['x-amz-target', 'content-type']);
    assert.equal(retargeted.status, 403);
    assert.equal(retargeted.headers.get('x-amzn-query-error'), 'SignatureDoesNotMatch;Sender');
    assert.match(await retargeted.text(), /'X-Amz-Target' must be a 'SignedHeader'/);
    const unsignedType = await send('SendMessage', ['content-type']);
    assert.equal(unsignedType.status, 403);
    assert.match(await unsignedType.text(), /'Content-Type' must be a 'SignedHeader'/);
    const signed = await send('SendMessage', []);
    assert.equal(signed.status, 200, await signed.text());
    const { Attributes } = await good.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    assert.equal(Attributes?.ApproximateNumberOfMessages, '2', 'the queue was not purged');
    good.destroy();
  });

  for (const client of PYTHONS) {
    const { skip, missing } = availability(client, client.bin !== undefined && hasBoto3(client.bin));
    test(`${client.label} (${client.protocol}): right key works, wrong ones fail`, {
      skip,
      timeout: 90_000,
    }, async () => {
      assert.ok(!missing, missing);
      const queue = `auth-py-${client.protocol}`;
      const attempt = (key: { accessKeyId: string; secretAccessKey: string }, name = queue) =>
        run(client.bin!, [AUTH_CHECK_PY, server.endpoint, name], 60_000, env(key));
      const ok = await attempt(GOOD);
      assert.match(ok.stdout, new RegExp(`^PROTOCOL=${client.protocol}$`, 'm'), ok.stdout + ok.stderr);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /^AUTH OK$/m);
      const cases: Array<[{ accessKeyId: string; secretAccessKey: string }, string, string]> = [
        [{ ...GOOD, secretAccessKey: 'wrong' }, queue, 'SignatureDoesNotMatch'],
        [{ accessKeyId: 'AKIDNOBODY', secretAccessKey: 'x' }, queue, 'InvalidClientTokenId'],
        [LIMITED, 'auth-private-py', 'AccessDenied'],
      ];
      for (const [key, name, code] of cases) {
        const refused = await attempt(key, name);
        assert.equal(refused.code, 3, refused.stdout + refused.stderr);
        assert.match(refused.stdout, new RegExp(`^ERROR_CODE ${code}$`, 'm'));
      }
    });
  }

  for (const client of CLIS) {
    const { skip, missing } = availability(client, client.bin !== undefined);
    test(`${client.label} (${client.protocol}): right key works, wrong ones fail`, {
      skip,
      timeout: 90_000,
    }, async () => {
      assert.ok(!missing, missing);
      const name = `auth-cli-${client.protocol}`;
      const good = new AwsCli(client.bin!, server.endpoint, env(GOOD));
      const { QueueUrl } = await good.ok<{ QueueUrl: string }>(['create-queue', '--queue-name', name]);
      await good.ok(['send-message', '--queue-url', QueueUrl, '--message-body', 'signed']);
      const wrong = new AwsCli(client.bin!, server.endpoint, env({ ...GOOD, secretAccessKey: 'wrong' }));
      await wrong.fails(
        ['send-message', '--queue-url', QueueUrl, '--message-body', 'x'],
        'SignatureDoesNotMatch',
      );
      const nobody = new AwsCli(
        client.bin!,
        server.endpoint,
        env({ accessKeyId: 'AKIDNOBODY', secretAccessKey: 'x' }),
      );
      await nobody.fails(['list-queues'], 'InvalidClientTokenId');
      const limited = new AwsCli(client.bin!, server.endpoint, env(LIMITED));
      await limited.fails(['delete-queue', '--queue-url', QueueUrl], 'AccessDenied');
    });
  }
});
