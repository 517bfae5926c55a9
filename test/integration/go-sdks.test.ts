import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readDoc, sectionBlocks } from '../helpers/doc-blocks.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { availability, type RealClient, run } from './clients/clients.ts';

/**
 * Debian's Go AWS SDKs, v2 1.17 and v1 1.44, built into the Go program in clients/go and run against a really
 * started server with access keys (every request SigV4-signed by the SDK). Both releases speak Query (XML) to
 * SQS and SNS. The program checks each answer and exits non-zero on the first mismatch; this test also checks
 * that every step of the walk was reached. The SNS guide's Go program is built and run the same way.
 */

const GOPATH = '/usr/share/gocode';
const GO_PROGRAM = join(import.meta.dirname, 'clients', 'go');
const KEY = { accessKeyId: 'AKIDGOSDK', secretAccessKey: 'go-sdk-walk-secret' };

const GO: RealClient = {
  label: "Debian's Go toolchain with its AWS SDK packages",
  bin: [
    '/usr/bin/go',
    join(GOPATH, 'src/github.com/aws/aws-sdk-go-v2/service/sqs'),
    join(GOPATH, 'src/github.com/aws/aws-sdk-go/service/sns'),
  ].every((path) => existsSync(path))
    ? '/usr/bin/go'
    : undefined,
  protocol: 'query',
  requiredInCi: true,
  install: 'apt-get install golang-go golang-github-aws-aws-sdk-go-v2-dev golang-github-aws-aws-sdk-go-dev',
};

/**
 * Offline, against Debian's sources: GOPATH mode needs no module proxy and no go.mod (Debian packs the v2 SDK
 * as one module, where a go.mod would need a replace directive for each of its submodules).
 */
const GO_BUILD_ENV = { GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOPROXY: 'off' };

/** A cold build compiles both SDKs' packages: about 45 s on an idle 2-core machine, minutes under CI's load. */
const BUILD_TIMEOUT_MS = 600_000;
const WALK_TIMEOUT_MS = 180_000;

/** The program's `ok` lines, in order: every step of the walk it reached. */
const STEPS = [
  'v2 CreateQueue',
  'v2 SendMessage',
  'v2 ReceiveMessage: body, attributes and system attributes as sent',
  'v2 DeleteMessage, then GetQueueAttributes: nothing left',
  'v2 GetQueueUrl of a missing queue',
  'v2 FIFO SendMessage x4 (one duplicate by content)',
  'v2 FIFO ReceiveMessage: 3 messages in order',
  'v2 DeleteMessageBatch and FIFO GetQueueAttributes',
  'v2 CreateTopic',
  'v2 Subscribe',
  'v2 Publish',
  'v2 PublishBatch',
  'v2 ListSubscriptionsByTopic: both subscriptions',
  'v2 raw queue: the two kind=order messages, attributes kept; the refunds were filtered out',
  'envelope signature verified with',
  'v2 envelope queue: all four publications',
  'v2 Unsubscribe, DeleteTopic; the topic is gone',
  'v1 CreateQueue, SendMessage, ReceiveMessage, DeleteMessage',
  'envelope signature verified with',
  'v1 CreateTopic, Subscribe with a filter policy, Publish x2: one envelope delivered',
  'v1 DeleteTopic; the topic is gone',
];

describe("Debian's Go AWS SDKs", () => {
  let server: RunningServer;
  let buildDir: string;
  before(async () => {
    buildDir = mkdtempSync(join(tmpdir(), 'sluice-go-sdks-'));
    server = await startServer({ args: ['--credentials', `${KEY.accessKeyId}:${KEY.secretAccessKey}`] });
  });
  after(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
    rmSync(buildDir, { recursive: true, force: true });
  });

  const { skip, missing } = availability(GO, GO.bin !== undefined);
  const credentials = {
    AWS_ACCESS_KEY_ID: KEY.accessKeyId,
    AWS_SECRET_ACCESS_KEY: KEY.secretAccessKey,
    AWS_REGION: 'us-east-1',
  };
  /**
   * Builds the Go program in `dir` into an executable, asserting the build succeeded. Its files are named one
   * by one: GOPATH mode refuses a package by absolute path outside GOPATH.
   */
  const build = async (dir: string): Promise<string> => {
    const binary = join(buildDir, `${basename(dir)}.bin`);
    const files = readdirSync(dir)
      .filter((name) => name.endsWith('.go'))
      .map((name) => join(dir, name));
    const built = await run(GO.bin!, ['build', '-o', binary, ...files], BUILD_TIMEOUT_MS, GO_BUILD_ENV);
    assert.equal(built.code, 0, `go build ${dir} failed:\n${built.stdout}${built.stderr}`);
    return binary;
  };

  test('SQS and SNS walks through SDK v2 and v1, signed, over Query', {
    skip,
    timeout: BUILD_TIMEOUT_MS + WALK_TIMEOUT_MS,
  }, async () => {
    assert.ok(!missing, missing);
    const walk = await run(await build(GO_PROGRAM), [server.endpoint, 'go'], WALK_TIMEOUT_MS, credentials);
    const output = `${walk.stdout}${walk.stderr}`;
    assert.equal(walk.code, 0, `the Go walk failed:\n${output}`);
    const reached = walk.stdout
      .split('\n')
      .filter((line) => line.startsWith('ok '))
      .map((line) => line.slice('ok '.length));
    assert.equal(reached.length, STEPS.length, output);
    for (const [index, step] of STEPS.entries()) assert.ok(reached[index]!.startsWith(step), output);
    assert.match(walk.stdout, /^GO SDK WALK PASSED \(\d+ checks\)$/m);
    assert.match(
      walk.stdout,
      /^ok envelope signature verified with http:\/\/127\.0\.0\.1:\d+\/SimpleNotificationService-/m,
    );
  });

  test("the SNS guide's Go program", { skip, timeout: BUILD_TIMEOUT_MS + WALK_TIMEOUT_MS }, async () => {
    assert.ok(!missing, missing);
    const [program] = sectionBlocks(readDoc('docs/guide/sns.md'), 'From Go').filter((block) =>
      block.code.startsWith('package main'),
    );
    assert.ok(program?.lang === 'go', 'the guide shows a Go program under "From Go"');
    const documented = 'const endpoint = "http://127.0.0.1:9324"';
    assert.ok(program.code.includes(documented), `the program sets ${documented}`);
    const dir = join(buildDir, 'guide');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'main.go'),
      program.code.replace(documented, `const endpoint = "${server.endpoint}"`),
    );
    const result = await run(await build(dir), [], WALK_TIMEOUT_MS, credentials);
    assert.equal(result.code, 0, `the guide's program failed:\n${result.stdout}${result.stderr}`);
    assert.equal(result.stdout, '{"order": 42}\n');
  });
});
