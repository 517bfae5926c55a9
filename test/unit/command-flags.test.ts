import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

/**
 * The commands run by hand read their flags the same way (bench/args.ts, commandFlags): --help prints the
 * usage, and a flag that is unknown or has a bad value stops the command before any work, with exit 2. A
 * number that is not one used to become NaN: `--kills abc` ran no kill at all and passed.
 */
const COMMANDS = [
  {
    script: 'test/chaos/run.ts',
    name: 'test:chaos',
    bad: ['--kills', 'abc'],
    reason: /--kills needs a positive integer/,
  },
  {
    script: 'test/chaos/powercut/run.ts',
    name: 'test:powercut',
    bad: ['--keep', '2'],
    reason: /--keep needs a number from 0 to 1/,
  },
  {
    script: 'test/chaos/run.ts',
    name: 'test:chaos',
    bad: ['--modes', 'full,fast'],
    reason: /unknown mode fast/,
  },
  {
    script: 'bench/outbox-latency.ts',
    name: 'bench:outbox',
    bad: ['--poll-ms', '0'],
    reason: /--poll-ms needs a positive integer/,
  },
  {
    script: 'scripts/bench-docs.ts',
    name: 'bench:docs',
    bad: ['--recrod', 'x.json'],
    reason: /Unknown option '--recrod'/,
  },
];

const run = (script: string, ...flags: string[]) =>
  spawnSync(process.execPath, ['--conditions=sluice-source', '--import', 'tsx', script, ...flags], {
    encoding: 'utf8',
    timeout: 30_000,
  });

describe('flags of the commands run by hand', () => {
  for (const { script, name, bad, reason } of COMMANDS) {
    test(`npm run ${name} -- ${bad.join(' ')} stops with the reason and the usage`, () => {
      const { status, stderr } = run(script, ...bad);
      assert.equal(status, 2, stderr);
      assert.match(stderr, reason);
      assert.match(stderr, new RegExp(`usage: npm run ${name} -- \\[flags\\]`));
    });
  }
  for (const script of new Set(COMMANDS.map((command) => command.script))) {
    test(`${script} --help prints its usage and exits 0`, () => {
      const { status, stdout } = run(script, '--help');
      assert.equal(status, 0);
      assert.match(stdout, /^usage: npm run \S+ -- \[flags\]\n(.+\n)+$/);
      assert.match(stdout, /--help +this text/);
    });
  }
});
