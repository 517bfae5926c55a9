import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readServeArgs, serveHelp } from '../../packages/server/src/cli/serve-args.ts';
import { SERVE_FLAG_LIST } from '../../packages/server/src/server/serve-flags.ts';
import { FLAGS_PAGE, withServeFlags } from '../../scripts/serve-flags-doc.ts';

/** `sluice serve`'s flags come from one table (server/serve-flags.ts); these check what is made from it. */
describe('the serve flag table', () => {
  it('is what docs/guide/cli.md lists (npm run docs:flags writes it)', () => {
    const page = readFileSync(new URL(`../../${FLAGS_PAGE}`, import.meta.url), 'utf8');
    assert.equal(page, withServeFlags(page), `${FLAGS_PAGE} differs from the table: run npm run docs:flags`);
  });

  it('is what --help lists, each flag with its default and variable', () => {
    const help = serveHelp();
    for (const flag of SERVE_FLAG_LIST) {
      assert.match(help, new RegExp(`\\n  (-\\w, )?--${flag.name}[ \\n]`), flag.name);
      if (flag.env !== undefined) assert.match(help, new RegExp(`\\n  ${flag.env}=\\S+ +as --${flag.name}`));
    }
    assert.match(help, /--port N +TCP port; 0 picks a free one \(default: 9324\)/);
    assert.match(help, /--redrive-rate N .*also "redrive.defaultRate" in --config \(default: 100\)/s);
  });

  it('makes the options from flags, and from variables where no flag is given', () => {
    const { options, fromEnvironment } = readServeArgs(
      [
        '--port',
        '0',
        '--redrive-rate',
        '7',
        '--headers-timeout',
        '3',
        '--credentials',
        'AKID:s',
        '--no-metrics',
      ],
      { SLUICE_HOST: '0.0.0.0', SLUICE_INSECURE: 'true', SLUICE_CONFIG: '/etc/sluice.json', SLUICE_DATA: '' },
    );
    assert.deepEqual(options, {
      port: 0,
      host: '0.0.0.0',
      insecure: true,
      configFile: '/etc/sluice.json',
      redrive: { defaultRate: 7 },
      connections: { headersTimeoutMs: 3000 },
      credentials: [{ accessKeyId: 'AKID', secretAccessKey: 's' }],
      metrics: false,
    });
    assert.deepEqual([...fromEnvironment].sort(), ['config', 'host', 'insecure']);
    const flagWins = readServeArgs(['--host', '127.0.0.2', '--in-memory'], {
      SLUICE_HOST: '0.0.0.0',
      SLUICE_DATA: '/data',
    });
    assert.deepEqual(flagWins.options, { host: '127.0.0.2', dataDir: ':memory:' });
  });

  it('refuses bad values and clashes with one line naming the flag or the variable', () => {
    for (const [args, env, message] of [
      [['--port', '70000'], {}, '--port must be an integer from 0 to 65535'],
      [['--log-format', 'yaml'], {}, '--log-format must be one of text, json'],
      [[], { SLUICE_LOG_FORMAT: 'yaml' }, 'SLUICE_LOG_FORMAT: --log-format must be one of text, json'],
      [[], { SLUICE_INSECURE: 'yes' }, 'SLUICE_INSECURE must be 1, true, 0 or false, not "yes"'],
      [['--in-memory', '--durability', 'full'], {}, '--durability has no meaning with --in-memory'],
      [['--durability', 'full'], { SLUICE_DATA: ':memory:' }, '--durability has no meaning with --in-memory'],
      [['--tls-cert', '/nonexistent.pem'], {}, '--tls-cert and --tls-key go together'],
    ] as const) {
      assert.throws(() => readServeArgs([...args], env), { message: new RegExp(`^${message}`) }, message);
    }
  });
});
