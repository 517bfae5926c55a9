import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SLUICE_CLI } from './server.ts';

/** A fenced code block of a Markdown page: its info string (`sh`, `ts`, ...) and its text. */
export interface CodeBlock {
  readonly lang: string;
  readonly code: string;
}

const ROOT = new URL('../..', import.meta.url).pathname;

/** The page's text, by path from the repository root. */
export function readDoc(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/**
 * The fenced blocks under the heading whose text is `heading` (any level), up to the next heading of the
 * same or a higher level. A missing heading throws, so a renamed section fails the test instead of running
 * nothing.
 */
export function sectionBlocks(markdown: string, heading: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, '') === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const blocks: CodeBlock[] = [];
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of lines.slice(start + 1)) {
    if (open) {
      if (line.startsWith('```')) {
        blocks.push({ lang: open.lang, code: open.lines.join('\n') });
        open = undefined;
      } else open.lines.push(line);
      continue;
    }
    const heading = /^(#{1,6}) /.exec(line);
    if (heading && heading[1]!.length <= level) break;
    const fence = /^```(\S*)/.exec(line);
    if (fence) open = { lang: fence[1]!, lines: [] };
  }
  return blocks;
}

/** What one block did, for the test's failure message. */
export interface BlockRun {
  readonly lang: string;
  readonly code: string;
  readonly exitCode: number | null;
  readonly output: string;
}

export interface DocSession {
  /** The scratch directory the blocks run in (inside the checkout's .tmp/). */
  readonly dir: string;
  /** Runs one block; resolves with its outcome whatever it is, so the caller's assertion shows the output. */
  run(block: CodeBlock): Promise<BlockRun>;
  /** The environment as the blocks left it (their exports). */
  env(): Record<string, string>;
  close(): void;
}

/** The default endpoint the docs write, replaced by the endpoint of the server the test started. */
export const DOCS_ENDPOINT = 'http://127.0.0.1:9324';
const BLOCK_TIMEOUT_MS = 120_000;

/**
 * Runs a page's blocks in order as a reader would in one terminal, against `endpoint`: `sh` blocks with
 * bash (`set -euo pipefail`; exports carry over to later blocks, as in one shell), `ts` blocks as modules
 * with `node --conditions=sluice-source --import tsx` (so 'sluice-client' is the working tree), in a scratch
 * directory inside the checkout. The only rewrite is the endpoint: every `http://127.0.0.1:9324` becomes
 * the started server's, and a block that still names port 9324 afterwards is refused, so no block can reach
 * some other server on the default port. `npx sluice ...` runs the CLI from the sources, as the tests do.
 * The blocks start with no AWS_* variables and no AWS config files: credentials and region come from the
 * blocks, as the docs tell readers to set them. `extraEnv` stands for variables a page asks the reader to
 * set (a database URL).
 */
export function docSession(endpoint: string, extraEnv: Record<string, string> = {}): DocSession {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.tmp', 'docs-'));
  const envFile = join(dir, '.env-after-block');
  let env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('AWS_')) env[name] = value;
  }
  env.AWS_CONFIG_FILE = join(dir, 'no-aws-config');
  env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'no-aws-credentials');
  env.AWS_PAGER = '';
  Object.assign(env, extraEnv);
  let count = 0;

  const exec = (command: string, args: string[]): Promise<{ exitCode: number | null; output: string }> =>
    new Promise((resolve) => {
      const child = spawn(command, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      const timer = setTimeout(() => {
        output += `\n[killed after ${BLOCK_TIMEOUT_MS / 1000} s]`;
        child.kill('SIGKILL');
      }, BLOCK_TIMEOUT_MS);
      child.once('close', (exitCode) => {
        clearTimeout(timer);
        resolve({ exitCode, output });
      });
    });

  return {
    dir,
    async run(block) {
      const code = block.code.replaceAll(DOCS_ENDPOINT, endpoint);
      if (/\b9324\b/.test(code)) {
        return {
          ...block,
          exitCode: null,
          output: 'the block names port 9324 in a form the test cannot redirect',
        };
      }
      count += 1;
      if (block.lang === 'ts') {
        const file = join(dir, `block-${count}.ts`);
        writeFileSync(file, code);
        const outcome = await exec(process.execPath, ['--conditions=sluice-source', '--import', 'tsx', file]);
        return { ...block, ...outcome };
      }
      if (block.lang !== 'sh') throw new Error(`cannot run a ${block.lang || 'plain'} block`);
      const script = [
        'set -euo pipefail',
        `npx() { if [ "$1" = sluice ]; then shift; ${[process.execPath, ...SLUICE_CLI].map(quote).join(' ')} "$@"; else command npx "$@"; fi; }`,
        code,
        `env -0 > ${quote(envFile)}`,
      ].join('\n');
      const outcome = await exec('bash', ['-c', script]);
      if (outcome.exitCode === 0) env = parseEnv(readFileSync(envFile, 'utf8'));
      return { ...block, ...outcome };
    },
    env: () => ({ ...env }),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function quote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of text.split('\0')) {
    const equals = entry.indexOf('=');
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return env;
}
