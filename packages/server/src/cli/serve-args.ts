import { type ParseArgsConfig, parseArgs } from 'node:util';
import {
  type GivenValue,
  SERVE_FLAG_LIST,
  type ServeFlag,
  type ServeOptions,
  serveFlagClash,
} from '../server/serve-flags.ts';
import { UsageError } from '../shared/command-flags.ts';

/** `sluice serve`'s arguments and environment as the server's options, and the flags a variable gave. */
export interface ServeArgs {
  readonly options: ServeOptions;
  /** The flags taken from the environment, not the command line (`insecure`, as SLUICE_INSECURE). */
  readonly fromEnvironment: ReadonlySet<string>;
}

/** node:util parseArgs' options, made from the table. */
function parseArgsOptions(): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(
    SERVE_FLAG_LIST.map((flag) => [
      flag.name,
      {
        type: flag.value === undefined ? ('boolean' as const) : ('string' as const),
        ...(flag.multiple && { multiple: true }),
        ...(flag.short !== undefined && { short: flag.short }),
      },
    ]),
  );
}

/** A variable's value as the flag would take it; an empty one counts as unset, as a flag not given. */
function fromVariable(flag: ServeFlag, text: string | undefined): GivenValue | undefined {
  if (text === undefined || text === '') return undefined;
  if (flag.value !== undefined) return flag.multiple ? [text] : text;
  if (text === '1' || text === 'true') return true;
  if (text === '0' || text === 'false') return undefined;
  throw new UsageError(`${flag.env} must be 1, true, 0 or false, not "${text}"`);
}

/**
 * Reads the command line, then the variables of the flags not given on it, into the options; a mistake
 * throws a UsageError (or, for a file that cannot be read, an Error).
 */
export function readServeArgs(args: string[], environment: NodeJS.ProcessEnv): ServeArgs {
  const { values } = parseArgs({ args, strict: true, options: parseArgsOptions() });
  const given = new Map(Object.entries(values) as [string, GivenValue][]);
  const options: ServeOptions = {};
  const fromEnvironment = new Set<string>();
  // Variables first, so that a flag given after them wins (--in-memory over the container's SLUICE_DATA).
  for (const flag of SERVE_FLAG_LIST) {
    if (flag.env === undefined || given.has(flag.name)) continue;
    const value = fromVariable(flag, environment[flag.env]);
    if (value === undefined) continue;
    try {
      flag.apply(options, value);
    } catch (error) {
      if (error instanceof UsageError) throw new UsageError(`${flag.env}: ${error.message}`);
      throw error;
    }
    fromEnvironment.add(flag.name);
  }
  const clash = serveFlagClash(given, options);
  if (clash !== undefined) throw new UsageError(clash);
  for (const flag of SERVE_FLAG_LIST) {
    const value = given.get(flag.name);
    if (value !== undefined) flag.apply(options, value);
  }
  return { options, fromEnvironment };
}

/** Help text from the table's Markdown: code as it is typed, and the links to pages left out. */
function plain(markdown: string): string {
  return markdown
    .replace(/ ?\(\[[^\]]*\]\([^)]*\)\)/g, '')
    .replace(/; \[[^\]]*\]\([^)]*\)\)/g, ')')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replaceAll('`', '');
}

const WIDTH = 110;
const COLUMN = 28;

/** `text` in lines of at most WIDTH characters, the first after `lead`, the others after COLUMN spaces. */
function wrapped(lead: string, text: string): string {
  const lines: string[] = [];
  let line = '';
  let start = lead.length;
  for (const word of text.split(' ')) {
    if (line !== '' && start + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
      start = COLUMN;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lead + lines.join(`\n${' '.repeat(COLUMN)}`);
}

function label(flag: ServeFlag): string {
  return `${flag.short === undefined ? '' : `-${flag.short}, `}--${flag.name}${flag.value === undefined ? '' : ` ${flag.value}`}`;
}

/** `sluice serve --help`, made from the table. */
export function serveHelp(): string {
  const rows = SERVE_FLAG_LIST.map((flag) => {
    const start = `  ${label(flag)}`;
    const lead = start.length + 2 <= COLUMN ? start.padEnd(COLUMN) : `${start}  `;
    const defaultText = plain(flag.defaultText);
    const inConfig = flag.configKey === undefined ? '' : `; also "${flag.configKey}" in --config`;
    const said = `${plain(flag.help)}${inConfig}${defaultText === '' ? '' : ` (default: ${defaultText})`}`;
    const more = (flag.more ?? []).map((line) => `\n${' '.repeat(COLUMN + 2)}${line}`).join('');
    return `${wrapped(lead, said)}${more}`;
  });
  const variables = SERVE_FLAG_LIST.filter((flag) => flag.env !== undefined).map(
    (flag) =>
      `  ${`${flag.env}=${flag.value ?? '1'}`.padEnd(COLUMN - 2)}as --${flag.name}${flag.value === undefined ? ' (0, false or empty: off)' : ''}`,
  );
  return `sluice serve — start the SQS-compatible server

Options:
${rows.join('\n')}

Environment (a flag given wins; an empty value counts as unset):
${variables.join('\n')}

SIGTERM or SIGINT, or its parent process exiting (unless --outlive-parent), stops accepting requests,
answers long polls, and closes the database cleanly.`;
}
