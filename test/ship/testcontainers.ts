/**
 * The Testcontainers module (packages/testcontainers, `sluice-testcontainers`) driving the real image through
 * podman's Docker-compatible API, as a user's test suite would through Docker: podman's socket is started
 * here and Testcontainers pointed at it (DOCKER_HOST), with Ryuk off (its image cannot be pulled here).
 *
 * test/ship/container.ts runs this file on the image it builds (SLUICE_TEST_IMAGE) with Node 22 (testcontainers
 * 12.2 needs 22.22 or later), so `npm run test:container` builds the image once for both. Alone, on an image
 * of the Dockerfile:
 *   SLUICE_TEST_IMAGE=localhost/sluice:latest .tmp/nodes/22/bin/node --conditions=sluice-source --import tsx \
 *     --test test/ship/testcontainers.ts
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { StartedSluiceContainer } from 'sluice-testcontainers';
import { readDoc, sectionBlocks } from '../helpers/doc-blocks.ts';
import { REPOSITORY } from './nodes.ts';

const execFileAsync = promisify(execFile);

const image = process.env.SLUICE_TEST_IMAGE;
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const cannotRun =
  process.getuid?.() !== 0
    ? 'needs root, as CI runs it (rootful podman)'
    : major < 22 || (major === 22 && minor < 22)
      ? `testcontainers 12.2 needs Node 22.22 or later, not ${process.versions.node}: run it with .tmp/nodes/22/bin/node`
      : image === undefined &&
        'SLUICE_TEST_IMAGE is not set: npm run test:container builds the image and runs this file on it';

// Made in before(): a config file, podman's settings and socket, the examples' project.
let scratch = '';
let containersConf = '';
let service: ChildProcess | undefined;
// Imported in before(): testcontainers 12.2 does not load on Node 20 (its undici needs zstd), where this skips.
let SluiceContainer: typeof import('sluice-testcontainers')['SluiceContainer'];
const started: StartedSluiceContainer[] = [];

async function podman(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('podman', ['--runtime', 'runc', ...args], {
    env: { ...process.env, CONTAINERS_CONF: containersConf },
    maxBuffer: 64 << 20,
  });
  return stdout;
}

async function exists(kind: 'container' | 'volume', name: string): Promise<boolean> {
  return podman(kind, 'exists', name).then(
    () => true,
    () => false,
  );
}

/** The socket answers the Docker API's ping. */
function pinged(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const ping = request({ socketPath: socket, path: '/_ping' }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    ping.on('error', () => resolve(false));
    ping.end();
  });
}

async function start(container: InstanceType<typeof SluiceContainer>): Promise<StartedSluiceContainer> {
  const sluice = await container.start();
  started.push(sluice);
  return sluice;
}

interface Inspected {
  Config: { Cmd: string[] };
  HostConfig: { PortBindings: Record<string, { HostIp: string; HostPort: string }[]> };
  Mounts: { Type: string; Name?: string; Destination: string }[];
}

async function inspect(sluice: StartedSluiceContainer): Promise<Inspected> {
  const [inspected] = JSON.parse(await podman('container', 'inspect', sluice.getId())) as Inspected[];
  assert.ok(inspected);
  return inspected;
}

/** The anonymous volume the image's VOLUME /data gave the container. */
function dataVolume(inspected: Inspected): string {
  const volume = inspected.Mounts.find((mount) => mount.Destination === '/data')?.Name;
  assert.ok(volume, 'a volume is mounted on /data');
  return volume;
}

describe('the Testcontainers module, on podman', { skip: cannotRun }, () => {
  before(async () => {
    ({ SluiceContainer } = await import('sluice-testcontainers'));
    scratch = mkdtempSync(join(tmpdir(), `sluice-testcontainers-${process.pid}-`));
    // What podman needs on these machines (/work/shared/containers.md), runc included for the API service.
    containersConf = join(scratch, 'containers.conf');
    writeFileSync(
      containersConf,
      '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n',
    );
    const socket = join(scratch, 'podman.sock');
    // The test's own podman API service, ended by its PID in after().
    service = spawn('podman', ['--runtime', 'runc', 'system', 'service', '--time=0', `unix://${socket}`], {
      env: { ...process.env, CONTAINERS_CONF: containersConf },
      stdio: 'ignore',
    });
    for (let waited = 0; !(await pinged(socket)); waited += 50) {
      assert.ok(waited < 30_000 && service.exitCode === null, 'podman system service did not answer in 30 s');
      await sleep(50);
    }
    process.env.DOCKER_HOST = `unix://${socket}`;
    process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
    // As on a developer's machine: the runtime is local, reached as localhost. (In a container, as CI may
    // be, Testcontainers would use the bridge's gateway instead; the guide's examples below take that road.)
    process.env.TESTCONTAINERS_HOST_OVERRIDE = 'localhost';
  });

  after(async () => {
    for (const sluice of started) await podman('rm', '--force', sluice.getId()).catch(() => undefined);
    if (service?.pid !== undefined && service.exitCode === null) {
      const exited = new Promise((resolve) => service?.once('exit', resolve));
      process.kill(service.pid, 'SIGTERM');
      await exited;
    }
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('starts in test mode and in memory, published on 127.0.0.1; the SDK sends and receives; an advance lapses a visibility timeout; reset forgets; stop removes it', async (t) => {
    const begun = process.hrtime.bigint();
    const sluice = await start(new SluiceContainer(image).withTestClock().withInMemory());
    t.diagnostic(
      `start() until /health answered: ${(Number(process.hrtime.bigint() - begun) / 1e9).toFixed(2)} s`,
    );

    const inspected = await inspect(sluice);
    assert.deepEqual(inspected.Config.Cmd, ['serve', '--test-clock', '--in-memory']);
    assert.deepEqual(
      inspected.HostConfig.PortBindings['9324/tcp']?.map((binding) => binding.HostIp),
      ['127.0.0.1'],
    );
    assert.equal(sluice.getEndpoint(), `http://127.0.0.1:${sluice.getMappedPort(9324)}`);

    const sqs = new SQSClient(sluice.getClientConfig());
    try {
      const { QueueUrl } = await sqs.send(
        new CreateQueueCommand({ QueueName: 'orders', Attributes: { VisibilityTimeout: '30' } }),
      );
      assert.equal(QueueUrl, `${sluice.getEndpoint()}/000000000000/orders`);
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'order 1' }));
      const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
      assert.equal(first.Messages?.[0]?.Body, 'order 1');
      assert.equal((await sqs.send(new ReceiveMessageCommand({ QueueUrl }))).Messages, undefined);

      const before = await sluice.serverTime();
      const after = await sluice.advanceClock(30);
      assert.equal(after.advancedSeconds - before.advancedSeconds, 30);
      const again = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }),
      );
      assert.equal(again.Messages?.[0]?.Body, 'order 1');
      assert.equal(again.Messages?.[0]?.Attributes?.ApproximateReceiveCount, '2');

      await sluice.reset();
      assert.equal((await sqs.send(new ListQueuesCommand({}))).QueueUrls, undefined);
      // In memory: nothing on the data volume.
      const listing = await sluice.exec(['ls', '-A', '/data']);
      assert.equal(listing.exitCode, 0);
      assert.equal(listing.output, '');
    } finally {
      sqs.destroy();
    }

    const volume = dataVolume(inspected);
    await sluice.stop();
    assert.equal(await exists('container', sluice.getId()), false, 'the container is removed');
    assert.equal(await exists('volume', volume), false, 'its data volume is removed');
  });

  it('takes a config file and access keys: signed requests are served, unsigned and wrongly signed ones refused, the test mode signed too', async (t) => {
    const config = join(scratch, 'sluice.json');
    writeFileSync(
      config,
      JSON.stringify({
        queues: [{ name: 'invoices' }],
        credentials: [{ accessKeyId: 'AKIDCONFIG', secretAccessKey: 'config-secret' }],
      }),
      // Readable by its owner only, as a file of secrets often is: the server in the container runs as
      // another user (node), who must still read the copy.
      { mode: 0o600 },
    );
    const begun = process.hrtime.bigint();
    const sluice = await start(
      new SluiceContainer(image)
        .withConfigFile(config)
        .withCredentials('AKIDFLAG', 'flag-secret')
        .withTestClock(),
    );
    t.diagnostic(
      `start() of a second container, on its data volume: ${(Number(process.hrtime.bigint() - begun) / 1e9).toFixed(2)} s`,
    );
    const inspected = await inspect(sluice);
    assert.deepEqual(inspected.Config.Cmd, [
      'serve',
      '--test-clock',
      '--config',
      '/etc/sluice/config.json',
      '--credentials',
      'AKIDFLAG:flag-secret',
    ]);
    const byFlag = new SQSClient(sluice.getClientConfig());
    const byConfig = new SQSClient(
      sluice.getClientConfig({ accessKeyId: 'AKIDCONFIG', secretAccessKey: 'config-secret' }),
    );
    const wrong = new SQSClient(
      sluice.getClientConfig({ accessKeyId: 'AKIDFLAG', secretAccessKey: 'not-it' }),
    );
    try {
      const invoices = `${sluice.getEndpoint()}/000000000000/invoices`;
      assert.deepEqual((await byFlag.send(new ListQueuesCommand({}))).QueueUrls, [invoices]);
      const { QueueUrl } = await byConfig.send(new GetQueueUrlCommand({ QueueName: 'invoices' }));
      assert.equal(QueueUrl, invoices);
      await assert.rejects(wrong.send(new ListQueuesCommand({})), { name: 'SignatureDoesNotMatch' });
      const unsigned = await fetch(`${sluice.getEndpoint()}/?Action=ListQueues`);
      assert.equal(unsigned.status, 403);
      await unsigned.arrayBuffer();

      // The test mode takes signatures too: the flag's key by default, or the config file's.
      const unsignedReset = await fetch(`${sluice.getEndpoint()}/_sluice/reset`, { method: 'POST' });
      assert.equal(unsignedReset.status, 401);
      await unsignedReset.arrayBuffer();
      assert.equal((await sluice.advanceClock(60)).advancedSeconds, 60);
      const configKey = { accessKeyId: 'AKIDCONFIG', secretAccessKey: 'config-secret' };
      assert.equal((await sluice.serverTime(configKey)).advancedSeconds, 60);
      // On the data volume: the store the config file's queue was created in.
      assert.match((await sluice.exec(['ls', '/data'])).output, /sluice\.db/);
      await sluice.reset();
      assert.equal((await byFlag.send(new ListQueuesCommand({}))).QueueUrls, undefined);
    } finally {
      for (const sqs of [byFlag, byConfig, wrong]) sqs.destroy();
    }
    const volume = dataVolume(inspected);
    await sluice.stop();
    assert.equal(await exists('container', sluice.getId()), false, 'the container is removed');
    assert.equal(await exists('volume', volume), false, 'its data volume is removed');
  });

  it('a server that refuses its flags fails start() with what it printed, and no container is left; test mode calls need withTestClock()', async () => {
    const containersBefore = await podman('ps', '--all', '--quiet', '--filter', `ancestor=${image}`);
    await assert.rejects(
      new SluiceContainer(image).withServeArguments('--no-such-flag').start(),
      (error: Error) => {
        assert.match(error.message, /the server exited \(status 2\)/);
        assert.match(error.message, /unknown option '--no-such-flag'/);
        return true;
      },
    );
    assert.equal(
      await podman('ps', '--all', '--quiet', '--filter', `ancestor=${image}`),
      containersBefore,
      'no container is left',
    );
    const open = await start(new SluiceContainer(image));
    await assert.rejects(
      open.reset(),
      /reset\(\) needs test mode: start the container with new SluiceContainer\(\)\.withTestClock\(\)/,
    );
    await open.stop();
  });

  it("the guide's examples run as written in an empty project, from the packed packages, with the runtime on another address", async (t) => {
    const project = join(scratch, 'project');
    mkdirSync(project);
    const packed = JSON.parse(
      (
        await execFileAsync(
          'npm',
          [
            'pack',
            '--json',
            '-w',
            'sluice-client',
            '-w',
            'sluice-testcontainers',
            '--pack-destination',
            project,
          ],
          { cwd: REPOSITORY, maxBuffer: 16 << 20 },
        )
      ).stdout,
    ) as { name: string; filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
    const module = packed.find((pack) => pack.name === 'sluice-testcontainers');
    assert.ok(module);
    t.diagnostic(
      `sluice-testcontainers: ${module.filename}, ${(module.size / 1024).toFixed(1)} kB packed, ${(module.unpackedSize / 1024).toFixed(1)} kB unpacked`,
    );
    assert.deepEqual(module.files.map((file) => file.path).sort(), [
      'README.md',
      'dist/index.d.ts',
      'dist/index.js',
      'dist/index.js.map',
      'package.json',
    ]);

    // The versions the workspace tests with, from the npm cache where it has them.
    const versionOf = (name: string) =>
      (
        JSON.parse(readFileSync(join(REPOSITORY, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    writeFileSync(join(project, 'package.json'), '{ "private": true, "type": "module" }\n');
    // npm and the tests run on this Node (22), whose folder comes first on PATH; the examples' test runner
    // reports as a top-level one, not to this one (NODE_TEST_CONTEXT).
    const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
    const env = { ...inherited, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
    await execFileAsync(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--save-dev',
        ...packed.map((pack) => `./${pack.filename}`),
        `testcontainers@${versionOf('testcontainers')}`,
        `@aws-sdk/client-sqs@${versionOf('@aws-sdk/client-sqs')}`,
      ],
      { cwd: project, env, maxBuffer: 16 << 20 },
    );

    const guide = readDoc('docs/guide/testcontainers.md');
    const blocks = [
      ...sectionBlocks(guide, 'A complete test'),
      ...sectionBlocks(guide, 'Access keys and a config file'),
    ];
    assert.deepEqual(
      blocks.map((block) => block.lang),
      ['ts', 'json', 'ts'],
    );
    const files: string[] = [];
    for (const block of blocks) {
      // Each program names its file on its first line; the config file is sluice.json.
      const name = block.lang === 'json' ? 'sluice.json' : /^\/\/ (\S+\.ts)\n/.exec(block.code)?.[1];
      assert.ok(name, `a ts block without its file name:\n${block.code}`);
      writeFileSync(join(project, name), block.code.replaceAll("'sluice:latest'", `'${image}'`));
      if (block.lang === 'ts') files.push(name);
    }
    // This machine's own address, not loopback: the port is then published on every address and the server
    // told to accept that Host, as for a remote Docker host or a test in a container.
    const address = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;
    assert.ok(address, 'this machine has a non-loopback IPv4 address');
    const run = await execFileAsync(process.execPath, ['--test', ...files], {
      cwd: project,
      env: { ...env, TESTCONTAINERS_HOST_OVERRIDE: address },
      maxBuffer: 16 << 20,
    }).catch((error: { stdout?: string; stderr?: string }) =>
      assert.fail(`the examples failed:\n${error.stdout}\n${error.stderr}`),
    );
    assert.match(run.stdout, /^# pass 3$/m);
    assert.match(run.stdout, /^# fail 0$/m);
  });
});
