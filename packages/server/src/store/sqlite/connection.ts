import { accessSync, closeSync, constants, fdatasync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type Database from 'better-sqlite3';
import { type StoreCondition, StoreUnavailableError, UNAVAILABLE_CONDITIONS } from '../contract.ts';
import { DiskReserve, fileBytes } from './disk-reserve.ts';
import { openDatabase } from './native-binding.ts';
import { type ConnectionOptions, DEFAULT_DURABILITY, type Durability, IN_MEMORY } from './options.ts';
import { MIGRATIONS } from './schema.ts';
import { prepareStatements, type Statements } from './statements.ts';

/**
 * Whether losing a write in a power cut would lose something acknowledged (`durable`), or only cause a
 * redelivery (`redeliverable`). `adds` is durable and adds data (sends, new queues): what fills a disk, so it
 * is refused while the disk is full, and the room left goes to the writes that free space.
 */
export type WriteKind = 'adds' | 'durable' | 'redeliverable';

/** Room the disk must have besides the reserve before sends resume after it was full, so they do not flap. */
const ROOM_TO_RESUME_BYTES = 1024 * 1024;

interface PendingWrite {
  kind: WriteKind;
  run: () => unknown;
  /** Runs inside the transaction right after `run` succeeded; writes it queues join the same commit. */
  onApplied: (() => void) | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The SQLite store's plumbing: the database opened and migrated, and its writes. better-sqlite3 is
 * synchronous, so writes are queued and run together in one transaction per turn of the event loop (group
 * commit), and no caller is answered before its write is committed.
 *
 * Commits run with synchronous=NORMAL, which keeps the database consistent across a power cut, and the
 * fsync that makes a commit durable is done here, asynchronously on libuv's thread pool (fdatasync of the
 * WAL file, which is what synchronous=FULL would do inside the commit). The event loop keeps serving
 * requests while the disk syncs, and every commit made meanwhile shares the next fsync. A full disk refuses
 * the writes that add data, and the reserve (disk-reserve.ts) gives the others room to free some.
 */
export class SqliteConnection {
  readonly db: Database.Database;
  readonly statements: Statements;
  private pending: PendingWrite[] = [];
  private flushScheduled = false;
  private readonly durability: Durability;
  private readonly dbFile: string | undefined;
  private readonly walFile: string | undefined;
  private walFd: number | undefined;
  /** Writes committed but waiting for an fsync started after their commit. */
  private awaitingSync: Array<{ done: () => void; fail: (error: unknown) => void }> = [];
  private syncing: Promise<void> | undefined;
  private readonly reserve: DiskReserve | undefined;
  /**
   * Why the last write failed for a reason of the machine, for `condition()`. A read-only or failing disk is
   * forgotten at the next commit; a full disk once the reserve is taken back (`resumeAfterFullDisk`).
   */
  private unavailable: StoreUnavailableError['reason'] | undefined;

  /** `forgetCachedState` drops what the store learned of the tables, when a transaction is rolled back. */
  constructor(
    options: ConnectionOptions,
    private readonly forgetCachedState: () => void,
  ) {
    const file = options.dataDir === IN_MEMORY ? IN_MEMORY : join(ensureDir(options.dataDir), 'sluice.db');
    this.db = openDatabase(file);
    // One server owns a data directory: the exclusive lock refuses a second one at start (instead of two
    // processes interleaving claims), and skips the shared-memory index, which makes each commit cheaper.
    this.db.pragma('locking_mode = EXCLUSIVE');
    try {
      this.db.pragma('journal_mode = WAL');
    } catch (error) {
      this.db.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') {
        throw new Error(
          `the data directory ${options.dataDir} is in use by another Sluice server (database is locked)`,
        );
      }
      // SQLite says only "disk I/O error" when WAL mode cannot create its files; name the real cause.
      if (file !== IN_MEMORY && !isWritable(options.dataDir)) {
        throw new Error(
          `the data directory ${options.dataDir} is not writable (read-only filesystem or permissions); Sluice must write there to open its database`,
        );
      }
      throw error;
    }
    this.durability = options.durability ?? DEFAULT_DURABILITY;
    this.db.pragma(`synchronous = ${this.durability === 'off' ? 'OFF' : 'NORMAL'}`);
    this.dbFile = file === IN_MEMORY ? undefined : file;
    this.walFile = file === IN_MEMORY ? undefined : `${file}-wal`;
    // In memory means nothing on disk, SQLite's temporary files (statement journals, big sorts) included.
    if (file === IN_MEMORY) this.db.pragma('temp_store = MEMORY');
    // A 32 MiB page cache keeps the hot end of big queues in memory while RSS stays bounded; checkpoints every
    // 8,192 pages (32 MiB of WAL) instead of 1,000 mean fewer of the fsyncs a checkpoint makes on the event loop.
    this.db.pragma('cache_size = -32768');
    this.db.pragma('wal_autocheckpoint = 8192');
    migrate(this.db);
    this.statements = prepareStatements(this.db);
    if (file !== IN_MEMORY) {
      this.reserve = new DiskReserve(options.dataDir, options.diskReserveBytes ?? 0);
      if (!this.resumeAfterFullDisk()) this.unavailable = 'full';
    }
  }

  /** The disk filled and the reserve is released: history waits, the room left is for writes that free space. */
  get diskFull(): boolean {
    return this.unavailable === 'full';
  }

  /**
   * What the database's files take on disk, its WAL's included, less the free pages SQLite fills first: what
   * a full disk is made of. The WAL keeps its size once grown (up to a checkpoint's 32 MiB, more under
   * bursts); the reserve is not counted. In memory, the pages are what it takes. Constant time.
   */
  async storedBytes(): Promise<number> {
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const taken =
      this.dbFile === undefined || this.walFile === undefined
        ? (this.db.pragma('page_count', { simple: true }) as number) * pageSize
        : fileBytes(this.dbFile) + fileBytes(this.walFile);
    return Math.max(0, taken - free * pageSize);
  }

  async condition(): Promise<StoreCondition | undefined> {
    if (this.unavailable === 'full' && this.resumeAfterFullDisk()) this.unavailable = undefined;
    return this.unavailable && UNAVAILABLE_CONDITIONS[this.unavailable];
  }

  /**
   * Takes the reserve back if the disk has room for it and, besides it, for some sends (free disk and free
   * pages together); otherwise releases what is left of it. Returns whether sends may resume.
   */
  private resumeAfterFullDisk(): boolean {
    const reserve = this.reserve!;
    const held = reserve.held();
    const free = reserve.freeBytes();
    const freePages = this.db.pragma('freelist_count', { simple: true }) as number;
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const roomBesides = free + held - reserve.bytes + freePages * pageSize;
    if (free + held >= reserve.bytes && roomBesides >= Math.max(reserve.bytes, ROOM_TO_RESUME_BYTES)) {
      if (reserve.fill() >= reserve.bytes) return true;
    }
    reserve.release();
    return false;
  }

  /**
   * Notes why a write failed. Returns true when the disk just filled and a reserve was released for it: the
   * writes that free space can then run again at once.
   */
  private noteUnavailable(error: unknown): boolean {
    const failure = unavailableOrSelf(error);
    if (!(failure instanceof StoreUnavailableError)) return false;
    const newlyFull = failure.reason === 'full' && this.unavailable !== 'full';
    this.unavailable = failure.reason;
    if (!newlyFull || this.reserve === undefined) return false;
    const released = this.reserve.held() > 0;
    this.reserve.release();
    return released;
  }

  async close(): Promise<void> {
    // A full disk: take back what room there is before SQLite's closing checkpoint, which would otherwise
    // fill it (a checkpoint that fails half way keeps the space it wrote) and leave none for the receives and
    // deletes that make room after a restart.
    if (this.unavailable === 'full') this.reserve?.fill();
    if (this.pending.length > 0) this.flush();
    while (this.syncing) await this.syncing;
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.db.close();
  }

  /** Queues `run` for the next group commit; resolves with its result once the commit is done. */
  write<T>(kind: WriteKind, run: () => T): Promise<T>;
  write<T>(kind: WriteKind, onApplied: (() => void) | undefined, run: () => T): Promise<T>;
  write<T>(kind: WriteKind, ...rest: [() => T] | [(() => void) | undefined, () => T]): Promise<T> {
    const [onApplied, run] = rest.length === 1 ? [undefined, rest[0]] : rest;
    if (kind === 'adds' && this.unavailable === 'full') {
      if (!this.resumeAfterFullDisk())
        return Promise.reject(new StoreUnavailableError('full', { cause: 'the disk reserve is released' }));
      this.unavailable = undefined;
    }
    return new Promise<T>((resolve, reject) => {
      const fail = (error: unknown) => reject(unavailableOrSelf(error));
      this.pending.push({ kind, run, onApplied, resolve: resolve as (value: unknown) => void, reject: fail });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const batch: PendingWrite[] = [];
    let outcomes: WriteOutcome[] | undefined;
    try {
      const { begin, rollback, commit } = this.statements;
      begin.run();
      // On disk, first without savepoints: a savepoint copies every page its write changes to a statement
      // journal (a temporary file past 64 KiB), which was a third of the store's disk writes under load.
      // Writes rarely fail; when one does, the whole transaction is rolled back and the batch runs again
      // isolated. In memory the journal is memory too, and the messages are held outside the database
      // (memory/message-table.ts), where a rollback undoes nothing: a write must never run twice there.
      outcomes = this.applyBatch(batch, this.dbFile === undefined);
      if (outcomes === undefined) {
        rollback.run();
        this.forgetCachedState();
        begin.run();
        outcomes = this.applyBatch(batch, true)!;
      }
      commit.run();
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.forgetCachedState();
      // A BEGIN that fails (read-only, full) leaves writes still pending; they fail with the batch, or
      // they would wait for a flush that nothing schedules.
      const failed = [...batch, ...this.pending.splice(0)];
      if (this.noteUnavailable(error)) {
        // The reserve was just released: what does not add data runs again in the room it gave back.
        for (const write of failed) {
          if (write.kind === 'adds') write.reject(error);
          else this.pending.push(write);
        }
        this.flush();
        return;
      }
      for (const write of failed) write.reject(error);
      return;
    }
    if (this.unavailable !== 'full') this.unavailable = undefined;
    batch.forEach((write, index) => {
      const outcome = outcomes[index]!;
      if (!outcome.ok) write.reject(outcome.error);
      else if (this.needsSync(write.kind)) this.afterSync(() => write.resolve(outcome.value), write.reject);
      else write.resolve(outcome.value);
    });
  }

  /**
   * Runs the writes of `batch`, then those still pending (moving them into `batch`), in the open transaction.
   * Writes queued meanwhile (a long poll woken by a send of the batch) join it too, so a woken receiver is
   * answered after one commit, not after the next turn of the event loop. `isolated` gives each write a
   * savepoint, so a failing one rolls back alone and the others still commit; without it, the first failure
   * returns undefined and the caller must roll the transaction back.
   */
  private applyBatch(batch: PendingWrite[], isolated: boolean): WriteOutcome[] | undefined {
    const { savepoint, release, rollbackTo } = this.statements;
    const outcomes: WriteOutcome[] = [];
    for (let index = 0; index < batch.length || this.pending.length > 0; index++) {
      if (index === batch.length) batch.push(this.pending.shift()!);
      const write = batch[index]!;
      if (isolated) savepoint.run();
      try {
        const value = write.run();
        if (isolated) release.run();
        outcomes.push({ ok: true, value });
        write.onApplied?.();
      } catch (error) {
        if (!isolated) return undefined;
        rollbackTo.run();
        release.run();
        this.forgetCachedState();
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }

  /**
   * Drops what memory learned of the tables: inside a transaction that is being rolled back (in whole or to a
   * savepoint), or before a reset.
   */

  private needsSync(kind: WriteKind): boolean {
    if (this.walFile === undefined) return false;
    return this.durability === 'full' || (this.durability === 'durable' && kind !== 'redeliverable');
  }

  /** Runs `done` once an fsync that started after this call has finished. */
  private afterSync(done: () => void, fail: (error: unknown) => void): void {
    this.awaitingSync.push({ done, fail });
    this.syncing ??= this.syncLoop();
  }

  /**
   * Fsyncs the WAL until no write waits for it. Each fsync starts at the event loop's next check phase, once
   * the answers released by the last commit (or fsync) are written: handing it to the thread pool wakes
   * another thread, which on a 2-core VM cost the event loop about 0.2 ms that a long poll woken at the commit
   * waited for. The commits made until then share the fsync.
   */
  private async syncLoop(): Promise<void> {
    while (this.awaitingSync.length > 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const waiting = this.awaitingSync.splice(0);
      try {
        this.walFd ??= openSync(this.walFile!, 'r+');
        await fdatasyncAsync(this.walFd);
        for (const write of waiting) write.done();
      } catch (error) {
        for (const write of waiting) write.fail(error);
      }
    }
    this.syncing = undefined;
  }
}

/**
 * SQLite's and the OS's "cannot write" errors (full disk, read-only files, failing device) become the
 * store's StoreUnavailableError; any other error (a bug, a constraint) stays as it is.
 */
function unavailableOrSelf(error: unknown): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return error;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') {
    return new StoreUnavailableError('full', { cause: error });
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
    return new StoreUnavailableError('read-only', { cause: error });
  }
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN' || code === 'EIO') {
    return new StoreUnavailableError('io', { cause: error });
  }
  return error;
}

const fdatasyncAsync = promisify(fdatasync);

function isWritable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes the data directory, and fsyncs the parent of each directory it made: a directory's name is durable
 * only once its parent is fsynced, and SQLite fsyncs only the data directory itself. Without this, a power
 * cut soon after a first start could take the directory with every acknowledged send in it.
 */
function ensureDir(dir: string): string {
  const firstMade = mkdirSync(dir, { recursive: true });
  if (firstMade === undefined || process.platform === 'win32') return dir;
  for (let made = resolve(dir); ; made = dirname(made)) {
    const parent = openSync(dirname(made), 'r');
    try {
      fsyncSync(parent);
    } finally {
      closeSync(parent);
    }
    if (made === resolve(firstMade)) return dir;
  }
}

function migrate(db: Database.Database): void {
  const applied = db.pragma('user_version', { simple: true }) as number;
  for (let version = applied; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
