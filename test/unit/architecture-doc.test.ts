import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { architectureDocProblems } from '../../scripts/architecture-doc.ts';

const SOURCES = [
  'packages/server/src/index.ts',
  'packages/server/src/core/fifo.ts',
  'packages/server/src/core/message-filter.ts',
  'packages/server/src/core/event-filter/matcher.ts',
  'packages/server/src/server/auth/sigv4.ts',
  'packages/server/src/server/auth/access.ts',
  'packages/server/src/cli/main.ts',
  'packages/client/src/consumer.ts',
  'scripts/gen-model.ts',
];

/** The page that names every file of SOURCES where it belongs. */
const AGREEING = `# Architecture

\`\`\`
core/actions.ts   the diagram is not read: \`core/gone.ts\`
\`\`\`

## The layers

**Core** (\`packages/server/src/core/\`): \`fifo.ts\`, \`message-filter.ts\`, and \`event-filter/\`, whose
\`event-filter/matcher.ts\` matches; the model comes from \`scripts/gen-model.ts\`, built into \`dist/\`.

**Server** (\`packages/server/src/server/\`): \`auth/sigv4.ts\` and \`auth/access.ts\`.

**CLI** (\`packages/server/src/cli/\`): \`main.ts\`, with the core's \`core/message-filter.ts\`.

**Embedding** (\`packages/server/src/\`): \`index.ts\`.

**Toolkit** (\`packages/client/src/\`): \`consumer.ts\`.

## Where each rule lives

| Rule | Where |
| --- | --- |
| FIFO | \`core/fifo.ts\` |
| Signatures | \`server/auth/sigv4.ts\`, \`access.ts\` |
`;

describe('docs/architecture.md against the source tree', () => {
  const roots: string[] = [];
  after(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });
  /** The problems of a repository holding SOURCES (and `extra`), with `doc` as its docs/architecture.md. */
  const problemsOf = (doc: string, extra: string[] = []): string[] => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-arch-doc-'));
    roots.push(root);
    for (const path of [...SOURCES, ...extra, 'docs/architecture.md']) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), path === 'docs/architecture.md' ? doc : 'export {};\n');
    }
    return architectureDocProblems(root);
  };

  it('passes a page that names every source file in the section of its folder', () => {
    assert.deepEqual(problemsOf(AGREEING), []);
  });

  it('says which new file is missing from which section', () => {
    assert.deepEqual(
      problemsOf(AGREEING, [
        'packages/server/src/cli/dlq.ts',
        'packages/server/src/core/event-filter/wildcard.ts',
        'packages/client/src/outbox/relay.ts',
      ]),
      [
        'docs/architecture.md: packages/client/src/outbox/relay.ts is not named in the Toolkit section (packages/client/src/): add `outbox/relay.ts` to it',
        'docs/architecture.md: packages/server/src/cli/dlq.ts is not named in the CLI section (packages/server/src/cli/): add `dlq.ts` to it',
        'docs/architecture.md: packages/server/src/core/event-filter/wildcard.ts is not named in the Core section (packages/server/src/core/): add `event-filter/wildcard.ts` to it',
      ],
    );
  });

  it('says where a package with no section of its own needs one', () => {
    assert.deepEqual(problemsOf(AGREEING, ['packages/testcontainers/src/index.ts']), [
      'docs/architecture.md: packages/testcontainers/src/index.ts is in no section: add a paragraph starting **Name** (`packages/testcontainers/src/`) that names `index.ts`',
    ]);
  });

  it('finds a name listed under a folder it does not live in, and a name that is no file', () => {
    const doc = AGREEING.replace(
      '`main.ts`, with the core',
      '`main.ts`, `redrive.ts` with `message-filter.ts`, with the core',
    ).replace('| FIFO | `core/fifo.ts` |', '| FIFO | `core/fifo.ts`, `core/sequence.ts` |');
    assert.deepEqual(problemsOf(doc, ['packages/server/src/cli/redrive.ts']), [
      'docs/architecture.md:14 (the CLI section) names `message-filter.ts`, which is not under packages/server/src/cli/, packages/server/src/, the repository root',
      'docs/architecture.md:24 (no section) names `core/sequence.ts`, which is not under packages/server/src/core/, packages/server/src/, the repository root',
    ]);
  });

  it('counts a file of a subfolder as named only with its folder', () => {
    // `matcher.ts` after `event-filter/` is a file there, but the Core section must name it by its path.
    const doc = AGREEING.replace('`event-filter/matcher.ts` matches', '`matcher.ts` matches');
    assert.deepEqual(problemsOf(doc), [
      'docs/architecture.md: packages/server/src/core/event-filter/matcher.ts is not named in the Core section (packages/server/src/core/): add `event-filter/matcher.ts` to it',
    ]);
  });

  it('passes this repository', () => {
    assert.deepEqual(architectureDocProblems(join(import.meta.dirname, '../..')), []);
  });
});
