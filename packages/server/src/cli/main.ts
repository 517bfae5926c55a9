import { readFileSync } from 'node:fs';
import { startAddresses } from '../server/exposure-warning.ts';
import { createLogger } from '../server/logger.ts';
import { SERVE_FLAGS, type ServeOptions } from '../server/serve-flags.ts';
import { startSluice } from '../server/sluice-server.ts';
import { usageMessage } from '../shared/command-flags.ts';
import { IN_MEMORY } from '../store/sqlite/options.ts';
import { audit } from './audit.ts';
import { dlq } from './dlq.ts';
import { startedByNpm, watchParent } from './parent-watch.ts';
import { readServeArgs, type ServeArgs, serveHelp } from './serve-args.ts';
import { stats } from './stats.ts';
import { safeText } from './terminal-text.ts';

const MAIN_HELP = `sluice — an Amazon SQS-compatible message queue server

Usage:
  sluice serve [options]     start the server (see: sluice serve --help)
  sluice redrive [options]   move messages out of a dead-letter queue at a rate (see: sluice redrive --help)
  sluice stats QUEUE         a queue's recent history from a running server (see: sluice stats --help)
  sluice audit               what was done to messages: replays, deletes, purges, move tasks (see: sluice audit --help)
  sluice dlq list|search|show|replay|delete QUEUE ...
                             triage a DLQ message by message, without receiving (see: sluice dlq --help)
  sluice --help              this text
  sluice --version           print the version

Any SQS client works against it with its endpoint set to the server's URL and any credentials.`;

function fail(message: string): never {
  process.stderr.write(`sluice: ${message}\n`);
  process.exit(2);
}

/** A command-line mistake: one line, and where to read the options, not the whole help. */
function usage(command: 'serve' | 'redrive' | 'stats' | 'audit' | 'dlq' | undefined, message: string): never {
  const help = command === undefined ? 'sluice --help' : `sluice ${command} --help`;
  fail(`${message}\nRun \`${help}\` to see the ${command === undefined ? 'commands' : 'options'}.`);
}

async function serve(args: string[]): Promise<void> {
  let read: ServeArgs;
  try {
    read = readServeArgs(args, process.env);
  } catch (error) {
    const mistake = usageMessage(error);
    if (mistake === undefined) fail((error as Error).message);
    usage('serve', mistake);
  }
  const { options } = read;
  if (options.help) {
    process.stdout.write(`${serveHelp()}\n`);
    return;
  }
  const logger = createLogger(options.logLevel, options.logFormat);
  // Start, stop and a failed start are said whatever the level: they are what tools and people wait for.
  const lifecycle = logger.child({}, { level: 'info' });
  let sluice: Awaited<ReturnType<typeof startSluice>>;
  try {
    sluice = await startSluice({ ...options, logger });
  } catch (error) {
    lifecycle.fatal(`cannot start: ${(error as Error).message}`);
    process.exit(2);
  }
  // Before the listening line: whoever reads it may signal at once, and an unhandled SIGTERM kills outright.
  const shutdown = (reason: string) => {
    lifecycle.info(`${reason}, shutting down`);
    sluice.close().then(
      () => process.exit(0),
      (error: unknown) => {
        lifecycle.fatal({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  if (!options.outliveParent && startedByNpm(process.env))
    watchParent((parent) => shutdown(`parent process ${parent} exited`));
  const addresses = startAddresses(sluice.endpoint);
  lifecycle.info(`listening on ${addresses.listening} (${storage(options)})`);
  lifecycle.info(`console at ${addresses.console}`);
}

/** What keeps the data, for the listening line. */
function storage(options: ServeOptions): string {
  if (options.storeUrl !== undefined) return `store: ${withoutPassword(options.storeUrl)}`;
  const dataDir = options.dataDir ?? SERVE_FLAGS.data.default;
  if (dataDir === IN_MEMORY) return 'in memory: nothing is kept when it stops';
  return `data: ${dataDir}, durability: ${options.durability ?? SERVE_FLAGS.durability.default}`;
}

/** A store URL fit for a log line: its password left out. */
function withoutPassword(url: string): string {
  return url.replace(/^(\w+:\/\/[^:@/]*):[^@/]*@/, '$1:***@');
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'redrive':
      return runRedrive(rest);
    case 'stats':
      return runStats(rest);
    case 'audit':
      return runAudit(rest);
    case 'dlq':
      return runDlq(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${MAIN_HELP}\n`);
      return;
    case '--version':
      process.stdout.write(`sluice ${packageVersion()}\n`);
      return;
    default:
      usage(undefined, `unknown command "${command}"`);
  }
}

async function runRedrive(args: string[]): Promise<void> {
  try {
    // Loaded only for this command: the AWS SDK would add about 18 MiB and 100 ms to every `sluice serve`.
    const { redrive } = await import('./redrive.ts');
    // Exit now: the SDK's idle keep-alive sockets would otherwise hold the process a while.
    process.exit(await redrive(args));
  } catch (error) {
    const mistake = usageMessage(error);
    if (mistake !== undefined) usage('redrive', mistake);
    const name = (error as { name?: string }).name;
    process.stderr.write(
      `sluice redrive: ${name && name !== 'Error' ? `${name}: ` : ''}${(error as Error).message}\n`,
    );
    process.exit(1);
  }
}

async function runStats(args: string[]): Promise<void> {
  try {
    process.exitCode = await stats(args, (text) => process.stdout.write(text));
  } catch (error) {
    const mistake = usageMessage(error);
    if (mistake !== undefined) usage('stats', mistake);
    process.stderr.write(`sluice stats: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

async function runAudit(args: string[]): Promise<void> {
  try {
    process.exitCode = await audit(
      args,
      (text) => process.stdout.write(text),
      (text) => process.stderr.write(text),
    );
  } catch (error) {
    const mistake = usageMessage(error);
    if (mistake !== undefined) usage('audit', mistake);
    process.stderr.write(`sluice audit: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

async function runDlq(args: string[]): Promise<void> {
  try {
    process.exitCode = await dlq(args);
  } catch (error) {
    const mistake = usageMessage(error);
    if (mistake !== undefined) usage('dlq', safeText(mistake));
    process.stderr.write(`sluice dlq: ${safeText((error as Error).message)}\n`);
    process.exitCode = 1;
  }
}

function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

// Sluice is tested on Node 20 as on 22 and 24 (docs/decisions/node-versions.md). The AWS SDK's notice that its
// releases after January 2027 will need Node 22 is not about this install: `sluice redrive` does not repeat it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
await main(process.argv.slice(2));
