import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/**
 * Opens a database, and when better-sqlite3's compiled part cannot be loaded (npm did not run its install
 * script, or it was built for another Node.js), says in one line how to build it instead of the loader's
 * list of paths or stack. better-sqlite3 loads that part on the first open, so this is where it shows.
 */
export function openDatabase(file: string): Database.Database {
  try {
    return new Database(file);
  } catch (error) {
    const problem = nativeModuleProblem(error);
    if (problem === undefined) throw error;
    throw new Error(
      `${problem}. Build it: ${rebuildCommand()} (if npm skips it, approve it first: npm install-scripts approve better-sqlite3). Or keep the queues in PostgreSQL: --store postgres://...`,
      { cause: error },
    );
  }
}

function nativeModuleProblem(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  // The message of the `bindings` package, which better-sqlite3 loads its module with.
  if (error.message.startsWith('Could not locate the bindings file'))
    return "better-sqlite3's native module is not built (npm did not run its install script)";
  const versions =
    /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(
      error.message,
    );
  if (versions !== null)
    return `better-sqlite3's native module was built for another Node.js (module version ${versions[1]}; ${process.version} needs ${versions[2]})`;
  return undefined;
}

/** `npm rebuild` in the folder whose node_modules holds better-sqlite3: a project, a global install, npx's cache. */
function rebuildCommand(): string {
  const packageDir = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
  const installDir = /^(.*)[\\/]node_modules[\\/]better-sqlite3$/.exec(packageDir)?.[1];
  return installDir === undefined
    ? 'npm rebuild better-sqlite3'
    : `npm rebuild better-sqlite3 --prefix ${installDir.includes(' ') ? JSON.stringify(installDir) : installDir}`;
}
