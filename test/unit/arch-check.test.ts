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

  it('finds imports across layers, and the toolkit importing the server by name', () => {
    const figures = made({
      'packages/server/src/core/rule.ts': "import { render } from '../protocol/json.ts';\n",
      'packages/server/src/protocol/json.ts': "import type { Store } from '../store/contract.ts';\n",
      'packages/server/src/store/contract.ts': "import { errors } from '../core/errors.ts';\n",
      'packages/server/src/server/front.ts': "import { rule } from '../core/rule.ts';\n",
      'packages/client/src/consumer.ts': "import { SqsService } from 'sluice';\n",
    });
    assert.deepEqual(figures.crossLayer.sort(), [
      'packages/client/src/consumer.ts -> packages/server/',
      'packages/server/src/core/rule.ts -> packages/server/src/protocol/json.ts',
      'packages/server/src/protocol/json.ts -> packages/server/src/store/contract.ts',
      'packages/server/src/store/contract.ts -> packages/server/src/core/errors.ts',
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

  it('passes this repository', () => {
    const figures = measure();
    assert.deepEqual(figures.cycles, []);
    assert.deepEqual(figures.crossLayer, []);
  });
});
