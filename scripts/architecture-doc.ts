/**
 * docs/architecture.md checked against the source tree, so that it cannot drift: every source file of a
 * package (`packages/<name>/src/**.ts`) is named in backticks in the section of the folder it lives in, by its
 * path from that folder (`event-filter/matcher.ts` in the Core section), and every TypeScript file the page
 * names in backticks exists. Run by `npm run arch`.
 *
 * A section starts with a paragraph that opens with a bold name and its folder, **Core**
 * (`packages/server/src/core/`), and runs to the next section or heading; a file belongs to the section of the
 * deepest folder holding it. A name is looked for under, in turn: the section's folder, the folder of the
 * name before it in the same paragraph or table row (`server/auth/sigv4.ts`, `access.ts`), the package's src
 * (packages/server/src outside a section, as the rule table writes `core/fifo.ts`) and the repository root.
 * Fenced code blocks (the overview diagrams) are not read.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';

const DOC = 'docs/architecture.md';
const SECTION_START = /^\*\*([^*]+)\*\* \(`([^`]+\/)`\)/;
/** A name in backticks that is a TypeScript file or a folder: `core/fifo.ts`, `sqlite/`, `test/store/`. */
const NAME = /`([\w.-]+(?:\/[\w.-]+)*(?:\.ts|\/))`/g;

interface Section {
  title: string;
  /** Relative to the repository, ending in `/`. */
  folder: string;
  /** The names the section gives, as written. */
  names: Set<string>;
}

/** What is wrong with docs/architecture.md at `root`, one line each: empty when it matches the tree. */
export function architectureDocProblems(root: string): string[] {
  if (!existsSync(join(root, DOC))) return [`${DOC} is missing`];
  const { sections, problems } = readDoc(root);
  for (const file of packageSources(root)) {
    const home = sections
      .filter((section) => file.startsWith(section.folder))
      .sort((a, b) => b.folder.length - a.folder.length)[0];
    if (!home) {
      problems.push(
        `${DOC}: ${file} is in no section: add a paragraph starting **Name** (\`${posix.dirname(file)}/\`) that names \`${posix.basename(file)}\``,
      );
    } else if (!home.names.has(file.slice(home.folder.length))) {
      problems.push(
        `${DOC}: ${file} is not named in the ${home.title} section (${home.folder}): add \`${file.slice(home.folder.length)}\` to it`,
      );
    }
  }
  return problems;
}

/** The page's sections with the names each gives, and the names that are no file. */
function readDoc(root: string): { sections: Section[]; problems: string[] } {
  const sections: Section[] = [];
  const problems: string[] = [];
  let section: Section | undefined;
  let inCode = false;
  let previousFolder: string | undefined;
  const lines = readFileSync(join(root, DOC), 'utf8').split('\n');
  for (const [index, line] of lines.entries()) {
    if (line.startsWith('```')) inCode = !inCode;
    if (inCode) continue;
    if (line.trim() === '' || line.startsWith('|')) previousFolder = undefined;
    if (line.startsWith('#')) section = undefined;
    const start = SECTION_START.exec(line);
    if (start) {
      section = { title: start[1]!, folder: start[2]!, names: new Set() };
      sections.push(section);
    }
    for (const match of line.matchAll(NAME)) {
      const name = match[1]!;
      section?.names.add(name);
      const bases = [
        ...new Set([section?.folder, previousFolder, packageSourceOf(section?.folder), '']),
      ].filter((base): base is string => base !== undefined);
      const found = bases.map((base) => posix.join(base, name)).find((path) => existsSync(join(root, path)));
      if (found !== undefined) previousFolder = name.endsWith('/') ? found : `${posix.dirname(found)}/`;
      // A folder that is not there (`dist/`, built) is only no context for the names after it.
      else if (!name.endsWith('/')) {
        const where = section ? `the ${section.title} section` : 'no section';
        const looked = bases.map((base) => base || 'the repository root').join(', ');
        problems.push(`${DOC}:${index + 1} (${where}) names \`${name}\`, which is not under ${looked}`);
      }
    }
  }
  return { sections, problems };
}

/** The package src folder holding `folder` (`packages/client/src/`), or the server's. */
function packageSourceOf(folder: string | undefined): string {
  return /^packages\/[^/]+\/src\//.exec(folder ?? '')?.[0] ?? 'packages/server/src/';
}

/** The .ts sources of every package, relative to the repository. */
function packageSources(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(relative(root, path));
    }
  };
  const packages = join(root, 'packages');
  for (const name of existsSync(packages) ? readdirSync(packages) : []) {
    if (existsSync(join(packages, name, 'src'))) walk(join(packages, name, 'src'));
  }
  return files.sort();
}
