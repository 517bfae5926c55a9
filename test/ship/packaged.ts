/**
 * The packaged smoke test: both packages packed as npm publishes them, installed from the tarballs into
 * empty folders outside the repository and run with plain Node (no tsx): this machine's, the oldest that the
 * packages' `engines` admit, and the newest of the LTS lines 22 and 24 (.ci/fetch-node puts them in
 * .tmp/nodes, from the npm registry). `npx sluice serve` answers an SDK client, ES module and CommonJS
 * consumers of the toolkit run against it, a TypeScript consumer type-checks against the declarations, and
 * `sluice` commands print no AWS SDK Node version notice.
 *
 * The tarballs are made, and the server's tarball (alone: it needs no other) and the toolkit's are installed,
 * by the commands of docs/guide/install.md's "Today: from the tarballs", run as written in bash, with only
 * their environment set: HOME (where they put the tarballs), the Node on PATH, npm's cache.
 *
 * better-sqlite3 is compiled for each NODE_MODULE_VERSION, so this is not part of `npm test`:
 * `npm run test:package`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { freshDatabase } from '../../tools/postgres.ts';
import { type CodeBlock, readDoc, sectionBlocks } from '../helpers/doc-blocks.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { fetchedNode, machineNode, type NodeRuntime, REPOSITORY } from './nodes.ts';

const execFileAsync = promisify(execFile);
const FIXTURES = new URL('fixtures/', import.meta.url).pathname;
/** What the SDK prints on Node 20 (docs/decisions/node-versions.md); `sluice` commands must not. */
const SDK_NODE_NOTICE = /NodeVersionSupportWarning/;
/** The oldest Node the packages' `engines` admit, which is run too, so that the field says what is true. */
const ENGINES_MINIMUM = /^>=(\d+\.\d+\.\d+)$/.exec(
  (
    JSON.parse(readFileSync(join(REPOSITORY, 'packages', 'server', 'package.json'), 'utf8')) as {
      engines: { node: string };
    }
  ).engines.node,
)?.[1];

// `npm run test:package` passes npm's own variables (npm_config_local_prefix, ...), which would point the
// npm commands run here at this repository instead of the folders they run in.
for (const name of Object.keys(process.env)) if (name.startsWith('npm_')) delete process.env[name];

assert.ok(ENGINES_MINIMUM, 'engines.node is >=X.Y.Z');
// The oldest admitted and the LTS lines' newest, each unless it is this machine's.
const fetchedNodes = (
  await Promise.all(
    [ENGINES_MINIMUM, '22', '24'].map(async (version) => ({ version, node: await fetchedNode(version) })),
  )
).filter(({ node }) => typeof node === 'string' || node.version !== machineNode.version);

const scratch = mkdtempSync(join(tmpdir(), 'sluice-packaged-'));
let tarballs: { client: string; server: string };

/**
 * The install page's commands for today, by section: each a single `sh` block. The server's ends with
 * `npx sluice serve`, which the test runs as `serve` (a server it can stop), after the lines before it.
 */
const INSTALL_PAGE = readDoc('docs/guide/install.md');
const [packBlock, serverBlock, toolkitBlock] = (
  ['Make the tarballs', 'The server', 'The toolkit'] as const
).map((heading) => {
  const blocks = sectionBlocks(INSTALL_PAGE, heading).filter((block) => block.lang === 'sh');
  assert.equal(blocks.length, 1, `one sh block under "${heading}" of install.md`);
  return blocks[0]!;
}) as [CodeBlock, CodeBlock, CodeBlock];
// Every command block of the page is one of those three: the registry's commands, which cannot run before
// the packages are published, are `text` blocks under "Once published".
assert.equal(
  INSTALL_PAGE.match(/^```sh$/gm)?.length,
  3,
  'install.md has no sh block besides the three this test runs',
);
/** The blocks' HOME: `~/sluice-packs` is there. */
const docsHome = join(scratch, 'home');
mkdirSync(docsHome);
// npm's cache stays this machine's, as a reader's would: a HOME of its own would download every package again.
const npmCache = (await execFileAsync('npm', ['config', 'get', 'cache'])).stdout.trim();

/** What a program run with this Node gets besides this process's environment: it first on PATH, as nvm puts it. */
function nodeVariables(node: NodeRuntime): Record<string, string> {
  return {
    PATH: `${dirname(node.binary)}:${process.env.PATH}`,
    ...(node.nodedir === undefined ? {} : { npm_config_nodedir: node.nodedir }),
    JOBS: 'max', // node-gyp's make on every core
  };
}

/**
 * Runs an install page block with bash in `folder`, as a reader would in a terminal there with this Node;
 * resolves with the folder the block ended in (its last `cd`) and how long it took.
 */
async function runPageBlock(
  node: NodeRuntime,
  folder: string,
  code: string,
): Promise<{ folder: string; seconds: number; output: string }> {
  const endedIn = join(folder, '.block-ended-in');
  const started = process.hrtime.bigint();
  const { stdout, stderr } = await execFileAsync(
    'bash',
    ['-c', `set -euo pipefail\n${code}\npwd > ${endedIn}`],
    {
      cwd: folder,
      env: { ...process.env, ...nodeVariables(node), HOME: docsHome, npm_config_cache: npmCache },
      maxBuffer: 64 << 20,
      timeout: 30 * 60_000,
    },
  ).catch((error: { stdout?: string; stderr?: string }) =>
    assert.fail(`the install page's block failed in ${folder}:\n${code}\n${error.stdout}\n${error.stderr}`),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const ended = readFileSync(endedIn, 'utf8').trim();
  rmSync(endedIn);
  return { folder: ended, seconds, output: stdout + stderr };
}

async function run(
  node: NodeRuntime,
  folder: string,
  command: string,
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync(command, args, {
    cwd: folder,
    env: { ...process.env, ...nodeVariables(node), ...extra },
    maxBuffer: 64 << 20,
    timeout: 30 * 60_000,
  });
}

/** The failure of a command expected to fail: its exit code and output. */
async function failure(
  promise: Promise<unknown>,
): Promise<{ code: number | undefined; stdout: string; stderr: string }> {
  try {
    await promise;
  } catch (error) {
    const { code, stdout, stderr } = error as { code?: number; stdout?: string; stderr?: string };
    return { code, stdout: stdout ?? '', stderr: stderr ?? '' };
  }
  assert.fail('the command succeeded');
}

interface Installed {
  folder: string;
  output: string;
}

/**
 * A user's first install into an empty project folder: `setup` runs there first (the documented approval of
 * better-sqlite3's install script), then `npm install` of the specs, timed and measured for the report.
 */
async function install(
  t: TestContext,
  node: NodeRuntime,
  name: string,
  specs: string[],
  options: { setup?: string[][]; installArgs?: string[] } = {},
): Promise<Installed> {
  const folder = join(scratch, name);
  mkdirSync(folder);
  await run(node, folder, 'npm', ['init', '--yes']);
  await run(node, folder, 'npm', ['pkg', 'set', 'type=module']);
  for (const args of options.setup ?? []) await run(node, folder, 'npm', args);
  const started = process.hrtime.bigint();
  const { stdout, stderr } = await run(node, folder, 'npm', [
    'install',
    '--no-audit',
    '--no-fund',
    ...(options.installArgs ?? []),
    ...specs,
  ]);
  await measured(t, name, folder, Number(process.hrtime.bigint() - started) / 1e9);
  return { folder, output: stdout + stderr };
}

/** node_modules/.package-lock.json's packages, by path: what npm installed. */
function lockedPackages(folder: string): Record<string, { hasInstallScript?: boolean }> {
  const lock = JSON.parse(readFileSync(join(folder, 'node_modules', '.package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean }>;
  };
  return lock.packages;
}

/** What npm installed in `folder`, in the test's output: time, packages, size. */
async function measured(t: TestContext, name: string, folder: string, seconds: number): Promise<void> {
  const packages = Object.keys(lockedPackages(folder)).length;
  const kib = Number(
    (await execFileAsync('du', ['-sk', join(folder, 'node_modules')])).stdout.split('\t')[0],
  );
  t.diagnostic(
    `${name}: npm install ${seconds.toFixed(1)} s, ${packages} packages, ${(kib / 1024).toFixed(1)} MiB installed`,
  );
}

/**
 * The install page's server install, in a folder of its own: its commands up to `npx sluice serve`, which
 * `serve` runs later. The server's tarball alone: nothing of the toolkit is installed.
 */
async function installServer(t: TestContext, node: NodeRuntime, name: string): Promise<Installed> {
  const lines = serverBlock.code.trimEnd().split('\n');
  assert.equal(lines.at(-1), 'npx sluice serve', "the install page's server block ends by starting it");
  const parent = join(scratch, name);
  mkdirSync(parent);
  const { folder, seconds, output } = await runPageBlock(node, parent, lines.slice(0, -1).join('\n'));
  await measured(t, name, folder, seconds);
  const packages = lockedPackages(folder);
  assert.ok(packages['node_modules/sluice'], 'the server is installed');
  assert.equal(packages['node_modules/sluice-client'], undefined, 'the server installs without the toolkit');
  return { folder, output };
}

/** An application of the toolkit, by the install page's commands: the toolkit and the SDK client it is given. */
async function installToolkit(t: TestContext, node: NodeRuntime, name: string): Promise<Installed> {
  const parent = join(scratch, name);
  mkdirSync(parent);
  const { folder, seconds, output } = await runPageBlock(node, parent, toolkitBlock.code);
  await measured(t, name, folder, seconds);
  const packages = lockedPackages(folder);
  const scripted = Object.entries(packages).filter(([, entry]) => entry.hasInstallScript);
  assert.deepEqual(scripted, [], 'the toolkit installs nothing with an install script');
  for (const peer of ['better-sqlite3', 'pg', '@aws-sdk/client-s3', '@aws-sdk/lib-storage'])
    assert.equal(packages[`node_modules/${peer}`], undefined, `${peer} is an optional peer, not installed`);
  for (const file of ['consume-three.cjs', 'consumer.mjs', 'consumer.cjs'])
    copyFileSync(join(FIXTURES, file), join(folder, file));
  return { folder, output };
}

/** The console's modules in the repository, at the paths the server serves them (/console/pages/queue.js…). */
const CONSOLE_MODULES = readdirSync(join(REPOSITORY, 'packages', 'server', 'console'), {
  recursive: true,
  encoding: 'utf8',
})
  .filter((file) => file.endsWith('.js'))
  .map((file) => `/console/${file.split(sep).join('/')}`)
  .sort();

/** The modules the served console loads, from its router through their imports, each served as JavaScript. */
async function servedConsoleModules(endpoint: string): Promise<string[]> {
  const found = new Set<string>();
  const visit = async (path: string): Promise<void> => {
    if (found.has(path)) return;
    found.add(path);
    const response = await fetch(`${endpoint}${path}`);
    assert.equal(response.status, 200, path);
    assert.match(response.headers.get('content-type') ?? '', /^text\/javascript/, path);
    // Static imports only (JSDoc `@import`s of the server's types are comments).
    for (const [, specifier] of (await response.text()).matchAll(/^import\b[^;]*?\bfrom '(\.[^']+)';/gm))
      await visit(new URL(specifier!, `${endpoint}${path}`).pathname);
  };
  await visit('/console/console.js');
  return [...found].sort();
}

function serve(node: NodeRuntime, folder: string, args: string[] = []): Promise<RunningServer> {
  return startServer({ command: ['npx', 'sluice'], cwd: folder, env: nodeVariables(node), args });
}

async function stopAndCheckGone(server: RunningServer): Promise<void> {
  await server.stop();
  // stop() waited for the whole process group: nothing may be left listening.
  await assert.rejects(fetch(`${server.endpoint}/health`));
  removeDataDir(server.dataDir);
}

/** What every Node version must do with the installed server and toolkit. */
async function checkInstalled(node: NodeRuntime, serverFolder: string, toolkitFolder: string): Promise<void> {
  const { stdout: version } = await run(node, serverFolder, 'npm', ['exec', '--call', 'node --version']);
  assert.equal(version.trim(), `v${node.version}`, 'npx runs this Node');
  assert.ok(!existsSync(join(serverFolder, 'node_modules', 'tsx')), 'tsx is not installed');

  const server = await serve(node, serverFolder);
  const sqs = sqsClient(server.endpoint);
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'orders' }));
    assert.equal(QueueUrl, `${server.endpoint}/000000000000/orders`);
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'hello' }));
    const { QueueUrls } = await sqs.send(new ListQueuesCommand({}));
    assert.deepEqual(QueueUrls, [QueueUrl]);

    for (const program of ['consumer.mjs', 'consumer.cjs']) {
      const queue = program.replace('.', '-');
      const { stdout, stderr } = await run(node, toolkitFolder, 'node', [program], {
        SQS_ENDPOINT: server.endpoint,
        QUEUE: queue,
      });
      const result = JSON.parse(stdout) as { queueUrl: string; handled: string[] };
      assert.deepEqual(result.handled, ['one', 'three', 'two'], `${program} handled the three messages`);
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: result.queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      assert.deepEqual(
        Attributes,
        { ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' },
        `${program} deleted what it handled`,
      );
      // The control for the notice checks below: an application's own SDK client on Node 20 prints it.
      if (node.major < 22) assert.match(stderr, SDK_NODE_NOTICE);
      else assert.doesNotMatch(stderr, SDK_NODE_NOTICE);
    }

    // `sluice redrive` makes its own SDK client; `sluice stats` reads the server's history.
    const { QueueUrl: dlqUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'orders-dlq' }));
    await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: 'dead' }));
    const redrive = await run(node, serverFolder, 'npx', [
      'sluice',
      'redrive',
      '--source',
      'orders-dlq',
      '--destination',
      'orders',
      '--filter',
      'body=dead',
      '--endpoint',
      server.endpoint,
    ]);
    assert.doesNotMatch(redrive.stderr + redrive.stdout, SDK_NODE_NOTICE);
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    assert.equal(Attributes?.ApproximateNumberOfMessages, '2', 'redrive moved the message');
    const stats = await run(node, serverFolder, 'npx', [
      'sluice',
      'stats',
      'orders',
      '--endpoint',
      server.endpoint,
    ]);
    assert.doesNotMatch(stats.stderr, SDK_NODE_NOTICE);

    assert.deepEqual(
      await servedConsoleModules(server.endpoint),
      CONSOLE_MODULES,
      'the installed server serves every module of the console, each imported from its router',
    );
  } finally {
    sqs.destroy();
    await stopAndCheckGone(server);
  }
  assert.doesNotMatch(server.output(), SDK_NODE_NOTICE);

  // The server is a library too: startSluice in a plain Node program.
  const embedded = await run(node, serverFolder, 'node', [
    '--input-type=module',
    '--eval',
    "import { startSluice } from 'sluice'; const s = await startSluice({ port: 0, dataDir: ':memory:', logLevel: 'silent' }); console.log(s.endpoint); await s.close();",
  ]);
  assert.match(embedded.stdout.trim(), /^http:\/\/127\.0\.0\.1:\d+$/);
}

describe('the packed packages, installed outside the repository', () => {
  before(async () => {
    // In the checkout, as the page says; prepack builds each package first, so the tarballs hold the
    // current sources.
    await runPageBlock(machineNode, REPOSITORY, packBlock.code);
    const packs = join(docsHome, 'sluice-packs');
    const file = (pattern: RegExp) => {
      const found = readdirSync(packs).filter((name) => pattern.test(name));
      assert.equal(found.length, 1, `one ${pattern} in ${packs}: ${readdirSync(packs)}`);
      return join(packs, found[0]!);
    };
    tarballs = { client: file(/^sluice-client-\d.*\.tgz$/), server: file(/^sluice-\d.*\.tgz$/) };
    for (const tarball of Object.values(tarballs))
      assert.ok(INSTALL_PAGE.includes(`~/sluice-packs/${basename(tarball)}`), `install.md names ${tarball}`);
  });

  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('the tarballs hold what users need: the built JavaScript, declarations and maps, the CLI and the console', async () => {
    const shipped = async (tarball: string) =>
      (await execFileAsync('tar', ['-tzf', tarball])).stdout.trim().split('\n').sort();
    const unexpected = (files: string[], allowed: RegExp) => files.filter((file) => !allowed.test(file));
    const client = await shipped(tarballs.client);
    const server = await shipped(tarballs.server);
    assert.deepEqual(
      unexpected(client, /^package\/(package\.json|README\.md|dist\/.+\.(js|d\.ts|js\.map))$/),
      [],
    );
    assert.deepEqual(
      unexpected(
        server,
        /^package\/(package\.json|README\.md|bin\/sluice\.js|console\/(pages\/|shared\/)?[\w.-]+|dist\/.+\.(js|d\.ts|js\.map))$/,
      ),
      [],
    );
    for (const [files, entry] of [
      [client, 'package/dist/index.d.ts'],
      [client, 'package/dist/sqlite.js'],
      [server, 'package/dist/cli/main.js'],
      [server, 'package/dist/index.d.ts'],
      [server, 'package/console/index.html'],
    ] as const)
      assert.ok(files.includes(entry), `${entry} is shipped`);
  });

  let machineServer: string | undefined;

  describe(`on this machine's Node ${process.version}`, () => {
    let blocked: Installed;

    it('without its install script run, better-sqlite3 is named in one line with the command that builds it, and PostgreSQL needs none', async (t) => {
      // What npm leaves when it does not run the script (a denial, --strict-allow-scripts, ignore-scripts).
      blocked = await install(t, machineNode, 'server-unbuilt', [tarballs.server], {
        installArgs: ['--ignore-scripts'],
      });
      const dataDir = join(blocked.folder, 'data');
      const refused = await failure(
        run(machineNode, blocked.folder, 'npx', ['sluice', 'serve', '--port', '0', '--data', dataDir]),
      );
      assert.equal(refused.code, 2);
      const lines = refused.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line, not a stack or a list of paths:\n${refused.stderr}`);
      assert.match(lines[0] ?? '', /^\S+Z FATAL cannot start: better-sqlite3's native module is not built/);
      assert.ok(
        lines[0]?.includes(`npm rebuild better-sqlite3 --prefix ${blocked.folder}`),
        `the message names the rebuild in this folder: ${lines[0]}`,
      );

      const database = await freshDatabase('sluice_packaged');
      try {
        const server = await serve(machineNode, blocked.folder, ['--store', database.url]);
        const sqs = sqsClient(server.endpoint);
        try {
          const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'on-postgres' }));
          assert.equal(QueueUrl, `${server.endpoint}/000000000000/on-postgres`);
        } finally {
          sqs.destroy();
          await stopAndCheckGone(server);
        }
      } finally {
        await database.drop();
      }
    });

    it('the command the message names builds it, and the server starts', async () => {
      await run(machineNode, scratch, 'npm', ['rebuild', 'better-sqlite3', '--prefix', blocked.folder]);
      machineServer = blocked.folder;
    });

    it('npx sluice serve answers an SDK client; ESM and CommonJS consumers run; sluice commands print no SDK notice', async (t) => {
      assert.ok(machineServer, 'the server was built');
      const toolkit = await installToolkit(t, machineNode, 'toolkit');
      await checkInstalled(machineNode, machineServer, toolkit.folder);
    });

    it('a TypeScript consumer of both packages type-checks against the declarations, with no optional peer installed', async (t) => {
      // Types only: nothing needs better-sqlite3 built.
      const { folder } = await install(t, machineNode, 'typescript', [tarballs.server, tarballs.client], {
        installArgs: ['--ignore-scripts'],
      });
      copyFileSync(join(FIXTURES, 'consumer.ts'), join(folder, 'consumer.ts'));
      // Only @types/node from the repository, as a TypeScript project has it; everything else is installed.
      mkdirSync(join(folder, 'types'));
      symlinkSync(join(REPOSITORY, 'node_modules', '@types', 'node'), join(folder, 'types', 'node'));
      const tsconfig = {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          typeRoots: ['./types'],
          types: ['node'],
        },
        files: ['consumer.ts'],
      };
      writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify(tsconfig));
      await run(machineNode, folder, process.execPath, [
        join(REPOSITORY, 'node_modules', 'typescript', 'bin', 'tsc'),
        '--project',
        folder,
      ]);
    });
  });

  for (const { version, node } of fetchedNodes) {
    const name = typeof node === 'string' ? version : node.version;
    describe(`on Node ${name}`, { skip: typeof node === 'string' && node }, () => {
      it('the documented install approves and builds better-sqlite3, unless the machine build fits; everything runs as on the machine', async (t) => {
        assert.ok(typeof node === 'object' && machineServer, 'this Node, and the machine build');
        let serverFolder = machineServer;
        // A Node with the machine's NODE_MODULE_VERSION (another Node 20) loads the machine build as it is.
        if (node.modules !== machineNode.modules) {
          const server = await installServer(t, node, `server-node${name}`);
          assert.doesNotMatch(server.output, /install-scripts/, 'no install script is left unreviewed');
          serverFolder = server.folder;
        }
        const toolkit = await installToolkit(t, node, `toolkit-node${name}`);
        await checkInstalled(node, serverFolder, toolkit.folder);
      });
    });
  }

  const other = fetchedNodes
    .map((entry) => entry.node)
    .find((node) => typeof node === 'object' && node.modules !== machineNode.modules);
  it('a native module built for another Node.js is named in one line, with the rebuild', {
    skip: other === undefined && 'no Node with another NODE_MODULE_VERSION to run it on',
  }, async () => {
    assert.ok(typeof other === 'object' && machineServer, 'the machine build and another Node');
    const refused = await failure(
      run(other, machineServer, 'npx', ['sluice', 'serve', '--port', '0', '--data', join(scratch, 'abi')]),
    );
    assert.equal(refused.code, 2);
    const lines = refused.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, refused.stderr);
    assert.match(
      lines[0] ?? '',
      /better-sqlite3's native module was built for another Node\.js \(module version \d+; v\d+/,
    );
    assert.ok(lines[0]?.includes(`npm rebuild better-sqlite3 --prefix ${machineServer}`), lines[0]);
  });
});
