import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { listeningUrl } from '../../tools/listening.ts';
import { SLUICE_CLI } from '../helpers/server.ts';

/**
 * Runs `sluice serve` on an open address (so the server's own warning is logged too) until it listens, then
 * stops it with SIGTERM; what it wrote on each stream.
 */
async function serveAndStop(args: string[], env: Record<string, string> = {}) {
  const child = spawn(
    process.execPath,
    [...SLUICE_CLI, 'serve', '--in-memory', '--port', '0', '--host', '0.0.0.0', '--insecure', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  await listeningUrl(child, {
    name: 'server',
    pattern: /listening on (https?:\/\/[^\s"]+)/,
    timeoutMs: 30_000,
    output: () => stdout + stderr,
  });
  child.kill('SIGTERM');
  assert.equal(await closed, 0, stderr);
  return { stdout, lines: stderr.split('\n').filter(Boolean) };
}

describe('sluice serve --log-format', () => {
  it('json: every line on stderr one JSON object, the start, warning and stop lines included', async () => {
    for (const [args, env] of [
      [['--log-format', 'json'], {}],
      [[], { SLUICE_LOG_FORMAT: 'json' }],
    ] as const) {
      const { stdout, lines } = await serveAndStop([...args], env);
      assert.equal(stdout, '', 'nothing on stdout');
      const entries = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
      const messages = entries.map((entry) => entry.msg);
      assert.ok(
        messages.some((msg) => /^listening on http:\/\/0\.0\.0\.0:\d+ \(in memory/.test(msg)),
        messages.join('\n'),
      );
      assert.ok(messages.some((msg) => msg.startsWith('console at http://127.0.0.1:')));
      assert.ok(
        entries.some(
          (entry) => entry.level === 40 && /^This server is OPEN: .* without access keys/.test(entry.msg),
        ),
        'the server warning',
      );
      assert.ok(messages.includes('SIGTERM, shutting down'));
    }
  });

  it('text (the default, and a flag wins over SLUICE_LOG_FORMAT): every line time, level, message', async () => {
    for (const [args, env] of [
      [[], {}],
      [['--log-format', 'text'], { SLUICE_LOG_FORMAT: 'json' }],
    ] as const) {
      const { stdout, lines } = await serveAndStop([...args], env);
      assert.equal(stdout, '', 'nothing on stdout');
      for (const line of lines)
        assert.match(
          line,
          /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/,
        );
      assert.ok(
        lines.some((line) =>
          / WARN {2}This server is OPEN: it listens on 0\.0\.0\.0:\d+ without access keys \(--insecure\)\.$/.test(
            line,
          ),
        ),
      );
      assert.ok(lines.some((line) => / INFO {2}listening on http:\/\/0\.0\.0\.0:\d+ \(in memory/.test(line)));
      assert.ok(lines.some((line) => line.endsWith(' INFO  SIGTERM, shutting down')));
    }
  });

  it('refuses a format it does not know', async () => {
    const child = spawn(
      process.execPath,
      [...SLUICE_CLI, 'serve', '--in-memory', '--port', '0', '--log-format', 'yaml'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.equal(code, 2);
    assert.match(stderr, /^sluice: --log-format must be one of text, json\n/);
  });
});
