import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServer } from '../helpers/server.ts';

/**
 * moto 5.2.1's own SNS tests (vendored in test/compat/moto, see its NOTICE) against Sluice in moto's server
 * mode, every test but those deselected.txt lists with a reason. Needs python3 with moto, boto3 and pytest:
 * skipped without them, except under CI, where their absence fails. test/compat/moto-sns.sh runs the same.
 */

const SUITE = fileURLToPath(new URL('../compat/moto/', import.meta.url));
const MOTO_ACCOUNT = '123456789012';

function python(): { python: string } | { missing: string } {
  try {
    const found = execFileSync('python3', ['-c', 'import sys, moto, boto3, pytest; print(sys.executable)'], {
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return { python: found };
  } catch {
    return {
      missing: 'python3 with moto, boto3 and pytest is not installed (pip install moto boto3 pytest)',
    };
  }
}

const found = python();
const skip = 'missing' in found && !process.env.CI ? found.missing : false;

test("moto's SNS suite passes against Sluice, less the tests deselected with a reason", {
  skip,
}, async () => {
  if ('missing' in found) assert.fail(`under CI: ${found.missing}`);
  const listed = readFileSync(`${SUITE}deselected.txt`, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('tests/'));
  for (const line of listed)
    assert.match(line, /^\S+ {2}# (out-of-scope|moto-reading|sluice-gap)[^:]*: \S/, line);
  const server = await startServer({
    inMemory: true,
    args: ['--test-clock', '--account', MOTO_ACCOUNT, '--log-level', 'warn'],
  });
  try {
    const run = await promisify(execFile)(
      found.python,
      [
        '-m',
        'pytest',
        '-p',
        'no:cacheprovider',
        '-q',
        '-rfE',
        '-W',
        'ignore::DeprecationWarning',
        'tests/test_sns',
      ],
      {
        cwd: SUITE,
        timeout: 900_000,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          ...process.env,
          TEST_SERVER_MODE: 'true',
          TEST_SERVER_MODE_ENDPOINT: server.endpoint,
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          AWS_DEFAULT_REGION: 'us-east-1',
          SLUICE_ACCOUNT: MOTO_ACCOUNT,
          MOTO_TEST_ALLOW_AWS_REQUEST: 'false',
        },
      },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      assert.fail(`pytest failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    const summary = run.stdout.trim().split('\n').pop() ?? '';
    // 171 collected: 135 pass, test_publish_to_http skips itself in server mode, the list's 35 are left out.
    assert.match(summary, /^135 passed, 1 skipped, 35 deselected in /, run.stdout);
    assert.equal(listed.length, 35);
  } finally {
    await server.stop();
  }
});
