import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateTopicCommand, PublishCommand, type SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { readConfigFile } from '../../packages/server/src/server/config-file.ts';
import { eventually } from '../helpers/client-toolkit.ts';
import { type TestServer, useServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';

/**
 * HTTPS subscribers: a real node HTTPS receiver whose certificate is made here (openssl) for 127.0.0.1 by a
 * private CA. Sluice verifies the endpoint's certificate, as AWS does: one from a CA it was not told of fails
 * the delivery (retried, the last error naming the TLS refusal); one from the CA given to --sns-http-ca is
 * delivered.
 */

interface Pair {
  key: string;
  cert: string;
}

/** A CA and a certificate for 127.0.0.1 it signed, as PEM. */
function privateCa(dir: string, name: string): { ca: string; leaf: Pair } {
  const file = (suffix: string) => join(dir, `${name}-${suffix}`);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name} test CA`,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    file('leaf.key'),
    '-out',
    file('leaf.csr'),
  );
  writeFileSync(file('ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('leaf.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    file('ext'),
    '-out',
    file('leaf.pem'),
  );
  return {
    ca: file('ca.pem'),
    leaf: { key: readFileSync(file('leaf.key'), 'utf8'), cert: readFileSync(file('leaf.pem'), 'utf8') },
  };
}

interface Listed {
  subscriptions: Array<{
    state: string;
    deliveries: Array<{ attempts: number; lastError: string | undefined }>;
  }>;
}

describe('SNS HTTPS subscribers: the endpoint certificate is verified', { concurrency: false }, () => {
  let dir: string;
  let trusted: ReturnType<typeof privateCa>;
  let untrusted: ReturnType<typeof privateCa>;
  let server: TestServer;
  let sns: SNSClient;
  let hook: ReturnType<typeof createServer>;
  let hookUrl: string;
  const notified: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-https-'));
    trusted = privateCa(dir, 'trusted');
    untrusted = privateCa(dir, 'untrusted');
    server = await useServer({ args: ['--test-clock', '--sns-http-ca', trusted.ca] });
    sns = snsClient(server.endpoint);
    hook = createServer(trusted.leaf, (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>;
        if (message.Type === 'SubscriptionConfirmation') await fetch(message.SubscribeURL!);
        if (message.Type === 'Notification') notified.push(message.Message!);
        // No keep-alive: each delivery makes a fresh TLS handshake with the certificate served at the time.
        response.writeHead(200, { connection: 'close' });
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `https://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    sns?.destroy();
    await server?.close();
    await new Promise<void>((resolve) => (hook ? hook.close(() => resolve()) : resolve()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const listed = async (): Promise<Listed> => {
    const answer = await fetch(`${server.endpoint}/api/sns/http-subscriptions?topic=secure-hooks`);
    assert.equal(answer.status, 200);
    return (await answer.json()) as Listed;
  };

  test("an endpoint whose certificate chains to --sns-http-ca's CA is confirmed and delivered to", async () => {
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'secure-hooks' }));
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'https', Endpoint: hookUrl }));
    await eventually(
      async () => (await listed()).subscriptions[0]?.state === 'Confirmed',
      'the HTTPS subscription confirmed',
      30_000,
    );
    await sns.send(new PublishCommand({ TopicArn, Message: 'over TLS' }));
    await eventually(() => notified.includes('over TLS'), 'the notification over HTTPS', 30_000);
  });

  test('a certificate from a CA Sluice does not trust fails the delivery, retried with the TLS error; trusted again, it is delivered', async () => {
    hook.setSecureContext(untrusted.leaf);
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'secure-hooks' }));
    await sns.send(new PublishCommand({ TopicArn, Message: 'refused handshake' }));
    const failing = async () => (await listed()).subscriptions[0]?.deliveries[0];
    await eventually(
      async () => ((await failing())?.attempts ?? 0) >= 1,
      'a failed attempt recorded',
      30_000,
    );
    const delivery = await failing();
    assert.match(delivery?.lastError ?? '', /^TLS [A-Z_]+: .*(certificate|issuer)/i);
    assert.ok(!notified.includes('refused handshake'));

    hook.setSecureContext(trusted.leaf);
    const advanced = await fetch(`${server.endpoint}/_sluice/clock/advance`, {
      method: 'POST',
      body: JSON.stringify({ seconds: 20 }),
    });
    assert.equal(advanced.status, 200);
    await eventually(() => notified.includes('refused handshake'), 'the retry delivered', 30_000);
  });
});

describe('SNS HTTPS subscribers: where the CA file comes from', () => {
  test('sns.httpCa in the config file is read as --sns-http-ca; a file with no certificate stops the server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-https-config-'));
    try {
      const config = join(dir, 'sluice.json');
      writeFileSync(config, JSON.stringify({ sns: { httpCa: '/etc/sluice/ca.pem' } }));
      assert.equal(readConfigFile(config).sns?.httpCa, '/etc/sluice/ca.pem');
      writeFileSync(config, JSON.stringify({ sns: { httpCa: 42 } }));
      assert.throws(() => readConfigFile(config), /"sns.httpCa" must be a PEM file's path/);
      const notPem = join(dir, 'not-a-ca.pem');
      writeFileSync(notPem, 'hello');
      await assert.rejects(
        useServer({ args: ['--sns-http-ca', notPem] }),
        /--sns-http-ca: .* holds no PEM certificate/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
