import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { measure } from '../../scripts/arch-check.ts';

/** A repository of the given files (path -> text), in a temporary directory. */
function repository(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'sluice-arch-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('npm run arch', () => {
  const roots: string[] = [];
  after(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });
  const made = (files: Record<string, string>) => {
    const root = repository(files);
    roots.push(root);
    return measure(root);
  };

  it('finds an import cycle, type-only imports included', () => {
    const figures = made({
      'packages/server/src/core/a.ts': "import type { B } from './b.ts';\nexport type A = B;\n",
      'packages/server/src/core/b.ts': "import { a } from './a.ts';\nexport const b = a;\n",
      'packages/server/src/core/c.ts': "import { b } from './b.ts';\n",
    });
    assert.deepEqual(figures.cycles, [['packages/server/src/core/a.ts', 'packages/server/src/core/b.ts']]);
    assert.deepEqual(figures.crossLayer, []);
  });

  it('finds imports across layers, and the toolkit or the Testcontainers module importing the server by name', () => {
    const figures = made({
      'packages/server/src/core/rule.ts': "import { render } from '../protocol/json.ts';\n",
      'packages/server/src/protocol/json.ts': "import type { Store } from '../store/contract.ts';\n",
      'packages/server/src/store/contract.ts': "import { errors } from '../core/errors.ts';\n",
      'packages/server/src/server/front.ts': "import { rule } from '../core/rule.ts';\n",
      'packages/client/src/consumer.ts': "import { SqsService } from 'sluice';\n",
      'packages/testcontainers/src/index.ts': "import { startSluice } from 'sluice';\n",
    });
    assert.deepEqual(figures.crossLayer.sort(), [
      'packages/client/src/consumer.ts -> packages/server/',
      'packages/server/src/core/rule.ts -> packages/server/src/protocol/json.ts',
      'packages/server/src/protocol/json.ts -> packages/server/src/store/contract.ts',
      'packages/server/src/store/contract.ts -> packages/server/src/core/errors.ts',
      'packages/testcontainers/src/index.ts -> packages/server/',
    ]);
  });

  it('keeps the toolkit out of the server: no import of sluice-client, no dependency on it; #toolkit/ imports pass', () => {
    const figures = made({
      'packages/server/src/core/timers.ts':
        "import type { Clock } from 'sluice-client/clock';\nimport { settle } from '#toolkit/clock';\n",
      'packages/server/src/cli/endpoint.ts': "export { parseQueueArn } from 'sluice-client';\n",
      'packages/server/src/core/queues.ts': "import { formatQueueArn } from '#toolkit/arn';\n",
      'packages/server/package.json': JSON.stringify({
        name: 'sluice',
        dependencies: { pg: '^8.0.0', 'sluice-client': '0.1.0' },
        peerDependencies: { 'sluice-client': '*' },
      }),
      'packages/testcontainers/src/index.ts': "import { advanceClock } from 'sluice-client/testing';\n",
    });
    assert.deepEqual(figures.crossLayer.sort(), [
      'packages/server/package.json dependencies -> packages/client/',
      'packages/server/package.json peerDependencies -> packages/client/',
      'packages/server/src/cli/endpoint.ts -> packages/client/',
      'packages/server/src/core/timers.ts -> packages/client/',
    ]);
  });

  it('keeps the console in its folder, its shared modules apart from the pages, and finds its cycles', () => {
    const figures = made({
      'packages/server/console/console.js': "import { queuePage } from './pages/queue.js';\n",
      'packages/server/console/pages/queue.js':
        "import { api } from '../shared/api.js';\nimport { route } from '../console.js';\n",
      'packages/server/console/shared/api.js':
        "import { SqsError } from '../../src/core/errors.ts';\nimport { queuePage } from '../pages/queue.js';\n",
      'packages/server/console/shared/dom.js': "import { say } from './status.js';\n",
      'packages/server/console/shared/status.js':
        "/** @import { Page } from '../../src/server/page.ts' */\nimport { h } from './dom.js';\n",
    });
    assert.deepEqual(figures.crossLayer.sort(), [
      'packages/server/console/pages/queue.js -> packages/server/console/console.js',
      'packages/server/console/shared/api.js -> packages/server/console/pages/queue.js',
      'packages/server/console/shared/api.js -> packages/server/src/core/errors.ts',
    ]);
    assert.deepEqual(figures.cycles.map((cycle) => cycle.sort()).sort(), [
      [
        'packages/server/console/console.js',
        'packages/server/console/pages/queue.js',
        'packages/server/console/shared/api.js',
      ],
      ['packages/server/console/shared/dom.js', 'packages/server/console/shared/status.js'],
    ]);
  });

  it('keeps the tests and the bench apart, tools/ out of both, and the packages out of all of them', () => {
    const figures = made({
      // The test helpers and runners use tools/, never the bench; a test file may import the bench code it tests.
      'test/helpers/server.ts': "import { listeningUrl } from '../../bench/listening.ts';\n",
      'test/chaos/run.ts': "import { commandFlags } from '../../bench/args.ts';\n",
      'test/helpers/moto.ts': "import { freePort } from '../../tools/free-port.ts';\n",
      'test/unit/cpu-stages.test.ts': "import { stageOf } from '../../bench/cpu-stages.ts';\n",
      'test/integration/cli.test.ts':
        "import { startSluice } from 'sluice';\nimport { alive } from '../../tools/processes.ts';\n",
      // The bench uses tools/ and the packages, never test/ (its installed peers are not read).
      'bench/consumer.ts': "import { answeredRequests } from '../test/helpers/metrics.ts';\n",
      'bench/peers/run.ts': "import type { Options } from '../../test/helpers/server.ts';\n",
      'bench/postgres.ts': "import { freshDatabase } from '../tools/postgres.ts';\n",
      'bench/node_modules/peer/index.ts': "import '../../../test/helpers/server.ts';\n",
      'tools/postgres.ts': "import type { StoreFactory } from '../test/contract/harness.ts';\n",
      'tools/listening.ts': "export { USAGE } from '../bench/args.ts';\n",
      'packages/server/src/server/test-mode.ts':
        "import { freePort } from '../../../../tools/free-port.ts';\n",
      'packages/server/src/cli/main.ts': "import { USAGE } from '../../../../bench/args.ts';\n",
      'packages/client/src/testing.ts': "import { startServer } from '../../../test/helpers/server.ts';\n",
      'packages/client/src/producer.ts': "import { judge } from '../../../scripts/bench-docs.ts';\n",
    });
    assert.deepEqual(figures.crossLayer.sort(), [
      'bench/consumer.ts -> test/helpers/metrics.ts',
      'bench/peers/run.ts -> test/helpers/server.ts',
      'packages/client/src/producer.ts -> scripts/bench-docs.ts',
      'packages/client/src/testing.ts -> test/helpers/server.ts',
      'packages/server/src/cli/main.ts -> bench/args.ts',
      'packages/server/src/server/test-mode.ts -> tools/free-port.ts',
      'test/chaos/run.ts -> bench/args.ts',
      'test/helpers/server.ts -> bench/listening.ts',
      'tools/listening.ts -> bench/args.ts',
      'tools/postgres.ts -> test/contract/harness.ts',
    ]);
    assert.deepEqual(figures.cycles, []);
  });

  it('passes this repository', () => {
    const figures = measure();
    assert.deepEqual(figures.cycles, []);
    assert.deepEqual(figures.crossLayer, []);
  });
});
