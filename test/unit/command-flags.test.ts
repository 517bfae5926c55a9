import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

/**
 * The commands run by hand read their flags the same way (tools/flags.ts, flagsOf): --help prints the usage,
 * and a flag that is unknown or has a bad value stops the command before any work, with exit 2. A number
 * that is not one used to become NaN: `--kills abc` ran no kill at all and passed; `npm run bench` named a
 * bad flag without its usage.
 */
const COMMANDS = [
  {
    script: 'test/chaos/run.ts',
    usage: 'npm run test:chaos --',
    bad: ['--kills', 'abc'],
    reason: /--kills needs a positive integer/,
  },
  {
    script: 'test/chaos/powercut/run.ts',
    usage: 'npm run test:powercut --',
    bad: ['--keep', '2'],
    reason: /--keep needs a number from 0 to 1/,
  },
  {
    script: 'test/chaos/run.ts',
    usage: 'npm run test:chaos --',
    bad: ['--modes', 'full,fast'],
    reason: /unknown mode fast/,
  },
  {
    script: 'bench/outbox-latency.ts',
    usage: 'npm run bench:outbox --',
    bad: ['--poll-ms', '0'],
    reason: /--poll-ms needs a positive integer/,
  },
  {
    script: 'scripts/bench-docs.ts',
    usage: 'npm run bench:docs --',
    bad: ['--recrod', 'x.json'],
    reason: /Unknown option '--recrod'/,
  },
  {
    script: 'bench/run.ts',
    usage: 'npm run bench --',
    bad: ['--messages', '0'],
    reason: /--messages needs a positive integer/,
  },
  {
    script: 'bench/run.ts',
    usage: 'npm run bench -- --peers',
    bad: ['--peers', '--wake', 'many'],
    reason: /--wake needs a positive integer/,
  },
  {
    script: 'bench/run.ts',
    usage: 'npm run bench -- --cpu-stages',
    bad: ['--cpu-stages', '--profile'],
    reason: /Unknown option '--profile'/,
  },
  {
    script: 'bench/soak.ts',
    usage: 'npm run soak --',
    bad: ['--minutes', 'ten'],
    reason: /--minutes needs a positive number/,
  },
];

const run = (script: string, ...flags: string[]) =>
  spawnSync(process.execPath, ['--conditions=sluice-source', '--import', 'tsx', script, ...flags], {
    encoding: 'utf8',
    timeout: 30_000,
  });

describe('flags of the commands run by hand', () => {
  test('npm run bench:docs -- --record with a file that is no result names the file and why, without a stack', () => {
    const { status, stderr } = run('scripts/bench-docs.ts', '--record', 'package.json');
    assert.equal(status, 2, stderr);
    assert.match(stderr, /^package\.json: not a bench \(latest\.json\), peers .* result\n$/);
  });
  for (const { script, usage, bad, reason } of COMMANDS) {
    test(`${usage} ${bad.join(' ')} stops with the reason and the usage`, () => {
      const { status, stderr } = run(script, ...bad);
      assert.equal(status, 2, stderr);
      assert.match(stderr, reason);
      assert.ok(stderr.includes(`usage: ${usage} [flags]\n`), stderr);
    });
  }
  for (const { script, usage } of new Map(COMMANDS.map((command) => [command.usage, command])).values()) {
    // `npm run bench -- --peers`: the flags after `--` that pick the mode come before --help.
    const mode = usage.split(' -- ')[1]?.split(' ') ?? [];
    test(`${usage} --help prints its usage and exits 0`, () => {
      const { status, stdout } = run(script, ...mode, '--help');
      assert.equal(status, 0);
      assert.ok(stdout.startsWith(`usage: ${usage} [flags]\n`), stdout);
      assert.match(stdout, /--help +this text\n$/);
    });
  }
});
