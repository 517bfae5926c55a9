import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why a test cannot mount a tmpfs of its own here, or false when it can (Linux, as root). */
export function tmpfsUnavailable(): string | false {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'needs root on Linux to mount a tmpfs';
  let probe: Tmpfs | undefined;
  try {
    probe = mountTmpfs('64k');
    return false;
  } catch {
    return 'cannot mount a tmpfs here (no CAP_SYS_ADMIN)';
  } finally {
    probe?.unmount();
  }
}

export interface Tmpfs {
  /** The mount point, a new temp directory. */
  readonly path: string;
  /** Unmounts it and removes the mount point. */
  unmount(): void;
}

/** A tmpfs of `size` (e.g. '4m') of the test's own: a small disk to fill, or a filesystem to track alone. */
export function mountTmpfs(size: string): Tmpfs {
  const path = mkdtempSync(join(tmpdir(), 'sluice-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', path], { stdio: 'ignore' });
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    throw error;
  }
  return {
    path,
    unmount() {
      execFileSync('umount', [path]);
      rmSync(path, { recursive: true, force: true });
    },
  };
}
