import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import {
  NEEDS_OWN_SERVER,
  type RunningServer,
  removeDataDir,
  SLUICE_CLI,
  startServer,
} from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';

const exec = promisify(execFile);

/**
 * What `find` picks out of the server's output, once it has arrived: stderr, where the log goes, is a pipe
 * of its own, read apart from the line startServer waited for.
 */
async function logged<T>(server: RunningServer, find: (output: string) => T | undefined): Promise<T> {
  const signal = AbortSignal.timeout(20_000);
  for (;;) {
    const found = find(server.output());
    if (found !== undefined) return found;
    assert.ok(server.process.stderr, 'stderr is piped');
    await once(server.process.stderr, 'data', { signal }).catch(() =>
      assert.fail(`not logged on stderr:\n${server.output()}`),
    );
  }
}

/** The open-server warning's lines, without their times and levels, from its first to its last (the way out). */
function warningBlock(server: RunningServer): Promise<string> {
  return logged(server, (output) => {
    const warned = output.split('\n').flatMap((line) => / WARN {2}(.*)$/.exec(line)?.[1] ?? []);
    const opening = warned.findIndex((line) => line.startsWith('This server is OPEN'));
    const closing = warned.findIndex((line, index) => index > opening && /access keys \(/.test(line));
    return opening >= 0 && closing > opening ? warned.slice(opening, closing + 1).join('\n') : undefined;
  });
}

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

  it('binds 0.0.0.0 with --insecure and logs a warning on stderr, or with credentials silently, as on loopback', async () => {
    const insecure = await startServer({ args: ['--host', '0.0.0.0', '--insecure'] });
    try {
      const block = await warningBlock(insecure);
      assert.match(
        block,
        new RegExp(`This server is OPEN: it listens on 0\\.0\\.0\\.0:${insecure.port} without access keys`),
      );
      assert.match(block, /Whoever reaches this port can read, send, purge and delete every queue/);
      assert.match(block, /--credentials, or "credentials" in --config/);
      const health = await fetch(`http://127.0.0.1:${insecure.port}/health`);
      assert.equal(health.status, 200);
    } finally {
      await insecure.stop();
      removeDataDir(insecure.dataDir);
    }
    // The same from the container image's settings, which also say the port to use is the host's.
    const contained = await startServer({
      inMemory: true,
      env: { SLUICE_HOST: '0.0.0.0', SLUICE_INSECURE: '1', SLUICE_IN_CONTAINER: '1' },
    });
    try {
      const block = await warningBlock(contained);
      assert.match(block, /it listens on 0\.0\.0\.0:\d+ in its container without access keys/);
      assert.match(block, /-p 127\.0\.0\.1:9324:9324/);
      assert.match(block, /SLUICE_CONFIG=/);
      const startLines = await logged(contained, (output) =>
        / INFO {2}console at /.test(output) ? output : undefined,
      );
      assert.match(
        startLines,
        / INFO {2}listening on http:\/\/0\.0\.0\.0:\d+ inside the container \(in memory/,
      );
      assert.match(
        startLines,
        / INFO {2}console at http:\/\/127\.0\.0\.1:PORT\/console from the host, PORT being the host port published to the container's \d+ \(-p 127\.0\.0\.1:PORT:\d+\)/,
      );
    } finally {
      await contained.stop();
      removeDataDir(contained.dataDir);
    }
    // No warning with keys (on the command line or in a config file) or on loopback: not a WARN line in the
    // log, read once the server has stopped.
    const dir = mkdtempSync(join(tmpdir(), 'sluice-keys-'));
    const config = join(dir, 'keys.json');
    writeFileSync(
      config,
      JSON.stringify({ credentials: [{ accessKeyId: 'AKIDFILE', secretAccessKey: 'secret' }] }),
    );
    for (const quiet of [
      { args: ['--host', '0.0.0.0', '--credentials', 'AKIDNET:secret'] },
      { args: ['--host', '0.0.0.0', '--insecure'], env: { SLUICE_CONFIG: config } },
      { args: ['--insecure'] },
    ]) {
      const server = await startServer(quiet);
      let stderr = '';
      server.process.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      try {
        assert.equal((await fetch(`http://127.0.0.1:${server.port}/health`)).status, 200);
      } finally {
        await server.stop();
        removeDataDir(server.dataDir);
      }
      assert.doesNotMatch(server.output(), / WARN |OPEN|without/, JSON.stringify(quiet));
      assert.doesNotMatch(stderr, / WARN /);
    }
    removeDataDir(dir);
  });

  it('reads --config from SLUICE_CONFIG: its keys are required, a flag wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const keys = join(dir, 'keys.json');
    writeFileSync(
      keys,
      JSON.stringify({ credentials: [{ accessKeyId: 'AKIDFILE', secretAccessKey: 'secret' }] }),
    );
    const server = await startServer({ inMemory: true, env: { SLUICE_CONFIG: keys } });
    try {
      const unsigned = await fetch(server.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'Action=ListQueues',
      });
      assert.equal(unsigned.status, 403);
      const signed = sqsClient(server.endpoint, {
        credentials: { accessKeyId: 'AKIDFILE', secretAccessKey: 'secret' },
      });
      try {
        const { QueueUrl } = await signed.send(new CreateQueueCommand({ QueueName: 'from-env-config' }));
        assert.match(QueueUrl ?? '', /from-env-config$/);
      } finally {
        signed.destroy();
      }
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
    }
    // --config wins over the variable: the variable names a file that does not exist, and the start works.
    const flagged = await startServer({
      inMemory: true,
      args: ['--config', keys],
      env: { SLUICE_CONFIG: join(dir, 'missing.json') },
    });
    await flagged.stop();
    removeDataDir(flagged.dataDir);
    removeDataDir(dir);
  });

  it('takes --host, --data and --insecure from SLUICE_HOST, SLUICE_DATA and SLUICE_INSECURE, says so, and a flag wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-env-'));
    const open = await startServer({
      env: { SLUICE_HOST: '0.0.0.0', SLUICE_DATA: dir, SLUICE_INSECURE: '1' },
    });
    try {
      assert.match(open.endpoint, /^http:\/\/0\.0\.0\.0:\d+$/);
      assert.match(await warningBlock(open), /This server is OPEN/);
      assert.ok(existsSync(join(dir, 'sluice.db')), 'the database is in SLUICE_DATA');
      assert.equal((await fetch(`http://127.0.0.1:${open.port}/health`)).status, 200);
    } finally {
      await open.stop();
      removeDataDir(dir);
    }
    const flagged = await startServer({ args: ['--host', '127.0.0.1'], env: { SLUICE_HOST: '0.0.0.0' } });
    try {
      assert.match(flagged.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.doesNotMatch(flagged.output(), / WARN |OPEN/);
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
