/**
 * The layering of the two packages and of the tests and bench around them, checked from their import
 * statements: fails on an import cycle between the packages' source files and on an import across layers that
 * must not know each other; and, with scripts/architecture-doc.ts, fails where docs/architecture.md and the
 * source tree disagree. Run by `npm run arch` (and so by `npm run lint`). `--report` prints the figures
 * (largest files, cycles, cross-layer imports) and exits 0.
 *
 * Layers, by folder under packages/server/src, and what each must not import:
 * - protocol: the wire formats; not the store.
 * - store: persistence; not core, server, protocol or cli.
 * - core: the SQS rules; not server, protocol or cli.
 * - shared: leaf modules (JSON objects, SQS values) every layer may use; nothing of the other layers.
 * - client (packages/client/src): the toolkit; nothing of the server package.
 * - server (packages/server/src): not the toolkit by name (`sluice-client`), and no `sluice-client` in the
 *   server's package.json dependencies, so that the server installs and runs on its own. The toolkit's leaf
 *   modules it runs (the clock, queue ARNs) come through its package.json `imports` (`#toolkit/clock`,
 *   `#toolkit/arn`), built into its own dist/toolkit: docs/decisions/server-standalone.md.
 * - console (packages/server/console, browser modules): nothing outside its folder, which is all the browser
 *   gets (the server's types come in JSDoc `@import`s, which this check does not see and the browser never
 *   loads); its shared/ modules no page and not the router (console.js), its pages not the router.
 * - testcontainers (packages/testcontainers/src): the Testcontainers module; nothing of the server package,
 *   which it only reaches over HTTP, in its image.
 *
 * Around the packages (why: docs/decisions/tests-bench-apart.md):
 * - packages: nothing of test/, bench/, tools/, scripts/ or examples/.
 * - test: not bench/, except a test file (`*.test.ts`) importing the bench code it tests.
 * - bench: not test/.
 * - tools (what the tests and the bench share): neither test/ nor bench/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { architectureDocProblems } from './architecture-doc.ts';

const REPOSITORY = resolve(dirname(new URL(import.meta.url).pathname), '..');

/** What each layer must not import, as folder prefixes relative to the repository. */
const FORBIDDEN: Record<string, readonly string[]> = {
  'packages/server/src/protocol/': ['packages/server/src/store/'],
  'packages/server/src/store/': [
    'packages/server/src/core/',
    'packages/server/src/server/',
    'packages/server/src/protocol/',
    'packages/server/src/cli/',
  ],
  'packages/server/src/core/': [
    'packages/server/src/server/',
    'packages/server/src/protocol/',
    'packages/server/src/cli/',
  ],
  'packages/server/src/shared/': [
    'packages/server/src/core/',
    'packages/server/src/server/',
    'packages/server/src/protocol/',
    'packages/server/src/store/',
    'packages/server/src/cli/',
  ],
  'packages/client/src/': ['packages/server/'],
  'packages/server/src/': ['packages/client/'],
  'packages/server/console/': ['packages/server/src/', 'packages/server/bin/', 'packages/client/'],
  'packages/server/console/shared/': ['packages/server/console/pages/', 'packages/server/console/console.js'],
  'packages/server/console/pages/': ['packages/server/console/console.js'],
  'packages/testcontainers/src/': ['packages/server/'],
  'packages/': ['test/', 'bench/', 'tools/', 'scripts/', 'examples/'],
  'test/': ['bench/'],
  'bench/': ['test/'],
  'tools/': ['test/', 'bench/'],
};

/** A test file may import the bench code it tests (its helpers and runners may not). */
function allowedAfterAll(from: string, target: string): boolean {
  return from.startsWith('test/') && from.endsWith('.test.ts') && target.startsWith('bench/');
}

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if ((name.endsWith('.ts') && !name.endsWith('.d.ts')) || name.endsWith('.js')) files.push(path);
  }
  return files;
}

// Static imports and re-exports, type-only ones included: a type import is still a dependency of the design.
const IMPORT = /^\s*(?:import|export)\s[^'";]*?from\s+'([^']+)'/gm;
const SIDE_EFFECT_IMPORT = /^\s*import\s+'([^']+)'/gm;

/**
 * The files a file imports, relative to the repository; a package by name (the server `sluice`, the toolkit
 * `sluice-client`) resolves to its folder.
 */
function importsOf(root: string, file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const targets: string[] = [];
  for (const pattern of [IMPORT, SIDE_EFFECT_IMPORT]) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[1]!;
      if (specifier.startsWith('.')) targets.push(relative(root, resolve(dirname(file), specifier)));
      else if (specifier === 'sluice' || specifier.startsWith('sluice/')) targets.push('packages/server/');
      else if (specifier === 'sluice-client' || specifier.startsWith('sluice-client/'))
        targets.push('packages/client/');
    }
  }
  return targets;
}

interface Figures {
  largest: [string, number][];
  cycles: string[][];
  crossLayer: string[];
}

/** The figures of the repository at `root` (this one by default). */
export function measure(root = REPOSITORY): Figures {
  const sourcesOf = (dir: string) => (existsSync(join(root, dir)) ? sourceFiles(join(root, dir)) : []);
  const packageFiles = new Set(
    [
      'packages/server/src',
      'packages/client/src',
      'packages/server/console',
      'packages/testcontainers/src',
    ].flatMap(sourcesOf),
  );
  const graph = new Map<string, string[]>();
  const lines: [string, number][] = [];
  const crossLayer: string[] = [];
  for (const file of [...packageFiles, ...['test', 'bench', 'tools'].flatMap(sourcesOf)]) {
    const from = relative(root, file);
    const targets = importsOf(root, file);
    // Cycles and sizes are the packages' figures.
    if (packageFiles.has(file)) {
      graph.set(
        from,
        targets.filter((target) => target.endsWith('.ts') || target.endsWith('.js')),
      );
      lines.push([from, readFileSync(file, 'utf8').split('\n').length - 1]);
    }
    for (const [layer, forbidden] of Object.entries(FORBIDDEN)) {
      if (!from.startsWith(layer)) continue;
      for (const target of targets)
        if (forbidden.some((prefix) => target.startsWith(prefix)) && !allowedAfterAll(from, target))
          crossLayer.push(`${from} -> ${target}`);
    }
  }
  crossLayer.push(...serverManifestProblems(root));
  lines.sort(([, a], [, b]) => b - a);
  return { largest: lines.slice(0, 10), cycles: cyclesOf(graph), crossLayer };
}

/** The server's package.json naming the toolkit as a dependency of any kind: its install would need it. */
function serverManifestProblems(root: string): string[] {
  const path = join(root, 'packages', 'server', 'package.json');
  if (!existsSync(path)) return [];
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  return ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies']
    .filter((field) => {
      const value = manifest[field];
      return Array.isArray(value)
        ? value.includes('sluice-client')
        : typeof value === 'object' && value !== null && 'sluice-client' in value;
    })
    .map((field) => `packages/server/package.json ${field} -> packages/client/`);
}

/** Every strongly connected component of more than one file (Tarjan), each a set of files importing in a ring. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components;
}

/**
 * Prints the figures with --report; else fails (exit 1) on any cycle or cross-layer import, or where
 * docs/architecture.md and the source tree disagree.
 */
function main(): void {
  const figures = measure();
  const docProblems = architectureDocProblems(REPOSITORY);
  if (process.argv.includes('--report')) {
    console.log('Largest files:');
    for (const [file, count] of figures.largest) console.log(`  ${String(count).padStart(5)} ${file}`);
    console.log(`Import cycles: ${figures.cycles.length}`);
    for (const cycle of figures.cycles) console.log(`  ${cycle.join(' <-> ')}`);
    console.log(`Cross-layer imports: ${figures.crossLayer.length}`);
    for (const line of figures.crossLayer) console.log(`  ${line}`);
    console.log(`docs/architecture.md against the tree: ${docProblems.length}`);
    for (const problem of docProblems) console.log(`  ${problem}`);
  } else {
    for (const cycle of figures.cycles) console.error(`import cycle: ${cycle.join(' <-> ')}`);
    for (const line of figures.crossLayer) console.error(`cross-layer import: ${line}`);
    for (const problem of docProblems) console.error(problem);
    if (figures.cycles.length > 0 || figures.crossLayer.length > 0 || docProblems.length > 0) process.exit(1);
    console.log(
      'arch: no import cycles, no cross-layer imports; docs/architecture.md names every source file',
    );
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) main();
