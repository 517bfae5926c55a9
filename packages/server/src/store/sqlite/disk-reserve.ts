import { randomBytes } from 'node:crypto';
import { closeSync, openSync, rmSync, statfsSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The reserve's file name in the data directory. */
export const RESERVE_FILE = 'sluice.reserve';

const CHUNK_BYTES = 1 << 20;

/**
 * Space held back on the data directory's filesystem as a file, so that a full disk can be recovered from:
 * the store releases it when a write finds the disk full, which gives receives and deletes (the writes
 * that free space) and SQLite's checkpoints room again, and takes it back once the disk has room.
 *
 * The file is written with random bytes, not zeros: a compressing filesystem (ZFS, btrfs) would store zeros
 * in almost nothing and reserve nothing.
 */
export class DiskReserve {
  private readonly file: string;

  constructor(
    private readonly dir: string,
    /** The size to hold; 0 holds nothing. */
    readonly bytes: number,
  ) {
    this.file = join(dir, RESERVE_FILE);
  }

  /** Bytes the reserve file holds now. */
  held(): number {
    return fileBytes(this.file);
  }

  /** Bytes free on the filesystem, for an unprivileged writer. */
  freeBytes(): number {
    const stats = statfsSync(this.dir);
    return stats.bavail * stats.bsize;
  }

  /** Grows the file to `bytes`, or as far as the disk allows; returns the bytes it holds then. */
  fill(): number {
    let held = this.held();
    if (held >= this.bytes) return held;
    const chunk = randomBytes(CHUNK_BYTES);
    const fd = openSync(this.file, 'a');
    try {
      while (held < this.bytes) held += writeSync(fd, chunk, 0, Math.min(CHUNK_BYTES, this.bytes - held));
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== 'ENOSPC' && code !== 'EDQUOT') throw error;
    } finally {
      closeSync(fd);
    }
    return this.held();
  }

  release(): void {
    rmSync(this.file, { force: true });
  }
}

/** A file's size; 0 when it does not exist. */
export function fileBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return 0;
    throw error;
  }
}
