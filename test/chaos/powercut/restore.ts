/**
 * Turns the files under a power-cut root into what a power cut could have left, from the shim's log (see
 * shim.c): every change not made durable by an fsync is undone, newest first, and then, with `keep` above 0,
 * a random part of them is made again, oldest first, as a disk whose cache wrote some of its pages in any
 * order. Data changes are durable after an fsync or fdatasync of their file; names (a created, removed or
 * renamed file) only after an fsync of their directory (POSIX; some filesystems are kinder). sync and syncfs
 * make everything before them durable.
 *
 * Run only while no process that loads the shim is alive. The log and the trash are emptied afterwards: the
 * files as restored are the durable state the next run starts from.
 */
import {
  closeSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { basename, join } from 'node:path';

const MAGIC = 0x50435554;
const HEADER_BYTES = 56;

enum Type {
  Write = 1,
  Size = 2,
  Sync = 3,
  DirSync = 4,
  SyncAll = 5,
  Create = 6,
  Unlink = 7,
  Rename = 8,
  Unsupported = 9,
}

interface LogRecord {
  type: Type;
  seq: number;
  ino: number;
  a: number;
  b: number;
  path: string;
  pre: Buffer;
  post: Buffer;
}

export interface PowerCutFiles {
  /** The shim's log (on another filesystem than the root). */
  log: string;
  /** The root of the tracked filesystem (its mount point). */
  root: string;
  /** Where the shim keeps removed files as hard links, under the root. */
  trash: string;
}

export interface RestoreOptions extends PowerCutFiles {
  /** Chance that a change not made durable survives anyway; 0 (default) undoes every one. */
  keep?: number;
  random?: () => number;
}

export interface RestoreReport {
  /** Data changes (writes, size changes) undone and not made again. */
  undone: number;
  /** Of those, by file name (e.g. the WAL's, or the database's when a checkpoint was cut). */
  undoneByFile: Record<string, number>;
  /** Bytes those writes had written. */
  undoneBytes: number;
  /** Data changes not durable but made again (`keep`). */
  kept: number;
  /** Names (creations, removals, renames) undone. */
  names: number;
  /** Data changes that were durable. */
  durable: number;
}

export function noRestore(): RestoreReport {
  return { undone: 0, undoneByFile: {}, undoneBytes: 0, kept: 0, names: 0, durable: 0 };
}

/** Adds `report`'s counts to `total`'s. */
export function addRestore(total: RestoreReport, report: RestoreReport): void {
  total.undone += report.undone;
  total.undoneBytes += report.undoneBytes;
  total.kept += report.kept;
  total.names += report.names;
  total.durable += report.durable;
  for (const [file, count] of Object.entries(report.undoneByFile)) addCount(total.undoneByFile, file, count);
}

function addCount(counts: Record<string, number>, key: string, count: number): void {
  counts[key] = (counts[key] ?? 0) + count;
}

function parse(log: Buffer): LogRecord[] {
  const records: LogRecord[] = [];
  for (let at = 0; at + HEADER_BYTES <= log.length; ) {
    if (log.readUInt32LE(at) !== MAGIC) throw new Error(`power-cut log damaged at byte ${at}`);
    const pathLength = log.readUInt32LE(at + 40);
    const preLength = log.readUInt32LE(at + 44);
    const postLength = Number(log.readBigUInt64LE(at + 48));
    const end = at + HEADER_BYTES + pathLength + preLength + postLength;
    // The last record may be cut short by the kill: the change it announces was not made.
    if (end > log.length) break;
    const pathAt = at + HEADER_BYTES;
    const preAt = pathAt + pathLength;
    const postAt = preAt + preLength;
    records.push({
      type: log.readUInt32LE(at + 4) as Type,
      seq: Number(log.readBigUInt64LE(at + 8)),
      ino: Number(log.readBigUInt64LE(at + 16)),
      a: Number(log.readBigUInt64LE(at + 24)),
      b: Number(log.readBigUInt64LE(at + 32)),
      path: log.subarray(pathAt, preAt).toString(),
      pre: log.subarray(preAt, postAt),
      post: log.subarray(postAt, end),
    });
    at = end;
  }
  return records;
}

/** Regular files under `dir` by inode, names outside the trash first. */
function filesByInode(dir: string, trash: string, into = new Map<number, string>()): Map<number, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) filesByInode(path, trash, into);
    else if (entry.isFile()) {
      const ino = lstatSync(path).ino;
      if (!into.has(ino) || into.get(ino)!.startsWith(`${trash}/`)) into.set(ino, path);
    }
  }
  return into;
}

const inodeAt = (path: string): number | undefined => {
  try {
    return lstatSync(path).ino;
  } catch {
    return undefined;
  }
};

export function restoreAfterCut(options: RestoreOptions): RestoreReport {
  const keep = options.keep ?? 0;
  const random = options.random ?? Math.random;
  const records = parse(readFileSync(options.log));
  const report = noRestore();

  let syncedAll = 0;
  const fileSynced = new Map<number, number>();
  const dirSynced = new Map<number, number>();
  const raise = (map: Map<number, number>, ino: number, upto: number) =>
    map.set(ino, Math.max(map.get(ino) ?? 0, upto));
  for (const record of records) {
    if (record.type === Type.Unsupported)
      throw new Error(`the power-cut shim cannot follow ${record.path} (inode ${record.ino})`);
    if (record.type === Type.Sync) raise(fileSynced, record.ino, record.a);
    if (record.type === Type.DirSync) raise(dirSynced, record.ino, record.a);
    if (record.type === Type.SyncAll) syncedAll = Math.max(syncedAll, record.a);
  }
  const durable = (seq: number, synced: Map<number, number>, ino: number) =>
    seq < Math.max(synced.get(ino) ?? 0, syncedAll);

  // Data: undo every change not durable, newest first, on whatever name the inode has now.
  const lost = records.filter(
    (r) => (r.type === Type.Write || r.type === Type.Size) && !durable(r.seq, fileSynced, r.ino),
  );
  report.durable = records.filter((r) => r.type === Type.Write || r.type === Type.Size).length - lost.length;
  const paths = filesByInode(options.root, options.trash);
  const fds = new Map<number, number>();
  const fdOf = (ino: number): number | undefined => {
    if (!fds.has(ino)) {
      const path = paths.get(ino);
      if (path === undefined) return undefined; // removed for good (durably)
      fds.set(ino, openSync(path, 'r+'));
    }
    return fds.get(ino);
  };
  try {
    for (const record of [...lost].reverse()) {
      const fd = fdOf(record.ino);
      if (fd === undefined) continue;
      if (record.type === Type.Write) {
        if (record.pre.length > 0) writeSync(fd, record.pre, 0, record.pre.length, record.a);
        ftruncateSync(fd, record.b);
      } else {
        ftruncateSync(fd, record.b);
        if (record.pre.length > 0) writeSync(fd, record.pre, 0, record.pre.length, record.a);
      }
    }
    for (const record of lost) {
      const fd = fdOf(record.ino);
      if (fd === undefined) continue;
      if (keep > 0 && random() < keep) {
        report.kept++;
        if (record.type === Type.Write) writeSync(fd, record.post, 0, record.post.length, record.a);
        else ftruncateSync(fd, record.a);
      } else {
        report.undone++;
        report.undoneBytes += record.post.length;
        addCount(report.undoneByFile, basename(paths.get(record.ino)!), 1);
      }
    }
  } finally {
    for (const fd of fds.values()) closeSync(fd);
  }

  // Names: undo every creation, removal and rename whose directory was not fsynced after it, newest first.
  for (const record of [...records].reverse()) {
    if (record.type === Type.Create && !durable(record.seq, dirSynced, record.a)) {
      // A directory goes with everything in it.
      if (inodeAt(record.path) === record.ino) rmSync(record.path, { recursive: true });
      report.names++;
    } else if (record.type === Type.Unlink && !durable(record.seq, dirSynced, record.a)) {
      if (inodeAt(record.path) === undefined) linkSync(record.post.toString(), record.path);
      report.names++;
    } else if (
      record.type === Type.Rename &&
      !(durable(record.seq, dirSynced, record.a) && durable(record.seq, dirSynced, record.b))
    ) {
      const [from, to] = record.path.split('\0') as [string, string];
      if (inodeAt(to) === record.ino) renameSync(to, from);
      if (record.post.length > 0) linkSync(record.post.toString(), to);
      report.names++;
    }
  }
  settle(options);
  return report;
}

/** What is on disk now is durable: the log and the trash are emptied. */
export function settle(files: PowerCutFiles): void {
  truncateSync(files.log, 0);
  for (const entry of readdirSync(files.trash)) rmSync(join(files.trash, entry));
}
