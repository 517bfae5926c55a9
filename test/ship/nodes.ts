import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
/** The repository's root folder. */
export const REPOSITORY = new URL('../..', import.meta.url).pathname;

export interface NodeRuntime {
  /** e.g. 22.23.5 */
  version: string;
  major: number;
  /** NODE_MODULE_VERSION: a native module built for one Node.js loads in another with the same. */
  modules: string;
  /** The `node` program. */
  binary: string;
  /**
   * Its folder (bin/node, include/node): node-gyp's `nodedir`, to compile against its headers, when not what
   * npm's configuration names.
   */
  nodedir?: string;
}

/** This machine's Node, the one running the tests. */
export const machineNode: NodeRuntime = {
  version: process.versions.node,
  major: Number(process.versions.node.split('.')[0]),
  modules: process.versions.modules,
  binary: process.execPath,
};

/**
 * Node `version` (a major: its newest release) in .tmp/nodes/VERSION, downloaded by .ci/fetch-node from the
 * npm registry unless it is there already; a reason to skip when it cannot be had.
 */
export async function fetchedNode(version: string): Promise<NodeRuntime | string> {
  const dir = join(REPOSITORY, '.tmp', 'nodes', version);
  try {
    await execFileAsync(join(REPOSITORY, '.ci', 'fetch-node'), [version], { timeout: 10 * 60_000 });
  } catch (error) {
    return `no Node ${version}: .ci/fetch-node ${version} failed: ${(error as { stderr?: string }).stderr?.trim()}`;
  }
  const binary = join(dir, 'bin', 'node');
  const { stdout } = await execFileAsync(binary, [
    '--print',
    'process.versions.node + " " + process.versions.modules',
  ]);
  const [full = '', modules = ''] = stdout.trim().split(' ');
  return { version: full, major: Number(full.split('.')[0]), modules, binary, nodedir: dir };
}
