import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, test } from 'node:test';

/** Every page is in an index, and every relative link and anchor in the documentation leads somewhere. */

const ROOT = new URL('../..', import.meta.url).pathname;

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const PAGES = ['README.md', 'bench/README.md', ...markdownFiles('docs')];

/** The page's text without its fenced code blocks, where `](` is code, not a link. */
function prose(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8').replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

function links(path: string): Array<{ target: string; anchor: string | undefined }> {
  return [...prose(path).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((href) => !/^[a-z]+:/.test(href))
    .map((href) => {
      const [file, anchor] = href.split('#');
      return { target: file ? relative(ROOT, join(ROOT, dirname(path), file)) : path, anchor };
    });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(path: string): Set<string> {
  return new Set(
    [...prose(path).matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('the documentation', () => {
  test('every relative link leads to a file, and every anchor to a heading', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const { target, anchor } of links(page)) {
        if (!existsSync(join(ROOT, target))) {
          broken.push(`${page}: ${target}`);
        } else if (anchor !== undefined && target.endsWith('.md') && !anchors(target).has(anchor)) {
          broken.push(`${page}: ${target}#${anchor}`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  test('docs/README.md links every page, docs/decisions/README.md every decision', () => {
    const linked = (index: string) => new Set(links(index).map((l) => l.target));
    const docsIndex = linked('docs/README.md');
    const decisionsIndex = linked('docs/decisions/README.md');
    const unlisted = markdownFiles('docs').filter((page) =>
      page.startsWith('docs/decisions/')
        ? page !== 'docs/decisions/README.md' && !decisionsIndex.has(page)
        : page !== 'docs/README.md' && !docsIndex.has(page),
    );
    assert.deepEqual(unlisted, []);
  });
});
