import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { listeningUrl } from '../../tools/listening.ts';
import { alive } from '../../tools/processes.ts';
import { removeDataDir, SLUICE_CLI, startServer } from '../helpers/server.ts';

const run = promisify(execFile);

/** A parent that starts the server and dies without passing a signal on, as npx and npm do. */
const WRAPPER = `
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, JSON.parse(process.argv[1]), { stdio: 'inherit' });
process.stdout.write('server pid ' + child.pid + '\\n');
`;

interface Wrapped {
  readonly wrapper: ReturnType<typeof spawn>;
  readonly serverPid: number;
  readonly endpoint: string;
  output(): string;
  /** Resolves when every process writing to the wrapper's pipes, the server included, has exited. */
  readonly closed: Promise<void>;
}

/** Starts the server under a wrapper process, as npx does (npm_command=exec), or as a plain parent. */
async function startWrapped(args: string[], by: 'npm' | 'shell' = 'npm'): Promise<Wrapped> {
  const serve = [...SLUICE_CLI, 'serve', '--in-memory', '--port', '0', ...args];
  const { npm_command: _npm, ...environment } = process.env;
  const wrapper = spawn(process.execPath, ['-e', WRAPPER, JSON.stringify(serve)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: by === 'npm' ? { ...environment, npm_command: 'exec' } : environment,
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  wrapper.stdout.on('data', collect);
  wrapper.stderr.on('data', collect);
  const closed = new Promise<void>((resolve) => wrapper.once('close', () => resolve()));
  const endpoint = await listeningUrl(wrapper, {
    name: 'wrapped server',
    pattern: /listening on (https?:\/\/[^\s]+)/,
    timeoutMs: 30_000,
    output: () => output,
  });
  const serverPid = Number(/server pid (\d+)/.exec(output)?.[1]);
  assert.ok(serverPid > 0, output);
  return { wrapper, serverPid, endpoint, output: () => output, closed };
}

/** Waits for `closed`, failing after a generous minute (a loaded machine is slow, never that slow). */
async function exitedWithin(closed: Promise<void>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    closed,
    new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${what} still runs a minute after its parent died`)),
        60_000,
      );
    }),
  ]);
  clearTimeout(timer);
}

async function answers(endpoint: string): Promise<boolean> {
  return fetch(`${endpoint}/health`).then(
    (response) => response.ok,
    () => false,
  );
}

describe('sluice serve stops with the process that started it', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`shuts down cleanly when its parent is killed with ${signal}`, async () => {
      const started = await startWrapped([]);
      try {
        assert.ok(await answers(started.endpoint));
        started.wrapper.kill(signal);
        await exitedWithin(started.closed, 'the server');
        assert.match(
          started.output(),
          new RegExp(`parent process ${started.wrapper.pid} exited, shutting down`),
        );
        assert.equal(await answers(started.endpoint), false, 'nothing answers on the port any more');
      } finally {
        if (alive(started.serverPid)) process.kill(started.serverPid, 'SIGKILL');
      }
    });
  }

  for (const [name, outliver] of [
    ['with --outlive-parent', () => startWrapped(['--outlive-parent'])],
    ['when npm did not start it (a shell backgrounding it)', () => startWrapped([], 'shell')],
  ] as const)
    it(`outlives its parent ${name}`, async () => {
      const watching = await startWrapped([]);
      const outliving = await outliver();
      try {
        watching.wrapper.kill('SIGKILL');
        outliving.wrapper.kill('SIGKILL');
        // Once the watching server has noticed its parent's death, the other has had the same time to.
        await exitedWithin(watching.closed, 'the watching server');
        assert.ok(await answers(outliving.endpoint), outliving.output());
        process.kill(outliving.serverPid, 'SIGTERM');
        await exitedWithin(outliving.closed, 'the outliving server after SIGTERM');
        assert.doesNotMatch(outliving.output(), /parent process/);
      } finally {
        for (const { serverPid } of [watching, outliving])
          if (alive(serverPid)) process.kill(serverPid, 'SIGKILL');
      }
    });
});

/** `sluice serve` on a port already taken, as a finished run; its exit code and stderr. */
async function serveOn(port: number): Promise<{ code: number | undefined; stderr: string }> {
  return run(process.execPath, [...SLUICE_CLI, 'serve', '--in-memory', '--port', String(port)], {
    timeout: 60_000,
  }).then(
    () => assert.fail('a second server started on a taken port'),
    (failure: { code?: number; stderr?: string }) => ({ code: failure.code, stderr: failure.stderr ?? '' }),
  );
}

describe('sluice serve on a port already taken', () => {
  it('says that another Sluice listens there, and how to choose another port', async () => {
    const first = await startServer({ inMemory: true });
    try {
      const { code, stderr } = await serveOn(first.port);
      assert.ok(code !== undefined && code !== 0, `exit code ${code}`);
      assert.match(
        stderr,
        new RegExp(
          `another Sluice is already listening on 127\\.0\\.0\\.1:${first.port} \\(stop it, or choose another port with --port N\\)`,
        ),
      );
      assert.doesNotMatch(stderr, /EADDRINUSE|\n\s+at /, 'no raw error, no stack trace');
    } finally {
      await first.stop();
      removeDataDir(first.dataDir);
    }
  });

  it('says that something else holds the port when what answers is no Sluice', async () => {
    // Even a health answer with Sluice's body is not taken for a Sluice: it does not say it is one.
    const other = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const { port } = other.address() as AddressInfo;
    try {
      const { code, stderr } = await serveOn(port);
      assert.ok(code !== undefined && code !== 0, `exit code ${code}`);
      assert.match(
        stderr,
        new RegExp(`something else holds 127\\.0\\.0\\.1:${port}; choose another port with --port N`),
      );
      assert.doesNotMatch(stderr, /EADDRINUSE|\n\s+at /, 'no raw error, no stack trace');
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
