import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { NEEDS_OWN_SERVER, removeDataDir, SLUICE_CLI, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';

const exec = promisify(execFile);

describe('safe network defaults', { skip: NEEDS_OWN_SERVER }, () => {
  it('refuses a non-loopback --host without credentials, naming the way out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-host-'));
    try {
      await assert.rejects(
        exec(process.execPath, [...SLUICE_CLI, 'serve', '--host', '0.0.0.0', '--port', '0', '--data', dir]),
        (error: { code?: number; stderr?: string }) => {
          assert.equal(error.code, 2);
          assert.match(error.stderr ?? '', /refusing to listen on 0\.0\.0\.0 without credentials/);
          assert.match(error.stderr ?? '', /--insecure/);
          return true;
        },
      );
    } finally {
      removeDataDir(dir);
    }
  });

  it('binds 0.0.0.0 with --insecure (and warns), or with credentials (silently)', async () => {
    const insecure = await startServer({ args: ['--host', '0.0.0.0', '--insecure'] });
    try {
      const warned = /without credentials: anyone who can reach it can use every queue/;
      for (let waited = 0; !warned.test(insecure.output()) && waited < 5_000; waited += 50) await sleep(50);
      assert.match(insecure.output(), warned);
      const health = await fetch(`http://127.0.0.1:${insecure.port}/health`);
      assert.equal(health.status, 200);
    } finally {
      await insecure.stop();
      removeDataDir(insecure.dataDir);
    }
    const keyed = await startServer({ args: ['--host', '0.0.0.0', '--credentials', 'AKIDNET:secret'] });
    try {
      assert.doesNotMatch(keyed.output(), /without credentials/);
      assert.equal((await fetch(`http://127.0.0.1:${keyed.port}/health`)).status, 200);
    } finally {
      await keyed.stop();
      removeDataDir(keyed.dataDir);
    }
  });

  it('takes --host, --data and --insecure from SLUICE_HOST, SLUICE_DATA and SLUICE_INSECURE, says so, and a flag wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-env-'));
    const open = await startServer({
      env: { SLUICE_HOST: '0.0.0.0', SLUICE_DATA: dir, SLUICE_INSECURE: '1' },
    });
    try {
      assert.match(open.endpoint, /^http:\/\/0\.0\.0\.0:\d+$/);
      const said = / WARN {2}--insecure is on \(SLUICE_INSECURE in the environment\)/;
      for (let waited = 0; !said.test(open.output()) && waited < 5_000; waited += 50) await sleep(50);
      assert.match(open.output(), said);
      assert.ok(existsSync(join(dir, 'sluice.db')), 'the database is in SLUICE_DATA');
      assert.equal((await fetch(`http://127.0.0.1:${open.port}/health`)).status, 200);
    } finally {
      await open.stop();
      removeDataDir(dir);
    }
    const flagged = await startServer({ args: ['--host', '127.0.0.1'], env: { SLUICE_HOST: '0.0.0.0' } });
    try {
      assert.match(flagged.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.doesNotMatch(flagged.output(), /--insecure is on/);
    } finally {
      await flagged.stop();
      removeDataDir(flagged.dataDir);
    }
    for (const [insecure, refusal] of [
      ['0', /refusing to listen on 0\.0\.0\.0 without credentials/],
      ['yes', /SLUICE_INSECURE must be 1, true, 0 or false, not "yes"/],
    ] as const) {
      await assert.rejects(
        exec(process.execPath, [...SLUICE_CLI, 'serve', '--port', '0'], {
          env: { ...process.env, SLUICE_HOST: '0.0.0.0', SLUICE_DATA: dir, SLUICE_INSECURE: insecure },
        }),
        (error: { code?: number; stderr?: string }) => {
          assert.equal(error.code, 2);
          assert.match(error.stderr ?? '', refusal);
          return true;
        },
      );
    }
    removeDataDir(dir);
  });

  it('--in-memory wins over SLUICE_DATA, as any flag over its variable (the image sets SLUICE_DATA=/data)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-env-'));
    const server = await startServer({ inMemory: true, env: { SLUICE_DATA: dir } });
    try {
      assert.match(server.output(), /in memory: nothing is kept when it stops/);
      assert.equal((await fetch(`${server.endpoint}/health`)).status, 200);
      assert.ok(!existsSync(join(dir, 'sluice.db')), 'nothing is written to SLUICE_DATA');
    } finally {
      await server.stop();
      removeDataDir(dir);
    }
  });

  it('serves HTTPS with a given certificate; the SDK trusts it and queue URLs say https', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-tls-'));
    const { cert, key } = await selfSignedCertificate(dir);
    const server = await startServer({ dataDir: dir, args: ['--tls-cert', cert, '--tls-key', key] });
    const agent = new Agent({ ca: readFileSync(cert) });
    const sqs = sqsClient(server.endpoint, { requestHandler: { httpsAgent: agent } });
    try {
      assert.match(server.endpoint, /^https:\/\/127\.0\.0\.1:\d+$/);
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'tls-q' }));
      assert.match(QueueUrl ?? '', /^https:\/\/127\.0\.0\.1:\d+\/000000000000\/tls-q$/);
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'over tls' }));
      const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
      assert.deepEqual(
        Messages.map((m) => m.Body),
        ['over tls'],
      );
      // Plain HTTP to the TLS port gets no SQS answer.
      await assert.rejects(fetch(`http://127.0.0.1:${server.port}/health`));
      // A client that does not trust the certificate refuses to talk.
      await assert.rejects(fetch(`${server.endpoint}/health`));
    } finally {
      sqs.destroy();
      agent.destroy();
      await server.stop();
      removeDataDir(dir);
    }
  });

  it('refuses --tls-cert without --tls-key', async () => {
    await assert.rejects(
      exec(process.execPath, [...SLUICE_CLI, 'serve', '--tls-cert', '/nonexistent.pem']),
      (error: { code?: number; stderr?: string }) =>
        error.code === 2 && /--tls-cert and --tls-key go together/.test(error.stderr ?? ''),
    );
  });
});
