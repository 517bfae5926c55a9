/**
 * The container image: built from the Dockerfile with Debian's podman, run with a named volume, driven with
 * an SDK client from the host and from another container, stopped, and run again on the same volume. No image
 * registry is reachable here, so the base image is made locally (test/ship/base-image.sh) from Node 22 of
 * `.ci/fetch-node 22`. The build compiles better-sqlite3, so this is not part of `npm test`:
 * `npm run test:container`. The commands of docs/guide/container.md are taken from the page and run with this
 * run's names, ports and paths; both compose files run with Debian's podman-compose, on a PostgreSQL image
 * made locally the same way (test/ship/postgres-image.sh). The Testcontainers module's test
 * (test/ship/testcontainers.ts) runs last, on the same image, which is built once.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { readDoc, sectionBlocks } from '../helpers/doc-blocks.ts';
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

const missing = ['podman', 'runc', 'debootstrap', 'podman-compose'].filter((command) => !installed(command));
// The base image's Node, as in the official node:22 images.
const node22 = await fetchedNode('22');
const cannotRun =
  process.getuid?.() !== 0
    ? 'needs root, as CI runs it (rootful podman, debootstrap)'
    : missing.length > 0
      ? `${missing.join(', ')} not installed: apt-get install podman runc debootstrap podman-compose`
      : typeof node22 === 'string' && node22;

// Everything this run creates carries its process id, and is removed at the end.
const name = `sluice-test-${process.pid}`;
const baseImage = `localhost/${name}-node:22`;
const image = `localhost/${name}:latest`;
const postgresImage = `localhost/${name}-postgres:15`;
const network = name;
const volume = name;
const containers: string[] = [];
const composeProjects: Array<{ project: string; file: string }> = [];
const scratch = mkdtempSync(join(tmpdir(), `${name}-`));
const configFile = join(scratch, 'sluice.json');
/** The page whose commands this test runs, continuation lines joined. */
const GUIDE = 'docs/guide/container.md';

/** The lines of the `sh` blocks under a heading of the guide that start with `prefix`; exactly one. */
function documented(heading: string, prefix: string): string {
  const lines = sectionBlocks(readDoc(GUIDE), heading)
    .filter((block) => block.lang === 'sh')
    .flatMap((block) => block.code.replace(/\\\n\s*/g, ' ').split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith(prefix));
  assert.equal(
    lines.length,
    1,
    `one "${prefix}" command under "${heading}" in ${GUIDE}: ${lines.join(' | ')}`,
  );
  return lines[0] as string;
}

/** Runs a documented shell line as it is, in the scratch folder. */
async function shell(line: string): Promise<void> {
  await execFileAsync('bash', ['-euo', 'pipefail', '-c', line], { cwd: scratch, timeout: 60_000 });
}

// What podman needs on these machines (/work/shared/containers.md): no systemd, no raising RLIMIT_NOFILE,
// runc rather than crun; written by the guide's own command, and used by podman-compose too.
await shell(documented('Sluice in a container', "printf '[containers]"));
const containersConf = join(scratch, 'podman.conf');
const podmanEnv = { ...process.env, CONTAINERS_CONF: containersConf };

async function podman(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('podman', ['--runtime', 'runc', ...args], {
    env: podmanEnv,
    maxBuffer: 64 << 20,
    timeout: 30 * 60_000,
  });
  return stdout;
}

/** What a container printed, stdout and stderr (where the log goes) as podman keeps them. */
async function logsOf(container: string): Promise<string> {
  const { stdout, stderr } = await execFileAsync('podman', ['--runtime', 'runc', 'logs', container], {
    env: podmanEnv,
    maxBuffer: 64 << 20,
    timeout: 60_000,
  });
  return `${stderr}${stdout}`;
}

/**
 * A `podman` command of the guide as this run gives it: its own container name, network, volume, image,
 * host port and config file in place of the page's `sluice`, `app`, `sluice-data`, `9324` and sluice.json.
 */
function ownNames(line: string, names: { container?: string; port?: number }): string[] {
  const tokens = line.replaceAll('"', '').split(/\s+/);
  assert.equal(tokens[0], 'podman');
  return tokens.slice(1).map((token, index, all) => {
    const before = all[index - 1];
    if (before === '--name') return names.container ?? assert.fail('no container name');
    if (before === '--network' && token === 'app') return network;
    if (before === '-t' || (token === 'sluice' && before !== '--allow-host')) return image;
    if (token === '.') return REPOSITORY;
    return token
      .replace(/^127\.0\.0\.1:9324:/, `127.0.0.1:${names.port}:`)
      .replace(/^sluice-data:/, `${volume}:`)
      .replace(/^\$PWD\/sluice\.json:/, `${configFile}:`)
      .replace(/^NODE_IMAGE=localhost\/node:22-bookworm-slim$/, `NODE_IMAGE=${baseImage}`);
  });
}

/** Waits until `sqs` gets an answer to ListQueues; the seconds since `started`. */
async function firstAnswer(sqs: SQSClient, started: bigint, logs: () => Promise<string>): Promise<number> {
  for (;;) {
    try {
      await sqs.send(new ListQueuesCommand({}));
      return Number(process.hrtime.bigint() - started) / 1e9;
    } catch (error) {
      if (Number(process.hrtime.bigint() - started) > 300e9)
        throw new Error(`no answer in 300 s: ${error}\n${await logs()}`);
      await sleep(25);
    }
  }
}

/**
 * Runs a `podman run` line of the guide (with its own names, on the test's network, where other containers
 * know it as `sluice`); resolves when it answers ListQueues on the host port, signed with `credentials` if
 * given, with the time taken.
 */
async function runServer(
  container: string,
  line: string,
  credentials?: { accessKeyId: string; secretAccessKey: string },
): Promise<{ endpoint: string; sqs: SQSClient; secondsToFirstAnswer: number }> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const sqs = sqsClient(endpoint, credentials && { credentials });
  const [run, ...args] = ownNames(line, { container, port });
  assert.equal(run, 'run');
  const onNetwork = args.includes('--network') ? [] : ['--network', network];
  const started = process.hrtime.bigint();
  containers.push(container);
  await podman('run', ...onNetwork, '--network-alias', 'sluice', ...args);
  const secondsToFirstAnswer = await firstAnswer(sqs, started, () => logsOf(container));
  return { endpoint, sqs, secondsToFirstAnswer };
}

/** What a container printed at start, checked against the start lines the guide shows. */
function assertStartLines(logs: string): void {
  const shown = sectionBlocks(readDoc(GUIDE), 'Listening on the network, openly').find(
    (block) => block.lang === '',
  );
  assert.ok(shown, 'the guide shows the start lines');
  // The log lines' times are the guide's example's, not this run's.
  for (const line of shown.code.split('\n').map((shownLine) => shownLine.replace(/^\S+Z /, '')))
    assert.ok(logs.includes(line), `the logs have: ${line}\n${logs}`);
}

/** An SQS request without a signature: the status a server with access keys refuses it with. */
async function unsignedStatus(endpoint: string): Promise<number> {
  const answer = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'Action=ListQueues',
  });
  return answer.status;
}

/** A Node program run in another container on the network, next to the server, with the image's SDK. */
async function fromAnotherContainer(program: string, on = network): Promise<string> {
  return podman(
    'run',
    '--rm',
    '--network',
    on,
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

/**
 * A copy of a compose file of the repository, in the scratch folder (next to sluice.json), with this run's
 * image names and host ports: each replacement must find its text exactly once.
 */
function composeCopy(name: string, text: string, replacements: Array<[string, string]>): string {
  let copy = text;
  for (const [from, to] of replacements) {
    assert.equal(copy.split(from).length, 2, `${name} has ${JSON.stringify(from)} once`);
    copy = copy.replace(from, to);
  }
  const file = join(scratch, name);
  writeFileSync(file, copy);
  return file;
}

/**
 * `podman-compose down` on a project, then what it leaves behind: its network and the anonymous volumes of
 * the image's `VOLUME /data` on containers without a volume there (podman-compose 1.0.3 removes neither).
 */
async function composeDown(project: string, file: string, ...args: string[]): Promise<void> {
  const ids = (
    await podman('ps', '--all', '--quiet', '--filter', `label=io.podman.compose.project=${project}`)
  )
    .split('\n')
    .filter(Boolean);
  const volumes =
    ids.length === 0
      ? []
      : (await podman('inspect', '--format', '{{range .Mounts}}{{.Name}} {{end}}', ...ids))
          .split(/\s+/)
          .filter(Boolean);
  await compose(project, file, 'down', ...args);
  if (args.includes('-v')) for (const volume of volumes) await removeQuietly('volume', 'rm', volume);
  await removeQuietly('network', 'rm', `${project}_default`);
}

/** podman-compose (Debian's, 1.0.3) on a copy, as a project of this run's name. */
async function compose(project: string, file: string, ...args: string[]): Promise<void> {
  if (!composeProjects.some((known) => known.project === project)) composeProjects.push({ project, file });
  await execFileAsync('podman-compose', ['-p', project, '-f', file, ...args], {
    env: podmanEnv,
    cwd: scratch,
    maxBuffer: 64 << 20,
    timeout: 10 * 60_000,
  }).catch((error: { stdout?: string; stderr?: string }) =>
    assert.fail(`podman-compose ${args.join(' ')} failed:\n${error.stdout}\n${error.stderr}`),
  );
}

describe('the container image', { skip: cannotRun }, () => {
  /** The PostgreSQL stand-in for compose.postgres.yaml, made while the Sluice image builds: an error, or none. */
  let postgresImageMade: Promise<unknown> = Promise.resolve();

  before(async () => {
    assert.ok(typeof node22 === 'object' && node22.nodedir);
    // The guide's local base image: `.ci/fetch-node 22` is what fetchedNode ran; then base-image.sh, with
    // this run's image name.
    assert.equal(documented('Building without Docker Hub', '.ci/fetch-node'), '.ci/fetch-node 22');
    assert.equal(
      documented('Building without Docker Hub', 'test/ship/base-image.sh'),
      'test/ship/base-image.sh .tmp/nodes/22 localhost/node:22-bookworm-slim',
    );
    assert.equal(node22.nodedir, join(REPOSITORY, '.tmp', 'nodes', '22'));
    await execFileAsync(join(REPOSITORY, 'test', 'ship', 'base-image.sh'), [node22.nodedir, baseImage], {
      env: podmanEnv,
      timeout: 30 * 60_000,
    });
    postgresImageMade = execFileAsync(
      join(REPOSITORY, 'test', 'ship', 'postgres-image.sh'),
      [postgresImage],
      {
        env: podmanEnv,
        timeout: 30 * 60_000,
      },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    await podman('network', 'create', network);
    await podman('volume', 'create', volume);
  });

  after(async () => {
    for (const { project, file } of composeProjects)
      await composeDown(project, file, '-v').catch(() => undefined);
    for (const container of containers) await removeQuietly('rm', '--force', container);
    await removeQuietly('network', 'rm', network);
    await removeQuietly('volume', 'rm', volume);
    await postgresImageMade;
    await removeQuietly('rmi', '--force', image, baseImage, postgresImage);
    rmSync(scratch, { recursive: true, force: true });
  });

  it('builds from the Dockerfile on a local base image, as the guide shows: a non-root server with a data volume, port 9324 and a health check, nothing else', async (t) => {
    const started = process.hrtime.bigint();
    // Without Docker's intermediate layers: nothing of this build is kept but the image, removed at the end.
    await podman(
      ...ownNames(documented('Building without Docker Hub', 'podman build --pull=never'), {}),
      '--layers=false',
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
    for (const setting of [
      'SLUICE_HOST=0.0.0.0',
      'SLUICE_DATA=/data',
      'SLUICE_INSECURE=1',
      'SLUICE_IN_CONTAINER=1',
    ])
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

    // The Dockerfile's header shows the guide's commands, not ones of its own.
    const header = readFileSync(join(REPOSITORY, 'Dockerfile'), 'utf8');
    for (const command of [
      'podman build --format docker -t sluice .',
      documented(
        'Sluice in a container',
        'podman run -d --name sluice -p 127.0.0.1:9324:9324 -v sluice-data:/data sluice',
      ),
    ])
      assert.ok(header.includes(`#   ${command}`), `the Dockerfile's header shows: ${command}`);
    assert.doesNotMatch(header, /-p 9324:9324/);
  });

  it('answers the host on the published port, keeps its data on the volume across containers, serves other containers by name, warns that it is open', async (t) => {
    const first = await runServer(
      `${name}-first`,
      documented(
        'Sluice in a container',
        'podman run -d --name sluice -p 127.0.0.1:9324:9324 -v sluice-data:/data sluice',
      ),
    );
    t.diagnostic(`podman run to the first answered request: ${first.secondsToFirstAnswer.toFixed(2)} s`);
    try {
      const { QueueUrl } = await first.sqs.send(new CreateQueueCommand({ QueueName: 'orders' }));
      // Queue URLs follow the Host header: the host's client gets the published address.
      assert.equal(QueueUrl, `${first.endpoint}/000000000000/orders`);
      await first.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'kept on the volume' }));
      await podman('healthcheck', 'run', `${name}-first`);

      // The open-server warning and the start lines, exactly as the guide shows them.
      assertStartLines(await logsOf(`${name}-first`));

      // Another container reaches it by its name only once that name is allowed (the DNS rebinding guard).
      const refused = await fromAnotherContainer(
        "const r = await fetch('http://sluice:9324/health'); console.log(r.status);",
      );
      assert.equal(refused.trim(), '403');
    } finally {
      first.sqs.destroy();
      // Stopped whatever happened: the next containers use the same volume, which one server holds at a time.
      await podman('stop', '--time', '30', `${name}-first`);
    }
    assert.equal((await podman('inspect', '--format', '{{.State.ExitCode}}', `${name}-first`)).trim(), '0');
    assert.match(await logsOf(`${name}-first`), /SIGTERM, shutting down/);

    assert.equal(
      documented('Host names and queue URLs', 'podman network create'),
      'podman network create app',
    );
    const second = await runServer(`${name}-second`, documented('Host names and queue URLs', 'podman run'));
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
      await podman('stop', '--time', '30', `${name}-second`);
    }
  });

  it('takes access keys from a mounted config file named by SLUICE_CONFIG: unsigned requests refused, no warning', async () => {
    const heading = 'Access keys from a mounted config file';
    await shell(documented(heading, 'printf'));
    assert.equal(
      JSON.parse(readFileSync(configFile, 'utf8')).credentials[0].accessKeyId,
      'AKIDLOCAL',
      'the guide writes sluice.json',
    );
    await shell(documented(heading, 'chown'));
    const line = documented(heading, 'podman run');
    assert.match(line, /-e SLUICE_CONFIG=\/etc\/sluice\/config\.json/);
    const keyed = await runServer(`${name}-keyed`, line, {
      accessKeyId: 'AKIDLOCAL',
      secretAccessKey: 'change-me-too',
    });
    try {
      assert.equal(await unsignedStatus(keyed.endpoint), 403);
      assert.equal((await fetch(`${keyed.endpoint}/health`)).status, 200);
      // The same volume: the queue of the earlier containers, now behind the key.
      const { QueueUrl } = await keyed.sqs.send(new GetQueueUrlCommand({ QueueName: 'orders' }));
      assert.equal(QueueUrl, `${keyed.endpoint}/000000000000/orders`);
      const logs = await logsOf(`${name}-keyed`);
      assert.match(logs, / INFO {2}listening on http:\/\/0\.0\.0\.0:9324 inside the container/);
      assert.doesNotMatch(logs, /WARNING|OPEN/);
    } finally {
      keyed.sqs.destroy();
      await podman('stop', '--time', '30', `${name}-keyed`);
    }
  });

  it('runs compose.yaml with podman-compose, as shipped and with its access-key lines uncommented', async (t) => {
    assert.equal(documented('Compose', 'podman-compose up'), 'podman-compose up -d');
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const shipped = readFileSync(join(REPOSITORY, 'compose.yaml'), 'utf8');
    const open = composeCopy('compose.yaml', shipped, [
      ['image: sluice\n', `image: ${image}\n`],
      ['build: .\n', `build: ${REPOSITORY}\n`],
      ['"127.0.0.1:9324:9324"', `"127.0.0.1:${port}:9324"`],
    ]);
    const project = `${name}-compose`;
    const started = process.hrtime.bigint();
    await compose(project, open, 'up', '-d');
    const sqs = sqsClient(endpoint);
    const logs = () => logsOf(`${project}_sluice_1`);
    try {
      t.diagnostic(
        `podman-compose up to the first answer: ${(await firstAnswer(sqs, started, logs)).toFixed(1)} s`,
      );
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'composed' }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'from compose' }));
      assert.match(
        await logs(),
        / WARN {2}This server is OPEN: it listens on 0\.0\.0\.0:9324 in its container/,
      );
      // Other services call it by its service name, which the compose file allows.
      const status = await fromAnotherContainer(
        "const r = await fetch('http://sluice:9324/health'); console.log(r.status);",
        `${project}_default`,
      );
      assert.equal(status.trim(), '200');
    } finally {
      sqs.destroy();
      await composeDown(project, open);
    }

    // The commented lines for access keys, uncommented as the file says, with sluice.json beside it (the one
    // the guide wrote in the previous test).
    const keyed = composeCopy('compose.yaml', readFileSync(open, 'utf8'), [
      [
        '      # - ./sluice.json:/etc/sluice/config.json:ro\n',
        '      - ./sluice.json:/etc/sluice/config.json:ro\n',
      ],
      ['    # environment:\n', '    environment:\n'],
      ['    #   SLUICE_CONFIG: /etc/sluice/config.json\n', '      SLUICE_CONFIG: /etc/sluice/config.json\n'],
    ]);
    await compose(project, keyed, 'up', '-d');
    const signed = sqsClient(endpoint, {
      credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'change-me-too' },
    });
    try {
      await firstAnswer(signed, process.hrtime.bigint(), logs);
      assert.equal(await unsignedStatus(endpoint), 403);
      const { QueueUrl } = await signed.send(new GetQueueUrlCommand({ QueueName: 'composed' }));
      const { Messages } = await signed.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
      assert.deepEqual(
        Messages?.map((message) => message.Body),
        ['from compose'],
        'the message kept on the compose volume',
      );
      assert.doesNotMatch(await logs(), /WARNING|OPEN/);
    } finally {
      signed.destroy();
      await composeDown(project, keyed, '-v');
    }
  });

  it('runs compose.postgres.yaml with podman-compose: two nodes on one PostgreSQL database serve the same queues', async (t) => {
    assert.equal(
      documented('Compose', 'podman-compose -f compose.postgres.yaml'),
      'podman-compose -f compose.postgres.yaml up -d',
    );
    const failure = await postgresImageMade;
    if (failure) throw failure;
    const ports = [await freePort(), await freePort()];
    const file = composeCopy(
      'compose.postgres.yaml',
      readFileSync(join(REPOSITORY, 'compose.postgres.yaml'), 'utf8'),
      [
        ['image: sluice\n', `image: ${image}\n`],
        ['build: .\n', `build: ${REPOSITORY}\n`],
        // A PostgreSQL 15 image made from Debian's packages, with the official image's settings, for postgres:17.
        ['image: postgres:17\n', `image: ${postgresImage}\n`],
        ['"127.0.0.1:9324:9324"', `"127.0.0.1:${ports[0]}:9324"`],
        ['"127.0.0.1:9325:9324"', `"127.0.0.1:${ports[1]}:9324"`],
      ],
    );
    const project = `${name}-cluster`;
    const started = process.hrtime.bigint();
    await compose(project, file, 'up', '-d');
    const nodes = ports.map((port) => sqsClient(`http://127.0.0.1:${port}`));
    const [one, two] = nodes as [SQSClient, SQSClient];
    try {
      // The nodes may start before PostgreSQL accepts connections (podman-compose 1.0.3 does not wait for its
      // health check): they stop, and their restart policy starts them again until it does.
      for (const [index, node] of nodes.entries()) {
        const seconds = await firstAnswer(node, started, () => logsOf(`${project}_sluice-${index + 1}_1`));
        t.diagnostic(`podman-compose up to node ${index + 1}'s first answer: ${seconds.toFixed(1)} s`);
      }
      const { QueueUrl } = await one.send(new CreateQueueCommand({ QueueName: 'shared' }));
      await one.send(new SendMessageCommand({ QueueUrl, MessageBody: 'sent to node 1' }));
      const atTwo = await two.send(new GetQueueUrlCommand({ QueueName: 'shared' }));
      assert.equal(atTwo.QueueUrl, `http://127.0.0.1:${ports[1]}/000000000000/shared`);
      const { Messages } = await two.send(
        new ReceiveMessageCommand({ QueueUrl: atTwo.QueueUrl, WaitTimeSeconds: 5 }),
      );
      assert.deepEqual(
        Messages?.map((message) => message.Body),
        ['sent to node 1'],
      );
      for (const node of ['sluice-1', 'sluice-2']) {
        assert.match(await logsOf(`${project}_${node}_1`), / WARN {2}This server is OPEN/);
        const status = await fromAnotherContainer(
          `const r = await fetch('http://${node}:9324/health'); console.log(r.status);`,
          `${project}_default`,
        );
        assert.equal(status.trim(), '200', `other services call ${node} by name`);
      }
    } finally {
      for (const node of nodes) node.destroy();
      await composeDown(project, file, '-v');
    }
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
