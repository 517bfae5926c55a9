import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { removeDataDir, startServer } from '../helpers/server.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const EXAMPLE = 'examples/consumer-dead-letter.test.ts';
const GUIDE = 'docs/guide/testing-with-sluice.md';

/** docs/guide/testing-with-sluice.md's complete test: shown as it is, and passing. */
describe('the testing guide', () => {
  it('shows the example test exactly as CI runs it', () => {
    const example = readFileSync(join(ROOT, EXAMPLE), 'utf8');
    const guide = readFileSync(join(ROOT, GUIDE), 'utf8');
    assert.ok(guide.includes(`\`\`\`ts\n${example}\`\`\``), `${GUIDE} must show ${EXAMPLE} verbatim`);
  });

  it('its example passes against sluice serve --test-clock', async (t) => {
    const server = await startServer({ args: ['--test-clock'] });
    // Without NODE_TEST_CONTEXT, which would make the child report to this runner instead of printing TAP.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    try {
      const { stdout } = await run(
        process.execPath,
        ['--conditions=sluice-source', '--import', 'tsx', '--test', '--test-reporter=tap', EXAMPLE],
        { cwd: ROOT, env: { ...env, SLUICE_ENDPOINT: server.endpoint }, timeout: 120_000 },
      );
      assert.match(stdout, /^# pass 1$/m);
      assert.match(stdout, /^# fail 0$/m);
      // Not asserted (the machine may be loaded): the figure the guide's "a fraction of a second" rests on.
      const took = /^ {2}duration_ms: ([\d.]+)$/m.exec(stdout)?.[1];
      t.diagnostic(
        `the example test took ${Math.round(Number(took))} ms; waited out, its timeouts take 20 s`,
      );
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
    }
  });
});
