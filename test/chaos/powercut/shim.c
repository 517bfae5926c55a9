/*
 * The power-cut shim, loaded into the server with LD_PRELOAD. It records, for every change to a file on the
 * filesystem that holds POWERCUT_ROOT, what a power cut could still undo: the bytes a write overwrote (and
 * the bytes it wrote), the size a truncate changed, a file created, removed or renamed; and what made those
 * durable: fsync or fdatasync of the file, fsync of its directory (for names), sync or syncfs. Records go to
 * POWERCUT_LOG, appended before each change is made, so the log survives a SIGKILL with the page cache.
 * After the kill, restore.ts undoes what was not durable: the disk as a power cut could leave it.
 *
 * A record's sequence number is its offset in the log, so numbers keep growing across restarts of the
 * server on one log. A removed or overwritten file is kept as a hard link in POWERCUT_TRASH (on the same
 * filesystem), so that its removal can be undone. Writable shared mappings of a tracked file (SQLite's -shm
 * outside exclusive locking mode) cannot be followed: they are recorded as unsupported, and the restore fails.
 *
 * Without POWERCUT_ROOT the shim does nothing but pass calls through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum record_type {
  REC_WRITE = 1,    /* ino; a = offset, b = size before; pre = bytes overwritten; post = bytes written */
  REC_SIZE = 2,     /* ino; a = size after, b = size before; pre = bytes cut off by a shrink */
  REC_SYNC = 3,     /* ino; a = records before this sequence number are durable */
  REC_DIRSYNC = 4,  /* ino of a directory; a = names changed in it before this number are durable */
  REC_SYNCALL = 5,  /* a = everything before this number is durable */
  REC_CREATE = 6,   /* ino (a file's or a directory's); a = parent directory's ino; path = the new name */
  REC_UNLINK = 7,   /* ino; a = parent's ino; path = the name removed; post = the trash link keeping it */
  REC_RENAME = 8,   /* ino; a = old parent, b = new parent; path = "old\0new"; post = trash link of a replaced file */
  REC_UNSUPPORTED = 9, /* path = what happened */
};

struct record_header {
  uint32_t magic;
  uint32_t type;
  uint64_t seq;
  uint64_t ino;
  uint64_t a;
  uint64_t b;
  uint32_t path_len;
  uint32_t pre_len;
  uint64_t post_len;
};

#define MAGIC 0x50435554u /* "PCUT" */

static int active;
static dev_t tracked_dev;
static int log_fd = -1;
static uint64_t log_size;
static char trash_dir[PATH_MAX];
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

#define REAL(name) \
  static __typeof__(name) *real_##name; \
  if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static ssize_t raw_write(int fd, const void *buf, size_t len) {
  REAL(write);
  return real_write(fd, buf, len);
}

static void die(const char *what) {
  char line[512];
  int n = snprintf(line, sizeof line, "powercut shim: %s: %s\n", what, strerror(errno));
  raw_write(2, line, n > 0 ? (size_t)n : 0);
  abort();
}

__attribute__((constructor)) static void init(void) {
  const char *root = getenv("POWERCUT_ROOT");
  const char *log = getenv("POWERCUT_LOG");
  const char *trash = getenv("POWERCUT_TRASH");
  if (!root || !log || !trash) return;
  struct stat st;
  if (stat(root, &st) != 0) die("stat POWERCUT_ROOT");
  tracked_dev = st.st_dev;
  snprintf(trash_dir, sizeof trash_dir, "%s", trash);
  REAL(open);
  log_fd = real_open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (log_fd < 0) die("open POWERCUT_LOG");
  if (fstat(log_fd, &st) != 0) die("stat POWERCUT_LOG");
  if (st.st_dev == tracked_dev) {
    errno = EINVAL;
    die("POWERCUT_LOG must be on another filesystem than POWERCUT_ROOT");
  }
  log_size = (uint64_t)st.st_size;
  active = 1;
}

/* Appends one record; the caller holds the lock. Returns its sequence number. */
static uint64_t append(uint32_t type, uint64_t ino, uint64_t a, uint64_t b, const void *path, size_t path_len,
                       const void *pre, size_t pre_len, const void *post, size_t post_len) {
  struct record_header h = {MAGIC, type, log_size, ino, a, b, (uint32_t)path_len, (uint32_t)pre_len, post_len};
  struct iovec parts[4] = {
      {&h, sizeof h}, {(void *)path, path_len}, {(void *)pre, pre_len}, {(void *)post, post_len}};
  size_t total = sizeof h + path_len + pre_len + post_len;
  REAL(writev);
  size_t done = 0;
  int first = 0;
  while (done < total) {
    ssize_t n = real_writev(log_fd, parts + first, 4 - first);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("write POWERCUT_LOG");
    }
    done += (size_t)n;
    while (first < 4 && (size_t)n >= parts[first].iov_len) n -= (ssize_t)parts[first++].iov_len;
    if (first < 4) {
      parts[first].iov_base = (char *)parts[first].iov_base + n;
      parts[first].iov_len -= (size_t)n;
    }
  }
  uint64_t seq = log_size;
  log_size += total;
  return seq;
}

static int tracked_file(int fd, struct stat *st) {
  return active && fd >= 0 && fstat(fd, st) == 0 && st->st_dev == tracked_dev && S_ISREG(st->st_mode);
}

/* Reads `len` bytes at `offset` of the file behind fd, even when fd was opened write-only. */
static void read_at(int fd, void *buf, size_t len, off_t offset) {
  size_t done = 0;
  int own = -1;
  while (done < len) {
    ssize_t n = pread(own >= 0 ? own : fd, (char *)buf + done, len - done, offset + (off_t)done);
    if (n < 0 && errno == EBADF && own < 0) {
      char proc[64];
      snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
      REAL(open);
      own = real_open(proc, O_RDONLY | O_CLOEXEC);
      if (own < 0) die("reopen for reading");
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("read the bytes a write overwrites");
    done += (size_t)n;
  }
  if (own >= 0) close(own);
}

/* Records a write of `len` bytes at `offset` (-1: the fd's position, or its end with O_APPEND). */
static void note_write(int fd, const struct stat *st, off_t offset, const struct iovec *iov, int iovcnt) {
  size_t len = 0;
  for (int i = 0; i < iovcnt; i++) len += iov[i].iov_len;
  if (len == 0) return;
  if (offset < 0) {
    int flags = fcntl(fd, F_GETFL);
    offset = (flags & O_APPEND) ? st->st_size : lseek(fd, 0, SEEK_CUR);
  }
  size_t size = (size_t)st->st_size;
  size_t pre_len = (size_t)offset < size ? (size - (size_t)offset < len ? size - (size_t)offset : len) : 0;
  char *pre = malloc(pre_len ? pre_len : 1);
  char *post = malloc(len);
  if (!pre || !post) die("malloc");
  if (pre_len) read_at(fd, pre, pre_len, offset);
  size_t at = 0;
  for (int i = 0; i < iovcnt; i++) {
    memcpy(post + at, iov[i].iov_base, iov[i].iov_len);
    at += iov[i].iov_len;
  }
  append(REC_WRITE, st->st_ino, (uint64_t)offset, size, NULL, 0, pre, pre_len, post, len);
  free(pre);
  free(post);
}

static void note_size(int fd, const struct stat *st, off_t new_size) {
  size_t size = (size_t)st->st_size;
  size_t cut = (size_t)new_size < size ? size - (size_t)new_size : 0;
  char *pre = malloc(cut ? cut : 1);
  if (!pre) die("malloc");
  if (cut) read_at(fd, pre, cut, new_size);
  append(REC_SIZE, st->st_ino, (uint64_t)new_size, size, NULL, 0, pre, cut, NULL, 0);
  free(pre);
}

/* ---- writes ---- */

#define WRITE_WRAPPER(call, fd, offset, iov, iovcnt)        \
  do {                                                    \
    struct stat st;                                       \
    if (!tracked_file(fd, &st)) return call;              \
    pthread_mutex_lock(&lock);                            \
    note_write(fd, &st, offset, iov, iovcnt);             \
    ssize_t result = call;                                \
    int saved = errno;                                    \
    pthread_mutex_unlock(&lock);                          \
    errno = saved;                                        \
    return result;                                        \
  } while (0)

ssize_t write(int fd, const void *buf, size_t len) {
  REAL(write);
  struct iovec one = {(void *)buf, len};
  WRITE_WRAPPER(real_write(fd, buf, len), fd, -1, &one, 1);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t offset) {
  REAL(pwrite);
  struct iovec one = {(void *)buf, len};
  WRITE_WRAPPER(real_pwrite(fd, buf, len, offset), fd, offset, &one, 1);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t offset) {
  REAL(pwrite64);
  struct iovec one = {(void *)buf, len};
  WRITE_WRAPPER(real_pwrite64(fd, buf, len, offset), fd, offset, &one, 1);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
  REAL(writev);
  WRITE_WRAPPER(real_writev(fd, iov, iovcnt), fd, -1, iov, iovcnt);
}

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
  REAL(pwritev);
  WRITE_WRAPPER(real_pwritev(fd, iov, iovcnt, offset), fd, offset, iov, iovcnt);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int iovcnt, off64_t offset) {
  REAL(pwritev64);
  WRITE_WRAPPER(real_pwritev64(fd, iov, iovcnt, offset), fd, offset, iov, iovcnt);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags) {
  REAL(pwritev2);
  WRITE_WRAPPER(real_pwritev2(fd, iov, iovcnt, offset, flags), fd, (flags & RWF_APPEND) ? -1 : offset, iov,
                iovcnt);
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int iovcnt, off64_t offset, int flags) {
  REAL(pwritev64v2);
  WRITE_WRAPPER(real_pwritev64v2(fd, iov, iovcnt, offset, flags), fd, (flags & RWF_APPEND) ? -1 : offset, iov,
                iovcnt);
}

/* ---- sizes ---- */

#define SIZE_WRAPPER(call, fd, new_size)            \
  do {                                            \
    struct stat st;                               \
    if (!tracked_file(fd, &st)) return call;      \
    pthread_mutex_lock(&lock);                    \
    note_size(fd, &st, new_size);                 \
    int result = call;                            \
    int saved = errno;                            \
    pthread_mutex_unlock(&lock);                  \
    errno = saved;                                \
    return result;                                \
  } while (0)

int ftruncate(int fd, off_t length) {
  REAL(ftruncate);
  SIZE_WRAPPER(real_ftruncate(fd, length), fd, length);
}

int ftruncate64(int fd, off64_t length) {
  REAL(ftruncate64);
  SIZE_WRAPPER(real_ftruncate64(fd, length), fd, length);
}

/* Path-based truncates open the file, so that the record is made the same way. */
static int truncate_path(const char *path, off_t length) {
  REAL(open);
  int fd = real_open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int result = ftruncate(fd, length);
  int saved = errno;
  close(fd);
  errno = saved;
  return result;
}

int truncate(const char *path, off_t length) { return truncate_path(path, length); }
int truncate64(const char *path, off64_t length) { return truncate_path(path, length); }

/* fallocate that keeps the size changes no content; one that grows the file is a size change. */
static int grows(int fd, int mode, off_t offset, off_t len, struct stat *st) {
  if (!tracked_file(fd, st)) return 0;
  if (mode & ~FALLOC_FL_KEEP_SIZE) {
    pthread_mutex_lock(&lock);
    const char *what = "fallocate with a mode that changes content";
    append(REC_UNSUPPORTED, st->st_ino, 0, 0, what, strlen(what), NULL, 0, NULL, 0);
    pthread_mutex_unlock(&lock);
    return 0;
  }
  return !(mode & FALLOC_FL_KEEP_SIZE) && offset + len > st->st_size;
}

int fallocate(int fd, int mode, off_t offset, off_t len) {
  REAL(fallocate);
  struct stat st;
  if (!grows(fd, mode, offset, len, &st)) return real_fallocate(fd, mode, offset, len);
  SIZE_WRAPPER(real_fallocate(fd, mode, offset, len), fd, offset + len);
}

int fallocate64(int fd, int mode, off64_t offset, off64_t len) {
  REAL(fallocate64);
  struct stat st;
  if (!grows(fd, mode, offset, len, &st)) return real_fallocate64(fd, mode, offset, len);
  SIZE_WRAPPER(real_fallocate64(fd, mode, offset, len), fd, offset + len);
}

int posix_fallocate(int fd, off_t offset, off_t len) {
  REAL(posix_fallocate);
  struct stat st;
  if (!grows(fd, 0, offset, len, &st)) return real_posix_fallocate(fd, offset, len);
  SIZE_WRAPPER(real_posix_fallocate(fd, offset, len), fd, offset + len);
}

int posix_fallocate64(int fd, off64_t offset, off64_t len) {
  REAL(posix_fallocate64);
  struct stat st;
  if (!grows(fd, 0, offset, len, &st)) return real_posix_fallocate64(fd, offset, len);
  SIZE_WRAPPER(real_posix_fallocate64(fd, offset, len), fd, offset + len);
}

/* ---- syncs ---- */

/* fsync and fdatasync: what was recorded before the call started is durable once it returns. */
static int synced(int fd, int (*sync)(int)) {
  struct stat st;
  if (!active || fstat(fd, &st) != 0 || st.st_dev != tracked_dev) return sync(fd);
  pthread_mutex_lock(&lock);
  uint64_t upto = log_size;
  pthread_mutex_unlock(&lock);
  int result = sync(fd);
  if (result == 0) {
    int saved = errno;
    pthread_mutex_lock(&lock);
    append(S_ISDIR(st.st_mode) ? REC_DIRSYNC : REC_SYNC, st.st_ino, upto, 0, NULL, 0, NULL, 0, NULL, 0);
    pthread_mutex_unlock(&lock);
    errno = saved;
  }
  return result;
}

int fsync(int fd) {
  REAL(fsync);
  return synced(fd, real_fsync);
}

int fdatasync(int fd) {
  REAL(fdatasync);
  return synced(fd, real_fdatasync);
}

static void synced_all(uint64_t upto) {
  pthread_mutex_lock(&lock);
  append(REC_SYNCALL, 0, upto, 0, NULL, 0, NULL, 0, NULL, 0);
  pthread_mutex_unlock(&lock);
}

void sync(void) {
  REAL(sync);
  if (!active) {
    real_sync();
    return;
  }
  pthread_mutex_lock(&lock);
  uint64_t upto = log_size;
  pthread_mutex_unlock(&lock);
  real_sync();
  synced_all(upto);
}

int syncfs(int fd) {
  REAL(syncfs);
  struct stat st;
  if (!active || fstat(fd, &st) != 0 || st.st_dev != tracked_dev) return real_syncfs(fd);
  pthread_mutex_lock(&lock);
  uint64_t upto = log_size;
  pthread_mutex_unlock(&lock);
  int result = real_syncfs(fd);
  if (result == 0) synced_all(upto);
  return result;
}

/* ---- names ---- */

/* The absolute path of `path` taken relative to dirfd, with its directory's real path; and that directory's ino. */
static int resolve(int dirfd, const char *path, char *out, uint64_t *parent_ino) {
  char dir[PATH_MAX], joined[PATH_MAX], real_dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  if (path[0] == '/' || dirfd == AT_FDCWD) {
    if (slash == path) snprintf(dir, sizeof dir, "/");
    else if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else snprintf(dir, sizeof dir, ".");
  } else {
    char proc[64], base[PATH_MAX];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(proc, base, sizeof base - 1);
    if (n < 0) return -1;
    base[n] = 0;
    if (slash) snprintf(dir, sizeof dir, "%s/%.*s", base, (int)(slash - path), path);
    else snprintf(dir, sizeof dir, "%s", base);
  }
  if (!realpath(dir, real_dir)) return -1;
  snprintf(joined, sizeof joined, "%s/%s", real_dir, name);
  memcpy(out, joined, strlen(joined) + 1);
  struct stat st;
  if (stat(real_dir, &st) != 0) return -1;
  *parent_ino = st.st_ino;
  return 0;
}

/* A tracked regular file at `path`, if any. */
static int tracked_path(const char *path, struct stat *st) {
  return active && lstat(path, st) == 0 && st->st_dev == tracked_dev && S_ISREG(st->st_mode);
}

/* Keeps the file at `path` alive as a hard link in the trash; returns the link's path length. */
static size_t keep_in_trash(const char *path, char *link_path) {
  snprintf(link_path, PATH_MAX, "%s/%llu", trash_dir, (unsigned long long)log_size);
  if (link(path, link_path) != 0) die("link into POWERCUT_TRASH");
  return strlen(link_path);
}

static int opened(int dirfd, const char *path, int flags, mode_t mode,
                  int (*open_at)(int, const char *, int, ...)) {
  if (!active || !(flags & O_CREAT)) return open_at(dirfd, path, flags, mode);
  struct stat st;
  pthread_mutex_lock(&lock);
  int existed = fstatat(dirfd, path, &st, 0) == 0;
  int fd = open_at(dirfd, path, flags, mode);
  int saved = errno;
  char absolute[PATH_MAX];
  uint64_t parent;
  if (fd >= 0 && !existed && tracked_file(fd, &st) && resolve(dirfd, path, absolute, &parent) == 0)
    append(REC_CREATE, st.st_ino, parent, 0, absolute, strlen(absolute), NULL, 0, NULL, 0);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return fd;
}

static mode_t mode_of(int flags, va_list args) {
  return ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? (mode_t)va_arg(args, int) : 0;
}

int open(const char *path, int flags, ...) {
  REAL(openat);
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  return opened(AT_FDCWD, path, flags, mode, real_openat);
}

int open64(const char *path, int flags, ...) {
  REAL(openat64);
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  return opened(AT_FDCWD, path, flags, mode, real_openat64);
}

int openat(int dirfd, const char *path, int flags, ...) {
  REAL(openat);
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  return opened(dirfd, path, flags, mode, real_openat);
}

int openat64(int dirfd, const char *path, int flags, ...) {
  REAL(openat64);
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  return opened(dirfd, path, flags, mode, real_openat64);
}

int creat(const char *path, mode_t mode) { return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }
int creat64(const char *path, mode_t mode) { return open64(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }

/* A directory made on the tracked filesystem is a new name in its parent, as a created file is. */
static int made_dir(int dirfd, const char *path, mode_t mode) {
  REAL(mkdirat);
  if (!active) return real_mkdirat(dirfd, path, mode);
  pthread_mutex_lock(&lock);
  int result = real_mkdirat(dirfd, path, mode);
  int saved = errno;
  struct stat st;
  char absolute[PATH_MAX];
  uint64_t parent;
  if (result == 0 && fstatat(dirfd, path, &st, 0) == 0 && st.st_dev == tracked_dev &&
      resolve(dirfd, path, absolute, &parent) == 0)
    append(REC_CREATE, st.st_ino, parent, 0, absolute, strlen(absolute), NULL, 0, NULL, 0);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return result;
}

int mkdir(const char *path, mode_t mode) { return made_dir(AT_FDCWD, path, mode); }
int mkdirat(int dirfd, const char *path, mode_t mode) { return made_dir(dirfd, path, mode); }

static int removed(int dirfd, const char *path, int flags, int (*remove_at)(int, const char *, int)) {
  struct stat st;
  char full[PATH_MAX];
  if (dirfd != AT_FDCWD && path[0] != '/') {
    char proc[64], base[PATH_MAX];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(proc, base, sizeof base - 1);
    if (n < 0) return remove_at(dirfd, path, flags);
    base[n] = 0;
    snprintf(full, sizeof full, "%s/%s", base, path);
  } else snprintf(full, sizeof full, "%s", path);
  if ((flags & AT_REMOVEDIR) || !tracked_path(full, &st)) return remove_at(dirfd, path, flags);
  pthread_mutex_lock(&lock);
  char absolute[PATH_MAX], kept[PATH_MAX];
  uint64_t parent;
  if (resolve(AT_FDCWD, full, absolute, &parent) != 0) die("resolve a removed file");
  size_t kept_len = keep_in_trash(full, kept);
  append(REC_UNLINK, st.st_ino, parent, 0, absolute, strlen(absolute), NULL, 0, kept, kept_len);
  int result = remove_at(dirfd, path, flags);
  int saved = errno;
  pthread_mutex_unlock(&lock);
  errno = saved;
  return result;
}

int unlinkat(int dirfd, const char *path, int flags) {
  REAL(unlinkat);
  return removed(dirfd, path, flags, real_unlinkat);
}

int unlink(const char *path) {
  REAL(unlinkat);
  return removed(AT_FDCWD, path, 0, real_unlinkat);
}

int remove(const char *path) {
  REAL(unlinkat);
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) return real_unlinkat(AT_FDCWD, path, AT_REMOVEDIR);
  return removed(AT_FDCWD, path, 0, real_unlinkat);
}

static int renamed(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags) {
  REAL(renameat2);
  struct stat st, replaced;
  char from[PATH_MAX], to[PATH_MAX];
  uint64_t from_parent, to_parent;
  if (!active || fstatat(olddirfd, oldpath, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != tracked_dev ||
      !S_ISREG(st.st_mode))
    return real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
  pthread_mutex_lock(&lock);
  if (resolve(olddirfd, oldpath, from, &from_parent) != 0 || resolve(newdirfd, newpath, to, &to_parent) != 0)
    die("resolve a renamed file");
  char names[2 * PATH_MAX], kept[PATH_MAX];
  size_t from_len = strlen(from), to_len = strlen(to), kept_len = 0;
  memcpy(names, from, from_len + 1);
  memcpy(names + from_len + 1, to, to_len);
  if (lstat(to, &replaced) == 0 && S_ISREG(replaced.st_mode)) kept_len = keep_in_trash(to, kept);
  append(REC_RENAME, st.st_ino, from_parent, to_parent, names, from_len + 1 + to_len, NULL, 0, kept, kept_len);
  int result = real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
  int saved = errno;
  pthread_mutex_unlock(&lock);
  errno = saved;
  return result;
}

int rename(const char *oldpath, const char *newpath) { return renamed(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0); }

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
  return renamed(olddirfd, oldpath, newdirfd, newpath, 0);
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags) {
  return renamed(olddirfd, oldpath, newdirfd, newpath, flags);
}

/* ---- mappings ---- */

static void check_mapping(int prot, int flags, int fd) {
  struct stat st;
  if (!(flags & MAP_SHARED) || !(prot & PROT_WRITE) || !tracked_file(fd, &st)) return;
  pthread_mutex_lock(&lock);
  const char *what = "a writable shared mapping of a tracked file";
  append(REC_UNSUPPORTED, st.st_ino, 0, 0, what, strlen(what), NULL, 0, NULL, 0);
  pthread_mutex_unlock(&lock);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset) {
  REAL(mmap);
  check_mapping(prot, flags, fd);
  return real_mmap(addr, len, prot, flags, fd, offset);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t offset) {
  REAL(mmap64);
  check_mapping(prot, flags, fd);
  return real_mmap64(addr, len, prot, flags, fd, offset);
}
