/**
 * A filesystem on which a power cut can be simulated: a tmpfs of its own (so that the shim tracks exactly
 * its files), the shim compiled with gcc and loaded into the server with LD_PRELOAD, and the log outside it.
 * `cut()` after a SIGKILL rolls back whatever was not fsynced (restore.ts). Needs Linux, root (mount) and gcc.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CrashMode } from '../crash-audit.ts';
import { type PowerCutFiles, type RestoreReport, restoreAfterCut, settle } from './restore.ts';

const SHIM_SOURCE = new URL('./shim.c', import.meta.url).pathname;

/** Why a power cut cannot be simulated here, or false when it can. */
export function powerCutUnavailable(): string | false {
  if (process.platform !== 'linux') return 'the power-cut shim needs Linux (LD_PRELOAD, tmpfs)';
  if (process.getuid?.() !== 0) return 'needs root to mount a tmpfs for the power-cut shim';
  try {
    execFileSync('gcc', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'needs gcc to build the power-cut shim';
  }
  const probe = mkdtempSync(join(tmpdir(), 'sluice-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return false;
  } catch {
    return 'cannot mount a tmpfs here (no CAP_SYS_ADMIN)';
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
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
  readonly log: string;
  /** The server's data directory, on the tracked filesystem. */
  readonly dataDir: string;
  /** Environment that loads the shim into a process. */
  readonly env: Record<string, string>;
  /** Totals over every cut. */
  readonly restored: RestoreReport = {
    undone: 0,
    undoneByFile: {},
    undoneBytes: 0,
    kept: 0,
    names: 0,
    durable: 0,
  };
  private readonly work: string;

  constructor(private readonly options: PowerCutOptions = {}) {
    this.work = mkdtempSync(join(tmpdir(), 'sluice-powercut-'));
    this.root = join(this.work, 'disk');
    mkdirSync(this.root);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${options.size ?? '1g'}`, 'tmpfs', this.root]);
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
    const total = this.restored;
    total.undone += report.undone;
    total.undoneBytes += report.undoneBytes;
    total.kept += report.kept;
    total.names += report.names;
    total.durable += report.durable;
    for (const [file, count] of Object.entries(report.undoneByFile))
      total.undoneByFile[file] = (total.undoneByFile[file] ?? 0) + count;
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
    execFileSync('umount', [this.root]);
    rmSync(this.work, { recursive: true, force: true });
  }
}
