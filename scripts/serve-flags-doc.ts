/**
 * The flag list of `sluice serve` in docs/guide/cli.md, made from the flag table
 * (packages/server/src/server/serve-flags.ts), between two markers. `npm run docs:flags` writes it;
 * test/unit/serve-flags.test.ts fails while the page differs from what this makes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SERVE_FLAG_LIST, type ServeFlag } from '../packages/server/src/server/serve-flags.ts';

const REPOSITORY = resolve(dirname(new URL(import.meta.url).pathname), '..');
export const FLAGS_PAGE = 'docs/guide/cli.md';
const START =
  '<!-- serve flags: made from packages/server/src/server/serve-flags.ts by `npm run docs:flags`; edit them there -->';
const END = '<!-- end of serve flags -->';

function option(flag: ServeFlag): string {
  const long = `\`--${flag.name}${flag.value === undefined ? '' : ` ${flag.value}`}\``;
  return flag.short === undefined ? long : `\`-${flag.short}\`, ${long}`;
}

function elsewhere(flag: ServeFlag): string {
  return [
    ...(flag.env === undefined ? [] : [`\`${flag.env}\``]),
    ...(flag.configKey === undefined ? [] : [`config \`${flag.configKey}\``]),
  ].join(', ');
}

/** The flag table and the environment table, as the page shows them between the markers. */
export function serveFlagsMarkdown(): string {
  const flags = SERVE_FLAG_LIST.map(
    (flag) => `| ${option(flag)} | ${flag.help} | ${flag.defaultText} | ${elsewhere(flag)} |`,
  );
  const variables = SERVE_FLAG_LIST.filter((flag) => flag.env !== undefined).map(
    (flag) =>
      `| \`${flag.env}\` | \`--${flag.name}\` | ${flag.value === undefined ? '`1`/`true` or `0`/`false`' : ''} |`,
  );
  return [
    START,
    '| option | meaning | default | environment, config file |',
    '| --- | --- | --- | --- |',
    ...flags,
    '',
    'Settings from the environment, for containers and process managers (a flag, where given, wins; an empty',
    'value counts as unset):',
    '',
    '| variable | as | note |',
    '| --- | --- | --- |',
    ...variables,
    END,
  ].join('\n');
}

/** `page` with the text between the markers made anew; throws if the markers are missing. */
export function withServeFlags(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${FLAGS_PAGE} has no serve flag markers`);
  return `${page.slice(0, start)}${serveFlagsMarkdown()}${page.slice(end + END.length)}`;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const path = join(REPOSITORY, FLAGS_PAGE);
  const page = readFileSync(path, 'utf8');
  const made = withServeFlags(page);
  if (process.argv.includes('--write')) writeFileSync(path, made);
  else if (made !== page) {
    console.error(`${FLAGS_PAGE}: the serve flags differ from the table; run npm run docs:flags`);
    process.exit(1);
  }
}
