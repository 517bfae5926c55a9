/**
 * A filesystem on which a power cut can be simulated: a tmpfs of its own (so that the shim tracks exactly
 * its files), the shim compiled with gcc and loaded into the server with LD_PRELOAD, and the log outside it.
 * `cut()` after a SIGKILL rolls back whatever was not fsynced (restore.ts). Needs Linux, root (mount) and gcc.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountTmpfs, type Tmpfs, tmpfsUnavailable } from '../../helpers/tmpfs.ts';
import type { CrashMode } from '../crash-audit.ts';
import {
  addRestore,
  noRestore,
  type PowerCutFiles,
  type RestoreReport,
  restoreAfterCut,
  settle,
} from './restore.ts';

const SHIM_SOURCE = new URL('./shim.c', import.meta.url).pathname;

/** Why a power cut cannot be simulated here, or false when it can. */
export function powerCutUnavailable(): string | false {
  if (process.platform !== 'linux') return 'the power-cut shim needs Linux (LD_PRELOAD, tmpfs)';
  try {
    execFileSync('gcc', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'needs gcc to build the power-cut shim';
  }
  return tmpfsUnavailable();
}

export interface PowerCutOptions {
  /** Chance that a write not yet fsynced survives the cut anyway (a disk cache that wrote part of it). */
  keep?: number;
  /** Size of the tmpfs, e.g. '1g'. */
  size?: string;
}

export class PowerCut implements PowerCutFiles {
  readonly root: string;
  readonly trash: string;
  private readonly disk: Tmpfs;
  readonly log: string;
  /** The server's data directory, on the tracked filesystem. */
  readonly dataDir: string;
  /** Environment that loads the shim into a process. */
  readonly env: Record<string, string>;
  /** Totals over every cut. */
  readonly restored: RestoreReport = noRestore();
  private readonly work: string;

  constructor(private readonly options: PowerCutOptions = {}) {
    this.work = mkdtempSync(join(tmpdir(), 'sluice-powercut-'));
    this.disk = mountTmpfs(options.size ?? '1g');
    this.root = this.disk.path;
    this.trash = join(this.root, '.trash');
    mkdirSync(this.trash);
    this.dataDir = join(this.root, 'data');
    this.log = join(this.work, 'powercut.log');
    writeFileSync(this.log, '');
    const shim = join(this.work, 'shim.so');
    execFileSync('gcc', [
      '-shared',
      '-fPIC',
      '-O2',
      '-Wall',
      '-Wno-format-truncation',
      '-o',
      shim,
      SHIM_SOURCE,
      '-ldl',
      '-lpthread',
    ]);
    this.env = {
      LD_PRELOAD: shim,
      POWERCUT_ROOT: this.root,
      POWERCUT_LOG: this.log,
      POWERCUT_TRASH: this.trash,
      // libuv's io_uring path would write files without calling the functions the shim wraps.
      UV_USE_IO_URING: '0',
    };
  }

  /** After a SIGKILL: what the power cut also takes away. */
  cut(): RestoreReport {
    const report = restoreAfterCut({
      log: this.log,
      root: this.root,
      trash: this.trash,
      keep: this.options.keep,
    });
    addRestore(this.restored, report);
    return report;
  }

  /** The crash audit's crash mode: SIGKILL (every fifth time a clean stop), then the cut. */
  crashMode(promises: NonNullable<CrashMode['promises']>): CrashMode {
    return {
      dataDir: this.dataDir,
      env: this.env,
      settled: async () => settle(this),
      afterCrash: async () => {
        this.cut();
      },
      cleanStopEvery: 5,
      promises,
    };
  }

  dispose(): void {
    this.disk.unmount();
    rmSync(this.work, { recursive: true, force: true });
  }
}
