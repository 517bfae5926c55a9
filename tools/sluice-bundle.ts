/**
 * The `sluice` command bundled from the working tree's sources, for the tests and the bench to spawn. Running
 * the sources through tsx costs each process about a second of loader hooks before it serves (half of a
 * server's start, and the suite starts hundreds); a bundle loads as one plain module. It is made again
 * whenever a source changes (its name is a hash of them), so it never runs stale code.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = new URL('..', import.meta.url).pathname;
/** Everything the bundle is made of: the two packages' sources and manifests (their conditions and imports). */
const INPUTS = [
  'packages/server/src',
  'packages/client/src',
  'packages/server/package.json',
  'packages/client/package.json',
];

function files(path: string): string[] {
  if (!path.endsWith('src')) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function sourcesHash(): string {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((input) => files(join(ROOT, input)))) {
    hash.update(file).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Each module keeps its own `import.meta.url` (the console's files, package.json and the SQLite binding are
 * found from it), so the bundle may live anywhere.
 */
const ownUrls: Plugin = {
  name: 'own-import-meta-url',
  setup(esbuild) {
    esbuild.onLoad({ filter: /\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      return {
        contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
        loader: 'ts',
      };
    });
  },
};

/** The workspace's own packages are bundled from source; every other package is loaded as installed. */
const installedPackagesExternal: Plugin = {
  name: 'installed-packages-external',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^[^./#]/ }, (args) =>
      /^sluice(-client)?(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true },
    );
  },
};

/**
 * Bundles of sources since edited, left behind; a day's grace, as a server still running one may yet load a
 * chunk of it.
 */
function pruneOlderThanADay(cache: string): void {
  const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (statSync(path).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true });
  }
}

/** The bundle's entry point (made now if the sources changed since it was last made). */
export async function sluiceBundle(): Promise<string> {
  // Under node_modules, so that the packages left external resolve as they do for the sources.
  const dir = join(ROOT, 'node_modules', '.cache', 'sluice-bundle', sourcesHash());
  const entry = join(dir, 'main.js');
  if (existsSync(entry)) return entry;
  // Made aside and renamed into place: test files started at once may make it together.
  const making = `${dir}.${process.pid}`;
  await build({
    entryPoints: { main: join(ROOT, 'packages/server/src/cli/main.ts') },
    bundle: true,
    // Each dynamic import stays a chunk of its own, loaded when reached, as with the sources: `serve` on SQLite
    // loads neither the PostgreSQL driver nor the AWS SDK.
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['sluice-source'],
    outdir: making,
    logLevel: 'error',
    plugins: [ownUrls, installedPackagesExternal],
  });
  try {
    renameSync(making, dir);
  } catch (error) {
    // Another process put the same bundle in place first.
    rmSync(making, { recursive: true, force: true });
    if (!existsSync(entry)) throw error;
  }
  pruneOlderThanADay(dirname(dir));
  return entry;
}
