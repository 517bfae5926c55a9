import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';

/**
 * The store carries out what the core decides: it may import nothing from the core, the protocol or the
 * server, so that its types and rules cannot depend on theirs (the core imports the store's contract).
 */
const STORE = resolve(import.meta.dirname, '../../packages/server/src/store');
const OUTSIDE = resolve(STORE, '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('store/ imports nothing from the rest of the server', () => {
  const offending: string[] = [];
  for (const file of sources(STORE)) {
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const target = resolve(file, '..', specifier!);
      if (target.startsWith(OUTSIDE) && !target.startsWith(STORE))
        offending.push(`${relative(OUTSIDE, file)} imports ${relative(OUTSIDE, target)}`);
    }
  }
  assert.deepEqual(offending, []);
});
