import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { sep } from 'node:path';
import { describe, it } from 'node:test';

const CONSOLE = new URL('../../packages/server/console/', import.meta.url);

/** The console's modules, by the path the server serves them at (/console/pages/queue.js…). */
const modules = readdirSync(CONSOLE, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.js'))
  .map((file) => `/console/${file.split(sep).join('/')}`)
  .sort();

/** The modules a module imports statically, as served paths (JSDoc `@import`s of types are comments). */
function importsOf(path: string): string[] {
  const text = readFileSync(new URL(path.slice('/console/'.length), CONSOLE), 'utf8');
  return [...text.matchAll(/^import\b[^;]*?\bfrom '(\.[^']+)';/gm)].map(
    ([, specifier]) => new URL(specifier!, `http://server${path}`).pathname,
  );
}

describe('the console’s modules', () => {
  it('are all reached from the router, console.js, by their imports', () => {
    const reached = new Set<string>();
    const visit = (path: string) => {
      if (reached.has(path)) return;
      reached.add(path);
      for (const imported of importsOf(path)) visit(imported);
    };
    visit('/console/console.js');
    assert.deepEqual([...reached].sort(), modules);
  });

  it('are all preloaded by index.html, which loads the router, so the browser fetches them at once', () => {
    const page = readFileSync(new URL('index.html', CONSOLE), 'utf8');
    const preloaded = [...page.matchAll(/<link rel="modulepreload" href="([^"]+)" \/>/g)].map(
      ([, href]) => href,
    );
    assert.match(page, /<script type="module" src="\/console\/console\.js"><\/script>/);
    assert.deepEqual(
      preloaded.sort(),
      modules.filter((path) => path !== '/console/console.js'),
    );
  });
});
