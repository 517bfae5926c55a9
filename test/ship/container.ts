/**
 * The container image: built from the Dockerfile with Debian's podman, run with a named volume, driven with
 * an SDK client from the host and from another container, stopped, and run again on the same volume. No image
 * registry is reachable here, so the base image is made locally (test/ship/base-image.sh) from Node 22 of
 * `.ci/fetch-node 22`. The build compiles better-sqlite3, so this is not part of `npm test`:
 * `npm run test:container`. The Testcontainers module's test (test/ship/testcontainers.ts) runs last, on the
 * same image.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { freePort } from '../../tools/free-port.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { fetchedNode, REPOSITORY } from './nodes.ts';

const execFileAsync = promisify(execFile);

function installed(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const missing = ['podman', 'runc', 'debootstrap'].filter((command) => !installed(command));
// The base image's Node, as in the official node:22 images.
const node22 = await fetchedNode('22');
const cannotRun =
  process.getuid?.() !== 0
    ? 'needs root, as CI runs it (rootful podman, debootstrap)'
    : missing.length > 0
      ? `${missing.join(', ')} not installed: apt-get install podman runc debootstrap`
      : typeof node22 === 'string' && node22;

// Everything this run creates carries its process id, and is removed at the end.
const name = `sluice-test-${process.pid}`;
const baseImage = `localhost/${name}-node:22`;
const image = `localhost/${name}:latest`;
const network = name;
const volume = name;
const containers: string[] = [];
const scratch = mkdtempSync(join(tmpdir(), `${name}-`));
// What podman needs on these machines (/work/shared/containers.md): no systemd, no raising RLIMIT_NOFILE.
const containersConf = join(scratch, 'containers.conf');
writeFileSync(containersConf, '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\n');

async function podman(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('podman', ['--runtime', 'runc', ...args], {
    env: { ...process.env, CONTAINERS_CONF: containersConf },
    maxBuffer: 64 << 20,
    timeout: 30 * 60_000,
  });
  return stdout;
}

/** Starts a container from the image; resolves when it answers ListQueues on the host port, with the time taken. */
async function runServer(
  container: string,
  serveArgs: string[],
): Promise<{ endpoint: string; sqs: SQSClient; secondsToFirstAnswer: number }> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const sqs = sqsClient(endpoint);
  const started = process.hrtime.bigint();
  containers.push(container);
  await podman(
    'run',
    '--detach',
    '--name',
    container,
    '--network',
    network,
    '--network-alias',
    'sluice',
    '--publish',
    `127.0.0.1:${port}:9324`,
    '--volume',
    `${volume}:/data`,
    image,
    ...serveArgs,
  );
  for (;;) {
    try {
      await sqs.send(new ListQueuesCommand({}));
      return { endpoint, sqs, secondsToFirstAnswer: Number(process.hrtime.bigint() - started) / 1e9 };
    } catch (error) {
      if (Number(process.hrtime.bigint() - started) > 120e9)
        throw new Error(`no answer in 120 s: ${error}\n${await podman('logs', container)}`);
      await sleep(25);
    }
  }
}

/** A Node program run in another container on the network, next to the server, with the image's SDK. */
async function fromAnotherContainer(program: string): Promise<string> {
  return podman(
    'run',
    '--rm',
    '--network',
    network,
    '--workdir',
    '/opt/sluice',
    '--entrypoint',
    'node',
    image,
    '--input-type=module',
    '--eval',
    program,
  );
}

async function removeQuietly(...args: string[]): Promise<void> {
  await podman(...args).catch(() => undefined);
}

describe('the container image', { skip: cannotRun }, () => {
  before(async () => {
    assert.ok(typeof node22 === 'object' && node22.nodedir);
    await execFileAsync(join(REPOSITORY, 'test', 'ship', 'base-image.sh'), [node22.nodedir, baseImage], {
      env: { ...process.env, CONTAINERS_CONF: containersConf },
      timeout: 30 * 60_000,
    });
    await podman('network', 'create', network);
    await podman('volume', 'create', volume);
  });

  after(async () => {
    for (const container of containers) await removeQuietly('rm', '--force', container);
    await removeQuietly('network', 'rm', network);
    await removeQuietly('volume', 'rm', volume);
    await removeQuietly('rmi', '--force', image, baseImage);
    rmSync(scratch, { recursive: true, force: true });
  });

  it('builds from the Dockerfile: a non-root server with a data volume, port 9324 and a health check, nothing else', async (t) => {
    const started = process.hrtime.bigint();
    await podman(
      'build',
      '--pull=never',
      '--network',
      'host',
      // Docker's image format: OCI's has no HEALTHCHECK.
      '--format',
      'docker',
      '--layers=false',
      '--build-arg',
      `NODE_IMAGE=${baseImage}`,
      '--tag',
      image,
      REPOSITORY,
    );
    t.diagnostic(`podman build: ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(0)} s`);
    const [inspected] = JSON.parse(await podman('image', 'inspect', image)) as Array<{
      Size: number;
      Config: {
        User: string;
        ExposedPorts: Record<string, unknown>;
        Volumes: Record<string, unknown>;
        Env: string[];
        Entrypoint: string[];
        Cmd: string[];
      };
      Healthcheck?: { Test: string[] };
    }>;
    assert.ok(inspected);
    t.diagnostic(`image size: ${(inspected.Size / 2 ** 20).toFixed(0)} MiB`);
    const config = inspected.Config;
    assert.equal(config.User, 'node');
    assert.deepEqual(Object.keys(config.ExposedPorts), ['9324/tcp']);
    assert.deepEqual(Object.keys(config.Volumes), ['/data']);
    for (const setting of ['SLUICE_HOST=0.0.0.0', 'SLUICE_DATA=/data', 'SLUICE_INSECURE=1'])
      assert.ok(config.Env.includes(setting), setting);
    assert.deepEqual([...config.Entrypoint, ...config.Cmd], ['sluice', 'serve']);
    assert.match(inspected.Healthcheck?.Test.join(' ') ?? '', /127\.0\.0\.1:9324\/health/);

    // The runtime stage: the installed server and its production dependencies, no build tools or sources.
    const contents = await podman(
      'run',
      '--rm',
      '--entrypoint',
      'sh',
      image,
      '-c',
      'id -u; for tool in g++ make python3 tsc tsx; do command -v $tool; done; ls /opt/sluice/node_modules; ls -d /src /packs 2>/dev/null; true',
    );
    const [uid, ...rest] = contents.trim().split('\n');
    assert.equal(uid, '1000');
    for (const absent of [
      'g++',
      'make',
      'python3',
      'tsc',
      'tsx',
      'typescript',
      '@types',
      '@biomejs',
      '/src',
      '/packs',
    ])
      assert.ok(!rest.some((line) => line.endsWith(absent)), `${absent} is not in the image`);
    for (const present of ['sluice', 'sluice-client', 'better-sqlite3', 'pg'])
      assert.ok(rest.includes(present), `${present} is installed`);
  });

  it('answers the host on the published port, keeps its data on the volume across containers, serves other containers by name', async (t) => {
    const first = await runServer(`${name}-first`, []);
    t.diagnostic(`podman run to the first answered request: ${first.secondsToFirstAnswer.toFixed(2)} s`);
    try {
      const { QueueUrl } = await first.sqs.send(new CreateQueueCommand({ QueueName: 'orders' }));
      // Queue URLs follow the Host header: the host's client gets the published address.
      assert.equal(QueueUrl, `${first.endpoint}/000000000000/orders`);
      await first.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'kept on the volume' }));
      await podman('healthcheck', 'run', `${name}-first`);

      const logs = await podman('logs', `${name}-first`);
      assert.match(
        logs,
        /INFO {2}listening on http:\/\/0\.0\.0\.0:9324 \(data: \/data, durability: durable\)/,
      );
      assert.match(logs, /WARN {2}--insecure is on \(SLUICE_INSECURE in the environment\)/);

      // Another container reaches it by its name only once that name is allowed (the DNS rebinding guard).
      const refused = await fromAnotherContainer(
        "const r = await fetch('http://sluice:9324/health'); console.log(r.status);",
      );
      assert.equal(refused.trim(), '403');
    } finally {
      first.sqs.destroy();
    }
    await podman('stop', '--time', '30', `${name}-first`);
    assert.equal((await podman('inspect', '--format', '{{.State.ExitCode}}', `${name}-first`)).trim(), '0');
    assert.match(await podman('logs', `${name}-first`), /SIGTERM, shutting down/);

    const second = await runServer(`${name}-second`, ['serve', '--allow-host', 'sluice']);
    try {
      const { QueueUrl } = await second.sqs.send(new GetQueueUrlCommand({ QueueName: 'orders' }));
      assert.equal(QueueUrl, `${second.endpoint}/000000000000/orders`);
      const { Messages } = await second.sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
      assert.deepEqual(
        Messages?.map((message) => message.Body),
        ['kept on the volume'],
      );

      const seen = JSON.parse(
        await fromAnotherContainer(`
          import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
          const sqs = new SQSClient({ endpoint: 'http://sluice:9324', region: 'us-east-1',
            credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
          const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'from-a-container' }));
          await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'hello' }));
          const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
          console.log(JSON.stringify({ QueueUrl, bodies: Messages.map((m) => m.Body) }));
          sqs.destroy();`),
      ) as { QueueUrl: string; bodies: string[] };
      assert.deepEqual(seen, {
        QueueUrl: 'http://sluice:9324/000000000000/from-a-container',
        bodies: ['hello'],
      });
      const fromHost = await second.sqs.send(new GetQueueUrlCommand({ QueueName: 'from-a-container' }));
      assert.equal(fromHost.QueueUrl, `${second.endpoint}/000000000000/from-a-container`);
    } finally {
      second.sqs.destroy();
    }
    await podman('stop', '--time', '30', `${name}-second`);
  });

  it('drives the Testcontainers module: test/ship/testcontainers.ts on this image, on Node 22', async (t) => {
    // testcontainers 12.2 needs Node 22.22 or later; the base image's Node 22 is that.
    const node22 = await fetchedNode('22');
    assert.ok(typeof node22 === 'object', String(node22));
    // A test runner of its own, not one reporting to this one (NODE_TEST_CONTEXT).
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const { stdout } = await execFileAsync(
      node22.binary,
      [
        '--conditions=sluice-source',
        '--import',
        'tsx',
        '--test',
        join(REPOSITORY, 'test', 'ship', 'testcontainers.ts'),
      ],
      {
        cwd: REPOSITORY,
        env: { ...env, SLUICE_TEST_IMAGE: image },
        maxBuffer: 64 << 20,
        timeout: 20 * 60_000,
      },
    ).catch((error: { stdout?: string; stderr?: string }) =>
      assert.fail(`test/ship/testcontainers.ts failed:\n${error.stdout}\n${error.stderr}`),
    );
    for (const line of stdout.split('\n').filter((line) => /^\s*# /.test(line)))
      t.diagnostic(line.trim().slice(2));
    assert.match(stdout, /^# skipped 0$/m);
    assert.match(stdout, /^# fail 0$/m);
  });
});
